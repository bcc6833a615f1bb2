//! What the emitters need to know about a structured group: its out= op, where its meta function
//! and its impls come from, and the precomputed values the meta hands to the impl.

use super::names::{self, camel};
use super::sig::{OpSig, RustArg};
use crate::model::Type;
use crate::yaml::NativeFunction;

/// One precomputed field (`dim -> int dim` gives field `dim: i64` replacing argument `dim`).
#[derive(Clone)]
pub struct Precomputed {
    /// The argument the fields replace in the impl's signature (None for extra fields).
    pub replaces: Option<String>,
    pub fields: Vec<(String, String)>,
}

/// A structured out= operator and the plan for its kernels.
#[derive(Clone)]
pub struct StructuredOp<'a> {
    pub out: OpSig<'a>,
    pub uses_iterator: bool,
    pub pointwise: Option<String>,
    /// A hand-written check the generated meta of a pointwise op calls first.
    pub pointwise_check: Option<String>,
    /// `pointwise_operands:`, the iterator's operand order (schema order when `None`).
    pub pointwise_operands: Option<Vec<String>>,
    /// `pointwise_constants:`, scalars that are per-call constants besides `alpha`.
    pub pointwise_constants: Vec<String>,
    pub precomputed: Vec<Precomputed>,
}

impl<'a> StructuredOp<'a> {
    pub fn new(f: &'a NativeFunction) -> Result<StructuredOp<'a>, String> {
        let out = OpSig::new(f)?;
        let mut precomputed = Vec::new();
        for line in &f.precomputed {
            precomputed.push(parse_precomputed(line)?);
        }
        Ok(StructuredOp {
            uses_iterator: f.structured_inherits.is_some(),
            pointwise: f.pointwise.clone(),
            pointwise_check: f.pointwise_check.clone(),
            pointwise_operands: f.pointwise_operands.clone(),
            pointwise_constants: f.pointwise_constants.clone(),
            precomputed,
            out,
        })
    }

    /// Arguments the meta function and a functional variant take (no out=).
    pub fn inputs(&self) -> Vec<&RustArg> {
        self.out.args.iter().filter(|a| !a.is_out).collect()
    }
    pub fn outputs(&self) -> Vec<&RustArg> {
        self.out.args.iter().filter(|a| a.is_out).collect()
    }
    /// Name of the trait declaring the hand-written meta function.
    pub fn meta_trait(&self) -> String {
        format!("{}MetaFn", camel(&self.out.name))
    }
    pub fn precomputed_struct(&self) -> Option<String> {
        (!self.precomputed.is_empty()).then(|| format!("{}Precomputed", camel(&self.out.name)))
    }
    /// What the meta function returns.
    pub fn meta_return(&self) -> String {
        if self.uses_iterator {
            "TensorIterator".into()
        } else {
            self.precomputed_struct().unwrap_or_else(|| "()".into())
        }
    }
    /// Name of the trait declaring the `pointwise_check` function, if any.
    pub fn check_trait(&self) -> Option<String> {
        self.pointwise_check.as_ref().map(|c| camel(c))
    }
    /// `self_: &Tensor, other: &Tensor, ...` (the inputs only).
    pub fn input_params(&self) -> String {
        self.inputs().iter().map(|a| format!("{}: {}", a.ident, a.ty)).collect::<Vec<_>>().join(", ")
    }
    /// `outs: &mut StructuredOutputs, self_: &Tensor, ...`
    pub fn meta_params(&self) -> String {
        let mut p = vec!["outs: &mut StructuredOutputs".to_string()];
        p.extend(self.inputs().iter().map(|a| format!("{}: {}", a.ident, a.ty)));
        p.join(", ")
    }
    /// Parameters of an impl function.
    pub fn impl_params(&self) -> String {
        if self.uses_iterator {
            let mut p = vec!["iter: &TensorIterator".to_string()];
            p.extend(self.inputs().iter().map(|a| format!("{}: {}", a.ident, a.ty)));
            return p.join(", ");
        }
        self.impl_arg_list(|a| format!("{}: {}", a.ident, a.ty), |n, t| format!("{n}: {t}")).join(", ")
    }
    /// Arguments of an impl call inside a wrapper (`p` is the precomputed value, `outs` the
    /// structured outputs).
    pub fn impl_call_args(&self) -> String {
        if self.uses_iterator {
            let mut p = vec!["&iter".to_string()];
            p.extend(self.inputs().iter().map(|a| a.ident.clone()));
            return p.join(", ");
        }
        let mut i = 0usize;
        self.impl_arg_list(
            |a| {
                if a.is_out {
                    let s = format!("outs.output({i})");
                    i += 1;
                    s
                } else {
                    a.ident.clone()
                }
            },
            |n, _| format!("precomputed.{n}"),
        )
        .join(", ")
    }

    fn impl_arg_list(
        &self,
        mut arg: impl FnMut(&RustArg) -> String,
        field: impl Fn(&str, &str) -> String,
    ) -> Vec<String> {
        let mut p = Vec::new();
        for a in &self.out.args {
            if let Some(pc) = self.precomputed.iter().find(|pc| pc.replaces.as_deref() == Some(&a.name)) {
                p.extend(pc.fields.iter().map(|(n, t)| field(n, t)));
            } else {
                p.push(arg(a));
            }
        }
        for pc in self.precomputed.iter().filter(|pc| pc.replaces.is_none()) {
            p.extend(pc.fields.iter().map(|(n, t)| field(n, t)));
        }
        p
    }
}

fn parse_precomputed(line: &str) -> Result<Precomputed, String> {
    let (replaces, rest) = match line.split_once("->") {
        Some((a, r)) => (Some(a.trim().to_string()), r),
        None => (None, line),
    };
    let mut fields = Vec::new();
    for part in rest.split(',') {
        let part = part.trim();
        let (ty, name) =
            part.rsplit_once(' ').ok_or_else(|| format!("precomputed field `{part}` must be `<type> <name>`"))?;
        let ty = Type::parse(ty.trim()).map_err(|e| format!("precomputed field `{part}`: {e}"))?;
        fields.push((name.trim().to_string(), names::arg_type(&ty)?));
    }
    Ok(Precomputed { replaces, fields })
}
