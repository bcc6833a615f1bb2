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
    /// The error function.
    fn erf(self) -> Self;
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
}

macro_rules! impl_float {
    ($t:ident, $erf:expr) => {
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
        }

        impl Float for $t {
            #[inline(always)]
            fn exp(self) -> Self {
                $t::exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $t::ln(self)
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
                $t::tanh(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                $t::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $t::cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                $t::tan(self)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
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
        }
    };
}

impl_float!(f64, erf_f64);
impl_float!(f32, |x: f32| erf_f64(x as f64) as f32);

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
        }
    };
}

impl_int!(i8, i8::wrapping_abs);
impl_int!(i16, i16::wrapping_abs);
impl_int!(i32, i32::wrapping_abs);
impl_int!(i64, i64::wrapping_abs);
impl_int!(u8, |x: u8| x);

// ---------------------------------------------------------------------------
// Conversions and literals
// ---------------------------------------------------------------------------

/// A literal constant of the compute type: `lit::<T>(2.0)`.
///
/// For integer types the value is converted with [`Element::from_f64`]; the
/// generator only emits integral literals for integer compute types.
#[inline(always)]
pub fn lit<T: Element>(v: f64) -> T {
    T::from_f64(v)
}

/// `1` for `true`, `0` for `false`.
#[inline(always)]
pub fn from_bool<T: Element>(b: bool) -> T {
    if b {
        T::one()
    } else {
        T::zero()
    }
}

/// `x != 0` (NaN is truthy, as in C and PyTorch).
#[inline(always)]
pub fn truthy<T: Element>(x: T) -> bool {
    x != T::zero()
}

// ---------------------------------------------------------------------------
// Arithmetic available for every element type
// ---------------------------------------------------------------------------

/// `a + b` (wrapping for integers).
#[inline(always)]
pub fn add<T: Element>(a: T, b: T) -> T {
    a.add_wrapping(b)
}

/// `a - b` (wrapping for integers).
#[inline(always)]
pub fn sub<T: Element>(a: T, b: T) -> T {
    a.sub_wrapping(b)
}

/// `a * b` (wrapping for integers).
#[inline(always)]
pub fn mul<T: Element>(a: T, b: T) -> T {
    a.mul_wrapping(b)
}

/// `-a` (wrapping for integers).
#[inline(always)]
pub fn neg<T: Element>(a: T) -> T {
    a.neg_wrapping()
}

/// `|a|` (wrapping for signed integers; identity for `u8`).
#[inline(always)]
pub fn abs<T: Element>(a: T) -> T {
    a.abs_wrapping()
}

/// `torch.minimum`: the smaller value, NaN if either is NaN.
#[inline(always)]
pub fn min<T: Element>(a: T, b: T) -> T {
    a.minimum(b)
}

/// `torch.maximum`: the larger value, NaN if either is NaN.
#[inline(always)]
pub fn max<T: Element>(a: T, b: T) -> T {
    a.maximum(b)
}

/// `torch.clamp`: `min(max(x, lo), hi)`, NaN-propagating in all operands.
#[inline(always)]
pub fn clamp<T: Element>(x: T, lo: T, hi: T) -> T {
    min(max(x, lo), hi)
}

/// `max(x, 0)`; NaN stays NaN.
#[inline(always)]
pub fn relu<T: Element>(x: T) -> T {
    max(x, T::zero())
}

/// `(0 < x) - (x < 0)`: `-1`, `0` or `1` (`0` for NaN and `±0`).
#[inline(always)]
pub fn sign<T: Element>(x: T) -> T {
    let zero = T::zero();
    sub(from_bool::<T>(zero < x), from_bool::<T>(x < zero))
}

// ---------------------------------------------------------------------------
// Comparisons and logic
// ---------------------------------------------------------------------------

/// `a < b`.
#[inline(always)]
pub fn lt<T: PartialOrd>(a: T, b: T) -> bool {
    a < b
}

/// `a <= b`.
#[inline(always)]
pub fn le<T: PartialOrd>(a: T, b: T) -> bool {
    a <= b
}

/// `a > b`.
#[inline(always)]
pub fn gt<T: PartialOrd>(a: T, b: T) -> bool {
    a > b
}

/// `a >= b`.
#[inline(always)]
pub fn ge<T: PartialOrd>(a: T, b: T) -> bool {
    a >= b
}

/// `a == b` (IEEE: NaN is not equal to anything).
#[inline(always)]
pub fn eq<T: PartialOrd>(a: T, b: T) -> bool {
    a == b
}

/// `a != b` (IEEE: NaN is unequal to everything).
#[inline(always)]
pub fn ne<T: PartialOrd>(a: T, b: T) -> bool {
    a != b
}

/// Logical and. Both operands are always evaluated (no short circuit), which
/// keeps the kernel branch-free.
#[inline(always)]
pub fn and(a: bool, b: bool) -> bool {
    a & b
}

/// Logical or (both operands are always evaluated).
#[inline(always)]
pub fn or(a: bool, b: bool) -> bool {
    a | b
}

/// Logical not.
#[inline(always)]
pub fn not(a: bool) -> bool {
    !a
}

/// `torch.where` for one element: `a` if `c`, else `b`.
///
/// Written as an indexed pick rather than `if`, which LLVM keeps as a
/// `select`: with `if`, it may sink the computation (and loads) of one arm
/// into a branch, which blocks vectorization for small integer types.
#[inline(always)]
pub fn where_<T: Copy>(c: bool, a: T, b: T) -> T {
    [b, a][c as usize]
}

// ---------------------------------------------------------------------------
// Floating-point only
// ---------------------------------------------------------------------------

/// `a / b` (true division; floating point only).
#[inline(always)]
pub fn div<T: Float>(a: T, b: T) -> T {
    a / b
}

/// `e^x`.
#[inline(always)]
pub fn exp<T: Float>(x: T) -> T {
    x.exp()
}

/// Natural logarithm.
#[inline(always)]
pub fn log<T: Float>(x: T) -> T {
    x.ln()
}

/// `ln(1 + x)`.
#[inline(always)]
pub fn log1p<T: Float>(x: T) -> T {
    x.ln_1p()
}

/// `e^x - 1`.
#[inline(always)]
pub fn expm1<T: Float>(x: T) -> T {
    x.exp_m1()
}

/// Square root.
#[inline(always)]
pub fn sqrt<T: Float>(x: T) -> T {
    x.sqrt()
}

/// `1 / sqrt(x)`.
#[inline(always)]
pub fn rsqrt<T: Float>(x: T) -> T {
    T::one() / x.sqrt()
}

/// Hyperbolic tangent.
#[inline(always)]
pub fn tanh<T: Float>(x: T) -> T {
    x.tanh()
}

/// Logistic sigmoid `1 / (1 + e^-x)`.
///
/// Never NaN for finite or infinite non-NaN input: for very negative `x`
/// the exponential overflows to `inf` and the result is `0`.
#[inline(always)]
pub fn sigmoid<T: Float>(x: T) -> T {
    T::one() / (T::one() + (-x).exp())
}

/// Sine.
#[inline(always)]
pub fn sin<T: Float>(x: T) -> T {
    x.sin()
}

/// Cosine.
#[inline(always)]
pub fn cos<T: Float>(x: T) -> T {
    x.cos()
}

/// Tangent.
#[inline(always)]
pub fn tan<T: Float>(x: T) -> T {
    x.tan()
}

/// The error function (see [`erf_f64`]).
#[inline(always)]
pub fn erf<T: Float>(x: T) -> T {
    x.erf()
}

/// Round toward negative infinity.
#[inline(always)]
pub fn floor<T: Float>(x: T) -> T {
    x.floor()
}

/// Round toward positive infinity.
#[inline(always)]
pub fn ceil<T: Float>(x: T) -> T {
    x.ceil()
}

/// Round to nearest, ties to even (`torch.round`).
#[inline(always)]
pub fn round<T: Float>(x: T) -> T {
    x.round_ties_even()
}

/// Round toward zero.
#[inline(always)]
pub fn trunc<T: Float>(x: T) -> T {
    x.trunc()
}

/// `1 / x`.
#[inline(always)]
pub fn reciprocal<T: Float>(x: T) -> T {
    T::one() / x
}

/// Exact GELU: `x / 2 * (1 + erf(x / sqrt(2)))`.
#[inline(always)]
pub fn gelu<T: Float>(x: T) -> T {
    let half = T::from_f64(0.5);
    let frac_1_sqrt_2 = T::from_f64(std::f64::consts::FRAC_1_SQRT_2);
    x * half * (T::one() + (x * frac_1_sqrt_2).erf())
}

/// Tanh-approximated GELU:
/// `x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))`.
#[inline(always)]
pub fn gelu_tanh<T: Float>(x: T) -> T {
    let half = T::from_f64(0.5);
    // sqrt(2 / pi)
    let beta = T::from_f64(std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2);
    let kappa = T::from_f64(0.044715);
    let inner = beta * (x + kappa * x * x * x);
    half * x * (T::one() + inner.tanh())
}

/// SiLU (swish): `x / (1 + e^-x)`.
#[inline(always)]
pub fn silu<T: Float>(x: T) -> T {
    x / (T::one() + (-x).exp())
}

/// Softplus with `beta = 1`, `threshold = 20`: `x` if `x > 20`, else
/// `ln(1 + e^x)`.
#[inline(always)]
pub fn softplus<T: Float>(x: T) -> T {
    let soft = x.exp().ln_1p();
    where_(x > T::from_f64(20.0), x, soft)
}

/// `a ^ b`.
#[inline(always)]
pub fn pow<T: Float>(a: T, b: T) -> T {
    a.powf(b)
}

/// Four-quadrant arctangent of `a / b`.
#[inline(always)]
pub fn atan2<T: Float>(a: T, b: T) -> T {
    a.atan2(b)
}

// ---------------------------------------------------------------------------
// erf
// ---------------------------------------------------------------------------

// W. J. Cody, "Rational Chebyshev approximations for the error function",
// Math. Comp. 23 (1969), as used in his SPECFUN routine CALERF.
// The coefficients are kept exactly as published (more digits than an f64
// holds), so that they can be checked against the reference.
#[allow(clippy::excessive_precision)]
mod cody {
    pub(super) const ERF_A: [f64; 5] = [
        3.161_123_743_870_565_6,
        1.138_641_541_510_501_56e2,
        3.774_852_376_853_020_21e2,
        3.209_377_589_138_469_47e3,
        1.857_777_061_846_031_53e-1,
    ];
    pub(super) const ERF_B: [f64; 4] = [
        2.360_129_095_234_412_09e1,
        2.440_246_379_344_441_73e2,
        1.282_616_526_077_372_28e3,
        2.844_236_833_439_170_62e3,
    ];
    pub(super) const ERF_C: [f64; 9] = [
        5.641_884_969_886_700_89e-1,
        8.883_149_794_388_375_94,
        6.611_919_063_714_162_95e1,
        2.986_351_381_974_001_31e2,
        8.819_522_212_417_690_9e2,
        1.712_047_612_634_070_58e3,
        2.051_078_377_826_071_47e3,
        1.230_339_354_797_997_25e3,
        2.153_115_354_744_038_46e-8,
    ];
    pub(super) const ERF_D: [f64; 8] = [
        1.574_492_611_070_983_47e1,
        1.176_939_508_913_124_99e2,
        5.371_811_018_620_098_58e2,
        1.621_389_574_566_690_19e3,
        3.290_799_235_733_459_63e3,
        4.362_619_090_143_247_16e3,
        3.439_367_674_143_721_64e3,
        1.230_339_354_803_749_42e3,
    ];
    pub(super) const ERF_P: [f64; 6] = [
        3.053_266_349_612_323_44e-1,
        3.603_448_999_498_044_39e-1,
        1.257_817_261_112_292_46e-1,
        1.608_378_514_874_227_66e-2,
        6.587_491_615_298_378_03e-4,
        1.631_538_713_730_209_78e-2,
    ];
    pub(super) const ERF_Q: [f64; 5] = [
        2.568_520_192_289_822_42,
        1.872_952_849_923_460_47,
        5.279_051_029_514_284_12e-1,
        6.051_834_131_244_131_91e-2,
        2.335_204_976_268_691_85e-3,
    ];
}
use cody::{ERF_A, ERF_B, ERF_C, ERF_D, ERF_P, ERF_Q};

/// `exp(-y * y)` computed as `exp(-s*s) * exp(-(y-s)(y+s))` with `s` = `y`
/// rounded down to a multiple of 1/16, which avoids the cancellation error of
/// forming `y*y` directly.
#[inline(always)]
fn exp_neg_sq(y: f64) -> f64 {
    let s = (y * 16.0).trunc() / 16.0;
    let del = (y - s) * (y + s);
    (-s * s).exp() * (-del).exp()
}

/// The error function in `f64` (relative error below 1e-15).
///
/// Uses W. J. Cody's rational Chebyshev approximations on `|x| <= 0.46875`
/// (for `erf`) and `0.46875 < |x| <= 4`, `|x| > 4` (for `erfc`).
pub fn erf_f64(x: f64) -> f64 {
    let y = x.abs();
    if y <= 0.468_75 {
        let ysq = if y > 1.11e-16 { y * y } else { 0.0 };
        let mut num = ERF_A[4] * ysq;
        let mut den = ysq;
        for i in 0..3 {
            num = (num + ERF_A[i]) * ysq;
            den = (den + ERF_B[i]) * ysq;
        }
        return x * (num + ERF_A[3]) / (den + ERF_B[3]);
    }
    // erfc(|x|) for the larger arguments.
    let erfc = if y <= 4.0 {
        let mut num = ERF_C[8] * y;
        let mut den = y;
        for i in 0..7 {
            num = (num + ERF_C[i]) * y;
            den = (den + ERF_D[i]) * y;
        }
        exp_neg_sq(y) * ((num + ERF_C[7]) / (den + ERF_D[7]))
    } else if y < 26.543 {
        let z = 1.0 / (y * y);
        let mut num = ERF_P[5] * z;
        let mut den = z;
        for i in 0..4 {
            num = (num + ERF_P[i]) * z;
            den = (den + ERF_Q[i]) * z;
        }
        let r = z * (num + ERF_P[4]) / (den + ERF_Q[4]);
        exp_neg_sq(y) * ((std::f64::consts::FRAC_2_SQRT_PI * 0.5 - r) / y)
    } else {
        // Also reached for NaN, which is handled below.
        0.0
    };
    if x.is_nan() {
        return x;
    }
    let r = (0.5 - erfc) + 0.5;
    if x < 0.0 {
        -r
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_rel(got: f64, want: f64, tol: f64) {
        let err = if want == 0.0 { got.abs() } else { ((got - want) / want).abs() };
        assert!(err <= tol, "got {got:e}, want {want:e}, rel err {err:e}");
    }

    #[test]
    fn erf_reference_values() {
        assert_rel(erf_f64(0.5), 0.520_499_877_813_046_5, 1e-15);
        assert_rel(erf_f64(1.0), 0.842_700_792_949_714_9, 1e-15);
        assert_rel(erf_f64(-2.0), -0.995_322_265_018_952_7, 1e-15);
        assert_rel(erf_f64(3.0), 0.999_977_909_503_001_4, 1e-15);
        assert_rel(erf_f64(1e-10), 1.128_379_167_095_512_6e-10, 1e-15);
        assert_eq!(erf_f64(0.0), 0.0);
        assert_eq!(erf_f64(30.0), 1.0);
        assert_eq!(erf_f64(-30.0), -1.0);
        assert_eq!(erf_f64(f64::INFINITY), 1.0);
        assert_eq!(erf_f64(f64::NEG_INFINITY), -1.0);
        assert!(erf_f64(f64::NAN).is_nan());
    }

    #[test]
    fn erf_matches_high_precision_table() {
        // Reference values computed with mpmath at 50 digits.
        let table: &[(f64, f64)] = &[
            (1e-300, 1.128_379_167_095_512_6e-300),
            (1e-5, 1.128_379_167_057_9e-5),
            (0.1, 0.112_462_916_018_284_9),
            (0.25, 0.276_326_390_168_236_96),
            (0.46875, 0.492_613_473_217_937_97),
            (0.46876, 0.492_622_531_106_846_5),
            (0.75, 0.711_155_633_653_515_1),
            (1.5, 0.966_105_146_475_310_8),
            (2.5, 0.999_593_047_982_555),
            (3.9999, 0.999_999_984_570_038_8),
            (4.0, 0.999_999_984_582_742_1),
            (4.5, 0.999_999_999_803_383_9),
            (6.0, 1.0),
        ];
        for &(x, want) in table {
            assert_rel(erf_f64(x), want, 1e-15);
            assert_rel(erf_f64(-x), -want, 1e-15);
        }
    }

    #[test]
    fn erf_f32_goes_through_f64() {
        assert_eq!(erf(0.5f32), 0.520_499_877_813_046_5f64 as f32);
        assert_eq!(erf(-2.0f32), -0.995_322_265_018_952_7f64 as f32);
    }

    #[test]
    fn gelu_values() {
        assert_rel(gelu(1.0f64), 0.841_344_746_068_542_9, 1e-15);
        assert_rel(gelu(-1.0f64), -0.158_655_253_931_457_05, 1e-15);
        assert_eq!(gelu(0.0f64), 0.0);
        assert_rel(gelu_tanh(1.0f64), 0.841_191_990_608_276_7, 1e-15);
        assert!((gelu(1.0f32) - 0.841_344_7).abs() < 1e-6);
        assert_eq!(gelu(-1000.0f64), -0.0);
    }

    #[test]
    fn activation_values() {
        assert_rel(sigmoid(0.0f64), 0.5, 0.0);
        assert_eq!(sigmoid(-800.0f64), 0.0);
        assert_eq!(sigmoid(800.0f64), 1.0);
        assert_eq!(sigmoid(-200.0f32), 0.0);
        assert_rel(silu(1.0f64), 0.731_058_578_630_004_9, 1e-15);
        assert_eq!(silu(-800.0f64), 0.0);
        assert_rel(softplus(1.0f64), 1.313_261_687_518_222_8, 1e-15);
        assert_eq!(softplus(30.0f64), 30.0);
        assert_eq!(softplus(1000.0f32), 1000.0);
        assert_eq!(relu(-3i32), 0);
        assert_eq!(relu(3.5f64), 3.5);
        assert!(relu(f64::NAN).is_nan());
        assert_rel(rsqrt(4.0f64), 0.5, 0.0);
        assert_rel(reciprocal(4.0f32) as f64, 0.25, 0.0);
    }

    #[test]
    fn round_is_half_to_even() {
        let cases =
            [(0.5, 0.0), (1.5, 2.0), (2.5, 2.0), (-0.5, -0.0), (-1.5, -2.0), (-2.5, -2.0), (2.4, 2.0), (2.6, 3.0)];
        for (x, want) in cases {
            assert_eq!(round(x), want, "round({x})");
            assert_eq!(round(x as f32), want as f32, "round({x}f32)");
        }
        assert!(round(-0.5f64).is_sign_negative());
    }

    #[test]
    fn min_max_clamp_propagate_nan() {
        let nan = f64::NAN;
        assert!(max(nan, 1.0).is_nan());
        assert!(max(1.0, nan).is_nan());
        assert!(min(nan, 1.0).is_nan());
        assert!(min(1.0, nan).is_nan());
        assert!(max(nan, f64::INFINITY).is_nan());
        assert!(min(f32::NAN, f32::NEG_INFINITY).is_nan());
        assert_eq!(max(1.0, 2.0), 2.0);
        assert_eq!(min(1.0, 2.0), 1.0);
        assert!(clamp(nan, 0.0, 1.0).is_nan());
        assert!(clamp(0.5, nan, 1.0).is_nan());
        assert!(clamp(0.5, 0.0, nan).is_nan());
        assert_eq!(clamp(5.0, 0.0, 1.0), 1.0);
        assert_eq!(clamp(-5.0, 0.0, 1.0), 0.0);
        assert_eq!(clamp(0.25, 0.0, 1.0), 0.25);
        // lo > hi: result is hi, like torch.clamp.
        assert_eq!(clamp(0.5, 2.0, 1.0), 1.0);
        assert_eq!(clamp(7i64, 2, 5), 5);
        assert_eq!(max(-3i8, 4), 4);
        assert_eq!(min(200u8, 4), 4);
    }

    #[test]
    fn integer_arithmetic_wraps() {
        assert_eq!(add(i32::MAX, 1), i32::MIN);
        assert_eq!(add(250u8, 10), 4);
        assert_eq!(sub(0u8, 1), 255);
        assert_eq!(mul(100i8, 3), 44);
        assert_eq!(neg(i64::MIN), i64::MIN);
        assert_eq!(neg(1u8), 255);
        assert_eq!(abs(-5i16), 5);
        assert_eq!(abs(i8::MIN), i8::MIN);
        assert_eq!(abs(200u8), 200);
        assert_eq!(add(1.5f32, 2.0), 3.5);
    }

    #[test]
    fn sign_matches_torch() {
        assert_eq!(sign(-3.5f64), -1.0);
        assert_eq!(sign(2.0f32), 1.0);
        assert_eq!(sign(0.0f64), 0.0);
        assert_eq!(sign(f64::NAN), 0.0);
        assert_eq!(sign(-7i32), -1);
        assert_eq!(sign(9u8), 1);
        assert_eq!(sign(0u8), 0);
    }

    #[test]
    fn logic_and_conversions() {
        assert!(lt(1, 2) && le(2, 2) && gt(3.0, 2.0) && ge(2u8, 2));
        assert!(eq(true, true) && ne(1.0, f64::NAN) && !eq(f64::NAN, f64::NAN));
        assert!(and(true, true) && !and(true, false));
        assert!(or(false, true) && !or(false, false));
        assert!(not(false));
        assert_eq!(where_(true, 1.0, 2.0), 1.0);
        assert_eq!(where_(false, 1i8, 2), 2);
        assert_eq!(from_bool::<u8>(true), 1);
        assert_eq!(from_bool::<f32>(false), 0.0);
        assert!(truthy(f64::NAN) && truthy(-1i32) && !truthy(0.0f32));
        assert_eq!(lit::<i32>(2.0), 2);
        assert_eq!(lit::<f32>(0.5), 0.5);
        assert_eq!(<i64 as Element>::from_i64(i64::MAX), i64::MAX);
        assert_eq!(<u8 as Element>::from_f64(-3.0), 253);
        assert_eq!(<i8 as Element>::from_f64(200.7), -56);
        assert_eq!(<i32 as Element>::from_f64(-2.9), -2);
        assert_eq!(<i64 as Element>::from_f64(f64::NAN), 0);
        assert_eq!(<f64 as Element>::to_f64(1.5), 1.5);
    }

    #[test]
    fn float_functions() {
        assert_eq!(div(1.0f64, 4.0), 0.25);
        assert_eq!(exp(0.0f32), 1.0);
        assert_eq!(log(1.0f64), 0.0);
        assert_eq!(log1p(0.0f64), 0.0);
        assert_eq!(expm1(0.0f64), 0.0);
        assert_eq!(sqrt(9.0f64), 3.0);
        assert_eq!(tanh(0.0f64), 0.0);
        assert_eq!(sin(0.0f64), 0.0);
        assert_eq!(cos(0.0f64), 1.0);
        assert_eq!(tan(0.0f64), 0.0);
        assert_eq!(floor(-1.5f64), -2.0);
        assert_eq!(ceil(-1.5f64), -1.0);
        assert_eq!(trunc(-1.5f64), -1.0);
        assert_eq!(pow(2.0f64, 10.0), 1024.0);
        assert_eq!(atan2(1.0f64, 1.0), std::f64::consts::FRAC_PI_4);
    }
}
