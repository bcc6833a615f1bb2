//! A character cursor over a schema string, with column-aware parse errors.
//!
//! Every parser in [`crate::model`] reads its input through a [`Cursor`].
//! The cursor only knows about characters and byte offsets; it has no idea of
//! the schema grammar. Its job is to make "what did we expect, what did we
//! find, and at which column" cheap to report.

use std::fmt;

/// A parse failure at a 1-based character column of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParseError {
    /// 1-based column (in characters, not bytes) where the problem starts.
    pub column: usize,
    /// What is wrong, in plain words.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl From<ParseError> for String {
    fn from(e: ParseError) -> String {
        e.to_string()
    }
}

/// A read position inside a borrowed input string.
#[derive(Clone, Debug)]
pub(crate) struct Cursor<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `src`.
    pub fn new(src: &'a str) -> Self {
        Cursor { src, pos: 0 }
    }

    /// The current byte offset.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The whole input.
    pub fn src(&self) -> &'a str {
        self.src
    }

    /// The unread remainder of the input.
    pub fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    /// Whether the whole input has been consumed.
    pub fn at_end(&self) -> bool {
        self.pos == self.src.len()
    }

    /// The next character, without consuming it.
    pub fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// Consumes one character and returns it.
    pub fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Consumes `s` if the input continues with it.
    pub fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    /// Consumes `s` or fails with "expected {what}, found ...".
    pub fn expect(&mut self, s: &str, what: &str) -> Result<(), ParseError> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.error(format!("expected {what}, found {}", self.found())))
        }
    }

    /// Consumes the longest run of characters satisfying `pred` (may be empty).
    pub fn take_while(&mut self, pred: impl Fn(char) -> bool) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if !pred(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
        &self.src[start..self.pos]
    }

    /// Consumes an identifier (`[A-Za-z_][A-Za-z0-9_]*`), if one starts here.
    pub fn ident(&mut self) -> Option<&'a str> {
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == '_' => Some(self.take_while(is_ident_char)),
            _ => None,
        }
    }

    /// The 1-based character column of byte offset `pos`.
    pub fn column_at(&self, pos: usize) -> usize {
        self.src[..pos].chars().count() + 1
    }

    /// A parse error at the current position.
    pub fn error(&self, message: impl Into<String>) -> ParseError {
        self.error_at(self.pos, message)
    }

    /// A parse error at byte offset `pos`.
    pub fn error_at(&self, pos: usize, message: impl Into<String>) -> ParseError {
        ParseError { column: self.column_at(pos), message: message.into() }
    }

    /// A short description of what comes next, for "found ..." messages:
    /// the next character in backquotes, or `end of input`.
    pub fn found(&self) -> String {
        match self.peek() {
            Some(c) => format!("`{c}`"),
            None => "end of input".to_string(),
        }
    }
}

/// Whether `c` may appear inside an identifier.
pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}
