//! Tokenizer for pointwise expressions.

use super::PointwiseError;

/// A token kind.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Number { value: f64, is_float: bool },
    LParen,
    RParen,
    Comma,
    Plus,
    Minus,
    Star,
    Slash,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Bang,
    End,
}

/// A token with its source text and 1-based column.
#[derive(Debug, Clone)]
pub(super) struct Token {
    pub tok: Tok,
    pub text: String,
    pub column: usize,
}

impl Token {
    /// A human-readable description for error messages.
    pub fn describe(&self) -> String {
        match &self.tok {
            Tok::End => "end of input".to_string(),
            Tok::Ident(name) => format!("name `{name}`"),
            Tok::Number { .. } => format!("number `{}`", self.text),
            _ => format!("`{}`", self.text),
        }
    }
}

fn error(column: usize, message: impl Into<String>) -> PointwiseError {
    PointwiseError { message: message.into(), column }
}

/// Splits `src` into tokens; the last token is always [`Tok::End`].
pub(super) fn tokenize(src: &str) -> Result<Vec<Token>, PointwiseError> {
    let chars: Vec<char> = src.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Tok::Ident(chars[start..i].iter().collect())
        } else if c.is_ascii_digit() {
            lex_number(&chars, &mut i)?
        } else {
            let next = chars.get(i + 1).copied();
            let (tok, len) = match (c, next) {
                ('(', _) => (Tok::LParen, 1),
                (')', _) => (Tok::RParen, 1),
                (',', _) => (Tok::Comma, 1),
                ('+', _) => (Tok::Plus, 1),
                ('-', _) => (Tok::Minus, 1),
                ('*', _) => (Tok::Star, 1),
                ('/', _) => (Tok::Slash, 1),
                ('<', Some('=')) => (Tok::Le, 2),
                ('<', _) => (Tok::Lt, 1),
                ('>', Some('=')) => (Tok::Ge, 2),
                ('>', _) => (Tok::Gt, 1),
                ('=', Some('=')) => (Tok::EqEq, 2),
                ('!', Some('=')) => (Tok::Ne, 2),
                ('!', _) => (Tok::Bang, 1),
                ('&', Some('&')) => (Tok::AndAnd, 2),
                ('|', Some('|')) => (Tok::OrOr, 2),
                ('=', _) => return Err(error(column, "unexpected `=`; did you mean `==`?")),
                ('&', _) => return Err(error(column, "unexpected `&`; did you mean `&&`?")),
                ('|', _) => return Err(error(column, "unexpected `|`; did you mean `||`?")),
                _ => return Err(error(column, format!("unexpected character `{c}`"))),
            };
            i += len;
            tok
        };
        tokens.push(Token { tok, text: chars[start..i].iter().collect(), column });
    }
    tokens.push(Token { tok: Tok::End, text: String::new(), column: chars.len() + 1 });
    Ok(tokens)
}

/// Lexes `digits [. digits] [(e|E) [+|-] digits]` starting at `*i`.
fn lex_number(chars: &[char], i: &mut usize) -> Result<Tok, PointwiseError> {
    let start = *i;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > s
    };
    digits(i);
    let mut is_float = false;
    if chars.get(*i) == Some(&'.') {
        *i += 1;
        is_float = true;
        if !digits(i) {
            return Err(error(*i + 1, "expected digits after `.` in a number"));
        }
    }
    if matches!(chars.get(*i), Some('e' | 'E')) {
        *i += 1;
        is_float = true;
        if matches!(chars.get(*i), Some('+' | '-')) {
            *i += 1;
        }
        if !digits(i) {
            return Err(error(*i + 1, "expected digits in the exponent of a number"));
        }
    }
    if *i < chars.len() && (chars[*i].is_ascii_alphabetic() || chars[*i] == '_') {
        return Err(error(*i + 1, format!("unexpected character `{}` in a number", chars[*i])));
    }
    let text: String = chars[start..*i].iter().collect();
    let value: f64 = text.parse().map_err(|_| error(start + 1, format!("invalid number `{text}`")))?;
    if !value.is_finite() {
        return Err(error(start + 1, format!("number `{text}` is out of range")));
    }
    Ok(Tok::Number { value, is_float })
}
