//! Semantic rules every parsed schema must satisfy.
//!
//! These are the rules that make the mutation and aliasing information in a
//! schema trustworthy for code generators:
//!
//! * an inplace operator (`add_`) takes `Tensor(a!) self` first and returns
//!   exactly `Tensor(a!)`; with a `Tensor(a!)[] self` it returns `()`;
//! * an out= operator returns its out arguments, in order, with the same
//!   types and annotations (or `()` when an out argument is a Tensor list);
//! * returns are all mutable or all immutable;
//! * every mutable return shares its annotation with a mutable argument.
//!
//! Duplicate argument names, misplaced out arguments and annotations on
//! non-Tensor types are rejected earlier, by the parser.

use super::argument::Return;
use super::cursor::ParseError;
use super::parse::Spans;
use super::schema::FunctionSchema;
use super::ty::{BaseTy, Type};

/// Checks every invariant, returning the first violation.
pub(crate) fn check(schema: &FunctionSchema, spans: &Spans) -> Result<(), ParseError> {
    check_inplace(schema, spans)?;
    check_out(schema, spans)?;
    check_mutable_returns(schema, spans)
}

/// Renders returns the way they appear after ` -> `.
fn render_returns(returns: &[Return]) -> String {
    match returns {
        [] => "()".to_string(),
        [one] => one.to_string(),
        many => {
            let parts: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

fn err(column: usize, message: String) -> ParseError {
    ParseError { column, message }
}

/// Inplace operators mutate and return their `self`.
fn check_inplace(schema: &FunctionSchema, spans: &Spans) -> Result<(), ParseError> {
    if !schema.name.name.inplace {
        return Ok(());
    }
    let name = &schema.name.name;
    let args = &schema.arguments;
    if !args.out.is_empty() {
        let col = spans.args[args.positional.len() + args.kwarg_only.len()];
        return Err(err(col, format!("inplace operator `{name}` cannot have out arguments")));
    }
    let first_col = spans.args.first().copied().unwrap_or(spans.open_paren + 1);
    let self_arg = match args.positional.first() {
        Some(a) if a.name == "self" && a.ty.is_tensor_like() && a.is_write() => a,
        _ => {
            return Err(err(
                first_col,
                format!("inplace operator `{name}` must take `Tensor(a!) self` as its first argument"),
            ));
        }
    };
    let expected: Vec<Return> = if self_arg.ty == Type::Base(BaseTy::Tensor) {
        vec![Return { name: None, ty: self_arg.ty.clone(), annotation: self_arg.annotation.clone() }]
    } else {
        Vec::new()
    };
    if schema.returns != expected {
        let self_text = Return { name: None, ty: self_arg.ty.clone(), annotation: self_arg.annotation.clone() };
        return Err(err(
            spans.returns,
            format!(
                "inplace operator `{name}` with `{self_text} self` must return `{}`, found `{}`",
                render_returns(&expected),
                render_returns(&schema.returns)
            ),
        ));
    }
    Ok(())
}

/// Out= operators return their out arguments in order.
fn check_out(schema: &FunctionSchema, spans: &Spans) -> Result<(), ParseError> {
    let outs = &schema.arguments.out;
    if outs.is_empty() {
        return Ok(());
    }
    if schema.returns.is_empty() && outs.iter().any(|a| a.ty.is_list()) {
        return Ok(());
    }
    let expected: Vec<Return> =
        outs.iter().map(|a| Return { name: None, ty: a.ty.clone(), annotation: a.annotation.clone() }).collect();
    let matches = schema.returns.len() == expected.len()
        && schema.returns.iter().zip(&expected).all(|(r, e)| r.ty == e.ty && r.annotation == e.annotation);
    if !matches {
        return Err(err(
            spans.returns,
            format!(
                "an out= schema must return its out arguments in order: expected `{}`, found `{}`",
                render_returns(&expected),
                render_returns(&schema.returns)
            ),
        ));
    }
    Ok(())
}

/// Returns are all mutable or all immutable, and mutable ones alias a
/// mutable argument.
fn check_mutable_returns(schema: &FunctionSchema, spans: &Spans) -> Result<(), ParseError> {
    let returns = &schema.returns;
    let mutable = returns.iter().filter(|r| r.is_write()).count();
    if mutable != 0 && mutable != returns.len() {
        return Err(err(
            spans.returns,
            format!(
                "returns `{}` mix mutable and immutable values; they must be all mutable or all immutable",
                render_returns(returns)
            ),
        ));
    }
    for (i, ret) in returns.iter().enumerate() {
        if !ret.is_write() {
            continue;
        }
        let aliased = schema.arguments.flat_all().iter().any(|a| a.is_write() && a.annotation == ret.annotation);
        if !aliased {
            return Err(err(
                spans.rets[i],
                format!("mutable return `{ret}` does not share its annotation with any mutable argument"),
            ));
        }
    }
    Ok(())
}
