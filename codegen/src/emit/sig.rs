//! A Rust view of one operator's signature: what every emitter needs to know about it.

use super::names::{self, TensorArg};
use crate::model::{BaseTy, SchemaKind, Type};
use crate::yaml::{NativeFunction, Variant};

/// One argument as Rust sees it.
#[derive(Clone)]
pub struct RustArg {
    /// The schema name (`self`).
    pub name: String,
    /// The Rust identifier (`self_`).
    pub ident: String,
    /// Type in kernel signatures and typed entry points.
    pub ty: String,
    /// Rust expression of the default, for defaulted arguments.
    pub default: Option<String>,
    pub schema_ty: Type,
    pub is_out: bool,
    pub is_write: bool,
    /// The schema text of the argument (for docs).
    pub text: String,
    /// A defaulted argument the short API forms take positionally (`positional_defaults:`).
    pub positional_default: bool,
}

impl RustArg {
    /// Whether the argument is a field of the options struct rather than a parameter.
    pub fn in_opts(&self) -> bool {
        self.default.is_some() && !self.positional_default
    }
    pub fn tensor_kind(&self) -> TensorArg {
        names::tensor_arg(&self.schema_ty)
    }
    /// Whether the argument is a plain `Tensor`.
    pub fn tensor_kind_is_one(&self) -> bool {
        matches!(self.tensor_kind(), TensorArg::One)
    }
    pub fn is_scalar(&self) -> bool {
        self.schema_ty == Type::Base(BaseTy::Scalar)
    }
    /// Parameter type in the user-facing API: `Scalar` becomes `impl Into<Scalar>`, and a
    /// tensor list takes whatever callers hold (`&[Tensor]`, `&[&Tensor]`, `&Vec<Tensor>`).
    pub fn api_ty(&self) -> String {
        if self.is_scalar() {
            "impl Into<Scalar>".into()
        } else if matches!(self.tensor_kind(), TensorArg::List) {
            "&[impl AsRef<Tensor>]".into()
        } else {
            self.ty.clone()
        }
    }
    /// The expression passing an API parameter on to the typed entry point.
    pub fn api_conv(&self) -> String {
        if self.is_scalar() {
            format!("{}.into()", self.ident)
        } else if matches!(self.tensor_kind(), TensorArg::List) {
            format!("&crate::ops_support::tensor_list({})", self.ident)
        } else {
            self.ident.clone()
        }
    }
}

/// One operator as Rust sees it.
#[derive(Clone)]
pub struct OpSig<'a> {
    pub f: &'a NativeFunction,
    /// `add_`, `sum_dim_intlist` …
    pub name: String,
    /// The operator name as written in the schema (`add.Tensor`).
    pub schema_name: String,
    pub args: Vec<RustArg>,
    pub ret: String,
    pub nret: usize,
}

impl<'a> OpSig<'a> {
    pub fn new(f: &'a NativeFunction) -> Result<OpSig<'a>, String> {
        let s = &f.func;
        let mut args = Vec::new();
        // The first `positional_defaults` defaulted arguments before the schema's `*`.
        let positional: Vec<&str> = s
            .arguments
            .positional
            .iter()
            .filter(|a| a.default.is_some())
            .take(f.positional_defaults)
            .map(|a| a.name.as_str())
            .collect();
        let outs: Vec<&str> = s.arguments.out.iter().map(|a| a.name.as_str()).collect();
        for a in s.arguments.flat_all() {
            let default = match &a.default {
                Some(_) => Some(names::default_expr(a)?),
                None => None,
            };
            args.push(RustArg {
                name: a.name.clone(),
                ident: names::arg_ident(&a.name),
                ty: names::arg_type(&a.ty).map_err(|e| format!("argument `{}`: {e}", a.name))?,
                default,
                schema_ty: a.ty.clone(),
                is_out: outs.contains(&a.name.as_str()),
                is_write: a.is_write(),
                text: a.to_string(),
                positional_default: positional.contains(&a.name.as_str()),
            });
        }
        let ret = names::return_type(&s.returns)?;
        Ok(OpSig {
            f,
            name: names::rust_name(&s.name),
            schema_name: s.name.to_string(),
            args,
            ret,
            nret: s.returns.len(),
        })
    }

    pub fn kind(&self) -> SchemaKind {
        self.f.func.kind()
    }
    pub fn has_method(&self) -> bool {
        self.f.variants.contains(&Variant::Method)
    }
    pub fn has_function(&self) -> bool {
        self.f.variants.contains(&Variant::Function)
    }
    /// `fn(&Tensor, &Tensor, Scalar) -> Result<Tensor>`
    pub fn fn_type(&self) -> String {
        let tys: Vec<&str> = self.args.iter().map(|a| a.ty.as_str()).collect();
        format!("fn({}) -> Result<{}>", tys.join(", "), self.ret)
    }
    /// `self_: &Tensor, other: &Tensor, alpha: Scalar`
    pub fn params(&self) -> String {
        self.args.iter().map(|a| format!("{}: {}", a.ident, a.ty)).collect::<Vec<_>>().join(", ")
    }
    pub fn arg_idents(&self) -> String {
        self.args.iter().map(|a| a.ident.clone()).collect::<Vec<_>>().join(", ")
    }
    /// Whether some argument or return is a tensor (else the op is a factory).
    pub fn tensor_args(&self) -> Vec<&RustArg> {
        self.args.iter().filter(|a| !matches!(a.tensor_kind(), TensorArg::No)).collect()
    }
    /// The defaulted arguments the options struct holds (all but the positional ones).
    pub fn defaulted(&self) -> Vec<&RustArg> {
        self.args.iter().filter(|a| a.in_opts()).collect()
    }
    pub fn opts_name(&self) -> String {
        format!("{}Opts", names::camel(&self.name))
    }
    pub fn opts_lifetime(&self) -> bool {
        self.defaulted().iter().any(|a| names::borrows(&a.schema_ty))
    }
    /// The options struct type as written in a signature.
    pub fn opts_ty(&self) -> String {
        if self.opts_lifetime() {
            format!("{}<'_>", self.opts_name())
        } else {
            self.opts_name()
        }
    }
}
