//! `Element`: the Rust types that can be tensor elements, and a macro that turns a runtime dtype
//! into a type parameter.

use crate::dtype::DType;
use half::{bf16, f16};

/// A Rust type stored in tensors of one [`DType`].
pub trait Element: Copy + Send + Sync + 'static + std::fmt::Debug + PartialEq {
    const DTYPE: DType;
    fn to_f64(self) -> f64;
    /// Converts with Rust `as` semantics for integers (saturating, NaN → 0), matching what
    /// PyTorch does on the common cases.
    fn from_f64(v: f64) -> Self;
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)]
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}
element!(u8 => U8, i8 => I8, i16 => I16, i32 => I32, i64 => I64, f32 => F32, f64 => F64);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
}
impl Element for f16 {
    const DTYPE: DType = DType::F16;
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
}
impl Element for bf16 {
    const DTYPE: DType = DType::BF16;
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
}

/// Runs `$body` with `$T` bound to the Rust type of `$dtype`.
///
/// ```
/// use oxten_runtime::{match_dtype, DType, Element};
/// let size = match_dtype!(DType::F16, T => std::mem::size_of::<T>());
/// assert_eq!(size, 2);
/// ```
#[macro_export]
macro_rules! match_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {{
        use $crate::DType as __D;
        match $dtype {
            __D::Bool => {
                type $T = bool;
                $body
            }
            __D::U8 => {
                type $T = u8;
                $body
            }
            __D::I8 => {
                type $T = i8;
                $body
            }
            __D::I16 => {
                type $T = i16;
                $body
            }
            __D::I32 => {
                type $T = i32;
                $body
            }
            __D::I64 => {
                type $T = i64;
                $body
            }
            __D::F16 => {
                type $T = $crate::dtype::f16;
                $body
            }
            __D::BF16 => {
                type $T = $crate::dtype::bf16;
                $body
            }
            __D::F32 => {
                type $T = f32;
                $body
            }
            __D::F64 => {
                type $T = f64;
                $body
            }
        }
    }};
}
