//! Forward-mode AD in the Autograd kernels: the tangent of each differentiable output, from the
//! `result:` formulas of derivatives.yaml (see [`crate::derivatives::ForwardKind`]).
//!
//! For every open dual level at which an input has a tangent, a kernel computes the output's
//! tangent with that level hidden (so the formula's own operators do not propagate it) and
//! stores it: `set_tangent` on a new output, `set_tangent_inplace` on the tensor an in-place op
//! wrote. An in-place op computes the tangent before it writes, unless the formula reads the
//! output; then it runs after the write, on a copy of `self` taken first if it also reads `self`.
//! An operator with an output but no forward formula fails when an input has a tangent.

use std::fmt::Write as _;

use super::names::{self, TensorArg};
use super::sig::OpSig;
use crate::derivatives::{Binding, Derivative, FieldSource, ForwardFormula, ForwardKind};

/// The name of output `i` of `n` in a kernel.
fn out_var(n: usize, i: usize) -> String {
    if n == 1 {
        "result".into()
    } else {
        format!("result{i}")
    }
}

/// The tangent expression of an argument of the kernel at `level`.
fn tangent_expr(ident: &str, kind: TensorArg) -> String {
    match kind {
        TensorArg::Optional => format!("forward_ad::tangent_opt({ident}, level)?"),
        TensorArg::List => format!("forward_ad::tangent_list({ident}, level)?"),
        _ => format!("forward_ad::tangent_or_zeros({ident}, level)?"),
    }
}

/// The owned primal of a tensor argument.
fn primal_expr(ident: &str, kind: TensorArg) -> String {
    match kind {
        TensorArg::Optional => format!("{ident}.cloned()"),
        TensorArg::List | TensorArg::OptionalList => format!("{ident}.to_vec()"),
        _ => format!("{ident}.clone()"),
    }
}

/// The block computing the tangent of output `f.output`, as a `Tensor` expression.
fn block(d: &Derivative, f: &ForwardFormula, sig: &OpSig, nret: usize) -> String {
    let arg = |name: &str| sig.args.iter().find(|a| a.name == name);
    let mut lets: Vec<String> = Vec::new();
    let code = match &f.kind {
        ForwardKind::Explicit { code, names: used } => {
            for n in used {
                let named = |i: usize| d.func.returns[i].name.as_deref() == Some(n.as_str());
                if let Some(i) = (0..nret).find(|&i| n == &out_name(d, i) || named(i)) {
                    lets.push(format!("let {n} = {}.clone();", out_var(nret, i)));
                } else if let Some(base) = n.strip_suffix("_t").filter(|b| arg(b).is_some()) {
                    let a = arg(base).expect("checked");
                    lets.push(format!("let {n} = {};", tangent_expr(&a.ident, a.tensor_kind())));
                } else if let Some(a) = n.strip_suffix("_p").and_then(arg) {
                    lets.push(format!("let {n} = {};", primal_expr(&a.ident, a.tensor_kind())));
                } else if let Some(a) = arg(n) {
                    let init = if a.tensor_kind() != TensorArg::No {
                        primal_expr(&a.ident, a.tensor_kind())
                    } else {
                        owned(&a.ident, &a.ty)
                    };
                    lets.push(format!("let {} = {init};", a.ident));
                }
            }
            code.clone()
        }
        ForwardKind::ElementWise { formula } => {
            let bf = &d.formulas[*formula];
            let input = &d.inputs[0];
            let mut tangents = 0;
            for local in &bf.locals {
                let init = match d.bindings.get(local) {
                    Some(Binding::Grad) => tangent_expr(&input.ident, TensorArg::One),
                    Some(Binding::Grads) => format!("vec![{}]", tangent_expr(&input.ident, TensorArg::One)),
                    Some(Binding::GradOf(_)) => tangent_expr(&input.ident, TensorArg::One),
                    Some(Binding::GradInputMask) => "[true]".into(),
                    Some(Binding::Tensor { field, optional }) => {
                        primal_expr(field, if *optional { TensorArg::Optional } else { TensorArg::One })
                    }
                    Some(Binding::TensorList { field, .. }) => format!("{field}.to_vec()"),
                    Some(Binding::Output { field }) => {
                        let index = d.fields.iter().find_map(|x| match (&x.source, x.name == *field) {
                            (FieldSource::OutputTensor { index, .. }, true) => Some(*index),
                            _ => None,
                        });
                        format!("{}.clone()", out_var(nret, index.unwrap_or(0)))
                    }
                    Some(Binding::Value { field, by }) => {
                        let source = d.fields.iter().find(|x| x.name == *field).map(|x| &x.source);
                        let by_ref = matches!(by, crate::derivatives::ValueBy::Ref);
                        let value = match source {
                            Some(FieldSource::Value { conv }) => conv.clone(),
                            Some(FieldSource::InputMeta { ident, method }) => format!("{ident}.{}()", method.name),
                            Some(FieldSource::InputMetaList { ident, method }) => {
                                format!("{ident}.iter().map(|t| t.{}()).collect::<Vec<_>>()", method.name)
                            }
                            _ => field.clone(),
                        };
                        if by_ref {
                            format!("&{value}")
                        } else {
                            value
                        }
                    }
                    None => continue,
                };
                // Tangents first: a later `let` may shadow the input's identifier with its owned
                // primal (the input is `exponent`, not `self`, and the formula reads both).
                let is_tangent =
                    matches!(d.bindings.get(local), Some(Binding::Grad | Binding::Grads | Binding::GradOf(_)));
                let line = format!("let {local} = {init};");
                if is_tangent {
                    lets.insert(tangents, line);
                    tangents += 1;
                } else {
                    lets.push(line);
                }
            }
            bf.code.clone()
        }
        ForwardKind::Linear => {
            let args: Vec<String> = d
                .func
                .arguments
                .flat_all()
                .iter()
                .map(|a| {
                    let ident = names::arg_ident(&a.name);
                    let kind = names::tensor_arg(&a.ty);
                    if d.inputs.iter().any(|i| i.name == a.name) {
                        lets.push(format!("let {ident}_t = {};", tangent_expr(&ident, kind)));
                        match kind {
                            TensorArg::Optional => format!("{ident}_t.as_ref()"),
                            _ => format!("&{ident}_t"),
                        }
                    } else {
                        ident
                    }
                })
                .collect();
            format!("ops::{}::call({})?", names::rust_name(&d.func.name), args.join(", "))
        }
    };
    // A Copy argument is in scope as it is (`let dim = dim;` would be redundant).
    lets.retain(|l| {
        let body = l.trim_start_matches("let ").trim_end_matches(';');
        !matches!(body.split_once(" = "), Some((a, b)) if a == b)
    });
    // `{ let grad = …; grad }` (a formula that is just `grad`) is the expression itself.
    if let [only] = &lets[..] {
        if let Some(init) = only.strip_prefix(&format!("let {} = ", code.trim())) {
            return init.trim_end_matches(';').to_string();
        }
    }
    format!("{{\n{}\n{code}\n}}", lets.join("\n"))
}

/// The name output `i` has in formulas (`result`, `result0` …).
fn out_name(d: &Derivative, i: usize) -> String {
    out_var(d.func.returns.len(), i)
}

/// An owned value of a non-tensor kernel parameter, as formulas see arguments.
fn owned(ident: &str, ty: &str) -> String {
    match ty {
        "&str" => format!("{ident}.to_string()"),
        "Option<&str>" => format!("{ident}.map(str::to_string)"),
        "Option<&Generator>" => format!("{ident}.cloned()"),
        t if t.starts_with("&[") => format!("{ident}.to_vec()"),
        t if t.starts_with("Option<&[") => format!("{ident}.map(|v| v.to_vec())"),
        _ => ident.to_string(),
    }
}

/// Whether a formula reads the tensor `self`.
fn reads_self(d: &Derivative, f: &ForwardFormula) -> bool {
    match &f.kind {
        ForwardKind::Explicit { names: used, .. } => used.contains("self_p") || used.contains("self"),
        ForwardKind::ElementWise { formula } => d.formulas[*formula].locals.contains("self_"),
        ForwardKind::Linear => false,
    }
}

/// Code after the functional kernel's outputs exist: their tangents.
pub fn emit_functional(s: &mut String, d: &Derivative, sig: &OpSig, edges: &str) {
    let nret = sig.nret;
    if !d.has_forward() {
        emit_refuse(s, edges, &format!("forward_ad::not_implemented({:?})", sig.schema_name));
        return;
    }
    let _ = writeln!(
        s,
        "if forward_ad::is_active() {{\nfor level in forward_ad::levels_of({edges}) {{\nlet _hidden = forward_ad::HideLevel::new(level);"
    );
    for f in &d.forward {
        let out = out_var(nret, f.output);
        let _ = writeln!(
            s,
            "if {out}.dtype().is_floating_point() {{\nlet tangent = {};\nforward_ad::set_tangent(&{out}, level, tangent)?;\n}}",
            block(d, f, sig, nret)
        );
    }
    s.push_str("}\n}\n");
}

/// Code before an in-place kernel writes: the levels, the tangents computable from the inputs,
/// and a copy of `self` when a formula needs it after the write.
pub fn emit_inplace_before(s: &mut String, d: &Derivative, sig: &OpSig, edges: &str) {
    let _ = writeln!(
        s,
        "let fw_levels = if forward_ad::is_active() {{ forward_ad::levels_of({edges}) }} else {{ Vec::new() }};"
    );
    let f = d.forward.iter().find(|f| f.output == 0);
    let mutable = if f.is_some() { "mut " } else { "" };
    let _ = writeln!(s, "let {mutable}fw_tangents: Vec<(u64, Tensor)> = Vec::new();");
    match f {
        None => {
            let _ = writeln!(
                s,
                "if !fw_levels.is_empty() {{\nreturn Err(forward_ad::not_implemented({:?}));\n}}",
                sig.schema_name
            );
        }
        Some(f) if !f.uses_result => {
            let _ = writeln!(
                s,
                "for &level in &fw_levels {{\nlet _hidden = forward_ad::HideLevel::new(level);\nlet tangent = {};\nfw_tangents.push((level, tangent));\n}}",
                block(d, f, sig, 1)
            );
        }
        Some(f) if reads_self(d, f) => {
            s.push_str("let fw_original_self = if fw_levels.is_empty() { None } else { Some(oxten_runtime::ops::deep_clone::call(self_, None)?) };\n");
        }
        Some(_) => {}
    }
}

/// Code after an in-place kernel wrote `self`: its new tangents.
pub fn emit_inplace_after(s: &mut String, d: &Derivative, sig: &OpSig) {
    if let Some(f) = d.forward.iter().find(|f| f.output == 0 && f.uses_result) {
        let shadow = if reads_self(d, f) {
            "let self_: &Tensor = fw_original_self.as_ref().expect(\"copied before the write\");\n"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "for &level in &fw_levels {{\nlet _hidden = forward_ad::HideLevel::new(level);\n{shadow}let tangent = {};\nfw_tangents.push((level, tangent));\n}}",
            block(d, f, sig, 1)
        );
    }
    s.push_str("for (level, tangent) in fw_tangents {\nforward_ad::set_tangent_inplace(self_, level, tangent)?;\n}\n");
}

/// The check of a kernel that cannot propagate tangents (no derivatives entry, out=).
pub fn emit_refuse(s: &mut String, edges: &str, message: &str) {
    let _ = writeln!(
        s,
        "if forward_ad::is_active() && !forward_ad::levels_of({edges}).is_empty() {{\nreturn Err({message});\n}}"
    );
}
