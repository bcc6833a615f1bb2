//! Operator names: `add`, `add_`, `add.Tensor`, `__iand__.Scalar`.
//!
//! An operator name is a base name plus an optional overload name after a
//! dot. The base name records two facts that the text encodes:
//!
//! * a trailing `_` marks an inplace operator (`add_` has base `add`);
//! * `__x__` marks a Python dunder method. An augmented-assignment dunder such
//!   as `__iand__` is the inplace form of `__and__`: base `and`, inplace.

use std::fmt;

use super::cursor::{is_ident_char, Cursor, ParseError};

/// Dunder names whose `i`-prefixed form is the inplace variant
/// (`__iadd__` is the inplace form of `__add__`).
const AUGMENTED_ASSIGNMENT_NAMES: [&str; 14] =
    ["add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or", "matmul", "truediv", "floordiv"];

/// The base of an operator name, without the overload.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BaseOperatorName {
    /// The name with the inplace `_` suffix and dunder underscores removed,
    /// e.g. `add` for `add_`, `and` for `__iand__`.
    pub base: String,
    /// Whether this is the inplace form (`add_`, `__iand__`).
    pub inplace: bool,
    /// Whether the name is written `__base__`.
    pub dunder: bool,
}

/// A full operator name: base name plus overload name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OperatorName {
    /// The base name.
    pub name: BaseOperatorName,
    /// The overload name; `""` when there is none.
    pub overload: String,
}

impl BaseOperatorName {
    /// Parses a base name such as `add_` or `__iand__`.
    pub fn parse(s: &str) -> Result<BaseOperatorName, String> {
        let mut c = Cursor::new(s);
        let name = parse_base(&mut c)?;
        if !c.at_end() {
            return Err(c.error(format!("unexpected {} in operator name", c.found())).into());
        }
        Ok(name)
    }
}

impl OperatorName {
    /// Parses `base[.overload]`, e.g. `add.Tensor`, `add_.Tensor` or `sum`.
    pub fn parse(s: &str) -> Result<OperatorName, String> {
        let mut c = Cursor::new(s);
        let name = parse_operator_name(&mut c)?;
        if !c.at_end() {
            return Err(c.error(format!("unexpected {} in operator name", c.found())).into());
        }
        Ok(name)
    }
}

/// Parses `base[.overload]` at the cursor.
pub(crate) fn parse_operator_name(c: &mut Cursor<'_>) -> Result<OperatorName, ParseError> {
    let name = parse_base(c)?;
    let overload = if c.eat(".") {
        let ov = c.take_while(is_ident_char);
        if ov.is_empty() {
            return Err(c.error(format!("expected an overload name after `.`, found {}", c.found())));
        }
        ov.to_string()
    } else {
        String::new()
    };
    Ok(OperatorName { name, overload })
}

/// Parses a base operator name at the cursor.
fn parse_base(c: &mut Cursor<'_>) -> Result<BaseOperatorName, ParseError> {
    let start = c.pos();
    let Some(text) = c.ident() else {
        return Err(c.error(format!("expected an operator name, found {}", c.found())));
    };
    if let Some(inner) = text.strip_prefix("__").and_then(|t| t.strip_suffix("__")) {
        if inner.is_empty() {
            return Err(c.error_at(start, format!("invalid operator name `{text}`")));
        }
        if let Some(aug) = inner.strip_prefix('i') {
            if AUGMENTED_ASSIGNMENT_NAMES.contains(&aug) {
                return Ok(BaseOperatorName { base: aug.to_string(), inplace: true, dunder: true });
            }
        }
        return Ok(BaseOperatorName { base: inner.to_string(), inplace: false, dunder: true });
    }
    match text.strip_suffix('_') {
        Some("") => Err(c.error_at(start, format!("invalid operator name `{text}`"))),
        Some(base) => Ok(BaseOperatorName { base: base.to_string(), inplace: true, dunder: false }),
        None => Ok(BaseOperatorName { base: text.to_string(), inplace: false, dunder: false }),
    }
}

impl fmt::Display for BaseOperatorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.dunder, self.inplace) {
            (true, true) => write!(f, "__i{}__", self.base),
            (true, false) => write!(f, "__{}__", self.base),
            (false, true) => write!(f, "{}_", self.base),
            (false, false) => f.write_str(&self.base),
        }
    }
}

impl fmt::Display for OperatorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        if !self.overload.is_empty() {
            write!(f, ".{}", self.overload)?;
        }
        Ok(())
    }
}
