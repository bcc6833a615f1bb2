//! Emits the registrations of the `oxten` crate, one file per [`BackendIndex`]
//! (`register_cpu.rs`, `register_cuda.rs` …): the structured wrappers that turn one meta
//! function and one impl into working functional, in-place and out= kernels at that key, and a
//! `register` function putting the key's kernels into the dispatcher. `register.rs` holds the
//! modules and `register_all`, which calls each.

use super::names::{camel, TensorArg};
use super::sig::OpSig;
use super::structured::StructuredOp;
use super::RUNTIME_IMPORTS;
use crate::backend::{BackendIndex, DispatchKey};
use crate::model::SchemaKind;
use std::fmt::Write;

/// Path of the meta function of a structured op.
fn meta_path(st: &StructuredOp, b: &BackendIndex) -> String {
    meta_path_in(st, &b.kernel_crate)
}

/// Path of the meta function of a structured op, with oxten's kernels crate at `k`.
pub(crate) fn meta_path_in(st: &StructuredOp, k: &str) -> String {
    if st.pointwise.is_some() {
        format!("{k}::generated::pointwise::{}_meta", st.out.name)
    } else {
        format!("<{k}::Meta as {k}::generated::decls::{}>::{}", st.meta_trait(), st.out.name)
    }
}

/// Path of the impl of a structured op at backend `b`, if it has one there. The CPU impls of
/// `pointwise:` ops are generated (CPU and CUDA); every other impl is hand-written and named in
/// `dispatch:`.
fn impl_path(st: &StructuredOp, b: &BackendIndex) -> Option<String> {
    if st.pointwise.is_some() {
        return match b.key {
            DispatchKey::Cpu => Some(format!("{}::generated::pointwise::{}_cpu", b.kernel_crate, st.out.name)),
            DispatchKey::Cuda => Some(format!("{}::generated::pointwise_cuda::{}_cuda", b.kernel_crate, st.out.name)),
            _ => None,
        };
    }
    let m = b.get(st.out.f)?;
    Some(format!("{}::{}", b.trait_path(&format!("{}{}", camel(&m.kernel), b.key.trait_suffix())), m.kernel))
}

/// Whether backend `b` gets kernels for structured op `st`: Meta always (its meta function),
/// other backends where they have an impl.
fn serves(st: &StructuredOp, b: &BackendIndex) -> bool {
    match b.key {
        DispatchKey::Meta => true,
        k if k.is_composite() => false,
        _ => impl_path(st, b).is_some(),
    }
}

/// Where a structured wrapper finds its pieces.
pub(crate) struct WrapperPaths {
    /// The meta function.
    pub meta: String,
    /// The impl (none for Meta, whose wrapper runs only the meta function).
    pub imp: Option<String>,
    /// Generic parameters of the wrapper (`<B: ToyKernels>`), or empty.
    pub generics: String,
    /// The module with `take1` / `take2`.
    pub support: String,
    /// Attributes on the wrapper (`#[allow(non_snake_case)]` where the file cannot carry them).
    pub attrs: String,
}

/// One structured wrapper: the kernel of `member` (functional, in-place or out=) at `b`'s key.
fn emit_wrapper(s: &mut String, st: &StructuredOp, member: &OpSig, b: &BackendIndex) -> String {
    let paths = WrapperPaths {
        meta: meta_path(st, b),
        imp: if b.key == DispatchKey::Meta { None } else { impl_path(st, b) },
        generics: String::new(),
        support: "crate::support".into(),
        attrs: String::new(),
    };
    emit_wrapper_with(s, st, member, b.key, &paths)
}

/// [`emit_wrapper`] with explicit paths (also for out-of-tree backends, whose impls are methods of
/// a generated trait).
pub(crate) fn emit_wrapper_with(
    s: &mut String,
    st: &StructuredOp,
    member: &OpSig,
    key: DispatchKey,
    paths: &WrapperPaths,
) -> String {
    let fname = format!("{}_{}", member.name, key.module());
    let _ = writeln!(
        s,
        "/// {key} kernel of `{}`, built from the structured `{}`.",
        member.schema_name, st.out.schema_name
    );
    let _ =
        writeln!(s, "{}fn {fname}{}({}) -> Result<{}> {{", paths.attrs, paths.generics, member.params(), member.ret);
    let n_out = st.outputs().len();
    match member.kind() {
        SchemaKind::Inplace => {
            let _ = writeln!(s, "let mut outs = StructuredOutputs::inplace(self_);");
        }
        SchemaKind::Out => {
            let outs: Vec<&str> = member.args.iter().filter(|a| a.is_out).map(|a| a.ident.as_str()).collect();
            // Tensor inputs, so that an out= tensor that is also an input is not resized.
            let ins: Vec<String> = member
                .args
                .iter()
                .filter(|a| !a.is_out)
                .filter_map(|a| match a.tensor_kind() {
                    TensorArg::One => Some(format!("Some({})", a.ident)),
                    TensorArg::Optional => Some(a.ident.clone()),
                    _ => None,
                })
                .collect();
            if ins.is_empty() {
                let _ = writeln!(s, "let mut outs = StructuredOutputs::out(&[{}]);", outs.join(", "));
            } else {
                let _ = writeln!(
                    s,
                    "let mut outs = StructuredOutputs::out(&[{}]).with_inputs(&[{}]);",
                    outs.join(", "),
                    ins.join(", ")
                );
            }
        }
        _ => {
            let _ = writeln!(s, "let mut outs = StructuredOutputs::functional({n_out});");
        }
    }
    let inputs: Vec<&str> = member.args.iter().filter(|a| !a.is_out).map(|a| a.ident.as_str()).collect();
    let meta_call = format!("{}(&mut outs, {})", paths.meta, inputs.join(", "));
    let impl_path = paths.imp.clone();
    if st.uses_iterator {
        match &impl_path {
            Some(p) => {
                let _ = writeln!(s, "let iter = {meta_call}?;\n{p}({})?;\niter.cast_outputs()?;", st.impl_call_args());
            }
            None => {
                let _ = writeln!(s, "let _iter = {meta_call}?;");
            }
        }
    } else {
        // Bind the meta function's result only when it carries precomputed values.
        let bind = if st.precomputed_struct().is_some() && impl_path.is_some() { "let precomputed = " } else { "" };
        let _ = writeln!(s, "{bind}{meta_call}?;");
        if let Some(p) = &impl_path {
            let _ = writeln!(s, "{p}({})?;", st.impl_call_args());
        }
    }
    match member.nret {
        1 => {
            let _ = writeln!(s, "Ok({}::take1(outs.into_outputs()))\n}}", paths.support);
        }
        2 => {
            let _ = writeln!(s, "Ok({}::take2(outs.into_outputs()))\n}}", paths.support);
        }
        _ => s.push_str("Ok(())\n}\n"),
    }
    fname
}

/// The generated kernel of an `autogen:` out= overload (see [`crate::yaml::autogen`]): calls the
/// functional operator `from` and writes its results into the out= tensors.
fn emit_autogen_out(s: &mut String, sig: &OpSig, functional: &OpSig, key: DispatchKey) -> String {
    let fname = format!("{}_{}", sig.name, key.module());
    let ins: Vec<&super::sig::RustArg> = sig.args.iter().filter(|a| !a.is_out).collect();
    let first_out = sig.args.iter().find(|a| a.is_out).map_or("out", |a| a.ident.as_str());
    // The functional operator's arguments: the out= overload's, and for a factory the dtype and
    // device of `out` in place of the TensorOptions it dropped.
    let call_args: Vec<String> = functional
        .args
        .iter()
        .map(|a| match ins.iter().find(|i| i.name == a.name) {
            Some(i) => i.ident.clone(),
            None if a.name == "dtype" => format!("Some({first_out}.dtype())"),
            None if a.name == "device" => format!("Some({first_out}.device())"),
            None => "None".to_string(),
        })
        .collect();
    let tensors: Vec<String> = ins
        .iter()
        .filter_map(|a| match a.tensor_kind() {
            TensorArg::One => Some(format!("Some({})", a.ident)),
            TensorArg::Optional => Some(a.ident.clone()),
            _ => None,
        })
        .collect();
    let outs: Vec<&super::sig::RustArg> = sig.args.iter().filter(|a| a.is_out).collect();
    let written: Vec<String> = outs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let r = if outs.len() == 1 { "&r".to_string() } else { format!("&r.{i}") };
            format!("(\"{}\", {}, {r})", a.name, a.ident)
        })
        .collect();
    let clones: Vec<String> = outs.iter().map(|a| format!("{}.clone()", a.ident)).collect();
    let ret = if clones.len() == 1 { clones[0].clone() } else { format!("({})", clones.join(", ")) };
    let _ = writeln!(
        s,
        "/// {key} kernel of `{}`, generated (`autogen:`): `{}`'s results written into the out= tensors.",
        sig.schema_name, functional.schema_name
    );
    let _ = writeln!(s, "fn {fname}({}) -> Result<{}> {{", sig.params(), sig.ret);
    let _ = writeln!(s, "let r = ops::{}::call({})?;", functional.name, call_args.join(", "));
    let exact_dtype = !sig.f.tags.iter().any(|t| t == "pointwise");
    let _ = writeln!(
        s,
        "crate::support::write_autogen_out({exact_dtype}, &[{}], &[{}])?;",
        tensors.join(", "),
        written.join(", ")
    );
    let _ = writeln!(s, "Ok({ret})\n}}");
    fname
}

/// The name of the registration file of one backend.
pub fn backend_file(b: &BackendIndex) -> String {
    format!("register_{}.rs", b.key.module())
}

/// The root registration file of the `oxten` crate: one module per backend and `register_all`.
pub fn emit_register(backends: &[BackendIndex]) -> String {
    emit_register_selected(backends, &[])
}

/// [`emit_register`] for a selective build: `register_all` also marks the `unselected`
/// operators (by Rust name), whose calls are then an error saying they were not selected.
pub fn emit_register_selected(backends: &[BackendIndex], unselected: &[&str]) -> String {
    let mut s = String::new();
    let mut calls = String::new();
    for b in backends {
        let (cfg, m) = (b.cfg_attr(), b.key.module());
        let _ = writeln!(
            s,
            "/// The {} kernels' registrations.\n{cfg} mod {m} {{ include!(concat!(env!(\"OUT_DIR\"), \"/{}\")); }}",
            b.key,
            backend_file(b)
        );
        let _ = writeln!(calls, "{cfg} {m}::register();");
    }
    for name in unselected {
        let _ = writeln!(calls, "oxten_runtime::ops::{name}::OP.set_selected(false);");
    }
    let _ = writeln!(s, "/// Registers every in-tree kernel with the dispatcher.\npub fn register_all() {{\n{calls}}}");
    s
}

/// The registration file of one backend: its structured wrappers and `register`.
pub fn emit_backend_register(sigs: &[OpSig], structured: &[StructuredOp], b: &BackendIndex) -> String {
    let mut s = String::new();
    let mut regs = String::new();
    s.push_str(RUNTIME_IMPORTS);
    s.push_str("#[allow(unused_imports)] use oxten_runtime::dispatch::{DispatchKey, RegistrationKey};\n");
    s.push_str("#[allow(unused_imports)] use oxten_runtime::ops;\n");
    for st in structured.iter().filter(|st| serves(st, b)) {
        let members = sigs.iter().filter(|m| {
            m.f.func.name == st.out.f.func.name || m.f.structured_delegate.as_ref() == Some(&st.out.f.func.name)
        });
        for m in members {
            let f = emit_wrapper(&mut s, st, m, b);
            let _ = writeln!(regs, "ops::{}::OP.register({}, {f});", m.name, b.key.registration_key());
        }
    }
    for sig in sigs {
        if sig.f.structured || sig.f.structured_delegate.is_some() {
            continue;
        }
        let Some(m) = b.get(sig.f) else { continue };
        if let Some(from) = &sig.f.generated_from {
            let Some(functional) = sigs.iter().find(|f| f.f.func.name == *from) else { continue };
            let f = emit_autogen_out(&mut s, sig, functional, b.key);
            let _ = writeln!(regs, "ops::{}::OP.register({}, {f});", sig.name, b.key.registration_key());
            continue;
        }
        let path = b.trait_path(&format!("{}{}", camel(&m.kernel), b.key.trait_suffix()));
        let _ = writeln!(regs, "ops::{}::OP.register({}, {path}::{});", sig.name, b.key.registration_key(), m.kernel);
    }
    let _ = writeln!(s, "/// Registers the {} kernels with the dispatcher.\npub fn register() {{\n{regs}}}", b.key);
    s
}
