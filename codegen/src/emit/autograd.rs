//! Emits `autograd.rs` of the `oxten` crate from derivatives.yaml (see [`crate::derivatives`]):
//!
//! - one node type per entry (`MulBackward0`) holding what its formulas use, whose `apply`
//!   evaluates each formula only when its input needs a gradient;
//! - one Autograd-key kernel per differentiable operator and per in-place variant, which records
//!   the node when an input requires grad, saves what the formulas use, redispatches below
//!   autograd and sets the outputs' history (`rebase_history` for in-place ops, plus the view
//!   relation for view ops);
//! - for out= variants, a kernel that refuses inputs that require grad;
//! - for differentiable operators with a kernel below autograd but no entry, a kernel that records
//!   a `NotImplementedBackward` node, so that only backward fails;
//! - `register_autograd()`, and tables of the entries for tests and tooling.

use super::names::TensorArg;
use super::sig::{OpSig, RustArg};
use super::{foreach_autograd, forward_ad};
use crate::derivatives::{has_backend_kernel, Binding, Derivative, FieldSource, ValueBy};
use crate::model::{BaseTy, SchemaKind, Type};
use crate::yaml::NativeFunction;
use std::fmt::Write;

/// How an autograd kernel records history.
enum Recorder<'d> {
    /// With the node of a derivatives.yaml entry.
    Formula(&'d Derivative),
    /// With a `NotImplementedBackward` node.
    NotImplemented,
}

/// One Autograd kernel to emit.
struct Kernel<'a, 'd> {
    sig: OpSig<'a>,
    recorder: Recorder<'d>,
}

/// Whether the op's functional returns include a `Tensor`.
fn returns_tensor(f: &NativeFunction) -> bool {
    f.func.returns.iter().any(|r| r.ty == Type::Base(BaseTy::Tensor))
}

/// Whether some input is a tensor that could require grad.
fn has_tensor_input(f: &NativeFunction) -> bool {
    f.func.arguments.flat_non_out().iter().any(|a| a.ty.is_tensor_like())
}

/// Whether the op returns a view of `self` (`Tensor(a)` without `!`).
fn is_view(f: &NativeFunction) -> bool {
    f.func.returns.first().and_then(|r| r.annotation.as_ref()).is_some_and(|a| !a.is_write)
}

/// The derivative entry covering `f`: its own, or its functional variant's for an in-place op.
fn entry_for<'d>(f: &NativeFunction, fns: &[NativeFunction], ds: &'d [Derivative]) -> Option<&'d Derivative> {
    if let Some(d) = ds.iter().find(|d| d.func == f.func) {
        return Some(d);
    }
    if f.func.kind() == SchemaKind::Inplace {
        let sig = f.func.signature();
        let functional = fns.iter().find(|g| g.func.kind() == SchemaKind::Functional && g.func.signature() == sig)?;
        return ds.iter().find(|d| d.func == functional.func);
    }
    None
}

/// A `&[Option<&Tensor>]` expression over the given tensor arguments; tensor lists are spread
/// into their elements (then the expression builds a `Vec`).
fn tensor_refs<'s>(args: impl Iterator<Item = &'s RustArg>) -> String {
    let mut singles = Vec::new();
    let mut lists = Vec::new();
    for a in args {
        match a.tensor_kind() {
            TensorArg::One => singles.push(format!("Some({})", a.ident)),
            TensorArg::Optional => singles.push(a.ident.clone()),
            TensorArg::List => lists.push(format!(".chain({}.iter().map(Some))", a.ident)),
            TensorArg::OptionalList => lists.push(format!(".chain({}.iter().map(Option::as_ref))", a.ident)),
            TensorArg::No => {}
        }
    }
    if lists.is_empty() {
        format!("&[{}]", singles.join(", "))
    } else {
        format!("&[{}].into_iter(){}.collect::<Vec<_>>()", singles.join(", "), lists.concat())
    }
}

/// The tensor arguments whose gradients flow (the node's next edges): the entry's
/// differentiable inputs (a `Tensor[]` input gives one edge per element), or every tensor input
/// for a `NotImplementedBackward` node.
fn edge_list(d: Option<&Derivative>, sig: &OpSig) -> String {
    match d {
        Some(d) if d.inputs.iter().any(|i| i.list) => {
            let items: Vec<String> = d
                .inputs
                .iter()
                .map(|i| {
                    if i.list {
                        format!("{}.iter().map(Some).collect::<Vec<_>>()", i.ident)
                    } else if i.optional {
                        format!("vec![{}]", i.ident)
                    } else {
                        format!("vec![Some({})]", i.ident)
                    }
                })
                .collect();
            format!("&[{}].concat()", items.join(", "))
        }
        Some(d) => {
            let items: Vec<String> = d
                .inputs
                .iter()
                .map(|i| if i.optional { i.ident.clone() } else { format!("Some({})", i.ident) })
                .collect();
            format!("&[{}]", items.join(", "))
        }
        None => tensor_refs(sig.args.iter().filter(|a| !a.is_out)),
    }
}

/// The node field holding the number of elements (edges) of a `Tensor[]` input.
fn edges_field(ident: &str) -> String {
    format!("{ident}_edges")
}

/// The index of input `i`'s first edge, as an expression inside `apply` (a constant unless a
/// `Tensor[]` input comes before it).
fn edge_offset(d: &Derivative, i: usize) -> String {
    let singles = d.inputs[..i].iter().filter(|x| !x.list).count();
    let mut parts: Vec<String> =
        d.inputs[..i].iter().filter(|x| x.list).map(|x| format!("self.{}", edges_field(&x.ident))).collect();
    if singles > 0 || parts.is_empty() {
        parts.insert(0, singles.to_string());
    }
    parts.join(" + ")
}

/// Emits the whole file.
pub fn emit_autograd(fns: &[NativeFunction], ds: &[Derivative]) -> Result<String, String> {
    emit_autograd_selected(fns, ds, None)
}

/// [`emit_autograd`] with Autograd kernels (and the nodes they record) only for the operators in
/// `keep` (a selective build), or for all.
pub fn emit_autograd_selected(
    fns: &[NativeFunction],
    ds: &[Derivative],
    keep: Option<&std::collections::BTreeSet<String>>,
) -> Result<String, String> {
    let kept = |f: &NativeFunction| keep.is_none_or(|k| k.contains(&f.func.name.to_string()));
    let mut s = String::new();
    s.push_str(
        "#[allow(unused_imports)] use oxten_runtime::{DType, Device, DimVec, Error, ErrorKind, Layout, MemoryFormat, Result, Scalar, Tensor};\n\
         #[allow(unused_imports)] use oxten_runtime::autograd::forward_ad;\n\
         #[allow(unused_imports)] use oxten_runtime::autograd::{check_inplace, collect_next_edges, compute_requires_grad, make_view, rebase_history, refuse_out_differentiation, set_history, Node, NodeBase, NotImplementedBackward, SavedVariable};\n\
         #[allow(unused_imports)] use oxten_runtime::dispatch::{DispatchKey, ExcludeGuard, IntoIValue, KeySet};\n\
         #[allow(unused_imports)] use oxten_runtime::Generator;\n\
         use oxten_runtime::ops;\n\
         #[allow(unused_imports)] use std::sync::{Arc, OnceLock};\n\
         #[allow(unused_imports)] use super::helpers::*;\n",
    );
    // Kernels.
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut not_implemented: Vec<String> = Vec::new();
    let mut out_kernels: Vec<OpSig> = Vec::new();
    for f in fns {
        let kind = f.func.kind();
        if kind == SchemaKind::Out {
            continue;
        }
        if !has_tensor_input(f) || !returns_tensor(f) || !has_backend_kernel(f) || !kept(f) {
            continue;
        }
        let sig = OpSig::new(f)?;
        match entry_for(f, fns, ds) {
            Some(d) if d.has_differentiable_output() => kernels.push(Kernel { sig, recorder: Recorder::Formula(d) }),
            Some(_) => {}
            None => {
                if kind == SchemaKind::Mutable {
                    continue;
                }
                not_implemented.push(f.func.name.to_string());
                kernels.push(Kernel { sig, recorder: Recorder::NotImplemented });
            }
        }
    }
    // out= variants of differentiable operators refuse inputs that require grad.
    for f in fns.iter().filter(|f| f.func.kind() == SchemaKind::Out) {
        let sig = f.func.signature();
        let differentiable = kernels.iter().any(|k| k.sig.f.func.signature() == sig);
        if differentiable && has_backend_kernel(f) && kept(f) {
            out_kernels.push(OpSig::new(f)?);
        }
    }
    // The nodes the kernels record.
    for d in ds.iter().filter(|d| d.has_differentiable_output()) {
        let used = kernels.iter().any(|k| matches!(k.recorder, Recorder::Formula(r) if std::ptr::eq(r, d)));
        if used || keep.is_none() {
            emit_node(&mut s, d);
        }
    }
    let mut regs = String::new();
    for k in &kernels {
        let name = emit_kernel(&mut s, k);
        let _ = writeln!(regs, "ops::{}::OP.register(DispatchKey::Autograd, {name});", k.sig.name);
    }
    for o in &out_kernels {
        let name = emit_out_kernel(&mut s, o);
        let _ = writeln!(regs, "ops::{}::OP.register(DispatchKey::Autograd, {name});", o.name);
    }
    // `_foreach_*` operators differentiate through their per-tensor operators.
    for f in fns.iter().filter(|f| foreach_autograd::is_foreach(f) && has_backend_kernel(f) && kept(f)) {
        if !matches!(f.func.kind(), SchemaKind::Inplace | SchemaKind::Functional) {
            continue;
        }
        let op = foreach_autograd::resolve(f, fns)?;
        let per_tensor = kernels.iter().find(|k| std::ptr::eq(k.sig.f, op.per_tensor.f)).map(|k| kernel_name(&k.sig));
        let name = op.emit_kernel(&mut s, per_tensor.as_deref(), &redispatch(&op.sig));
        let _ = writeln!(regs, "ops::{}::OP.register(DispatchKey::Autograd, {name});", op.sig.name);
    }
    let _ = writeln!(
        s,
        "/// Registers the Autograd kernel of every differentiable operator (and of their out= variants).\npub fn register_autograd() {{\n{regs}}}"
    );
    // Tables.
    s.push_str("/// One derivatives.yaml entry, for tests and tooling.\n#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub struct DerivativeEntry {\n/// The operator (`mul.Tensor`).\npub op: &'static str,\n/// Its schema.\npub schema: &'static str,\n/// The node type recording it (`MulBackward0`); `None` when no output is differentiable.\npub node: Option<&'static str>,\n/// The differentiable inputs.\npub inputs: &'static [&'static str],\n/// The line of the entry in derivatives.yaml.\npub line: usize,\n}\n");
    s.push_str("/// Every derivatives.yaml entry, in file order.\npub const DERIVATIVES: &[DerivativeEntry] = &[\n");
    for d in ds {
        let inputs: Vec<String> = d.inputs.iter().map(|i| format!("{:?}", i.name)).collect();
        let _ = writeln!(
            s,
            "DerivativeEntry {{ op: {:?}, schema: {:?}, node: {}, inputs: &[{}], line: {} }},",
            d.name,
            d.func.to_string(),
            if d.has_differentiable_output() { format!("Some({:?})", d.node) } else { "None".into() },
            inputs.join(", "),
            d.line
        );
    }
    s.push_str("];\n");
    s.push_str("/// Differentiable operators with a kernel below autograd but no derivatives.yaml entry: their\n/// Autograd kernel records a `NotImplementedBackward` node, so the forward works and backward\n/// fails when it reaches the node.\n///\n");
    if not_implemented.is_empty() {
        s.push_str("/// (None: every differentiable operator has a formula.)\n");
    }
    for n in &not_implemented {
        let _ = writeln!(s, "/// - `{n}`");
    }
    let items: Vec<String> = not_implemented.iter().map(|n| format!("{n:?}")).collect();
    let _ = writeln!(s, "pub const NOT_IMPLEMENTED: &[&str] = &[{}];", items.join(", "));
    let no_forward: Vec<String> = ds
        .iter()
        .filter(|d| d.has_differentiable_output() && !d.has_forward())
        .map(|d| format!("{:?}", d.name))
        .collect();
    let _ = writeln!(
        s,
        "/// derivatives.yaml entries with a differentiable output but no forward formula (`result:`):\n/// forward-mode AD through them is an error.\npub const NO_FORWARD_FORMULA: &[&str] = &[{}];",
        no_forward.join(", ")
    );
    Ok(s)
}

/// Whether the node's input `i` needs a gradient (its edge is valid and the running pass needs it).
fn should(i: usize) -> String {
    format!("self.base.should_compute_output({i})")
}

/// [`should`] for an entry with `Tensor[]` inputs, whose edges start at [`edge_offset`]; a list
/// needs gradients when any of its elements does.
fn should_in(d: &Derivative, i: usize) -> String {
    let off = edge_offset(d, i);
    if d.inputs[i].list {
        format!("({off}..{}).any(|k| self.base.should_compute_output(k))", edge_offset(d, i + 1))
    } else {
        format!("self.base.should_compute_output({off})")
    }
}

fn emit_node(s: &mut String, d: &Derivative) {
    let _ = writeln!(s, "/// Backward of `{}` (derivatives.yaml line {}).\n///", d.func, d.line);
    for f in &d.formulas {
        let vars: Vec<&str> = f.vars.iter().map(|&i| d.inputs[i].name.as_str()).collect();
        let _ = writeln!(s, "/// - `{}`: `{}`", vars.join(", "), f.text.replace('`', "'"));
    }
    let _ = writeln!(s, "pub struct {} {{\n/// What every node has: next edges, input metadata, sequence number, hooks.\npub base: NodeBase,", d.node);
    for i in d.inputs.iter().filter(|i| i.list) {
        let _ = writeln!(
            s,
            "/// The number of elements of `{}` (its edges).\npub {}: usize,",
            i.name,
            edges_field(&i.ident)
        );
    }
    for f in &d.fields {
        let doc = match &f.source {
            FieldSource::InputTensor { .. } => {
                format!("`{}`, saved before the op ran.", f.name.strip_suffix('_').unwrap_or(&f.name))
            }
            FieldSource::OutputTensor { index, .. } => {
                format!("Output {index}, saved after the op ran and its history was set.")
            }
            FieldSource::InputMeta { ident, method } => {
                format!(
                    "`{}.{}()` (the tensor itself is not kept).",
                    ident.strip_suffix('_').unwrap_or(ident),
                    method.name
                )
            }
            FieldSource::Value { .. } => format!("The argument `{}`.", f.name),
            FieldSource::InputTensorList { ident, .. } => {
                format!("The elements of `{}`, saved before the op ran.", ident.strip_suffix('_').unwrap_or(ident))
            }
            FieldSource::InputMetaList { ident, method } => {
                format!("`{}()` of each element of `{}` (the tensors are not kept).", method.name, ident)
            }
        };
        let _ = writeln!(s, "/// {doc}\npub {}: {},", f.name, f.ty);
    }
    s.push_str("}\n");
    let _ = writeln!(s, "impl Node for {} {{", d.node);
    s.push_str("fn base(&self) -> &NodeBase {\n&self.base\n}\n");
    let _ = writeln!(s, "fn name(&self) -> String {{\n{:?}.to_string()\n}}", d.node);
    let has_lists = d.inputs.iter().any(|i| i.list);
    let n_in = if has_lists { edge_offset(d, d.inputs.len()) } else { d.inputs.len().to_string() };
    s.push_str("fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {\n");
    let _ = writeln!(s, "let mut grad_inputs: Vec<Option<Tensor>> = vec![None; {n_in}];");
    s.push_str("let Some(grads) = materialize_grads(grads, &self.base)? else {\nreturn Ok(grad_inputs);\n};\n");
    let uses_grads = d.formulas.iter().any(|f| {
        f.locals.iter().any(|l| matches!(d.bindings.get(l), Some(Binding::Grad | Binding::Grads | Binding::GradOf(_))))
    });
    if !uses_grads {
        s.push_str("let _ = grads;\n");
    }
    for f in &d.formulas {
        let cond: Vec<String> = f.vars.iter().map(|&i| if has_lists { should_in(d, i) } else { should(i) }).collect();
        let _ = writeln!(s, "if {} {{", cond.join(" || "));
        for local in &f.locals {
            let Some(b) = d.bindings.get(local) else { continue };
            let init = match b {
                Binding::Grad => "grads[0].clone()".to_string(),
                Binding::Grads => continue,
                Binding::GradOf(k) => format!("grads[{k}].clone()"),
                Binding::GradInputMask => format!("[{}]", cond.join(", ")),
                Binding::Tensor { field, optional: false } => format!("self.{field}.unpack(self)?"),
                Binding::Tensor { field, optional: true } => format!("self.{field}.unpack_opt(self)?"),
                Binding::TensorList { field, optional: false } => {
                    format!("self.{field}.iter().map(|v| v.unpack(self)).collect::<Result<Vec<_>>>()?")
                }
                Binding::TensorList { field, optional: true } => {
                    format!("self.{field}.iter().map(|v| v.unpack_opt(self)).collect::<Result<Vec<_>>>()?")
                }
                Binding::Output { field } => format!("unpack_output(&self.{field}, self)?"),
                Binding::Value { field, by: ValueBy::Copy } => format!("self.{field}"),
                Binding::Value { field, by: ValueBy::Clone } => format!("self.{field}.clone()"),
                Binding::Value { field, by: ValueBy::Ref } => format!("&self.{field}"),
            };
            let _ = writeln!(s, "let {local} = {init};");
        }
        s.push_str(&super::source_marker(&format!("derivatives.yaml:{}", f.line)));
        if f.vars.len() == 1 && d.inputs[f.vars[0]].list {
            // One gradient per element (`Tensor` or `Option<Tensor>`), extra ones ignored.
            let i = f.vars[0];
            let _ = writeln!(
                s,
                "let list_grads: Vec<_> = {};\nlet offset = {};\nfor (k, g) in list_grads.into_iter().enumerate().take(self.{}) {{\ngrad_inputs[offset + k] = g.into();\n}}",
                f.code,
                edge_offset(d, i),
                edges_field(&d.inputs[i].ident)
            );
        } else if f.vars.len() == 1 {
            let target = if has_lists { edge_offset(d, f.vars[0]) } else { f.vars[0].to_string() };
            let _ = writeln!(s, "grad_inputs[{target}] = Some({});", f.code);
        } else {
            let _ = writeln!(s, "let joint = {};", f.code);
            for (k, &i) in f.vars.iter().enumerate() {
                let target = if has_lists { edge_offset(d, i) } else { i.to_string() };
                let _ = writeln!(s, "grad_inputs[{target}] = joint.{k};");
            }
        }
        s.push_str("}\n");
    }
    s.push_str("Ok(grad_inputs)\n}\n");
    // (field, saved once as an output, a list of saved elements)
    let saved: Vec<(&str, bool, bool)> = d
        .fields
        .iter()
        .filter_map(|f| match f.source {
            FieldSource::InputTensor { .. } => Some((f.name.as_str(), false, false)),
            FieldSource::OutputTensor { .. } => Some((f.name.as_str(), true, false)),
            FieldSource::InputTensorList { .. } => Some((f.name.as_str(), false, true)),
            _ => None,
        })
        .collect();
    if !saved.is_empty() {
        s.push_str("fn release_variables(&self) {\n");
        for (f, once, list) in &saved {
            if *list {
                let _ = writeln!(s, "for v in &self.{f} {{\nv.reset();\n}}");
            } else if *once {
                let _ = writeln!(s, "if let Some(v) = self.{f}.get() {{\nv.reset();\n}}");
            } else {
                let _ = writeln!(s, "self.{f}.reset();");
            }
        }
        s.push_str("}\n");
        s.push_str("fn visit_saved(&self, f: &mut dyn FnMut(&str, &SavedVariable)) {\n");
        for (field, once, list) in &saved {
            let name = field.strip_suffix('_').unwrap_or(field);
            let name = if name == "self" { "self" } else { name };
            if *list {
                let _ = writeln!(s, "for v in &self.{field} {{\nf({name:?}, v);\n}}");
            } else if *once {
                let _ = writeln!(s, "if let Some(v) = self.{field}.get() {{\nf({name:?}, v);\n}}");
            } else {
                let _ = writeln!(s, "f({name:?}, &self.{field});");
            }
        }
        s.push_str("}\n");
    }
    s.push_str("}\n");
}

/// An expression for the union of the key sets of the op's tensor arguments.
fn key_set_expr(sig: &OpSig) -> String {
    let mut e = "KeySet::EMPTY".to_string();
    for a in &sig.args {
        match a.tensor_kind() {
            TensorArg::One => e.push_str(&format!(".union({}.key_set())", a.ident)),
            TensorArg::Optional => e.push_str(&format!(".union({}.map_or(KeySet::EMPTY, Tensor::key_set))", a.ident)),
            TensorArg::List => {
                e.push_str(&format!(".union({}.iter().fold(KeySet::EMPTY, |k, t| k.union(t.key_set())))", a.ident))
            }
            TensorArg::OptionalList => e.push_str(&format!(
                ".union({}.iter().flatten().fold(KeySet::EMPTY, |k, t| k.union(t.key_set())))",
                a.ident
            )),
            TensorArg::No => {}
        }
    }
    e
}

/// The call below autograd. Functional ops go through their typed entry point with Autograd
/// excluded; in-place and out= ops call the kernel below autograd directly ([`redispatch`]),
/// because their entry point bumps the version counter of the written tensors once the autograd
/// kernel returns, and must be the only one to do so.
fn redispatch(sig: &OpSig) -> String {
    if matches!(sig.kind(), SchemaKind::Inplace | SchemaKind::Out) {
        let boxed: Vec<String> = sig.args.iter().map(|a| format!("{}.into_ivalue()", a.ident)).collect();
        format!(
            "redispatch(&ops::{}::OP, {}, |kernel| kernel({}), || vec![{}], {})",
            sig.name,
            key_set_expr(sig),
            sig.arg_idents(),
            boxed.join(", "),
            sig.nret
        )
    } else {
        format!(
            "{{\nlet _below_autograd = ExcludeGuard::new(KeySet::AUTOGRAD);\nops::{}::call({})\n}}",
            sig.name,
            sig.arg_idents()
        )
    }
}

/// The kernel's output bindings and the list of outputs to set history on.
fn outputs(sig: &OpSig, d: Option<&Derivative>) -> (String, Vec<String>, Vec<String>) {
    let n = sig.nret;
    let names: Vec<String> =
        if n == 1 { vec!["result".into()] } else { (0..n).map(|i| format!("result{i}")).collect() };
    let pattern = if n == 1 { "result".to_string() } else { format!("({})", names.join(", ")) };
    let diff: Vec<String> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            d.map_or(sig.f.func.returns[*i].ty == Type::Base(BaseTy::Tensor), |d| d.output_differentiability[*i])
        })
        .map(|(_, n)| n.clone())
        .collect();
    (pattern, names, diff)
}

/// The name of the Autograd kernel [`emit_kernel`] writes for `sig`.
pub(super) fn kernel_name(sig: &OpSig) -> String {
    match sig.name.strip_suffix('_') {
        Some(base) if sig.kind() == SchemaKind::Inplace => format!("{base}_inplace_autograd"),
        _ => format!("{}_autograd", sig.name),
    }
}

fn emit_kernel(s: &mut String, k: &Kernel) -> String {
    let sig = &k.sig;
    let inplace = sig.kind() == SchemaKind::Inplace;
    let fname = kernel_name(sig);
    let d = match &k.recorder {
        Recorder::Formula(d) => Some(*d),
        Recorder::NotImplemented => None,
    };
    let what = match d {
        Some(d) => format!("records [`{}`]", d.node),
        None => "records a `NotImplementedBackward` node (no derivatives.yaml entry)".to_string(),
    };
    let _ = writeln!(s, "/// Autograd kernel of `{}`: {what} when an input requires grad.", sig.f.func);
    if inplace && d.is_some_and(|d| d.saves_self) {
        s.push_str(
            "///\n/// The formulas use `self` as it was before the write, so the node saves a clone taken first.\n",
        );
    }
    if inplace {
        s.push_str("///\n/// Redispatches below autograd without the typed entry point, whose version bump follows\n/// when this kernel returns; outputs are saved after `rebase_history` and expect that bump.\n");
    } else if is_view(sig.f) {
        s.push_str("///\n/// The output is a view of `self`: it is linked to its base whether or not anything requires\n/// grad, so that a later in-place write through it can update the base's history.\n");
    } else {
        s.push_str("///\n/// Only floating outputs carry gradients (a cast to an integer dtype records nothing).\n");
    }
    let _ = writeln!(s, "fn {fname}({}) -> Result<{}> {{", sig.params(), sig.ret);
    let edges = edge_list(d, sig);
    let _ = writeln!(s, "let requires_grad = compute_requires_grad({edges});");
    if inplace {
        s.push_str("check_inplace(self_, requires_grad)?;\n");
    }
    match d {
        None => forward_ad::emit_refuse(s, &edges, &format!("forward_ad::not_implemented({:?})", sig.schema_name)),
        Some(d) if inplace => forward_ad::emit_inplace_before(s, d, sig, &edges),
        Some(_) => {}
    }
    match d {
        None => {
            let _ = writeln!(
                s,
                "let grad_fn = if requires_grad {{\nSome(NotImplementedBackward::new({:?}, collect_next_edges({edges})))\n}} else {{\nNone\n}};",
                sig.schema_name
            );
        }
        Some(d) => {
            s.push_str("let grad_fn = if requires_grad {\n");
            if inplace && d.saves_self {
                s.push_str("let original_self = oxten_runtime::ops::deep_clone::call(self_, None)?;\n");
            }
            let _ = writeln!(s, "Some({} {{\nbase: NodeBase::new(collect_next_edges({edges})),", d.node);
            for i in d.inputs.iter().filter(|i| i.list) {
                let _ = writeln!(s, "{}: {}.len(),", edges_field(&i.ident), i.ident);
            }
            for f in &d.fields {
                let init = match &f.source {
                    FieldSource::InputTensor { ident, optional } => {
                        let src = if inplace && ident == "self_" { "&original_self" } else { ident.as_str() };
                        if *optional {
                            format!("SavedVariable::new_opt({src}, false)?")
                        } else {
                            format!("SavedVariable::new({src}, false)?")
                        }
                    }
                    FieldSource::OutputTensor { .. } => "OnceLock::new()".to_string(),
                    FieldSource::InputMeta { ident, method } => format!("{ident}.{}()", method.name),
                    FieldSource::InputTensorList { ident, optional: false } => {
                        format!("{ident}.iter().map(|t| SavedVariable::new(t, false)).collect::<Result<Vec<_>>>()?")
                    }
                    FieldSource::InputTensorList { ident, optional: true } => format!(
                        "{ident}.iter().map(|t| SavedVariable::new_opt(t.as_ref(), false)).collect::<Result<Vec<_>>>()?"
                    ),
                    FieldSource::InputMetaList { ident, method } => {
                        format!("{ident}.iter().map(|t| t.{}()).collect::<Vec<_>>()", method.name)
                    }
                    FieldSource::Value { conv } => conv.clone(),
                };
                if init == f.name {
                    let _ = writeln!(s, "{init},");
                } else {
                    let _ = writeln!(s, "{}: {init},", f.name);
                }
            }
            s.push_str("})\n} else {\nNone\n};\n");
        }
    }
    let (pattern, names, diff) = outputs(sig, d);
    let _ = writeln!(s, "let {pattern} = {}?;", redispatch(sig));
    if let Some(d) = d {
        if inplace {
            forward_ad::emit_inplace_after(s, d, sig);
        } else {
            forward_ad::emit_functional(s, d, sig, &edges);
        }
    }
    let diff_refs: Vec<String> = diff.iter().map(|n| format!("&{n}")).collect();
    if inplace {
        s.push_str("if let Some(grad_fn) = grad_fn {\n");
    } else {
        let floating: Vec<String> = diff.iter().map(|n| format!("{n}.dtype().is_floating_point()")).collect();
        let cond = if floating.is_empty() { "false".to_string() } else { floating.join(" && ") };
        let _ = writeln!(s, "if let Some(grad_fn) = grad_fn.filter(|_| {cond}) {{");
    }
    let saves_outputs =
        d.is_some_and(|d| d.fields.iter().any(|f| matches!(f.source, FieldSource::OutputTensor { .. })));
    let node = if saves_outputs {
        s.push_str("let grad_fn = Arc::new(grad_fn);\n");
        "grad_fn.clone()"
    } else {
        "Arc::new(grad_fn)"
    };
    if inplace {
        let _ = writeln!(s, "rebase_history(self_, {node});");
    } else {
        let _ = writeln!(s, "set_history(&[{}], {node});", diff_refs.join(", "));
    }
    if let Some(d) = d {
        for f in &d.fields {
            if let FieldSource::OutputTensor { index, is_output } = &f.source {
                let _ = writeln!(
                    s,
                    "let _ = grad_fn.{}.set(SavedVariable::new(&{}, {is_output})?);",
                    f.name, names[*index]
                );
            }
        }
    }
    s.push_str("}\n");
    // Views are tracked whether or not anything requires grad (an in-place write through the view
    // may later need its base).
    if !inplace && is_view(sig.f) {
        let _ = writeln!(s, "make_view(&{}, self_);", names[0]);
    }
    let _ = writeln!(s, "Ok({pattern})\n}}");
    fname
}

fn emit_out_kernel(s: &mut String, sig: &OpSig) -> String {
    let fname = format!("{}_autograd", sig.name);
    let tensors = tensor_refs(sig.args.iter());
    let _ = writeln!(
        s,
        "/// Autograd kernel of `{}`: out= variants are not differentiable.\nfn {fname}({}) -> Result<{}> {{",
        sig.f.func,
        sig.params(),
        sig.ret
    );
    let _ = writeln!(s, "refuse_out_differentiation(\"{}\", {tensors})?;", sig.schema_name);
    let _ = writeln!(s, "{}\n}}", redispatch(sig));
    fname
}
