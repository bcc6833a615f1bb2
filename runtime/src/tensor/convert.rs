//! Tensors from Rust values and back: the `tensor!` macro and nested arrays ([`Literal`]),
//! `From<Vec<T>>`, and `TryFrom<&Tensor>` for vectors and numbers.
//!
//! Literals follow `torch.tensor`'s defaults: untyped float literals (Rust's `f64`) give float32
//! and untyped integer literals (Rust's `i32`) give int64; other element types keep their dtype.
//! A `; dtype` suffix on `tensor!` chooses another (`tensor![1, 2; f64]`). Typed data —
//! `Vec<f64>`, `&[f64]` — keeps its dtype, as `torch.from_numpy` does.

use super::{Element, Tensor};
use crate::dtype::DType;
use crate::error::{Error, Result};
use half::{bf16, f16};

/// Nested arrays of numbers, the argument of [`tensor!`](crate::tensor!) and of
/// `Tensor::from([[1.0, 2.0], [3.0, 4.0]])`: a number is a 0-dim tensor, an array of `N` of them
/// one more dimension of size `N`.
pub trait Literal {
    /// The element type the values are collected as.
    type Elem: Element;
    /// The dtype when none is asked for (float32 for `f64`, int64 for `i32`, else the type's own).
    const DEFAULT: DType;
    /// Appends the sizes, outermost first.
    fn sizes(&self, out: &mut Vec<i64>);
    /// Appends the values in row-major order.
    fn values(&self, out: &mut Vec<Self::Elem>);
}

macro_rules! literal {
    ($($t:ty => $d:ident),*) => {$(
        impl Literal for $t {
            type Elem = $t;
            const DEFAULT: DType = DType::$d;
            fn sizes(&self, _: &mut Vec<i64>) {}
            fn values(&self, out: &mut Vec<$t>) {
                out.push(*self);
            }
        }
    )*};
}
literal!(f64 => F32, i32 => I64, f32 => F32, i64 => I64, i16 => I16, i8 => I8, u8 => U8, bool => Bool, f16 => F16, bf16 => BF16);

impl<L: Literal, const N: usize> Literal for [L; N] {
    type Elem = L::Elem;
    const DEFAULT: DType = L::DEFAULT;
    fn sizes(&self, out: &mut Vec<i64>) {
        out.push(N as i64);
        if let Some(first) = self.first() {
            first.sizes(out);
        }
    }
    fn values(&self, out: &mut Vec<L::Elem>) {
        for x in self {
            x.values(out);
        }
    }
}

/// The tensor of a literal, with `dtype` or the literal's default. (What `tensor!` expands to.)
/// Values are converted on the host, as `torch.tensor(data, dtype=…)` converts Python numbers.
pub fn from_literal<L: Literal>(literal: &L, dtype: Option<DType>) -> Tensor {
    let (mut sizes, mut values) = (Vec::new(), Vec::new());
    literal.sizes(&mut sizes);
    literal.values(&mut values);
    let dtype = dtype.unwrap_or(L::DEFAULT);
    // Arrays are never ragged, so the sizes always match the values.
    let t = if dtype == L::Elem::DTYPE {
        Tensor::from_vec(values, &sizes)
    } else {
        crate::match_dtype!(dtype, T => Tensor::from_vec(
            values.iter().map(|v| T::from_f64(v.to_f64())).collect::<Vec<T>>(),
            &sizes,
        ))
    };
    t.expect("a nested array's sizes match its values")
}

/// The dtypes a `tensor!` suffix may name, under their Rust-style names.
#[doc(hidden)]
#[allow(non_upper_case_globals)]
pub mod dtype_names {
    use crate::dtype::DType;
    pub const f32: DType = DType::F32;
    pub const f64: DType = DType::F64;
    pub const f16: DType = DType::F16;
    pub const bf16: DType = DType::BF16;
    pub const i64: DType = DType::I64;
    pub const i32: DType = DType::I32;
    pub const i16: DType = DType::I16;
    pub const i8: DType = DType::I8;
    pub const u8: DType = DType::U8;
    pub const bool: DType = DType::Bool;
}

/// A tensor from literals, like `torch.tensor([...])`: the macro's contents are the list's.
///
/// ```
/// use oxten_runtime::{tensor, DType};
/// let m = tensor![[1.0, 2.0], [3.0, 4.0]];          // float32, shape [2, 2]
/// assert_eq!((m.sizes().to_vec(), m.dtype()), (vec![2, 2], DType::F32));
/// let i = tensor![1, 2, 3];                          // int64, shape [3]
/// assert_eq!(i.dtype(), DType::I64);
/// let d = tensor![[1, 2]; f64];                      // float64, shape [1, 2]
/// assert_eq!((d.sizes().to_vec(), d.to_vec::<f64>().unwrap()), (vec![1, 2], vec![1.0, 2.0]));
/// ```
#[macro_export]
macro_rules! tensor {
    ($($x:expr),+ $(,)? ; $dtype:ident) => {
        $crate::tensor::from_literal(&[$($x),+], Some($crate::tensor::dtype_names::$dtype))
    };
    ($($x:expr),+ $(,)?) => {
        $crate::tensor::from_literal(&[$($x),+], None)
    };
}

impl<L: Literal> From<L> for Tensor {
    /// `Tensor::from(2.5)` (a 0-dim float32 tensor), `Tensor::from([[1, 2], [3, 4]])` (int64).
    fn from(literal: L) -> Tensor {
        from_literal(&literal, None)
    }
}

impl<T: Element> From<Vec<T>> for Tensor {
    /// A 1-D tensor of `T`'s dtype.
    fn from(v: Vec<T>) -> Tensor {
        let n = v.len() as i64;
        Tensor::from_vec(v, &[n]).expect("a vector fits a 1-D tensor")
    }
}

impl<T: Element> From<&[T]> for Tensor {
    /// A 1-D tensor of `T`'s dtype (copied).
    fn from(v: &[T]) -> Tensor {
        Tensor::from_slice(v, &[v.len() as i64]).expect("a slice fits a 1-D tensor")
    }
}

/// `t`'s values as `T`, converted from its dtype, on the host.
fn values_as<T: Element>(t: &Tensor) -> Result<Vec<T>> {
    let t = if t.dtype() == T::DTYPE { t.clone() } else { t.try_to_dtype(T::DTYPE)? };
    t.to_vec::<T>()
}

impl<T: Element> TryFrom<&Tensor> for Vec<T> {
    type Error = Error;
    /// The values of a 0-dim or 1-D tensor, converted to `T` (`t.tolist()`); an error for more
    /// dimensions (use `Vec<Vec<T>>`, or flatten first).
    fn try_from(t: &Tensor) -> Result<Vec<T>> {
        if t.dim() > 1 {
            return Err(Error::shape(format!(
                "Vec::try_from: expected a tensor with at most 1 dimension, got shape {:?}",
                t.sizes()
            )));
        }
        values_as(t)
    }
}

impl<T: Element> TryFrom<&Tensor> for Vec<Vec<T>> {
    type Error = Error;
    /// The rows of a 2-D tensor, converted to `T`.
    fn try_from(t: &Tensor) -> Result<Vec<Vec<T>>> {
        if t.dim() != 2 {
            return Err(Error::shape(format!(
                "Vec<Vec<_>>::try_from: expected a 2-D tensor, got shape {:?}",
                t.sizes()
            )));
        }
        let cols = t.sizes()[1] as usize;
        let v = values_as::<T>(t)?;
        Ok(if cols == 0 {
            vec![Vec::new(); t.sizes()[0] as usize]
        } else {
            v.chunks(cols).map(<[T]>::to_vec).collect()
        })
    }
}

macro_rules! number_from_tensor {
    ($($t:ty),*) => {$(
        impl TryFrom<&Tensor> for $t {
            type Error = Error;
            /// The value of a one-element tensor of any shape, converted (`float(t)`, `int(t)`).
            fn try_from(t: &Tensor) -> Result<$t> {
                if t.numel() != 1 {
                    return Err(Error::value(format!(
                        "a Tensor with {} elements cannot be converted to Scalar",
                        t.numel()
                    )));
                }
                Ok(values_as::<$t>(t)?[0])
            }
        }
    )*};
}
number_from_tensor!(f32, f64, f16, bf16, i64, i32, i16, i8, u8, bool);
