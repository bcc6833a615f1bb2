//! Factories (`empty`, `zeros`, `full`, `arange`, the `*_like` family) and the in-place fills
//! (`fill_`, `zero_`).
//!
//! Only `empty`, `empty_strided`, `arange.start_out` and `fill_` have backend kernels (CPU and
//! meta); everything else is a composite of those, as in PyTorch, so meta tensors work through
//! the same code. Shared here: PyTorch's checked conversion of a [`Scalar`] to an element type
//! (used by `fill_` and `arange`), and `infer_dense_strides` (used by every "preserve format"
//! allocation, also in `convert`).

mod arange;
#[cfg(feature = "cuda")]
mod cuda;
mod empty;
mod fill;
mod like;
mod sequences;
mod windows;

pub(crate) use like::empty_preserving;

use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{Element, Error, Result, Scalar};

/// An element type a [`Scalar`] can be converted to with PyTorch's `Scalar::to<T>()` rules:
/// the conversion is a C++ `static_cast` (integers wrap, floats truncate toward zero), but a
/// value outside the target's range is an error rather than garbage.
pub(crate) trait ScalarElem: Element {
    /// The C++ type name PyTorch prints in the overflow message.
    const CPP_NAME: &'static str;
    /// Whether PyTorch's `overflows<T>(int64_t)` rejects `v`.
    fn int_overflows(v: i64) -> bool;
    /// Whether PyTorch's `overflows<T>(double)` rejects `v`.
    fn float_overflows(v: f64) -> bool;
    /// `static_cast<T>(v)` for an integral value (wrapping for narrower integers).
    fn cast_i64(v: i64) -> Self;
    /// `static_cast<T>(v)` for a floating value.
    fn cast_f64(v: f64) -> Self;
}

macro_rules! signed_int {
    ($($t:ty => $name:literal),*) => {$(
        impl ScalarElem for $t {
            const CPP_NAME: &'static str = $name;
            fn int_overflows(v: i64) -> bool {
                v < <$t>::MIN as i64 || v > <$t>::MAX as i64
            }
            fn float_overflows(v: f64) -> bool {
                v.is_nan() || v < <$t>::MIN as f64 || v > <$t>::MAX as f64
            }
            fn cast_i64(v: i64) -> Self {
                v as $t
            }
            fn cast_f64(v: f64) -> Self {
                v as $t
            }
        }
    )*};
}
signed_int!(i8 => "int8_t", i16 => "int16_t", i32 => "int", i64 => "int64_t");

impl ScalarElem for u8 {
    const CPP_NAME: &'static str = "uint8_t";
    fn int_overflows(v: i64) -> bool {
        // PyTorch lets negative integers wrap into unsigned types (so `-1` is 255) as long as
        // their magnitude fits.
        v > u8::MAX as i64 || v < -(u8::MAX as i64)
    }
    fn float_overflows(v: f64) -> bool {
        v.is_nan() || !(0.0..=u8::MAX as f64).contains(&v)
    }
    fn cast_i64(v: i64) -> Self {
        v as u8
    }
    fn cast_f64(v: f64) -> Self {
        v as u8
    }
}

macro_rules! float_elem {
    ($($t:ty => $name:literal, $max:expr, $from:path),*) => {$(
        impl ScalarElem for $t {
            const CPP_NAME: &'static str = $name;
            fn int_overflows(v: i64) -> bool {
                (v as f64).abs() > $max
            }
            fn float_overflows(v: f64) -> bool {
                // Infinities and NaN exist in every float type, so only finite values that are
                // too large overflow.
                v.is_finite() && v.abs() > $max
            }
            fn cast_i64(v: i64) -> Self {
                $from(v as f64)
            }
            fn cast_f64(v: f64) -> Self {
                $from(v)
            }
        }
    )*};
}
fn f32_from_f64(v: f64) -> f32 {
    v as f32
}
fn f64_from_f64(v: f64) -> f64 {
    v
}
float_elem!(
    f32 => "float", f32::MAX as f64, f32_from_f64,
    f64 => "double", f64::MAX, f64_from_f64,
    f16 => "at::Half", f16::MAX.to_f64(), f16::from_f64,
    bf16 => "at::BFloat16", bf16::MAX.to_f64(), bf16::from_f64
);

impl ScalarElem for bool {
    const CPP_NAME: &'static str = "bool";
    // Converting to bool never overflows in PyTorch: any nonzero value is true.
    fn int_overflows(_: i64) -> bool {
        false
    }
    fn float_overflows(_: f64) -> bool {
        false
    }
    fn cast_i64(v: i64) -> Self {
        v != 0
    }
    fn cast_f64(v: f64) -> Self {
        v != 0.0
    }
}

/// `value.to<T>()`: the scalar as a `T`, or PyTorch's overflow error when it does not fit.
pub(crate) fn scalar_to<T: ScalarElem>(value: Scalar) -> Result<T> {
    let overflow = || Error::value(format!("value cannot be converted to type {} without overflow", T::CPP_NAME));
    match value {
        Scalar::Bool(b) => Ok(T::cast_i64(b as i64)),
        Scalar::Int(i) if T::int_overflows(i) => Err(overflow()),
        Scalar::Int(i) => Ok(T::cast_i64(i)),
        Scalar::Float(f) if T::float_overflows(f) => Err(overflow()),
        Scalar::Float(f) => Ok(T::cast_f64(f)),
    }
}

/// PyTorch's `infer_dense_strides`: dense strides that keep the memory order of the dims of a
/// (possibly overlapping or gappy) strided layout, so that e.g. `empty_like` of a sliced
/// transposed tensor is a dense transposed tensor.
///
/// Dims are ordered innermost-first by stride with a stable insertion sort; a stride of 0
/// (broadcast) never moves a dim, equal strides put the smaller size inside, and ties keep the
/// row-major order, matching how TensorIterator orders dims.
pub(crate) fn infer_dense_strides(sizes: &[i64], strides: &[i64]) -> Vec<i64> {
    let ndim = sizes.len();
    if ndim == 0 {
        return Vec::new();
    }
    // perm[0] is the innermost dim; start from the row-major order (last dim innermost).
    let mut perm: Vec<usize> = (0..ndim).rev().collect();
    // Whether dim `a` must go outside (after, in perm order) dim `b`; `None` when ambiguous.
    let goes_after = |a: usize, b: usize| -> Option<bool> {
        let (sa, sb) = (strides[a], strides[b]);
        if sa == 0 || sb == 0 {
            None
        } else if sa != sb {
            Some(sa > sb)
        } else if sizes[a] > sizes[b] {
            Some(true)
        } else {
            None
        }
    };
    for i in 1..ndim {
        let mut cur = i;
        for j in (0..i).rev() {
            match goes_after(perm[j], perm[cur]) {
                Some(true) => {
                    perm.swap(j, cur);
                    cur = j;
                }
                Some(false) => break,
                None => {}
            }
        }
    }
    let mut out = vec![0i64; ndim];
    let mut next = 1i64;
    for &d in &perm {
        out[d] = next;
        // Size-0 dims count as 1: the tensor has no elements, so any stride works.
        next *= sizes[d].max(1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_strides_keep_dim_order() {
        // A transposed [4, 6] tensor sliced with step 2 in dim 0: sizes [3, 4], strides [2, 6]
        // -> column-major dense strides.
        assert_eq!(infer_dense_strides(&[3, 4], &[2, 6]), vec![1, 3]);
        // Expanded dims (stride 0) stay in row-major order.
        assert_eq!(infer_dense_strides(&[2, 3], &[0, 1]), vec![3, 1]);
        // A channels-last tensor sliced in W keeps channels innermost.
        assert_eq!(infer_dense_strides(&[2, 3, 4, 2], &[60, 1, 15, 6]), vec![24, 1, 6, 3]);
        assert_eq!(infer_dense_strides(&[], &[]), Vec::<i64>::new());
    }

    #[test]
    fn scalar_conversions_follow_pytorch() {
        assert_eq!(scalar_to::<u8>(Scalar::Int(-1)).unwrap(), 255);
        assert!(scalar_to::<u8>(Scalar::Int(300)).is_err());
        assert!(scalar_to::<u8>(Scalar::Float(-1.0)).is_err());
        assert_eq!(scalar_to::<i32>(Scalar::Float(-2.7)).unwrap(), -2);
        assert_eq!(
            scalar_to::<i8>(Scalar::Int(200)).unwrap_err().message,
            "value cannot be converted to type int8_t without overflow"
        );
        assert!(scalar_to::<f16>(Scalar::Float(1e6)).is_err());
        assert!(scalar_to::<f16>(Scalar::Float(f64::INFINITY)).unwrap().is_infinite());
        assert!(scalar_to::<bool>(Scalar::Int(2)).unwrap());
        assert!(scalar_to::<i64>(Scalar::Float(f64::NAN)).is_err());
        assert_eq!(scalar_to::<i64>(Scalar::Int(i64::MAX)).unwrap(), i64::MAX);
    }
}
