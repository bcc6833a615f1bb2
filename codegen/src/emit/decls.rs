//! Emits the kernel declarations of the kernels crate: one trait per hand-written kernel, so that
//! a missing or mistyped kernel is a compile error naming the operator, plus the precomputed
//! structs of structured operators.
//!
//! `decls.rs` holds what every backend shares (meta functions, argument checks, precomputed
//! structs) and one module per [`BackendIndex`], from its own file (`decls_cpu.rs`,
//! `decls_cuda.rs` …), whose traits it re-exports:
//!
//! | YAML | trait | implemented on |
//! |---|---|---|
//! | `structured: True` out op `x_out`, meta written by hand | `XOutMetaFn::x_out` | `oxten_kernels::Meta` |
//! | `pointwise_check: k` on a pointwise op | `K::k` | `oxten_kernels::Meta` |
//! | `dispatch: {CPU: k}` | `KCpu::k` | `oxten_kernels::Cpu` |
//! | `dispatch: {CUDA: k}` | `KCuda::k` | `oxten_kernels::Cuda` (feature `cuda`) |
//! | `dispatch: {Meta: k}` | `KMeta::k` | `oxten_kernels::Meta` |
//! | `dispatch: {CompositeExplicitAutograd: k}` | `KCompositeExplicit::k` | `oxten_kernels::Composite` |
//! | `dispatch: {CompositeImplicitAutograd: k}` | `KCompositeImplicit::k` | `oxten_kernels::Composite` |

use super::names::camel;
use super::sig::OpSig;
use super::structured::StructuredOp;
use super::RUNTIME_IMPORTS;
use crate::backend::{BackendIndex, DispatchKey};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One declared kernel.
pub struct Decl {
    /// The key whose kernel this is; `None` for what every backend shares (meta functions and
    /// argument checks of structured ops).
    pub key: Option<DispatchKey>,
    pub trait_name: String,
    pub method: String,
    pub params: String,
    pub ret: String,
    pub doc: String,
}

/// Collects every kernel declaration; errors if one kernel name is declared twice for one key
/// with different signatures.
pub fn collect(sigs: &[OpSig], structured: &[StructuredOp], backends: &[BackendIndex]) -> Result<Vec<Decl>, String> {
    let mut decls: BTreeMap<String, Decl> = BTreeMap::new();
    let mut add = |d: Decl| -> Result<(), String> {
        if let Some(prev) = decls.get(&d.trait_name) {
            if prev.params != d.params || prev.ret != d.ret {
                return Err(format!(
                    "kernel `{}` is declared twice with different signatures ({} and {})",
                    d.method, prev.doc, d.doc
                ));
            }
            return Ok(());
        }
        decls.insert(d.trait_name.clone(), d);
        Ok(())
    };
    for st in structured {
        let doc = format!("`{}`", st.out.f.func);
        if let (Some(tr), Some(check)) = (st.check_trait(), &st.pointwise_check) {
            add(Decl {
                key: None,
                trait_name: tr,
                method: check.clone(),
                params: st.input_params(),
                ret: "()".into(),
                doc: format!("Argument check the generated meta function of {doc} runs first."),
            })?;
        }
        if st.pointwise.is_none() {
            add(Decl {
                key: None,
                trait_name: st.meta_trait(),
                method: st.out.name.clone(),
                params: st.meta_params(),
                ret: st.meta_return(),
                doc: format!("Meta function of {doc}: checks the arguments and sets the outputs."),
            })?;
            for b in backends {
                let Some(m) = b.get(st.out.f) else { continue };
                add(Decl {
                    key: Some(b.key),
                    trait_name: format!("{}{}", camel(&m.kernel), b.key.trait_suffix()),
                    method: m.kernel.clone(),
                    params: st.impl_params(),
                    ret: "()".into(),
                    doc: format!("{} impl of {doc}: computes into the outputs the meta function set.", b.key),
                })?;
            }
        }
    }
    for sig in sigs {
        if sig.f.structured || sig.f.structured_delegate.is_some() {
            continue;
        }
        for b in backends {
            let Some(m) = b.get(sig.f) else { continue };
            if sig.f.generated_from.is_some() {
                // `autogen:`: the registration emitter writes this kernel.
                continue;
            }
            add(Decl {
                key: Some(b.key),
                trait_name: format!("{}{}", camel(&m.kernel), b.key.trait_suffix()),
                method: m.kernel.clone(),
                params: sig.params(),
                ret: sig.ret.clone(),
                doc: format!("{} kernel of `{}`.", b.key, sig.f.func),
            })?;
        }
    }
    Ok(decls.into_values().collect())
}

/// The name of the declarations file of one backend.
pub fn backend_file(b: &BackendIndex) -> String {
    format!("decls_{}.rs", b.key.module())
}

pub(crate) fn write_trait(s: &mut String, d: &Decl) {
    let _ = writeln!(
        s,
        "/// {}\npub trait {} {{\n/// {}\nfn {}({}) -> Result<{}>;\n}}",
        d.doc, d.trait_name, d.doc, d.method, d.params, d.ret
    );
}

/// The root declarations file of the kernels crate: shared traits and structs, then one module
/// per backend.
pub fn emit_decls(decls: &[Decl], structured: &[StructuredOp], backends: &[BackendIndex]) -> String {
    let mut s = String::new();
    s.push_str(RUNTIME_IMPORTS);
    for st in structured {
        if let Some(name) = st.precomputed_struct() {
            let _ = writeln!(s, "/// Values the meta function of `{}` computes for its impls.\n#[derive(Clone, Debug)]\npub struct {name} {{", st.out.schema_name);
            for pc in &st.precomputed {
                for (n, t) in &pc.fields {
                    let _ = writeln!(s, "pub {n}: {t},");
                }
            }
            s.push_str("}\n");
        }
    }
    for d in decls.iter().filter(|d| d.key.is_none()) {
        write_trait(&mut s, d);
    }
    for b in backends {
        let (cfg, m) = (b.cfg_attr(), b.key.module());
        let _ = writeln!(
            s,
            "/// The {} kernels' traits.\n{cfg} pub mod {m} {{ include!(concat!(env!(\"OUT_DIR\"), \"/{}\")); }}\n{cfg} #[allow(unused_imports)] pub use {m}::*;",
            b.key,
            backend_file(b)
        );
    }
    s
}

/// The declarations file of one backend: a trait per kernel the YAML names at its key.
pub fn emit_backend_decls(decls: &[Decl], b: &BackendIndex) -> String {
    let mut s = String::new();
    s.push_str(RUNTIME_IMPORTS);
    s.push_str("#[allow(unused_imports)] use super::*;\n");
    for d in decls.iter().filter(|d| d.key == Some(b.key)) {
        write_trait(&mut s, d);
    }
    s
}
