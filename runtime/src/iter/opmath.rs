//! `OpMath`: the type elementwise arithmetic runs in (`opmath_type`): f32 for f16/bf16, the
//! element type itself otherwise.

use super::iterator::TensorIterator;
use super::loops;
use crate::tensor::Element;
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

/// An element type together with the type its arithmetic is carried out in.
///
/// `cpu_kernel_unary_math` / `cpu_kernel_binary_math` call the kernel body on `Math` values, so
/// f16/bf16 are computed in f32 and rounded once; their contiguous loops convert whole blocks
/// with `half`'s slice conversions (SIMD where the CPU has it).
pub trait OpMath: Element {
    type Math: Copy + Send + Sync + PartialOrd + std::fmt::Debug + 'static;
    fn to_math(self) -> Self::Math;
    fn from_math(m: Self::Math) -> Self;

    /// Runs a unary `Math -> Math` kernel (the implementation behind `cpu_kernel_unary_math`).
    #[doc(hidden)]
    fn unary_math_kernel<F>(iter: &TensorIterator, f: F)
    where
        F: Fn(Self::Math) -> Self::Math + Sync,
    {
        loops::cpu_kernel_unary::<Self, Self>(iter, move |x| Self::from_math(f(x.to_math())))
    }

    /// Runs a binary `(Math, Math) -> Math` kernel (behind `cpu_kernel_binary_math`).
    #[doc(hidden)]
    fn binary_math_kernel<F>(iter: &TensorIterator, f: F)
    where
        F: Fn(Self::Math, Self::Math) -> Self::Math + Sync,
    {
        loops::cpu_kernel_binary::<Self, Self, Self>(iter, move |a, b| Self::from_math(f(a.to_math(), b.to_math())))
    }
}

macro_rules! identity_opmath {
    ($($t:ty),*) => {$(
        impl OpMath for $t {
            type Math = $t;
            #[inline(always)]
            fn to_math(self) -> $t { self }
            #[inline(always)]
            fn from_math(m: $t) -> $t { m }
        }
    )*};
}
identity_opmath!(bool, u8, i8, i16, i32, i64, f32, f64);

/// f16 and bf16: scalar and block conversions to and from f32.
pub(crate) trait ReducedFloat: Element {
    fn to_f32(self) -> f32;
    fn from_f32(v: f32) -> Self;
    fn block_to_f32(src: &[Self], dst: &mut [f32]);
    fn block_from_f32(src: &[f32], dst: &mut [Self]);
}

macro_rules! reduced_float {
    ($($t:ty),*) => {$(
        impl ReducedFloat for $t {
            #[inline(always)]
            fn to_f32(self) -> f32 { <$t>::to_f32(self) }
            #[inline(always)]
            fn from_f32(v: f32) -> Self { <$t>::from_f32(v) }
            #[inline]
            fn block_to_f32(src: &[Self], dst: &mut [f32]) { src.convert_to_f32_slice(dst) }
            #[inline]
            fn block_from_f32(src: &[f32], dst: &mut [Self]) { dst.convert_from_f32_slice(src) }
        }
        impl OpMath for $t {
            type Math = f32;
            #[inline(always)]
            fn to_math(self) -> f32 { <$t>::to_f32(self) }
            #[inline(always)]
            fn from_math(m: f32) -> Self { <$t>::from_f32(m) }
            fn unary_math_kernel<F>(iter: &TensorIterator, f: F)
            where
                F: Fn(f32) -> f32 + Sync,
            {
                loops::unary_reduced::<$t>(iter, &f)
            }
            fn binary_math_kernel<F>(iter: &TensorIterator, f: F)
            where
                F: Fn(f32, f32) -> f32 + Sync,
            {
                loops::binary_reduced::<$t>(iter, &f)
            }
        }
    )*};
}
reduced_float!(f16, bf16);
