//! `OpMath`: the type elementwise arithmetic runs in (`opmath_type`): f32 for f16/bf16, the
//! element type itself otherwise.

use super::loops;
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use oxten_runtime::iter::TensorIterator;
use oxten_runtime::tensor::Element;

/// An element type together with the type its arithmetic is carried out in.
///
/// `cpu_kernel_unary_math` / `cpu_kernel_binary_math` call the kernel body on `Math` values, so
/// f16/bf16 are computed in f32 and rounded once; their contiguous loops convert whole blocks
/// with `half`'s slice conversions (SIMD where the CPU has it).
pub trait OpMath: Element {
    type Math: Copy + Send + Sync + PartialOrd + std::fmt::Debug + 'static;
    fn to_math(self) -> Self::Math;
    fn from_math(m: Self::Math) -> Self;

    /// The value next to `self` toward `toward` in this type (C's `nextafter`): `toward` when
    /// they are equal, NaN when either is. Only the floating types have neighbours; the integer
    /// types, which the float-only `nextafter` never instantiates, return `self`.
    #[inline(always)]
    fn next_toward(self, toward: Self) -> Self {
        let _ = toward;
        self
    }

    /// Runs a unary `Math -> Math` kernel (the implementation behind `cpu_kernel_unary_math`).
    #[doc(hidden)]
    fn unary_math_kernel<F>(iter: &TensorIterator, f: F)
    where
        F: Fn(Self::Math) -> Self::Math + Sync,
    {
        loops::cpu_kernel_unary::<Self, Self>(
            iter,
            #[inline(always)]
            move |x| Self::from_math(f(x.to_math())),
        )
    }

    /// Runs a binary `(Math, Math) -> Math` kernel (behind `cpu_kernel_binary_math`).
    #[doc(hidden)]
    fn binary_math_kernel<F>(iter: &TensorIterator, f: F)
    where
        F: Fn(Self::Math, Self::Math) -> Self::Math + Sync,
    {
        loops::cpu_kernel_binary::<Self, Self, Self>(
            iter,
            #[inline(always)]
            move |a, b| Self::from_math(f(a.to_math(), b.to_math())),
        )
    }
}

/// One step of a float's bit pattern toward `toward`: away from zero adds one to the magnitude
/// bits, toward zero subtracts one; from zero, the smallest subnormal with `toward`'s sign.
macro_rules! next_toward_bits {
    ($a:expr, $toward:expr, $t:ty, $sign:expr) => {{
        let (a, b): ($t, $t) = ($a, $toward);
        if a.is_nan() || b.is_nan() {
            <$t>::NAN
        } else if a == b {
            b
        } else {
            let (bits, sign) = (a.to_bits(), $sign);
            if bits & !sign == 0 {
                <$t>::from_bits(1 | (b.to_bits() & sign))
            } else if (a < b) == (bits & sign == 0) {
                <$t>::from_bits(bits + 1)
            } else {
                <$t>::from_bits(bits - 1)
            }
        }
    }};
}

/// Types computed in themselves; the floats (given with their sign bit) step with
/// `next_toward_bits`.
macro_rules! identity_opmath {
    ($($t:ty $(, $sign:expr)?);*) => {$(
        impl OpMath for $t {
            type Math = $t;
            #[inline(always)]
            fn to_math(self) -> $t { self }
            #[inline(always)]
            fn from_math(m: $t) -> $t { m }
            $(
            #[inline(always)]
            fn next_toward(self, toward: $t) -> $t { next_toward_bits!(self, toward, $t, $sign) }
            )?
        }
    )*};
}
identity_opmath!(bool; u8; i8; i16; i32; i64; f32, 1u32 << 31; f64, 1u64 << 63);

/// f16 and bf16: scalar and block conversions to and from f32.
pub(crate) trait ReducedFloat: Element {
    /// The scalar conversions are branch-free bit operations that vectorize, so contiguous
    /// loops convert, compute and round back in one pass instead of through f32 blocks.
    const FUSED: bool;
    fn to_f32(self) -> f32;
    fn from_f32(v: f32) -> Self;
    fn block_to_f32(src: &[Self], dst: &mut [f32]);
    fn block_from_f32(src: &[f32], dst: &mut [Self]);
}

/// bf16 → f32, bit-identical to `half` (a NaN gets its quiet bit set); written without
/// branches so that block conversions vectorize.
#[inline(always)]
pub(crate) fn bf16_bits_to_f32(i: u16) -> f32 {
    let q = if i & 0x7fff > 0x7f80 { i | 0x0040 } else { i };
    f32::from_bits((q as u32) << 16)
}

/// f32 → bf16 with round-to-nearest-even, bit-identical to `half`, branch-free.
#[inline(always)]
pub(crate) fn f32_to_bf16_bits(v: f32) -> u16 {
    let x = v.to_bits();
    let nan = ((x >> 16) | 0x0040) as u16;
    let up = (x & 0x8000 != 0 && x & 0x17fff != 0) as u32;
    let rounded = ((x >> 16) + up) as u16;
    if x & 0x7fff_ffff > 0x7f80_0000 {
        nan
    } else {
        rounded
    }
}

impl ReducedFloat for f16 {
    const FUSED: bool = false;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
    #[inline]
    fn block_to_f32(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst)
    }
    #[inline]
    fn block_from_f32(src: &[f32], dst: &mut [Self]) {
        dst.convert_from_f32_slice(src)
    }
}

impl ReducedFloat for bf16 {
    const FUSED: bool = true;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        bf16_bits_to_f32(self.to_bits())
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        bf16::from_bits(f32_to_bf16_bits(v))
    }
    #[inline]
    fn block_to_f32(src: &[Self], dst: &mut [f32]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = bf16_bits_to_f32(s.to_bits());
        }
    }
    #[inline]
    fn block_from_f32(src: &[f32], dst: &mut [Self]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = bf16::from_bits(f32_to_bf16_bits(s));
        }
    }
}

macro_rules! reduced_opmath {
    ($($t:ty),*) => {$(
        impl OpMath for $t {
            type Math = f32;
            #[inline(always)]
            fn to_math(self) -> f32 {
                <$t as ReducedFloat>::to_f32(self)
            }
            #[inline(always)]
            fn from_math(m: f32) -> Self {
                <$t as ReducedFloat>::from_f32(m)
            }
            #[inline(always)]
            fn next_toward(self, toward: Self) -> Self {
                next_toward_bits!(self, toward, $t, 1u16 << 15)
            }
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
reduced_opmath!(f16, bf16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_conversions_match_half() {
        for i in 0..=u16::MAX {
            let (a, b) = (bf16_bits_to_f32(i), bf16::from_bits(i).to_f32());
            assert_eq!(a.to_bits(), b.to_bits(), "{i:#x}");
        }
        // Every f32 exponent, with mantissas around each rounding boundary, and specials.
        let mut xs = vec![0u32, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0x7f80_0001, 0xffff_ffff];
        for e in 0..256u32 {
            for m in [0u32, 1, 0x7fff, 0x8000, 0x8001, 0x1_7fff, 0x1_8000, 0x1_8001, 0x7f_ffff, 0x7f_8000] {
                for sign in [0, 0x8000_0000] {
                    xs.push(sign | (e << 23) | m);
                }
            }
        }
        for x in xs {
            let v = f32::from_bits(x);
            assert_eq!(f32_to_bf16_bits(v), bf16::from_f32(v).to_bits(), "{x:#x}");
        }
    }
}
