//! [`FunctionSchema`]: a whole operator schema, its kind, and its signature.

use std::fmt;

use super::argument::{Argument, Arguments, Return};
use super::name::{BaseOperatorName, OperatorName};
use super::{invariants, parse};

/// A parsed operator schema, e.g.
/// `add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)`.
///
/// Printing a schema with `Display` gives back the exact string it was
/// parsed from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionSchema {
    /// The operator name with its overload.
    pub name: OperatorName,
    /// The arguments, split into positional, keyword-only and out.
    pub arguments: Arguments,
    /// The returns; empty for `-> ()`.
    pub returns: Vec<Return>,
}

/// How an operator treats its inputs, derived from its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SchemaKind {
    /// Pure: writes to none of its arguments (`add.Tensor`).
    Functional,
    /// Writes to and returns `self`; the name ends with `_` (`add_.Tensor`).
    Inplace,
    /// Writes its results into out arguments (`add.out`).
    Out,
    /// Writes to some positional argument but is neither inplace nor out.
    Mutable,
}

impl FunctionSchema {
    /// Parses a schema string and checks its invariants.
    ///
    /// On failure the error says what is wrong and at which 1-based column,
    /// e.g. ``column 5: unknown type `Tensr` (known types: ...)``.
    pub fn parse(s: &str) -> Result<FunctionSchema, String> {
        let (schema, spans) = parse::parse_schema(s)?;
        invariants::check(&schema, &spans)?;
        let printed = schema.to_string();
        if printed != s {
            // The grammar is strict about whitespace, so this only fires if
            // the parser and the printer disagree; report where.
            let pos = printed.chars().zip(s.chars()).take_while(|(a, b)| a == b).count();
            return Err(format!("column {}: schema does not print back identically (printed `{printed}`)", pos + 1));
        }
        Ok(schema)
    }

    /// The schema's kind. Checked in this order: inplace if the name is the
    /// inplace form (`add_`, `__iand__`); out if there are out arguments;
    /// mutable if some positional argument is written to; else functional.
    pub fn kind(&self) -> SchemaKind {
        if self.name.name.inplace {
            SchemaKind::Inplace
        } else if !self.arguments.out.is_empty() {
            SchemaKind::Out
        } else if self.arguments.positional.iter().any(Argument::is_write) {
            SchemaKind::Mutable
        } else {
            SchemaKind::Functional
        }
    }

    /// The schema with everything that differs between the functional,
    /// inplace, mutable and out variants of one operator stripped, so that
    /// those variants compare equal.
    ///
    /// Removes the overload name, the inplace flag, the out arguments, all
    /// annotations and all return names. Then every mutable argument whose
    /// annotation is not returned (e.g. `Tensor(a!)[] self` of
    /// `_foreach_add_.Scalar`, or a `Tensor(a!)[] out` with `-> ()`) is
    /// appended as an extra plain return, in argument order, because its
    /// functional counterpart returns that value instead. Defaults are kept.
    pub fn signature(&self) -> FunctionSchema {
        let strip = |a: &Argument| Argument { annotation: None, ..a.clone() };
        let mut returns: Vec<Return> =
            self.returns.iter().map(|r| Return { name: None, ty: r.ty.clone(), annotation: None }).collect();
        for arg in self.arguments.flat_all() {
            let returned = self.returns.iter().any(|r| r.annotation == arg.annotation);
            if arg.is_write() && !returned {
                returns.push(Return { name: None, ty: arg.ty.clone(), annotation: None });
            }
        }
        FunctionSchema {
            name: OperatorName {
                name: BaseOperatorName {
                    base: self.name.name.base.clone(),
                    inplace: false,
                    dunder: self.name.name.dunder,
                },
                overload: String::new(),
            },
            arguments: Arguments {
                positional: self.arguments.positional.iter().map(strip).collect(),
                kwarg_only: self.arguments.kwarg_only.iter().map(strip).collect(),
                out: Vec::new(),
            },
            returns,
        }
    }

    /// Whether no argument at all (out arguments included) is Tensor-like:
    /// `empty.memory_format` and `arange` are factories, `empty.out` is not.
    pub fn is_factory(&self) -> bool {
        !self.arguments.flat_all().iter().any(|a| a.ty.is_tensor_like())
    }
}

impl fmt::Display for FunctionSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}) -> ", self.name, self.arguments)?;
        match self.returns.as_slice() {
            [] => f.write_str("()"),
            [one] => write!(f, "{one}"),
            many => {
                f.write_str("(")?;
                for (i, r) in many.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{r}")?;
                }
                f.write_str(")")
            }
        }
    }
}
