//! Autograd for the `_foreach_*` operators.
//!
//! A foreach operator's derivative is its per-tensor operator's, index by index (torchgen derives
//! PyTorch's foreach formulas the same way): `_foreach_add_.Scalar(self, scalar)` is
//! `add_.Scalar(self[i], scalar)` for each `i`. So the generated Autograd kernel of a foreach
//! operator runs the fused kernel below autograd when nothing requires grad (the optimizers'
//! case), and otherwise applies the per-tensor operator's own Autograd kernel at each index, which
//! records its node, rebases an in-place write and refuses a leaf that requires grad exactly as a
//! single call would.
//!
//! The per-tensor operator is `_foreach_` stripped from the name (`_foreach_add_` → `add_`),
//! or the one `per_tensor:` names. Among its overloads the first whose arguments line up is
//! used: each foreach argument goes to the per-tensor argument of the same name, else the one in
//! the same position; a `Tensor[]` (or `Scalar[]`) feeds a `Tensor` (`Scalar`) one element per
//! index, any other type must be the same; per-tensor arguments left over take their defaults.

use std::fmt::Write as _;

use super::sig::OpSig;
use crate::model::{BaseTy, SchemaKind, Type};
use crate::yaml::NativeFunction;

/// How one argument of the per-tensor call is formed.
enum Source {
    /// Element `i` of a foreach list argument.
    Element(String),
    /// A foreach argument passed as it is.
    Same(String),
    /// The per-tensor argument's default.
    Default(String),
}

/// A foreach operator and the per-tensor operator its autograd applies.
pub struct ForeachOp<'a> {
    /// The foreach operator.
    pub sig: OpSig<'a>,
    /// The per-tensor operator.
    pub per_tensor: OpSig<'a>,
    args: Vec<Source>,
}

/// Whether `f` is a `_foreach_*` operator.
pub fn is_foreach(f: &NativeFunction) -> bool {
    f.func.name.name.base.starts_with("_foreach_")
}

/// The per-tensor operator of foreach operator `f`, with the argument mapping; an error naming
/// the entry when none lines up.
pub fn resolve<'a>(f: &'a NativeFunction, fns: &'a [NativeFunction]) -> Result<ForeachOp<'a>, String> {
    let (base, overload) = match &f.per_tensor {
        Some(n) => (n.name.clone(), Some(n.overload.as_str())),
        None => {
            let mut name = f.func.name.name.clone();
            name.base = name.base["_foreach_".len()..].to_string();
            (name, None)
        }
    };
    let kind = f.func.kind();
    let candidates = fns.iter().filter(|g| {
        g.func.name.name == base && overload.is_none_or(|o| g.func.name.overload == o) && g.func.kind() == kind
    });
    for g in candidates {
        if let Some(args) = line_up(f, g) {
            return Ok(ForeachOp { sig: OpSig::new(f)?, per_tensor: OpSig::new(g)?, args });
        }
    }
    let wanted = match overload {
        Some(o) if !o.is_empty() => format!("{base}.{o}"),
        _ => base.to_string(),
    };
    Err(format!(
        "{}: `{}`: no overload of `{wanted}` takes its arguments one tensor at a time, so its derivative cannot be derived; name the per-tensor operator with `per_tensor:`",
        f.loc,
        f.func.name
    ))
}

/// The per-tensor call's arguments for foreach `f` calling `g`, if they line up.
fn line_up(f: &NativeFunction, g: &NativeFunction) -> Option<Vec<Source>> {
    let fa = f.func.arguments.flat_non_out();
    let ga = g.func.arguments.flat_all();
    if !g.func.arguments.out.is_empty() || fa.first().map(|a| &a.ty) != Some(&list_of(BaseTy::Tensor)) {
        return None;
    }
    if f.func.kind() == SchemaKind::Functional
        && (f.func.returns.len() != 1
            || g.func.returns.len() != 1
            || g.func.returns[0].ty != Type::Base(BaseTy::Tensor))
    {
        return None;
    }
    let mut sources: Vec<Option<Source>> = ga.iter().map(|_| None).collect();
    for (pos, a) in fa.iter().enumerate() {
        let target = ga
            .iter()
            .position(|b| b.name == a.name)
            .or_else(|| (pos < ga.len() && !fa.iter().any(|x| x.name == ga[pos].name)).then_some(pos))?;
        if sources[target].is_some() {
            return None;
        }
        let ident = super::names::arg_ident(&a.name);
        let b = &ga[target];
        sources[target] = Some(match &a.ty {
            Type::List { elem, size: None } if **elem == b.ty && is_per_element(&b.ty) => Source::Element(ident),
            t if *t == b.ty => Source::Same(ident),
            _ => return None,
        });
    }
    ga.iter()
        .zip(sources)
        .map(|(b, s)| match s {
            Some(s) => Some(s),
            None => b.default.as_ref().and_then(|_| super::names::default_expr(b).ok()).map(Source::Default),
        })
        .collect()
}

fn list_of(t: BaseTy) -> Type {
    Type::List { elem: Box::new(Type::Base(t)), size: None }
}

/// Types a foreach list hands out one element per index.
fn is_per_element(t: &Type) -> bool {
    matches!(t, Type::Base(BaseTy::Tensor | BaseTy::Scalar))
}

impl ForeachOp<'_> {
    /// Emits the Autograd kernel into `s` and returns its name. `per_tensor_kernel` is the
    /// per-tensor operator's Autograd kernel, `None` where this build has none (then a foreach
    /// call that needs a gradient is an error); `below` is the call below autograd.
    pub fn emit_kernel(&self, s: &mut String, per_tensor_kernel: Option<&str>, below: &str) -> String {
        let sig = &self.sig;
        let fname = super::autograd::kernel_name(sig);
        let lists: Vec<&str> = sig
            .args
            .iter()
            .filter(|a| matches!(&a.schema_ty, Type::List { elem, size: None } if **elem == Type::Base(BaseTy::Tensor)))
            .map(|a| a.ident.as_str())
            .collect();
        let _ = writeln!(
            s,
            "/// Autograd kernel of `{}`: the fused kernel below autograd, or, when grad mode is on and a\n/// tensor of the lists requires grad (or has a forward-mode tangent), `{}` at each index,\n/// recorded as that operator records it.",
            sig.f.func, self.per_tensor.schema_name
        );
        // The loops index several lists in step.
        let _ = writeln!(
            s,
            "#[allow(clippy::needless_range_loop)]\nfn {fname}({}) -> Result<{}> {{",
            sig.params(),
            sig.ret
        );
        let any: Vec<String> = lists.iter().map(|l| format!("{l}.iter().any(Tensor::requires_grad)")).collect();
        let _ = writeln!(
            s,
            "let tangents = forward_ad::is_active() && !forward_ad::levels_of_lists(&[{}]).is_empty();",
            lists.join(", ")
        );
        let _ = writeln!(
            s,
            "let records = oxten_runtime::autograd::is_grad_enabled() && ({});\nif !(tangents || records) {{\nreturn {below};\n}}",
            any.join(" || ")
        );
        let Some(kernel) = per_tensor_kernel else {
            let _ = writeln!(
                s,
                "Err(Error::runtime(\"the derivative for '{}' is not implemented: this build has no Autograd kernel for '{}'\"))\n}}",
                sig.schema_name, self.per_tensor.schema_name
            );
            return fname;
        };
        let first = sig.args[0].ident.as_str();
        for l in lists.iter().skip(1) {
            let _ = writeln!(
                s,
                "if {l}.len() != {first}.len() {{\nreturn Err(Error::value(format!(\"Tensor lists must have the same number of tensors, got {{}} and {{}}\", {first}.len(), {l}.len())));\n}}"
            );
        }
        for a in sig
            .args
            .iter()
            .filter(|a| matches!(&a.schema_ty, Type::List { elem, .. } if **elem == Type::Base(BaseTy::Scalar)))
        {
            let _ = writeln!(
                s,
                "if {}.len() != {first}.len() {{\nreturn Err(Error::value(\"Tensor list must have same number of elements as scalar list.\"));\n}}",
                a.ident
            );
        }
        let call_args: Vec<String> = self
            .args
            .iter()
            .zip(&self.per_tensor.args)
            .map(|(src, b)| match src {
                Source::Element(l) if b.tensor_kind_is_one() => format!("&{l}[i]"),
                Source::Element(l) => format!("{l}[i]"),
                Source::Same(a) => a.clone(),
                Source::Default(d) => d.clone(),
            })
            .collect();
        let call = format!("{kernel}({})", call_args.join(", "));
        if sig.kind() == SchemaKind::Inplace {
            // Every write is checked before the first one, so a refused list is left unchanged.
            let at_i: Vec<String> = lists.iter().map(|l| format!("{l}[i].requires_grad()")).collect();
            let _ =
                writeln!(s, "for i in 0..{first}.len() {{\ncheck_inplace(&{first}[i], {})?;\n}}", at_i.join(" || "));
            let _ = writeln!(s, "for i in 0..{first}.len() {{\n{call}?;\n}}\nOk(())\n}}");
        } else {
            let _ = writeln!(s, "(0..{first}.len()).map(|i| {call}).collect()\n}}");
        }
        fname
    }
}
