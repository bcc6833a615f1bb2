//! The schema-string parser: text to [`FunctionSchema`], plus the column of
//! every piece so that later checks can point at the offending part.
//!
//! Grammar (whitespace is significant, because the model must print back the
//! exact input):
//!
//! ```text
//! schema  := name ["." overload] "(" [arg {", " arg}] ") -> " returns
//! arg     := "*" | type [annotation] " " ident ["=" default]
//! returns := "()" | ret | "(" ret ", " ret {", " ret} ")"
//! ret     := type [annotation] [" " ident]
//! ```
//!
//! Only syntax and the rules that concern argument order are checked here;
//! the semantic invariants live in [`super::invariants`].

use super::argument::{parse_argument, parse_return, Argument, Arguments, Return};
use super::cursor::{Cursor, ParseError};
use super::name::parse_operator_name;
use super::schema::FunctionSchema;

/// 1-based columns of the parts of a parsed schema.
#[derive(Clone, Debug, Default)]
pub(crate) struct Spans {
    /// Column of the `(` that opens the argument list.
    pub open_paren: usize,
    /// Column of each argument, in `Arguments::flat_all` order.
    pub args: Vec<usize>,
    /// Column where the returns start (just after ` -> `).
    pub returns: usize,
    /// Column of each return.
    pub rets: Vec<usize>,
}

/// Parses a schema string; see the module docs for the grammar.
pub(crate) fn parse_schema(src: &str) -> Result<(FunctionSchema, Spans), ParseError> {
    let mut c = Cursor::new(src);
    let mut spans = Spans::default();
    let name = parse_operator_name(&mut c)?;
    spans.open_paren = c.column_at(c.pos());
    c.expect("(", "`(` after the operator name")?;
    let arguments = parse_arguments(&mut c, &mut spans)?;
    c.expect(" -> ", "` -> ` after the argument list")?;
    spans.returns = c.column_at(c.pos());
    let returns = parse_returns(&mut c, &mut spans)?;
    if !c.at_end() {
        return Err(c.error(format!("unexpected {} after the returns", c.found())));
    }
    Ok((FunctionSchema { name, arguments, returns }, spans))
}

/// Parses the argument list after `(`, through the closing `)`.
fn parse_arguments(c: &mut Cursor<'_>, spans: &mut Spans) -> Result<Arguments, ParseError> {
    let mut positional: Vec<(usize, Argument)> = Vec::new();
    let mut keyword: Vec<(usize, Argument)> = Vec::new();
    let mut star: Option<usize> = None;
    if !c.eat(")") {
        loop {
            let start = c.pos();
            if c.eat("*") {
                if star.is_some() {
                    return Err(c.error_at(start, "`*` may appear only once"));
                }
                star = Some(start);
                if c.peek() == Some(')') {
                    return Err(c.error_at(start, "`*` must be followed by keyword-only arguments"));
                }
            } else {
                let arg = parse_argument(c)?;
                let all = positional.iter().chain(&keyword);
                if all.into_iter().any(|(_, a)| a.name == arg.name) {
                    return Err(c.error_at(start, format!("duplicate argument name `{}`", arg.name)));
                }
                let list = if star.is_some() { &mut keyword } else { &mut positional };
                list.push((c.column_at(start), arg));
            }
            if c.eat(")") {
                break;
            }
            if !c.eat(", ") {
                return Err(c.error(format!("expected `, ` or `)` after an argument, found {}", c.found())));
            }
        }
    }
    let (kwarg_only, out) = split_out(keyword)?;
    let mut args = Arguments::default();
    for (list, dest) in [(positional, &mut args.positional), (kwarg_only, &mut args.kwarg_only), (out, &mut args.out)] {
        for (col, arg) in list {
            spans.args.push(col);
            dest.push(arg);
        }
    }
    Ok(args)
}

/// A keyword-only argument with its column.
type Spanned = (usize, Argument);

/// Splits keyword-only arguments into ordinary ones and the trailing out
/// arguments (mutable Tensors), rejecting an ordinary one after an out one.
fn split_out(keyword: Vec<Spanned>) -> Result<(Vec<Spanned>, Vec<Spanned>), ParseError> {
    let mut kwarg_only = Vec::new();
    let mut out: Vec<Spanned> = Vec::new();
    for (col, arg) in keyword {
        if arg.is_write() && arg.ty.is_tensor_like() {
            out.push((col, arg));
        } else if let Some((_, last_out)) = out.last() {
            return Err(ParseError {
                column: col,
                message: format!(
                    "keyword-only argument `{}` comes after out argument `{}`; \
                     out arguments (mutable keyword-only Tensors) must come last",
                    arg.name, last_out.name
                ),
            });
        } else {
            kwarg_only.push((col, arg));
        }
    }
    Ok((kwarg_only, out))
}

/// Parses `()`, a single return, or a parenthesised tuple of two or more.
fn parse_returns(c: &mut Cursor<'_>, spans: &mut Spans) -> Result<Vec<Return>, ParseError> {
    let open = c.pos();
    if c.eat("()") {
        return Ok(Vec::new());
    }
    if !c.eat("(") {
        spans.rets.push(c.column_at(c.pos()));
        return Ok(vec![parse_return(c)?]);
    }
    let mut rets = Vec::new();
    loop {
        spans.rets.push(c.column_at(c.pos()));
        rets.push(parse_return(c)?);
        if c.eat(")") {
            break;
        }
        if !c.eat(", ") {
            return Err(c.error(format!("expected `, ` or `)` after a return, found {}", c.found())));
        }
    }
    if rets.len() == 1 {
        return Err(c.error_at(
            open,
            format!("a single return must not be parenthesized: write `{}` instead of `({})`", rets[0], rets[0]),
        ));
    }
    Ok(rets)
}
