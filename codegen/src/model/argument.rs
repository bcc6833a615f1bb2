//! Arguments and returns of a schema, and the positional / keyword-only /
//! out split of an argument list.

use std::fmt;

use super::annotation::Annotation;
use super::cursor::{Cursor, ParseError};
use super::default::{parse_default, DefaultValue};
use super::ty::{parse_type, Type};

/// One formal argument: `Type[(annotation)] name[=default]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Argument {
    /// The argument name (part of the API: callers may pass it by keyword).
    pub name: String,
    /// The argument type.
    pub ty: Type,
    /// The default value exactly as written after `=`, e.g. `1e-05`, `[0, 0]`
    /// or `'mean'`. See [`Argument::default_value`] for a parsed form.
    pub default: Option<String>,
    /// The alias annotation, only ever present on Tensor types.
    pub annotation: Option<Annotation>,
}

impl Argument {
    /// Parses a single argument such as `Tensor(a!) out` or `int[2] stride=1`.
    pub fn parse(s: &str) -> Result<Argument, String> {
        let mut c = Cursor::new(s);
        let arg = parse_argument(&mut c)?;
        if !c.at_end() {
            return Err(c.error(format!("unexpected {} after argument", c.found())).into());
        }
        Ok(arg)
    }

    /// Whether the op writes to this argument (`(a!)`).
    pub fn is_write(&self) -> bool {
        self.annotation.as_ref().is_some_and(|a| a.is_write)
    }

    /// The default value, parsed; `None` when the argument has no default.
    ///
    /// A scalar default on a fixed-size list type is broadcast to the list
    /// length, so `int[2] padding=0` gives `List([Int(0), Int(0)])` (also
    /// through an outer `?`). `[]` stays an empty list. The stored
    /// [`Argument::default`] text is never changed.
    pub fn default_value(&self) -> Option<DefaultValue> {
        let text = self.default.as_deref()?;
        // The schema parser already checked the literal, so this cannot fail
        // for arguments that came from `FunctionSchema::parse`.
        let value = DefaultValue::parse(text).ok()?;
        let list = match &self.ty {
            Type::Optional(inner) => inner.as_ref(),
            other => other,
        };
        match (list, &value) {
            (_, DefaultValue::List(_) | DefaultValue::None) => Some(value),
            (Type::List { size: Some(n), .. }, _) => Some(DefaultValue::List(vec![value; *n])),
            _ => Some(value),
        }
    }
}

impl fmt::Display for Argument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.ty.fmt_annotated(self.annotation.as_ref(), f)?;
        write!(f, " {}", self.name)?;
        if let Some(d) = &self.default {
            write!(f, "={d}")?;
        }
        Ok(())
    }
}

/// One return value: `Type[(annotation)][ name]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Return {
    /// The return name (`values` in `(Tensor values, Tensor indices)`).
    pub name: Option<String>,
    /// The return type.
    pub ty: Type,
    /// The alias annotation, only ever present on Tensor types.
    pub annotation: Option<Annotation>,
}

impl Return {
    /// Parses a single return such as `Tensor(a!)` or `Tensor values`.
    pub fn parse(s: &str) -> Result<Return, String> {
        let mut c = Cursor::new(s);
        let ret = parse_return(&mut c)?;
        if !c.at_end() {
            return Err(c.error(format!("unexpected {} after return", c.found())).into());
        }
        Ok(ret)
    }

    /// Whether this return is a mutated input (`(a!)`).
    pub fn is_write(&self) -> bool {
        self.annotation.as_ref().is_some_and(|a| a.is_write)
    }
}

impl fmt::Display for Return {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.ty.fmt_annotated(self.annotation.as_ref(), f)?;
        if let Some(n) = &self.name {
            write!(f, " {n}")?;
        }
        Ok(())
    }
}

/// The arguments of a schema, split the way code generators need them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Arguments {
    /// Arguments before `*`.
    pub positional: Vec<Argument>,
    /// Arguments after `*` that are not out arguments.
    pub kwarg_only: Vec<Argument>,
    /// The trailing keyword-only mutable Tensor arguments (`Tensor(a!) out`).
    pub out: Vec<Argument>,
}

impl Arguments {
    /// The positional argument named `self` of type `Tensor`, if any.
    pub fn self_arg(&self) -> Option<&Argument> {
        self.positional.iter().find(|a| a.name == "self" && a.ty == Type::Base(super::BaseTy::Tensor))
    }

    /// Positional then keyword-only arguments, without the out arguments.
    pub fn flat_non_out(&self) -> Vec<&Argument> {
        self.positional.iter().chain(&self.kwarg_only).collect()
    }

    /// Every argument in declaration order: positional, keyword-only, out.
    pub fn flat_all(&self) -> Vec<&Argument> {
        self.positional.iter().chain(&self.kwarg_only).chain(&self.out).collect()
    }
}

impl fmt::Display for Arguments {
    /// Prints the argument list without parentheses, with `*` before the
    /// keyword-only part when there is one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self.positional.iter().map(ToString::to_string).collect();
        if !self.kwarg_only.is_empty() || !self.out.is_empty() {
            parts.push("*".to_string());
            parts.extend(self.kwarg_only.iter().chain(&self.out).map(ToString::to_string));
        }
        f.write_str(&parts.join(", "))
    }
}

/// Parses `Type[(annotation)] name[=default]` at the cursor.
pub(crate) fn parse_argument(c: &mut Cursor<'_>) -> Result<Argument, ParseError> {
    let (ty, annotation) = parse_type(c)?;
    c.expect(" ", "a single space between the argument type and its name")?;
    let Some(name) = c.ident() else {
        return Err(c.error(format!("expected an argument name, found {}", c.found())));
    };
    let default = if c.eat("=") {
        let start = c.pos();
        parse_default(c)?;
        Some(c.src()[start..c.pos()].to_string())
    } else {
        None
    };
    Ok(Argument { name: name.to_string(), ty, default, annotation })
}

/// Parses `Type[(annotation)][ name]` at the cursor.
pub(crate) fn parse_return(c: &mut Cursor<'_>) -> Result<Return, ParseError> {
    let (ty, annotation) = parse_type(c)?;
    let name = if c.eat(" ") {
        match c.ident() {
            Some(n) => Some(n.to_string()),
            None => {
                return Err(c.error(format!("expected a return name, found {}", c.found())));
            }
        }
    } else {
        None
    };
    Ok(Return { name, ty, annotation })
}
