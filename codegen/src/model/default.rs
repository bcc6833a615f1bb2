//! Default-value literals: `1`, `-1.0`, `1e-05`, `True`, `None`, `[0, 0]`,
//! `'mean'`, `"reflect"`, `contiguous_format`.
//!
//! The schema model stores every default as its exact source text (so that
//! printing reproduces the input byte for byte). This module defines the
//! literal grammar that text must follow and a structured view of it,
//! [`DefaultValue`], for code generators that need to translate defaults.

use super::cursor::{Cursor, ParseError};

/// A parsed default-value literal.
///
/// Floats keep their source text so the type stays `Eq + Hash`; use
/// [`DefaultValue::as_f64`] to get the number.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DefaultValue {
    /// `None`
    None,
    /// `True` / `False`
    Bool(bool),
    /// An integer literal such as `0` or `-100`.
    Int(i64),
    /// A float literal such as `1e-05`, `-1.0` or `inf`, as written.
    Float(String),
    /// A quoted string, without its quotes (`'mean'` gives `mean`).
    Str(String),
    /// A bare identifier naming an enum-like constant, e.g. `contiguous_format`,
    /// `Mean` or `long`.
    Ident(String),
    /// A list literal such as `[0, 0]` or `[]`.
    List(Vec<DefaultValue>),
}

impl DefaultValue {
    /// Parses a complete default-value literal.
    pub fn parse(s: &str) -> Result<DefaultValue, String> {
        let mut c = Cursor::new(s);
        let v = parse_default(&mut c)?;
        if !c.at_end() {
            return Err(c.error(format!("unexpected {} after default value", c.found())).into());
        }
        Ok(v)
    }

    /// The numeric value of an `Int` or `Float` literal.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            DefaultValue::Int(i) => Some(*i as f64),
            DefaultValue::Float(text) => match text.as_str() {
                "inf" => Some(f64::INFINITY),
                "-inf" => Some(f64::NEG_INFINITY),
                "nan" | "-nan" => Some(f64::NAN),
                _ => text.parse().ok(),
            },
            _ => None,
        }
    }
}

/// Parses one default literal at the cursor; the literal ends where the
/// grammar stops, so the caller can check for `, ` or `)` after it.
pub(crate) fn parse_default(c: &mut Cursor<'_>) -> Result<DefaultValue, ParseError> {
    let start = c.pos();
    match c.peek() {
        Some('[') => parse_list(c),
        Some(q @ ('\'' | '"')) => {
            c.bump();
            let body = c.take_while(|ch| ch != q);
            if !c.eat(&q.to_string()) {
                return Err(c.error_at(start, "unterminated string literal"));
            }
            Ok(DefaultValue::Str(body.to_string()))
        }
        Some(ch) if ch == '-' || ch.is_ascii_digit() => parse_number(c),
        Some(ch) if ch.is_ascii_alphabetic() || ch == '_' => {
            let id = c.ident().unwrap_or_default();
            Ok(match id {
                "None" => DefaultValue::None,
                "True" => DefaultValue::Bool(true),
                "False" => DefaultValue::Bool(false),
                "inf" | "nan" => DefaultValue::Float(id.to_string()),
                _ => DefaultValue::Ident(id.to_string()),
            })
        }
        _ => Err(c.error(format!("expected a default value, found {}", c.found()))),
    }
}

/// `[` [elem {`,` spaces elem}] `]`
fn parse_list(c: &mut Cursor<'_>) -> Result<DefaultValue, ParseError> {
    c.expect("[", "`[`")?;
    let mut items = Vec::new();
    if c.eat("]") {
        return Ok(DefaultValue::List(items));
    }
    loop {
        items.push(parse_default(c)?);
        if c.eat("]") {
            return Ok(DefaultValue::List(items));
        }
        c.expect(",", "`,` or `]` in list default")?;
        c.take_while(|ch| ch == ' ');
    }
}

/// `-`? (`inf` | `nan` | digits [`.` digits] [`e` [+-] digits])
fn parse_number(c: &mut Cursor<'_>) -> Result<DefaultValue, ParseError> {
    let start = c.pos();
    let negative = c.eat("-");
    if negative {
        if let Some(id) = c.ident() {
            return match id {
                "inf" | "nan" => Ok(DefaultValue::Float(format!("-{id}"))),
                _ => Err(c.error_at(start, format!("invalid number `-{id}`"))),
            };
        }
    }
    let int_part = c.take_while(|ch| ch.is_ascii_digit());
    if int_part.is_empty() {
        return Err(c.error(format!("expected digits, found {}", c.found())));
    }
    let mut is_float = false;
    if c.eat(".") {
        is_float = true;
        c.take_while(|ch| ch.is_ascii_digit());
    }
    if c.peek() == Some('e') || c.peek() == Some('E') {
        is_float = true;
        c.bump();
        if !c.eat("-") {
            c.eat("+");
        }
        if c.take_while(|ch| ch.is_ascii_digit()).is_empty() {
            return Err(c.error(format!("expected exponent digits, found {}", c.found())));
        }
    }
    let text = &c.src()[start..c.pos()];
    if is_float {
        return Ok(DefaultValue::Float(text.to_string()));
    }
    text.parse::<i64>()
        .map(DefaultValue::Int)
        .map_err(|_| c.error_at(start, format!("integer literal `{text}` is out of range")))
}
