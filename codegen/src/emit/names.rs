//! How schema names and types become Rust names and types.
//!
//! # The naming rule
//! An operator `base[.overload]` becomes the Rust name `base`, followed by `_` and the overload
//! name in lower case unless the overload is one of the "default" overloads
//! ([`DEFAULT_OVERLOADS`]: none, `Tensor`, `int`, `self`, `memory_format`, `using_ints`), followed
//! by `_` for in-place operators. A base name that is a Rust keyword always keeps its overload,
//! and so does `.Tensor` where another overload is the plain name ([`KEEP_TENSOR_OVERLOAD`]:
//! `clamp` / `clamp.Tensor` become `clamp` / `clamp_tensor`, `narrow` / `narrow.Tensor` become
//! `narrow` / `narrow_tensor`, `ctc_loss.Tensor` and `randint_like.Tensor` become `ctc_loss_tensor` and
//! `randint_like_tensor`).
//!
//! | schema | Rust |
//! |---|---|
//! | `add.Tensor` / `add_.Tensor` / `add.out` | `add` / `add_` / `add_out` |
//! | `add.Scalar` / `add_.Scalar` | `add_scalar` / `add_scalar_` |
//! | `sum.dim_IntList` / `sum.IntList_out` | `sum_dim_intlist` / `sum_intlist_out` |
//! | `where.self` | `where_self` |
//! | `clamp` / `clamp.Tensor` | `clamp` / `clamp_tensor` |
//!
//! Every name has a fallible form `try_<name>` returning `Result` and a panicking form `<name>`.
//! Defaulted arguments live in an options struct `<Name>Opts` (with `Default` giving the schema's
//! defaults) taken by the `<name>_with` forms; the plain forms use the defaults.

use crate::model::{Argument, BaseTy, DefaultValue, OperatorName, Return, Type};

/// Overload names that do not appear in the Rust name.
pub const DEFAULT_OVERLOADS: [&str; 6] = ["", "Tensor", "int", "self", "memory_format", "using_ints"];

/// Base names whose `.Tensor` overload keeps its overload name: the unnamed overload is the
/// scalar form (`clamp`), or the lengths are tensors where the other overload takes lists
/// (`ctc_loss.Tensor`, whose options struct would otherwise be `_ctc_loss`'s `CtcLossOpts`).
pub const KEEP_TENSOR_OVERLOAD: [&str; 6] = ["clamp", "clamp_min", "clamp_max", "narrow", "ctc_loss", "randint_like"];

/// Methods of std traits implemented by `Tensor` that an inherent method must not shadow.
const SHADOWED_STD_METHODS: [&str; 1] = ["clone"];

const KEYWORDS: [&str; 8] = ["where", "as", "in", "type", "match", "loop", "move", "ref"];

/// The Rust function/method name of an operator (see the module docs).
pub fn rust_name(op: &OperatorName) -> String {
    let base = &op.name.base;
    let keep_overload = KEYWORDS.contains(&base.as_str())
        || !DEFAULT_OVERLOADS.contains(&op.overload.as_str())
        || (op.overload == "Tensor" && KEEP_TENSOR_OVERLOAD.contains(&base.as_str()));
    let mut s = if SHADOWED_STD_METHODS.contains(&base.as_str()) { format!("deep_{base}") } else { base.clone() };
    if keep_overload && !op.overload.is_empty() {
        s.push('_');
        s.push_str(&op.overload.to_lowercase());
    }
    if op.name.inplace {
        s.push('_');
    }
    s
}

/// `snake_name` → `SnakeName`; a trailing `_` (in-place) becomes `Inplace`.
pub fn camel(name: &str) -> String {
    let mut out = String::new();
    let inplace = name.ends_with('_');
    for part in name.trim_end_matches('_').split('_').filter(|p| !p.is_empty()) {
        let mut cs = part.chars();
        if let Some(c) = cs.next() {
            out.extend(c.to_uppercase());
            out.push_str(cs.as_str());
        }
    }
    if inplace {
        out.push_str("Inplace");
    }
    out
}

/// Rust keywords (strict, reserved and edition-2024 reserved) that cannot be used as plain
/// identifiers.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
    "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract",
    "become", "box", "do", "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// A Rust identifier for an argument: the name, or `name_` for a Rust keyword (`self` → `self_`,
/// `unsafe` → `unsafe_`).
pub fn arg_ident(name: &str) -> String {
    if RUST_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The Rust type of an argument in kernel signatures and typed entry points.
pub fn arg_type(ty: &Type) -> Result<String, String> {
    Ok(match ty {
        Type::Base(b) => base_type(*b)?.to_string(),
        Type::Optional(inner) => match &**inner {
            Type::Base(BaseTy::Tensor) => "Option<&Tensor>".into(),
            Type::Base(BaseTy::Str) => "Option<&str>".into(),
            Type::Base(BaseTy::Generator) => "Option<&Generator>".into(),
            Type::List { .. } => format!("Option<{}>", arg_type(inner)?),
            Type::Base(b) => format!("Option<{}>", base_type(*b)?),
            Type::Optional(_) => return Err("nested optional types are not supported".into()),
        },
        Type::List { elem, .. } => match &**elem {
            Type::Base(BaseTy::Tensor) => "&[Tensor]".into(),
            Type::Optional(t) if **t == Type::Base(BaseTy::Tensor) => "&[Option<Tensor>]".into(),
            Type::Base(BaseTy::Int) | Type::Base(BaseTy::SymInt) => "&[i64]".into(),
            Type::Base(BaseTy::Float) => "&[f64]".into(),
            Type::Base(BaseTy::Bool) => "&[bool]".into(),
            Type::Base(BaseTy::Scalar) => "&[Scalar]".into(),
            other => return Err(format!("list type `{other}` has no Rust mapping yet")),
        },
    })
}

fn base_type(b: BaseTy) -> Result<&'static str, String> {
    Ok(match b {
        BaseTy::Tensor => "&Tensor",
        BaseTy::Int | BaseTy::SymInt => "i64",
        BaseTy::Float => "f64",
        BaseTy::Bool => "bool",
        BaseTy::Str => "&str",
        BaseTy::Scalar => "Scalar",
        BaseTy::ScalarType => "DType",
        BaseTy::Device => "Device",
        BaseTy::Layout => "Layout",
        BaseTy::MemoryFormat => "MemoryFormat",
        other => return Err(format!("type `{}` has no Rust mapping yet", other.name())),
    })
}

/// Whether the Rust type of `ty` borrows (and so needs a lifetime in an options struct).
pub fn borrows(ty: &Type) -> bool {
    match ty {
        Type::Base(b) => matches!(b, BaseTy::Tensor | BaseTy::Str | BaseTy::Generator),
        Type::Optional(inner) => borrows(inner),
        Type::List { .. } => true,
    }
}

/// The Rust return type of a schema's returns.
pub fn return_type(rets: &[Return]) -> Result<String, String> {
    let one = |r: &Return| -> Result<String, String> {
        match &r.ty {
            Type::Base(BaseTy::Tensor) => Ok("Tensor".into()),
            Type::List { elem, .. } if **elem == Type::Base(BaseTy::Tensor) => Ok("Vec<Tensor>".into()),
            // Values computed from the data (`equal`, `allclose`, `item`): never differentiable.
            Type::Base(BaseTy::Bool) => Ok("bool".into()),
            Type::Base(BaseTy::Int | BaseTy::SymInt) => Ok("i64".into()),
            Type::Base(BaseTy::Float) => Ok("f64".into()),
            Type::Base(BaseTy::Scalar) => Ok("Scalar".into()),
            other => Err(format!("return type `{other}` has no Rust mapping yet")),
        }
    };
    match rets.len() {
        0 => Ok("()".into()),
        1 => one(&rets[0]),
        _ => Ok(format!("({})", rets.iter().map(one).collect::<Result<Vec<_>, _>>()?.join(", "))),
    }
}

/// A Rust expression for an argument's schema default, typed as [`arg_type`] gives.
pub fn default_expr(arg: &Argument) -> Result<String, String> {
    let text = arg.default.as_deref().ok_or("argument has no default")?;
    let v = DefaultValue::parse(text)?;
    value_expr(&arg.ty, &v).map_err(|e| format!("default `{text}` of `{}`: {e}", arg.name))
}

fn value_expr(ty: &Type, v: &DefaultValue) -> Result<String, String> {
    match (ty, v) {
        (Type::Optional(_), DefaultValue::None) => Ok("None".into()),
        (Type::Optional(inner), v) => Ok(format!("Some({})", value_expr(inner, v)?)),
        (Type::List { size, .. }, DefaultValue::List(items)) => {
            let elem = list_elem(ty);
            let parts: Vec<String> = items.iter().map(|i| value_expr(&elem, i)).collect::<Result<_, _>>()?;
            let _ = size;
            Ok(format!("&[{}]", parts.join(", ")))
        }
        // `int[2] x=1` means `[1, 1]`.
        (Type::List { size: Some(n), .. }, scalar) => {
            let e = value_expr(&list_elem(ty), scalar)?;
            Ok(format!("&[{}]", vec![e; *n].join(", ")))
        }
        (Type::Base(b), v) => scalar_value(*b, v),
        (t, v) => Err(format!("cannot use `{v:?}` as a default for `{t}`")),
    }
}

fn list_elem(ty: &Type) -> Type {
    match ty {
        Type::List { elem, .. } => (**elem).clone(),
        t => t.clone(),
    }
}

fn scalar_value(b: BaseTy, v: &DefaultValue) -> Result<String, String> {
    Ok(match (b, v) {
        (BaseTy::Int | BaseTy::SymInt, DefaultValue::Int(i)) => i.to_string(),
        // `int reduction=Mean`: the values of PyTorch's `at::Reduction` enum.
        (BaseTy::Int, DefaultValue::Ident(id)) if id == "Mean" => "1".into(),
        (BaseTy::Int, DefaultValue::Ident(id)) if id == "Sum" => "2".into(),
        (BaseTy::Float, d @ (DefaultValue::Int(_) | DefaultValue::Float(_))) => float_lit(d.as_f64().unwrap_or(0.0)),
        (BaseTy::Bool, DefaultValue::Bool(x)) => x.to_string(),
        (BaseTy::Str, DefaultValue::Str(s)) => format!("{s:?}"),
        (BaseTy::Scalar, DefaultValue::Int(i)) => format!("Scalar::Int({i})"),
        (BaseTy::Scalar, d @ DefaultValue::Float(_)) => {
            format!("Scalar::Float({})", float_lit(d.as_f64().unwrap_or(0.0)))
        }
        (BaseTy::Scalar, DefaultValue::Bool(x)) => format!("Scalar::Bool({x})"),
        (BaseTy::MemoryFormat, DefaultValue::Ident(id)) => match id.as_str() {
            "contiguous_format" => "MemoryFormat::Contiguous".into(),
            "preserve_format" => "MemoryFormat::Preserve".into(),
            "channels_last" => "MemoryFormat::ChannelsLast".into(),
            "channels_last_3d" => "MemoryFormat::ChannelsLast3d".into(),
            other => return Err(format!("unknown memory format `{other}`")),
        },
        (BaseTy::ScalarType, DefaultValue::Ident(id)) => {
            let d = match id.as_str() {
                "long" => "I64",
                "int" => "I32",
                "float" => "F32",
                "double" => "F64",
                "bool" => "Bool",
                "half" => "F16",
                other => return Err(format!("unknown dtype `{other}`")),
            };
            format!("DType::{d}")
        }
        (b, v) => return Err(format!("cannot use `{v:?}` as a default for `{}`", b.name())),
    })
}

fn float_lit(x: f64) -> String {
    if x.is_infinite() {
        if x > 0.0 {
            "f64::INFINITY".into()
        } else {
            "f64::NEG_INFINITY".into()
        }
    } else if x.is_nan() {
        "f64::NAN".into()
    } else {
        format!("{x:?}")
    }
}

/// Whether the argument is a single tensor (`Tensor` or `Tensor?`), a tensor list, or neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorArg {
    One,
    Optional,
    List,
    OptionalList,
    No,
}

pub fn tensor_arg(ty: &Type) -> TensorArg {
    match ty {
        Type::Base(BaseTy::Tensor) => TensorArg::One,
        Type::Optional(t) if **t == Type::Base(BaseTy::Tensor) => TensorArg::Optional,
        Type::List { elem, .. } if **elem == Type::Base(BaseTy::Tensor) => TensorArg::List,
        Type::List { elem, .. } if matches!(&**elem, Type::Optional(t) if **t == Type::Base(BaseTy::Tensor)) => {
            TensorArg::OptionalList
        }
        _ => TensorArg::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> String {
        rust_name(&OperatorName::parse(s).unwrap())
    }

    #[test]
    fn naming_rule() {
        assert_eq!(name("add.Tensor"), "add");
        assert_eq!(name("add_.Tensor"), "add_");
        assert_eq!(name("add.out"), "add_out");
        assert_eq!(name("add.Scalar"), "add_scalar");
        assert_eq!(name("add_.Scalar"), "add_scalar_");
        assert_eq!(name("sum.dim_IntList"), "sum_dim_intlist");
        assert_eq!(name("where.self"), "where_self");
        assert_eq!(name("empty.memory_format"), "empty");
        assert_eq!(name("transpose.int"), "transpose");
        assert_eq!(name("clone"), "deep_clone");
        assert_eq!(camel("sum_dim_intlist"), "SumDimIntlist");
        assert_eq!(camel("add_"), "AddInplace");
    }

    #[test]
    fn defaults() {
        let a = Argument::parse("int[2] stride=1").unwrap();
        assert_eq!(default_expr(&a).unwrap(), "&[1, 1]");
        let a = Argument::parse("Scalar alpha=1").unwrap();
        assert_eq!(default_expr(&a).unwrap(), "Scalar::Int(1)");
        let a = Argument::parse("MemoryFormat memory_format=contiguous_format").unwrap();
        assert_eq!(default_expr(&a).unwrap(), "MemoryFormat::Contiguous");
        let a = Argument::parse("float eps=1e-05").unwrap();
        assert_eq!(default_expr(&a).unwrap(), "1e-5");
        let a = Argument::parse("int[1]? dim=None").unwrap();
        assert_eq!(default_expr(&a).unwrap(), "None");
    }

    #[test]
    fn host_value_returns() {
        let ret = |s: &str| return_type(&[Return::parse(s).unwrap()]);
        assert_eq!(ret("bool").unwrap(), "bool");
        assert_eq!(ret("Scalar").unwrap(), "Scalar");
        assert_eq!(ret("float").unwrap(), "f64");
        assert_eq!(ret("int").unwrap(), "i64");
        assert_eq!(ret("Tensor[]").unwrap(), "Vec<Tensor>");
        // Still refused: there is no Rust mapping for these yet.
        assert!(ret("Tensor?").unwrap_err().contains("no Rust mapping"));
        assert!(ret("int[]").unwrap_err().contains("no Rust mapping"));
    }

    #[test]
    fn generators_are_borrowed_options() {
        let a = Argument::parse("Generator? generator=None").unwrap();
        assert_eq!(arg_type(&a.ty).unwrap(), "Option<&Generator>");
        assert_eq!(default_expr(&a).unwrap(), "None");
        assert!(borrows(&a.ty));
    }
}
