//! [`BackendIndex`]: one dispatch key's kernels, after torchgen's class of the same name.

use super::key::DispatchKey;
use crate::yaml::NativeFunction;
use std::collections::BTreeMap;

/// One operator's kernel at one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendMetadata {
    /// The kernel's name as the YAML gives it (the method of its declared trait).
    pub kernel: String,
    /// Whether the kernel is the impl of a structured op (its meta function sets the outputs).
    pub structured: bool,
}

/// Everything the emitters need to know about one dispatch key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendIndex {
    pub key: DispatchKey,
    /// Whether the kernels live outside oxten (an out-of-tree backend's crate).
    pub external: bool,
    /// The crate path the kernel traits are implemented in (`::oxten_kernels`).
    pub kernel_crate: String,
    /// The marker type the kernel traits are implemented on (`Cpu`, `Composite` …).
    pub impl_type: String,
    /// The cargo feature the backend's code is compiled under, if any (`cuda`).
    pub feature: Option<String>,
    /// Kernels by operator name (`add.out`).
    pub index: BTreeMap<String, BackendMetadata>,
}

impl BackendIndex {
    /// An in-tree index for `key` with no kernels yet.
    fn in_tree(key: DispatchKey) -> BackendIndex {
        let impl_type = match key {
            DispatchKey::CompositeImplicitAutograd | DispatchKey::CompositeExplicitAutograd => "Composite",
            k => k.trait_suffix(),
        };
        BackendIndex {
            key,
            external: false,
            kernel_crate: "::oxten_kernels".into(),
            impl_type: impl_type.into(),
            feature: (key == DispatchKey::Cuda).then(|| "cuda".into()),
            index: BTreeMap::new(),
        }
    }

    /// The kernel of `f` at this key, if the YAML names one.
    pub fn get(&self, f: &NativeFunction) -> Option<&BackendMetadata> {
        self.index.get(&f.func.name.to_string())
    }

    /// The `#[cfg(feature = …)]` attribute the backend's generated items carry ("" if none).
    pub fn cfg_attr(&self) -> String {
        self.feature.as_ref().map(|f| format!("#[cfg(feature = \"{f}\")]")).unwrap_or_default()
    }

    /// The path of a declared kernel trait: `<crate::Type as crate::generated::decls::Trait>`.
    pub fn trait_path(&self, trait_name: &str) -> String {
        let k = &self.kernel_crate;
        format!("<{k}::{} as {k}::generated::decls::{trait_name}>", self.impl_type)
    }

    /// The index of `key` for a downstream operator library at `module`, whose kernels type is
    /// named there under the key's marker name (`Cpu`, `Meta`, `Composite` …).
    pub fn for_library(key: DispatchKey, module: &str, fns: &[NativeFunction]) -> BackendIndex {
        let mut b = BackendIndex::in_tree(key);
        b.kernel_crate = module.to_string();
        for f in fns {
            if let Some(kernel) = f.dispatch.get(&key) {
                b.index.insert(
                    f.func.name.to_string(),
                    BackendMetadata { kernel: kernel.clone(), structured: f.structured },
                );
            }
        }
        b
    }
}

/// The indices of oxten's own keys, in emission order: CPU, CUDA, Meta and the two composites.
/// `PrivateUse1` has none: the YAML validator rejects it, since an out-of-tree backend brings
/// its own YAML.
pub fn in_tree_backends(fns: &[NativeFunction]) -> Vec<BackendIndex> {
    DispatchKey::ALL
        .into_iter()
        .filter(|&k| k != DispatchKey::PrivateUse1)
        .map(|key| {
            let mut b = BackendIndex::in_tree(key);
            for f in fns {
                if let Some(kernel) = f.dispatch.get(&key) {
                    b.index.insert(
                        f.func.name.to_string(),
                        BackendMetadata { kernel: kernel.clone(), structured: f.structured },
                    );
                }
            }
            b
        })
        .collect()
}
