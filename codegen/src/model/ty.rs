//! Schema types: the base types and the `?` / `[]` / `[N]` modifiers.
//!
//! A schema type is a base type followed by any number of postfix modifiers,
//! read left to right: `int[1]?` is an optional list of ints, `Tensor?[]` is
//! a list of optional tensors. Alias annotations (`Tensor(a!)`) are not part
//! of the type; they live on [`Argument`](super::Argument) and
//! [`Return`](super::Return) and are printed right after the base name.

use std::fmt;

use super::annotation::Annotation;
use super::cursor::{Cursor, ParseError};

/// The base types of the schema language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BaseTy {
    /// `Tensor`
    Tensor,
    /// `int` (a 64-bit integer)
    Int,
    /// `SymInt` (an integer that may be symbolic)
    SymInt,
    /// `float` (a 64-bit float)
    Float,
    /// `bool`
    Bool,
    /// `str`
    Str,
    /// `Scalar` (any number, or a 0-dim tensor)
    Scalar,
    /// `ScalarType` (a dtype)
    ScalarType,
    /// `Layout`
    Layout,
    /// `Device`
    Device,
    /// `MemoryFormat`
    MemoryFormat,
    /// `Generator`
    Generator,
    /// `Dimname`
    Dimname,
    /// `Stream`
    Stream,
    /// `Storage`
    Storage,
}

impl BaseTy {
    /// Every base type, in declaration order.
    pub const ALL: [BaseTy; 15] = [
        BaseTy::Tensor,
        BaseTy::Int,
        BaseTy::SymInt,
        BaseTy::Float,
        BaseTy::Bool,
        BaseTy::Str,
        BaseTy::Scalar,
        BaseTy::ScalarType,
        BaseTy::Layout,
        BaseTy::Device,
        BaseTy::MemoryFormat,
        BaseTy::Generator,
        BaseTy::Dimname,
        BaseTy::Stream,
        BaseTy::Storage,
    ];

    /// The spelling used in schema strings (`int`, `SymInt`, `Tensor`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BaseTy::Tensor => "Tensor",
            BaseTy::Int => "int",
            BaseTy::SymInt => "SymInt",
            BaseTy::Float => "float",
            BaseTy::Bool => "bool",
            BaseTy::Str => "str",
            BaseTy::Scalar => "Scalar",
            BaseTy::ScalarType => "ScalarType",
            BaseTy::Layout => "Layout",
            BaseTy::Device => "Device",
            BaseTy::MemoryFormat => "MemoryFormat",
            BaseTy::Generator => "Generator",
            BaseTy::Dimname => "Dimname",
            BaseTy::Stream => "Stream",
            BaseTy::Storage => "Storage",
        }
    }

    /// The base type spelled `name`, if any.
    pub fn from_name(name: &str) -> Option<BaseTy> {
        BaseTy::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for BaseTy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A schema type: a base type wrapped in optional / list modifiers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A bare base type, e.g. `int`.
    Base(BaseTy),
    /// `T?`
    Optional(Box<Type>),
    /// `T[]` (`size: None`) or `T[N]` (`size: Some(N)`).
    List {
        /// The element type.
        elem: Box<Type>,
        /// The fixed length, for `T[N]`.
        size: Option<usize>,
    },
}

impl Type {
    /// Parses a type with no alias annotation, e.g. `int[2]` or `Tensor?[]`.
    pub fn parse(s: &str) -> Result<Type, String> {
        let mut c = Cursor::new(s);
        let (ty, annotation) = parse_type(&mut c)?;
        if annotation.is_some() {
            return Err(c.error_at(0, "a bare type cannot carry an alias annotation").into());
        }
        if !c.at_end() {
            return Err(c.error(format!("unexpected {} after type", c.found())).into());
        }
        Ok(ty)
    }

    /// Whether this is `Tensor`, `Tensor?`, `Tensor[]` or `Tensor?[]`
    /// (or any other nesting whose innermost type is `Tensor`).
    pub fn is_tensor_like(&self) -> bool {
        self.base() == BaseTy::Tensor
    }

    /// Whether the outermost modifier is `?`.
    pub fn is_optional(&self) -> bool {
        matches!(self, Type::Optional(_))
    }

    /// Whether the outermost modifier is `[]` or `[N]`.
    pub fn is_list(&self) -> bool {
        matches!(self, Type::List { .. })
    }

    /// The innermost base type.
    pub fn base(&self) -> BaseTy {
        match self {
            Type::Base(b) => *b,
            Type::Optional(inner) => inner.base(),
            Type::List { elem, .. } => elem.base(),
        }
    }

    /// Writes the type with `annotation` placed directly after the base name,
    /// which is where the schema language puts it (`Tensor(a!)?`).
    pub(crate) fn fmt_annotated(&self, annotation: Option<&Annotation>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Base(b) => {
                f.write_str(b.name())?;
                if let Some(a) = annotation {
                    write!(f, "({a})")?;
                }
                Ok(())
            }
            Type::Optional(inner) => {
                inner.fmt_annotated(annotation, f)?;
                f.write_str("?")
            }
            Type::List { elem, size } => {
                elem.fmt_annotated(annotation, f)?;
                match size {
                    Some(n) => write!(f, "[{n}]"),
                    None => f.write_str("[]"),
                }
            }
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_annotated(None, f)
    }
}

/// Parses `BaseTy[(annotation)]{?|[]|[N]}` at the cursor.
///
/// Rejects annotations on non-Tensor base types and doubled `??`.
pub(crate) fn parse_type(c: &mut Cursor<'_>) -> Result<(Type, Option<Annotation>), ParseError> {
    let start = c.pos();
    let Some(name) = c.ident() else {
        return Err(c.error(format!("expected a type, found {}", c.found())));
    };
    let Some(base) = BaseTy::from_name(name) else {
        let known: Vec<&str> = BaseTy::ALL.iter().map(|t| t.name()).collect();
        return Err(c.error_at(start, format!("unknown type `{name}` (known types: {})", known.join(", "))));
    };
    let annotation = if c.peek() == Some('(') {
        let ann_pos = c.pos();
        let ann = Annotation::parse_at(c)?;
        if base != BaseTy::Tensor {
            return Err(c.error_at(
                ann_pos,
                format!("alias annotation `({ann})` is only allowed on Tensor types, not on `{name}`"),
            ));
        }
        Some(ann)
    } else {
        None
    };
    let mut ty = Type::Base(base);
    loop {
        let mod_pos = c.pos();
        if c.eat("?") {
            if ty.is_optional() {
                return Err(c.error_at(mod_pos, format!("type `{ty}` is already optional")));
            }
            ty = Type::Optional(Box::new(ty));
        } else if c.eat("[") {
            let digits = c.take_while(|ch| ch.is_ascii_digit());
            let size = if digits.is_empty() {
                None
            } else {
                match digits.parse::<usize>() {
                    Ok(n) if n.to_string() == digits => Some(n),
                    _ => {
                        return Err(c.error_at(mod_pos + 1, format!("invalid list size `{digits}`")));
                    }
                }
            };
            c.expect("]", "`]` to close the list type")?;
            ty = Type::List { elem: Box::new(ty), size };
        } else {
            break;
        }
    }
    Ok((ty, annotation))
}
