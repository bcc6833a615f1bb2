//! The typed schema model: PyTorch's function-schema grammar as immutable
//! data types.
//!
//! A schema string such as
//!
//! ```text
//! add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
//! ```
//!
//! parses into a [`FunctionSchema`]. Every type here is a lossless image of
//! its text: `Display` prints back exactly what was parsed, byte for byte.
//! Parsing also enforces the invariants code generators rely on (see
//! [`FunctionSchema::parse`]).
//!
//! ```
//! use oxten_codegen::model::{FunctionSchema, SchemaKind};
//!
//! let s = "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)";
//! let schema = FunctionSchema::parse(s).unwrap();
//! assert_eq!(schema.to_string(), s);
//! assert_eq!(schema.kind(), SchemaKind::Out);
//! assert_eq!(
//!     schema.signature().to_string(),
//!     "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
//! );
//! ```

mod annotation;
mod argument;
mod cursor;
mod default;
mod invariants;
mod name;
mod parse;
mod schema;
mod ty;

pub use annotation::Annotation;
pub use argument::{Argument, Arguments, Return};
pub use default::DefaultValue;
pub use name::{BaseOperatorName, OperatorName};
pub use schema::{FunctionSchema, SchemaKind};
pub use ty::{BaseTy, Type};
