//! Scalar element math used by generated pointwise kernels.
//!
//! The operator generator (`oxten-codegen`, module `pointwise`) turns a
//! `pointwise:` expression from `native_functions.yaml` into a Rust
//! expression made only of calls into this module, for example
//! `self + alpha * other` becomes
//! `m::add(self_, m::mul(alpha, other))`. Every function here is a small,
//! generic, `#[inline(always)]` free function so that, once monomorphized for
//! a concrete compute type, the element kernel collapses into straight-line
//! code that the compiler can vectorize (conditionals are written as value
//! selects, never as control flow with side effects).
//!
//! # Compute types
//!
//! * [`Element`] is implemented for `f32`, `f64`, `i8`, `i16`, `i32`, `i64`
//!   and `u8`. It provides the conversions and the operations that make sense
//!   for every numeric type: [`add`], [`sub`], [`mul`], [`neg`], [`abs`],
//!   [`min`], [`max`], [`clamp`], [`relu`], [`sign`] and the comparisons.
//!   Integer arithmetic wraps on overflow (two's complement), exactly like
//!   PyTorch's CPU kernels.
//! * [`Float`] (`f32`, `f64`) adds division and the transcendental and
//!   rounding functions. Expressions that need them are always computed in a
//!   floating-point type (integer inputs are promoted by the caller).
//!
//! # Booleans
//!
//! Comparisons return `bool`; [`and`], [`or`], [`not`] combine them and
//! [`where_`] selects between two values. [`from_bool`] and [`truthy`]
//! convert between `bool` and a numeric element (`true` ⇔ `1`, nonzero ⇔
//! `true`, NaN counts as nonzero).
//!
//! # PyTorch semantics
//!
//! * [`min`]/[`max`] behave like `torch.minimum`/`torch.maximum`: a NaN in
//!   either operand gives NaN.
//! * [`clamp`] is `min(max(x, lo), hi)` with the same NaN propagation (a NaN
//!   bound gives NaN); if `lo > hi` the result is `hi`.
//! * [`round`] rounds half to even (`torch.round`).
//! * [`sign`] is `(0 < x) - (x < 0)`, so `sign(NaN) == 0` and
//!   `sign(-0.0) == 0`.
//! * [`softplus`] uses PyTorch's defaults `beta = 1`, `threshold = 20`.
//! * [`gelu`] is the exact (erf) form, [`gelu_tanh`] the tanh approximation.
//! * [`erf`] is W. J. Cody's rational Chebyshev approximation (relative
//!   error below 1e-15 in `f64`); the `f32` version is computed in `f64`.

/// A numeric compute type that generated element kernels can operate on.
///
/// Implemented for `f32`, `f64`, `i8`, `i16`, `i32`, `i64` and `u8`.
pub trait Element: Copy + Send + Sync + 'static + PartialOrd {
    /// `true` for `f32`/`f64`.
    const IS_FLOAT: bool;

    /// Converts from `f64`. Floats round to nearest; integer types truncate
    /// toward zero into `i64` (saturating, NaN becomes 0) and then wrap to
    /// the target width like a C++ `static_cast` of an `int64_t` scalar
    /// (`u8::from_f64(-2.0) == 254`).
    fn from_f64(v: f64) -> Self;
    /// Converts from `i64` with Rust `as` semantics (integers wrap).
    ///
    /// Use this for integral scalars so that large `i64` values are exact.
    fn from_i64(v: i64) -> Self;
    /// Converts to `f64` (exact for all implemented types except very large
    /// `i64` values).
    fn to_f64(self) -> f64;
    /// The additive identity.
    fn zero() -> Self;
    /// The multiplicative identity.
    fn one() -> Self;

    /// `self + rhs`, wrapping on integer overflow.
    fn add_wrapping(self, rhs: Self) -> Self;
    /// `self - rhs`, wrapping on integer overflow.
    fn sub_wrapping(self, rhs: Self) -> Self;
    /// `self * rhs`, wrapping on integer overflow.
    fn mul_wrapping(self, rhs: Self) -> Self;
    /// `-self`, wrapping on integer overflow (`u8` negates modulo 256).
    fn neg_wrapping(self) -> Self;
    /// `|self|`, wrapping on integer overflow (`abs(i8::MIN) == i8::MIN`).
    fn abs_wrapping(self) -> Self;
    /// Larger of the two values; NaN if either is NaN.
    fn maximum(self, rhs: Self) -> Self;
    /// Smaller of the two values; NaN if either is NaN.
    fn minimum(self, rhs: Self) -> Self;
    /// Rounds toward negative infinity (integers are unchanged).
    fn floor_value(self) -> Self;
    /// Rounds toward positive infinity (integers are unchanged).
    fn ceil_value(self) -> Self;
    /// Rounds half to even (integers are unchanged).
    fn round_value(self) -> Self;
    /// Rounds toward zero (integers are unchanged).
    fn trunc_value(self) -> Self;
    /// Whether the value is NaN (never for integers).
    fn nan_value(self) -> bool;
    /// Whether the value is ±infinity (never for integers).
    fn infinite_value(self) -> bool;
    /// Whether the sign bit is set (`-0.0` included; never for `u8`).
    fn sign_bit(self) -> bool;
    /// `self / rhs` rounded toward zero. Integers: 0 for a zero divisor (callers reject it
    /// before), and `MIN / -1` wraps to `MIN`.
    fn div_trunc(self, rhs: Self) -> Self;
    /// `self - rhs * div_trunc(self, rhs)`, the sign of `self` (C's `fmod`). Integers: 0 for
    /// a zero divisor.
    fn rem_trunc(self, rhs: Self) -> Self;
    /// `self / rhs` rounded toward negative infinity (Python's `//`). Floats follow PyTorch's
    /// `div_floor_floating`, in their own precision: the quotient comes from `fmod`, so it
    /// agrees with `remainder`, a zero quotient keeps the sign of `self / rhs`, and a zero
    /// divisor gives `self / rhs` (±inf or NaN). Integers: 0 for a zero divisor.
    fn div_floor(self, rhs: Self) -> Self;
    /// `self` to the power `rhs`. Floats: `powf`. Integers: repeated squaring, wrapping on
    /// overflow; a negative power gives 1 for a base of 1, ±1 for -1 (by the power's parity)
    /// and 0 otherwise, as PyTorch's integer `pow`.
    fn pow_value(self, rhs: Self) -> Self;
}

/// A floating-point compute type (`f32`, `f64`).
///
/// Besides the std arithmetic operators, it provides the transcendental and
/// rounding functions. The method names mirror the inherent `f32`/`f64`
/// methods; `erf` has no std counterpart and is implemented in this module.
pub trait Float:
    Element
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// `e^self`.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// `ln(1 + self)`, accurate near zero.
    fn ln_1p(self) -> Self;
    /// `e^self - 1`, accurate near zero.
    fn exp_m1(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Tangent.
    fn tan(self) -> Self;
    /// Arcsine.
    fn asin(self) -> Self;
    /// Arccosine.
    fn acos(self) -> Self;
    /// Arctangent.
    fn atan(self) -> Self;
    /// Hyperbolic sine.
    fn sinh(self) -> Self;
    /// Hyperbolic cosine.
    fn cosh(self) -> Self;
    /// Inverse hyperbolic sine.
    fn asinh(self) -> Self;
    /// Inverse hyperbolic cosine.
    fn acosh(self) -> Self;
    /// Inverse hyperbolic tangent.
    fn atanh(self) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Base-10 logarithm.
    fn log10(self) -> Self;
    /// 2 to the power `x`.
    fn exp2(self) -> Self;
    /// The error function.
    fn erf(self) -> Self;
    /// `1 - erf(self)`, keeping its relative accuracy where it is tiny (computed in f64).
    fn erfc(self) -> Self;
    /// The inverse error function (NaN outside `[-1, 1]`, ±inf at ±1).
    fn erfinv(self) -> Self;
    /// `sqrt(self² + rhs²)` without undue overflow or underflow.
    fn hypot(self, rhs: Self) -> Self;
    /// Largest integer not greater than `self`.
    fn floor(self) -> Self;
    /// Smallest integer not less than `self`.
    fn ceil(self) -> Self;
    /// Nearest integer, ties to even.
    fn round_ties_even(self) -> Self;
    /// Integer part (rounds toward zero).
    fn trunc(self) -> Self;
    /// `self` raised to the power `rhs`.
    fn powf(self, rhs: Self) -> Self;
    /// Four-quadrant arctangent of `self / rhs`.
    fn atan2(self, rhs: Self) -> Self;
    /// `true` if `self` is NaN.
    fn is_nan(self) -> bool;
    /// `|self|` with the sign of `rhs`.
    fn copysign(self, rhs: Self) -> Self;
}

macro_rules! impl_float {
    ($t:ident, exp: $exp:expr, ln: $ln:expr, tanh: $tanh:expr, sin: $sin:expr, cos: $cos:expr, erf: $erf:expr, fmod: $fmod:expr) => {
        impl Element for $t {
            const IS_FLOAT: bool = true;
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
            #[inline(always)]
            fn one() -> Self {
                1.0
            }
            #[inline(always)]
            fn add_wrapping(self, rhs: Self) -> Self {
                self + rhs
            }
            #[inline(always)]
            fn sub_wrapping(self, rhs: Self) -> Self {
                self - rhs
            }
            #[inline(always)]
            fn mul_wrapping(self, rhs: Self) -> Self {
                self * rhs
            }
            #[inline(always)]
            fn neg_wrapping(self) -> Self {
                -self
            }
            #[inline(always)]
            fn abs_wrapping(self) -> Self {
                $t::abs(self)
            }
            #[inline(always)]
            fn maximum(self, rhs: Self) -> Self {
                // NaN in `self` is selected by the first test; NaN in `rhs`
                // makes `self > rhs` false and so selects `rhs`.
                if $t::is_nan(self) | (self > rhs) {
                    self
                } else {
                    rhs
                }
            }
            #[inline(always)]
            fn minimum(self, rhs: Self) -> Self {
                if $t::is_nan(self) | (self < rhs) {
                    self
                } else {
                    rhs
                }
            }
            #[inline(always)]
            fn floor_value(self) -> Self {
                $t::floor(self)
            }
            #[inline(always)]
            fn ceil_value(self) -> Self {
                $t::ceil(self)
            }
            #[inline(always)]
            fn round_value(self) -> Self {
                $t::round_ties_even(self)
            }
            #[inline(always)]
            fn trunc_value(self) -> Self {
                $t::trunc(self)
            }
            #[inline(always)]
            fn nan_value(self) -> bool {
                $t::is_nan(self)
            }
            #[inline(always)]
            fn infinite_value(self) -> bool {
                $t::is_infinite(self)
            }
            #[inline(always)]
            fn sign_bit(self) -> bool {
                $t::is_sign_negative(self)
            }
            #[inline(always)]
            fn div_trunc(self, rhs: Self) -> Self {
                $t::trunc(self / rhs)
            }
            #[inline(always)]
            fn rem_trunc(self, rhs: Self) -> Self {
                $fmod(self, rhs)
            }
            #[inline(always)]
            fn div_floor(self, rhs: Self) -> Self {
                if rhs == 0.0 {
                    return self / rhs;
                }
                let m = $fmod(self, rhs);
                let mut div = (self - m) / rhs;
                if m != 0.0 && (rhs < 0.0) != (m < 0.0) {
                    div -= 1.0;
                }
                if div == 0.0 {
                    return $t::copysign(0.0, self / rhs);
                }
                let q = $t::floor(div);
                if div - q > 0.5 {
                    q + 1.0
                } else {
                    q
                }
            }
            #[inline(always)]
            fn pow_value(self, rhs: Self) -> Self {
                $t::powf(self, rhs)
            }
        }

        impl Float for $t {
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $ln(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                $t::ln_1p(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                $t::exp_m1(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $tanh(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                $sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                $t::tan(self)
            }
            #[inline(always)]
            fn asin(self) -> Self {
                $t::asin(self)
            }
            #[inline(always)]
            fn acos(self) -> Self {
                $t::acos(self)
            }
            #[inline(always)]
            fn atan(self) -> Self {
                $t::atan(self)
            }
            #[inline(always)]
            fn sinh(self) -> Self {
                $t::sinh(self)
            }
            #[inline(always)]
            fn cosh(self) -> Self {
                $t::cosh(self)
            }
            #[inline(always)]
            fn asinh(self) -> Self {
                $t::asinh(self)
            }
            #[inline(always)]
            fn acosh(self) -> Self {
                $t::acosh(self)
            }
            #[inline(always)]
            fn atanh(self) -> Self {
                $t::atanh(self)
            }
            #[inline(always)]
            fn log2(self) -> Self {
                $t::log2(self)
            }
            #[inline(always)]
            fn log10(self) -> Self {
                $t::log10(self)
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                $t::exp2(self)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn erfinv(self) -> Self {
                erfinv_f64(self as f64) as $t
            }
            #[inline(always)]
            fn erfc(self) -> Self {
                erfc_f64(self as f64) as $t
            }
            #[inline(always)]
            fn hypot(self, rhs: Self) -> Self {
                $t::hypot(self, rhs)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                $t::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $t::ceil(self)
            }
            #[inline(always)]
            fn round_ties_even(self) -> Self {
                $t::round_ties_even(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                $t::trunc(self)
            }
            #[inline(always)]
            fn powf(self, rhs: Self) -> Self {
                $t::powf(self, rhs)
            }
            #[inline(always)]
            fn atan2(self, rhs: Self) -> Self {
                $t::atan2(self, rhs)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline(always)]
            fn copysign(self, rhs: Self) -> Self {
                $t::copysign(self, rhs)
            }
        }
    };
}

impl_float!(f64, exp: f64::exp, ln: f64::ln, tanh: f64::tanh, sin: f64::sin, cos: f64::cos, erf: erf_f64, fmod: |a: f64, b: f64| a % b);
// f32 uses the branch-free implementations below, which vectorize (libm's are scalar calls).
impl_float!(f32, exp: exp_f32, ln: log_f32, tanh: tanh_f32, sin: sin_f32, cos: cos_f32, erf: erf_f32, fmod: fmod_f32);

macro_rules! impl_int {
    ($t:ident, $abs:expr) => {
        impl Element for $t {
            const IS_FLOAT: bool = false;
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as i64 as $t
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn zero() -> Self {
                0
            }
            #[inline(always)]
            fn one() -> Self {
                1
            }
            #[inline(always)]
            fn add_wrapping(self, rhs: Self) -> Self {
                $t::wrapping_add(self, rhs)
            }
            #[inline(always)]
            fn sub_wrapping(self, rhs: Self) -> Self {
                $t::wrapping_sub(self, rhs)
            }
            #[inline(always)]
            fn mul_wrapping(self, rhs: Self) -> Self {
                $t::wrapping_mul(self, rhs)
            }
            #[inline(always)]
            fn neg_wrapping(self) -> Self {
                $t::wrapping_neg(self)
            }
            #[inline(always)]
            fn abs_wrapping(self) -> Self {
                $abs(self)
            }
            #[inline(always)]
            fn maximum(self, rhs: Self) -> Self {
                if self > rhs {
                    self
                } else {
                    rhs
                }
            }
            #[inline(always)]
            fn minimum(self, rhs: Self) -> Self {
                if self < rhs {
                    self
                } else {
                    rhs
                }
            }
            #[inline(always)]
            fn floor_value(self) -> Self {
                self
            }
            #[inline(always)]
            fn ceil_value(self) -> Self {
                self
            }
            #[inline(always)]
            fn round_value(self) -> Self {
                self
            }
            #[inline(always)]
            fn trunc_value(self) -> Self {
                self
            }
            #[inline(always)]
            fn nan_value(self) -> bool {
                false
            }
            #[inline(always)]
            fn infinite_value(self) -> bool {
                false
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn sign_bit(self) -> bool {
                self < 0
            }
            #[inline(always)]
            fn div_trunc(self, rhs: Self) -> Self {
                // `checked_div` is `None` for a zero divisor and for `MIN / -1`, which wraps.
                match $t::checked_div(self, rhs) {
                    Some(q) => q,
                    None if rhs == 0 => 0,
                    None => self.wrapping_neg(),
                }
            }
            #[inline(always)]
            fn rem_trunc(self, rhs: Self) -> Self {
                $t::checked_rem(self, rhs).unwrap_or(0)
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn div_floor(self, rhs: Self) -> Self {
                // One division: the remainder from the quotient (exact, wrapping at MIN / -1).
                let q = self.div_trunc(rhs);
                let m = self.wrapping_sub(q.wrapping_mul(rhs));
                if m != 0 && ((rhs < 0) != (m < 0)) {
                    q.wrapping_sub(1)
                } else {
                    q
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn pow_value(self, rhs: Self) -> Self {
                if rhs < 0 {
                    let minus_one = (0 as $t).wrapping_sub(1);
                    return if self == 1 {
                        1
                    } else if self == minus_one {
                        if rhs % 2 == 0 {
                            1
                        } else {
                            minus_one
                        }
                    } else {
                        0
                    };
                }
                let (mut base, mut e, mut result) = (self, rhs, 1 as $t);
                while e != 0 {
                    if e & 1 == 1 {
                        result = result.wrapping_mul(base);
                    }
                    e >>= 1;
                    base = base.wrapping_mul(base);
                }
                result
            }
        }
    };
}

/// An integer compute type (`i8`, `i16`, `i32`, `i64`, `u8`; bools compute as 0/1 `u8`): the
/// bit operations.
pub trait Integer: Element {
    /// `self & rhs`.
    fn bit_and(self, rhs: Self) -> Self;
    /// `self | rhs`.
    fn bit_or(self, rhs: Self) -> Self;
    /// `self ^ rhs`.
    fn bit_xor(self, rhs: Self) -> Self;
    /// `!self` (every bit flipped).
    fn bit_not(self) -> Self;
    /// `self << rhs` as PyTorch: 0 when `rhs` (read as signed) is negative or not below the bit
    /// width; bits shifted out are lost.
    fn shift_left(self, rhs: Self) -> Self;
    /// `self >> rhs` as PyTorch (sign-filling for signed types): every bit shifted out (the sign
    /// fill, 0 for `u8`) when `rhs` (read as signed) is negative or not below the bit width.
    fn shift_right(self, rhs: Self) -> Self;
    /// Euclid's algorithm on the absolute values, PyTorch's `calc_gcd` (wrapping: the absolute
    /// value of the most negative integer is itself).
    fn gcd(self, rhs: Self) -> Self;
    /// `|self / gcd * rhs|`, 0 when the `gcd` is 0 (wrapping where it overflows).
    fn lcm(self, rhs: Self) -> Self;
}

macro_rules! impl_integer {
    ($t:ident, $signed:ident, $unsigned:ident, $abs:expr) => {
        impl Integer for $t {
            #[inline(always)]
            fn bit_and(self, rhs: Self) -> Self {
                self & rhs
            }
            #[inline(always)]
            fn bit_or(self, rhs: Self) -> Self {
                self | rhs
            }
            #[inline(always)]
            fn bit_xor(self, rhs: Self) -> Self {
                self ^ rhs
            }
            #[inline(always)]
            fn bit_not(self) -> Self {
                !self
            }
            #[inline(always)]
            fn shift_left(self, rhs: Self) -> Self {
                let s = rhs as $signed;
                if s < 0 || s as u32 >= $t::BITS {
                    0
                } else {
                    ((self as $unsigned) << s) as $t
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shift_right(self, rhs: Self) -> Self {
                let s = rhs as $signed;
                if s < 0 || s as u32 >= $t::BITS {
                    // All the bits shifted out: the sign fill, or 0 for an unsigned type.
                    if self < 0 {
                        !0
                    } else {
                        0
                    }
                } else {
                    self >> s
                }
            }
            #[inline(always)]
            fn gcd(self, rhs: Self) -> Self {
                let (mut a, mut b) = ($abs(self), $abs(rhs));
                while a != 0 {
                    let c = a;
                    a = b.wrapping_rem(a);
                    b = c;
                }
                b
            }
            #[inline(always)]
            fn lcm(self, rhs: Self) -> Self {
                let g = self.gcd(rhs);
                if g == 0 {
                    0
                } else {
                    $abs(self.wrapping_div(g).wrapping_mul(rhs))
                }
            }
        }
    };
}

impl_integer!(i8, i8, u8, i8::wrapping_abs);
impl_integer!(i16, i16, u16, i16::wrapping_abs);
impl_integer!(i32, i32, u32, i32::wrapping_abs);
impl_integer!(i64, i64, u64, i64::wrapping_abs);
impl_integer!(u8, i8, u8, |x: u8| x);

impl_int!(i8, i8::wrapping_abs);
impl_int!(i16, i16::wrapping_abs);
impl_int!(i32, i32::wrapping_abs);
impl_int!(i64, i64::wrapping_abs);
impl_int!(u8, |x: u8| x);

mod functions;
mod transcendental;
// No unsafe code here, so nothing for Miri to check; its value scans would take hours under it.
#[cfg(all(test, not(miri)))]
mod tests;

pub use functions::*;
pub use transcendental::*;

/// The element functions as the bool loops of generated kernels call them: bools compute as
/// 0/1 in `u8`, so `bitnot` is logical not there; every other function is the same.
pub mod boolean {
    pub use super::functions::*;
    use super::Integer;

    /// Logical not of a 0/1 value.
    #[inline(always)]
    pub fn bitnot<T: Integer>(x: T) -> T {
        x.bit_xor(T::one())
    }
}
