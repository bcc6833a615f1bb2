//! Alias annotations: `a`, `a!`, `a|b`, `a! -> a|b`, `a -> *`.
//!
//! An annotation says which alias set a Tensor belongs to, whether the op
//! writes to it (`!`), and optionally which alias set it belongs to after the
//! op runs (`-> ...`, where `*` is the wildcard set).

use std::fmt;

use super::cursor::{Cursor, ParseError};

/// An alias annotation, printed without the surrounding parentheses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Annotation {
    /// The alias sets before the op runs, e.g. `["a"]` or `["a", "b"]`.
    pub alias_set: Vec<String>,
    /// Whether the op writes through this value (`!`).
    pub is_write: bool,
    /// The alias sets after the op runs (after ` -> `); empty when absent.
    /// The wildcard set is stored as `"*"`.
    pub alias_set_after: Vec<String>,
}

impl Annotation {
    /// Parses an annotation written without parentheses, e.g. `a! -> a|b`.
    pub fn parse(s: &str) -> Result<Annotation, String> {
        let mut c = Cursor::new(s);
        let ann = parse_body(&mut c)?;
        if !c.at_end() {
            return Err(c.error(format!("unexpected {} in alias annotation", c.found())).into());
        }
        Ok(ann)
    }

    /// Parses a parenthesised annotation `(...)` at the cursor.
    pub(crate) fn parse_at(c: &mut Cursor<'_>) -> Result<Annotation, ParseError> {
        c.expect("(", "`(` to open an alias annotation")?;
        let ann = parse_body(c)?;
        c.expect(")", "`)` to close the alias annotation")?;
        Ok(ann)
    }
}

/// Parses `set[!][ -> set|*]`.
fn parse_body(c: &mut Cursor<'_>) -> Result<Annotation, ParseError> {
    let alias_set = parse_set(c, false)?;
    let is_write = c.eat("!");
    let alias_set_after = if c.eat(" -> ") { parse_set(c, true)? } else { Vec::new() };
    Ok(Annotation { alias_set, is_write, alias_set_after })
}

/// Parses `name{|name}`; with `allow_wildcard`, a lone `*` is also accepted.
fn parse_set(c: &mut Cursor<'_>, allow_wildcard: bool) -> Result<Vec<String>, ParseError> {
    if allow_wildcard && c.eat("*") {
        return Ok(vec!["*".to_string()]);
    }
    let mut set = Vec::new();
    loop {
        let name = c.take_while(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit());
        if name.is_empty() || !name.starts_with(|ch: char| ch.is_ascii_lowercase()) {
            return Err(
                c.error(format!("expected an alias set name (lowercase letters, e.g. `a`), found {}", c.found()))
            );
        }
        set.push(name.to_string());
        if !c.eat("|") {
            return Ok(set);
        }
    }
}

impl fmt::Display for Annotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.alias_set.join("|"))?;
        if self.is_write {
            f.write_str("!")?;
        }
        if !self.alias_set_after.is_empty() {
            write!(f, " -> {}", self.alias_set_after.join("|"))?;
        }
        Ok(())
    }
}
