//! What the generator records about every operator for generic callers: its arguments as the
//! schema declares them and a boxed entry point. Tools that walk all operators (the fuzz test,
//! bindings, tracing) use this instead of parsing schema strings.

use super::ivalue::{FromIValue, IValue, Stack};
use super::op::OperatorEntry;
use crate::error::{Error, ErrorKind, Result};

/// One argument of an operator's schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgInfo {
    /// The schema name (`self`, `dim`).
    pub name: &'static str,
    /// The schema type as written (`Tensor`, `int[1]?`, `Scalar`, `Tensor?[]`).
    pub ty: &'static str,
    /// The default as written in the schema, if any.
    pub default: Option<&'static str>,
    /// Keyword-only (after `*`).
    pub kwarg_only: bool,
    /// An `out=` argument.
    pub out: bool,
    /// The operator writes to it (`Tensor(a!)`).
    pub write: bool,
}

/// An operator as generic callers see it.
#[derive(Clone, Copy)]
pub struct OpInfo {
    /// The dispatcher handle.
    pub entry: &'static OperatorEntry,
    /// The schema name without namespace (`add.Tensor`).
    pub name: &'static str,
    /// The arguments in schema order.
    pub args: &'static [ArgInfo],
    /// How many values the operator returns.
    pub returns: usize,
    /// Calls the operator's typed entry point: pops one value per argument (pushed in schema
    /// order) and pushes one value per return.
    pub call_boxed: fn(&mut Stack) -> Result<()>,
}

impl std::fmt::Debug for OpInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpInfo").field("name", &self.name).field("args", &self.args).finish()
    }
}

/// Takes the `n` arguments of a boxed call off the top of the stack, first argument first.
pub fn take_args(stack: &mut Stack, op: &str, n: usize) -> Result<std::vec::IntoIter<IValue>> {
    if stack.len() < n {
        return Err(Error::value(format!("expected {n} arguments on the stack, found {}", stack.len())).in_op(op));
    }
    Ok(stack.split_off(stack.len() - n).into_iter())
}

/// Converts the next boxed argument to the Rust type of `info`, naming the argument when the
/// value has the wrong type.
pub fn arg<T: FromIValue>(args: &mut std::vec::IntoIter<IValue>, op: &str, info: &ArgInfo) -> Result<T> {
    let v = args.next().ok_or_else(|| Error::value(format!("argument '{}' is missing", info.name)).in_op(op))?;
    let got = v.type_name();
    T::from_ivalue(v).map_err(|_| {
        Error::new(ErrorKind::DType, format!("argument '{}' must be {}, got {got}", info.name, info.ty)).in_op(op)
    })
}
