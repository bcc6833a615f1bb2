//! A check that every in-tree `dispatch:` kernel named in the YAML is implemented in
//! `kernels/src`, run before code generation by `oxten-codegen check`.
//!
//! Without it, a misspelt or missing kernel shows up as a rustc error inside generated code
//! ("the trait bound `Cpu: FooCpu` is not satisfied" in `register_cpu.rs`); with it, the error
//! names the YAML file, line and entry, and the `impl` block that is missing.

use crate::backend::BackendIndex;
use crate::emit::names::camel;
use crate::yaml::NativeFunction;
use std::collections::BTreeSet;
use std::path::Path;

/// `(trait, type)` of every `impl Trait for Type` in the Rust files under `dir` (last path
/// segments only), or the parse errors.
pub fn trait_impls(dir: &Path) -> Result<BTreeSet<(String, String)>, String> {
    let mut out = BTreeSet::new();
    for (_, file) in crate::locate::parse_rs_files(dir)? {
        collect_impls(&file.items, &mut out);
    }
    Ok(out)
}

fn collect_impls(items: &[syn::Item], out: &mut BTreeSet<(String, String)>) {
    for item in items {
        match item {
            syn::Item::Impl(i) => {
                let Some((_, tr, _)) = &i.trait_ else { continue };
                let syn::Type::Path(ty) = &*i.self_ty else { continue };
                if let (Some(t), Some(s)) = (tr.segments.last(), ty.path.segments.last()) {
                    out.insert((t.ident.to_string(), s.ident.to_string()));
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect_impls(items, out);
                }
            }
            _ => {}
        }
    }
}

/// The `dispatch:` kernels of the in-tree backends that no `impl` block in `impls` implements,
/// as errors naming the YAML entry.
pub fn missing_kernels(
    fns: &[NativeFunction],
    backends: &[BackendIndex],
    impls: &BTreeSet<(String, String)>,
) -> Vec<String> {
    let mut errors = Vec::new();
    for b in backends.iter().filter(|b| !b.external) {
        for f in fns {
            // Pointwise ops get generated kernels; only hand-written ones are looked for.
            if f.pointwise.is_some() || f.generated_from.is_some() {
                continue;
            }
            let Some(m) = b.get(f) else { continue };
            let tr = format!("{}{}", camel(&m.kernel), b.key.trait_suffix());
            if !impls.contains(&(tr.clone(), b.impl_type.clone())) {
                errors.push(format!(
                    "{}: entry `{}`: the {} kernel `{}` is not implemented: kernels/src has no `impl {tr} for {}` \
                     (the trait is generated in `oxten_kernels::generated::decls`)",
                    f.loc, f.func.name, b.key, m.kernel, b.impl_type
                ));
            }
        }
    }
    errors
}
