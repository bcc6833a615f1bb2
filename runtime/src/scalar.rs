//! `Scalar`: a number passed by value to an operator (PyTorch's `c10::Scalar`).

use crate::dtype::DType;
use std::fmt;

/// A Rust number passed to an operator. Its category (bool, integral, floating) takes part in
/// type promotion with the lowest priority: `int_tensor + 2.5` is a float tensor, but
/// `f16_tensor + 2.5` stays f16.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Scalar {
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as i64 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }
    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
        }
    }
    pub fn to_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
        }
    }
    /// The dtype a 0-dim tensor made from this scalar would have (`torch.tensor(2.5)` is
    /// f64 in the wrapped-number sense; promotion only looks at the category).
    pub fn dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DType::F64,
        }
    }
    pub fn is_floating_point(self) -> bool {
        matches!(self, Scalar::Float(_))
    }
    pub fn is_integral(self) -> bool {
        matches!(self, Scalar::Int(_))
    }
    pub fn is_bool(self) -> bool {
        matches!(self, Scalar::Bool(_))
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x:?}"),
        }
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}
macro_rules! scalar_from {
    ($variant:ident, $conv:ty; $($t:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(v: $t) -> Self { Scalar::$variant(v as $conv) }
        }
    )*};
}
scalar_from!(Int, i64; i8, i16, i32, i64, u8, u16, u32, isize, usize);
scalar_from!(Float, f64; f32, f64);
impl From<half::f16> for Scalar {
    fn from(v: half::f16) -> Self {
        Scalar::Float(v.to_f64())
    }
}
impl From<half::bf16> for Scalar {
    fn from(v: half::bf16) -> Self {
        Scalar::Float(v.to_f64())
    }
}
