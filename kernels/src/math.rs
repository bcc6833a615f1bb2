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
}

macro_rules! impl_float {
    ($t:ident, exp: $exp:expr, ln: $ln:expr, tanh: $tanh:expr, sin: $sin:expr, cos: $cos:expr, erf: $erf:expr) => {
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
        }
    };
}

impl_float!(f64, exp: f64::exp, ln: f64::ln, tanh: f64::tanh, sin: f64::sin, cos: f64::cos, erf: erf_f64);
// f32 uses the branch-free implementations below, which vectorize (libm's are scalar calls).
impl_float!(f32, exp: exp_f32, ln: log_f32, tanh: tanh_f32, sin: sin_f32, cos: cos_f32, erf: erf_f32);

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

/// Arcsine.
#[inline(always)]
pub fn asin<T: Float>(x: T) -> T {
    x.asin()
}

/// Arccosine.
#[inline(always)]
pub fn acos<T: Float>(x: T) -> T {
    x.acos()
}

/// Arctangent.
#[inline(always)]
pub fn atan<T: Float>(x: T) -> T {
    x.atan()
}

/// Hyperbolic sine.
#[inline(always)]
pub fn sinh<T: Float>(x: T) -> T {
    x.sinh()
}

/// Hyperbolic cosine.
#[inline(always)]
pub fn cosh<T: Float>(x: T) -> T {
    x.cosh()
}

/// Inverse hyperbolic sine.
#[inline(always)]
pub fn asinh<T: Float>(x: T) -> T {
    x.asinh()
}

/// Inverse hyperbolic cosine.
#[inline(always)]
pub fn acosh<T: Float>(x: T) -> T {
    x.acosh()
}

/// Inverse hyperbolic tangent.
#[inline(always)]
pub fn atanh<T: Float>(x: T) -> T {
    x.atanh()
}

/// Base-2 logarithm.
#[inline(always)]
pub fn log2<T: Float>(x: T) -> T {
    x.log2()
}

/// Base-10 logarithm.
#[inline(always)]
pub fn log10<T: Float>(x: T) -> T {
    x.log10()
}

/// 2 to the power `x`.
#[inline(always)]
pub fn exp2<T: Float>(x: T) -> T {
    x.exp2()
}

/// Degrees to radians: `x * (pi / 180)`, the constant rounded to `T` first (as PyTorch multiplies
/// by a scalar).
#[inline(always)]
pub fn deg2rad<T: Float>(x: T) -> T {
    x * T::from_f64(std::f64::consts::PI / 180.0)
}

/// Radians to degrees: `x * (180 / pi)`, the constant rounded to `T` first.
#[inline(always)]
pub fn rad2deg<T: Float>(x: T) -> T {
    x * T::from_f64(180.0 / std::f64::consts::PI)
}

/// The error function (see [`erf_f64`]).
#[inline(always)]
pub fn erf<T: Float>(x: T) -> T {
    x.erf()
}

/// The inverse error function (see [`erfinv_f64`]).
#[inline(always)]
pub fn erfinv<T: Float>(x: T) -> T {
    x.erfinv()
}

/// `sqrt(a² + b²)`, scaled so that it neither overflows nor underflows needlessly.
#[inline(always)]
pub fn hypot<T: Float>(a: T, b: T) -> T {
    a.hypot(b)
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
// Vectorizable f32 transcendental functions
// ---------------------------------------------------------------------------
//
// libm's `expf`, `logf` … are calls, so a loop over them never vectorizes. The functions below
// are straight-line code: range reduction with integer bit manipulation and constant-magnitude
// rounding tricks (no `round`/`floor` calls, which baseline x86-64 lacks as instructions), a
// polynomial, and special values (NaN, ±inf, overflow, underflow, subnormals) chosen with
// selects, so that LLVM vectorizes a loop over them at whatever instruction-set level the loop
// is compiled for. They use plain multiplies and adds (never FMA), so the results are the same
// on every CPU. Polynomial coefficients were fitted for this crate (Chebyshev interpolation of
// the reduced functions, rounded to the working precision); the tests check the error against
// f64 over dense sweeps: ≤ 1 ulp for exp/log, ≤ 1.5 ulp for tanh, and below 0.51 ulp for erf,
// sin and cos, which are computed in f64.

/// `1.5 · 2^23`: adding and subtracting it rounds an f32 of magnitude below 2^22 to an integer
/// (ties to even), and the sum's low mantissa bits hold that integer.
const ROUND_F32: f32 = 12_582_912.0;
/// `1.5 · 2^52`, the same for f64 (magnitudes below 2^51).
const ROUND_F64: f64 = 6_755_399_441_055_744.0;

/// Selects `a` where `c`, else `b` (a value select, never a branch).
#[inline(always)]
fn sel<T: Copy>(c: bool, a: T, b: T) -> T {
    where_(c, a, b)
}

/// `2^k` for `-126 <= k <= 127`, from its bits.
#[inline(always)]
fn pow2i_f32(k: i32) -> f32 {
    f32::from_bits((k.wrapping_add(127) as u32) << 23)
}

/// `e^x` in f32, within 1 ulp (subnormal results and overflow to infinity included).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split so that `n * LN2_HI` is exact for the |n| <= 150 used here.
    const LN2_HI: f32 = 355.0 / 512.0;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const P: [f32; 6] = [0.5, 0.166_666_67, 0.041_666_467, 0.008_333_298, 0.001_393_364_4, 0.000_198_992_76];
    // Clamp (NaN passes through both tests): below -104 the result is 0, above 89 it is +inf.
    let xc = sel(x < -104.0, -104.0, sel(x > 89.0, 89.0, x));
    let t = xc * LOG2E + ROUND_F32;
    let n = t - ROUND_F32;
    let k = (t.to_bits() as i32).wrapping_sub(ROUND_F32.to_bits() as i32);
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let mut p = P[5];
    p = p * r + P[4];
    p = p * r + P[3];
    p = p * r + P[2];
    p = p * r + P[1];
    p = p * r + P[0];
    let y = (p * r * r + r) + 1.0;
    // 2^k in two halves, so that k down to -150 (subnormal results) and up to 129 (overflow)
    // need no special case; the last multiply rounds once.
    let k1 = k >> 1;
    y * pow2i_f32(k1) * pow2i_f32(k.wrapping_sub(k1))
}

/// Natural logarithm in f32, within 1 ulp (`log(0) = -inf`, negative → NaN, subnormals exact).
#[inline(always)]
pub fn log_f32(x: f32) -> f32 {
    const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    const LN2_HI: f32 = 355.0 / 512.0;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const Q: [f32; 9] = [
        0.333_333_3,
        -0.249_999_9,
        0.200_007_08,
        -0.166_684_8,
        0.142_499_37,
        -0.124_110_505,
        0.116_615_11,
        -0.115_712_01,
        0.071_497_54,
    ];
    // Subnormals are scaled into the normal range (exactly).
    let tiny = x < f32::MIN_POSITIVE;
    let xs = sel(tiny, x * 8_388_608.0, x);
    let b = xs.to_bits();
    let e = ((b >> 23) & 0xff) as i32 - sel(tiny, 126 + 23, 126);
    // x = m · 2^e with m in [0.5, 1); then m in [sqrt(1/2), sqrt(2)) and f = m - 1.
    let m = f32::from_bits((b & 0x007f_ffff) | 0x3f00_0000);
    let low = m < SQRT_HALF;
    let e = sel(low, e - 1, e) as f32;
    let f = sel(low, m + m - 1.0, m - 1.0);
    let z = f * f;
    let mut y = Q[8];
    for &q in Q[..8].iter().rev() {
        y = y * f + q;
    }
    let y = y * f * z;
    let y = y + e * LN2_LO;
    let y = y - z * 0.5;
    let r = (f + y) + e * LN2_HI;
    // Specials: NaN and +inf give themselves, ±0 gives -inf, negatives give NaN.
    let r = sel(x < 0.0, f32::NAN, r);
    let r = sel(x == 0.0, f32::NEG_INFINITY, r);
    sel(x.is_nan() | (x == f32::INFINITY), x, r)
}

/// Hyperbolic tangent in f32, within 1.5 ulp.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    const T: [f32; 5] = [-0.333_333_28, 0.133_327_83, -0.053_852_5, 0.021_003_641, -0.006_104_948];
    let z = x.abs();
    // |x| < 0.625: x + x^3 · T(x^2).
    let s = x * x;
    let mut p = T[4];
    p = p * s + T[3];
    p = p * s + T[2];
    p = p * s + T[1];
    p = p * s + T[0];
    let small = p * s * x + x;
    // Otherwise 1 - 2 / (e^2|x| + 1) with x's sign (1 once e^2|x| overflows; NaN stays NaN).
    let big = 1.0 - 2.0 / (exp_f32(z + z) + 1.0);
    let big = sel(x < 0.0, -big, big);
    // (±0 must keep its sign, which the sum in `small` loses.)
    sel(z < 0.625, sel(z == 0.0, x, small), big)
}

/// `e^v` in f64 for `-700 < v < 700` (no special values), error below 1e-15 relative.
#[inline(always)]
fn exp_f64_finite(v: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    // ln 2 rounded to 32 significant bits (0x3FE62E42FEE00000).
    const LN2_HI: f64 = 2_977_044_471.0 / 4_294_967_296.0;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let t = v * LOG2E + ROUND_F64;
    let n = t - ROUND_F64;
    let k = (t.to_bits() as i64).wrapping_sub(ROUND_F64.to_bits() as i64);
    let r = (v - n * LN2_HI) - n * LN2_LO;
    // Taylor series to r^13 (|r| <= 0.35: truncation error below 2e-17).
    let mut p = 1.0 / 6_227_020_800.0;
    let mut fact = 6_227_020_800.0f64;
    for i in (1..13).rev() {
        fact /= (i + 1) as f64;
        p = p * r + 1.0 / fact;
    }
    let y = p * r + 1.0;
    y * f64::from_bits((k.wrapping_add(1023) as u64) << 52)
}

/// The error function in f32, computed in f64: a polynomial of `x²` below 1, and
/// `1 - e^(-x²) · g(x)` up to 4 (g fitted on [1, 4]), ±1 beyond. Error below 0.51 ulp.
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    #[allow(clippy::excessive_precision)]
    const SMALL: [f64; 10] = [
        1.128_379_167_095_494_4,
        -0.376_126_389_028_140_33,
        0.112_837_916_586_957_06,
        -0.026_866_169_065_702_824,
        0.005_223_967_270_915_966,
        -0.000_854_793_595_838_137,
        0.000_120_462_987_012_484_06,
        -1.479_539_856_884_664_6e-5,
        1.530_831_383_566_838e-6,
        -1.047_338_152_691_867_7e-7,
    ];
    #[allow(clippy::excessive_precision)]
    const LARGE: [f64; 17] = [
        0.210_806_364_061_327_33,
        -0.111_521_020_165_980_23,
        0.056_110_493_415_395_27,
        -0.027_005_297_556_120_536,
        0.012_489_374_662_563_271,
        -0.005_570_693_815_375_466,
        0.002_403_639_722_672_339,
        -0.001_005_908_193_111_049_5,
        0.000_409_125_275_246_892_43,
        -0.000_161_760_331_637_716_66,
        6.246_463_757_892_563e-5,
        -2.407_277_909_685_754e-5,
        8.900_866_896_109_521e-6,
        -2.669_420_595_034_761e-6,
        9.346_605_562_776_197e-7,
        -6.370_022_899_462_821e-7,
        2.195_880_040_037_938_7e-7,
    ];
    let xd = x as f64;
    let a = xd.abs();
    // erf(x) = x · P(x²) for |x| < 1.
    let s = a * a;
    let mut p = SMALL[9];
    for &c in SMALL[..9].iter().rev() {
        p = p * s + c;
    }
    let small = xd * p;
    // erfc(a) = e^(-a²) · g(a) for 1 <= a <= 4, g a polynomial in t = (2a - 5) / 3.
    let ac = sel(a < 1.0, 1.0, sel(a > 4.0, 4.0, a));
    let t = (ac * 2.0 - 5.0) * (1.0 / 3.0);
    let mut g = LARGE[16];
    for &c in LARGE[..16].iter().rev() {
        g = g * t + c;
    }
    let large = 1.0 - exp_f64_finite(-(ac * ac)) * g;
    let large = sel(a > 4.0, 1.0, large);
    let large = sel(xd < 0.0, -large, large);
    // NaN takes the first branch and stays NaN.
    sel(a >= 1.0, large, small) as f32
}

/// The bits of 2/π in 24-bit chunks: 2/π = Σ TWO_OVER_PI[j] · 2^(-24 (j + 1)).
const TWO_OVER_PI: [f64; 10] = [
    10_680_707.0,
    7_228_996.0,
    1_387_004.0,
    2_578_385.0,
    16_069_853.0,
    12_639_074.0,
    9_804_092.0,
    4_427_841.0,
    16_666_979.0,
    11_263_675.0,
];

/// `floor(v)` for `0 <= v < 2^51` without a rounding instruction.
#[inline(always)]
fn floor_pos_f64(v: f64) -> f64 {
    let r = (v + ROUND_F64) - ROUND_F64;
    sel(r > v, r - 1.0, r)
}

/// `v mod 4` for `0 <= v < 2^51`, exact.
#[inline(always)]
fn mod4_f64(v: f64) -> f64 {
    v - 4.0 * floor_pos_f64(v * 0.25)
}

/// Reduces a finite `|x|` (f32) to `r` in [-π/4, π/4] (f64, relative error ~1e-16 even for
/// huge x: a Payne–Hanek reduction with the chunks of 2/π that matter for x's exponent) and the
/// quadrant `q` (mod 4) with `|x| = r + q·π/2 + 2πk`.
#[inline(always)]
fn reduce_half_pi(ax: f32) -> (f64, i32) {
    let b = ax.to_bits();
    let bexp = (b >> 23) as i32;
    // |x| = mant · 2^e with an integer mantissa.
    let mant = ((b & 0x007f_ffff) | sel(bexp != 0, 0x0080_0000, 0)) as f64;
    let e = sel(bexp != 0, bexp, 1) - 150;
    // Chunks whose product with |x| is a multiple of 4 contribute nothing (mod 4).
    let j0 = ((e - 2) / 24).clamp(0, 5);
    let mut t = [0f64; 5];
    for (i, ti) in t.iter_mut().enumerate() {
        let j = j0 as usize + i;
        let scale = f64::from_bits(((e - 24 * (j as i32 + 1) + 1023) as u64) << 52);
        // mant · chunk is exact (48 bits) and so is the power-of-two scaling.
        *ti = mod4_f64(mant * TWO_OVER_PI[j] * scale);
    }
    let u = t[0] + t[1]; // exact: both have few enough bits
    let n = (u + t[2] + ROUND_F64) - ROUND_F64;
    let f = ((u - n) + t[2] + t[3]) + t[4];
    (f * std::f64::consts::FRAC_PI_2, (n as i32) & 3)
}

/// sin(r) and cos(r) for |r| <= π/4 (Taylor series; truncation error below 1e-15).
#[inline(always)]
fn sin_cos_poly(r: f64) -> (f64, f64) {
    let z = r * r;
    let s = -1.0 / 1_307_674_368_000.0;
    let s = s * z + 1.0 / 6_227_020_800.0;
    let s = s * z - 1.0 / 39_916_800.0;
    let s = s * z + 1.0 / 362_880.0;
    let s = s * z - 1.0 / 5_040.0;
    let s = s * z + 1.0 / 120.0;
    let s = s * z - 1.0 / 6.0;
    let sin = s * z * r + r;
    let c = -1.0 / 87_178_291_200.0;
    let c = c * z + 1.0 / 479_001_600.0;
    let c = c * z - 1.0 / 3_628_800.0;
    let c = c * z + 1.0 / 40_320.0;
    let c = c * z - 1.0 / 720.0;
    let c = c * z + 1.0 / 24.0;
    let c = c * z - 0.5;
    let cos = c * z + 1.0;
    (sin, cos)
}

/// Sine in f32 for every input (exact range reduction), computed in f64; below 0.51 ulp.
#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    let ax = x.abs();
    let (r, q) = reduce_half_pi(ax);
    let (s, c) = sin_cos_poly(r);
    let v = sel(q & 1 == 0, s, c);
    let v = sel(q & 2 == 0, v, -v);
    let v = sel(x.is_sign_negative(), -v, v) as f32;
    // ±inf and NaN give NaN.
    sel(ax <= f32::MAX, v, f32::NAN)
}

/// Cosine in f32 for every input (exact range reduction), computed in f64; below 0.51 ulp.
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    let ax = x.abs();
    let (r, q) = reduce_half_pi(ax);
    let (s, c) = sin_cos_poly(r);
    let v = sel(q & 1 == 0, c, s);
    let v = sel((q + 1) & 2 == 0, v, -v) as f32;
    sel(ax <= f32::MAX, v, f32::NAN)
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
    if x.is_nan() {
        return x;
    }
    let r = (0.5 - erfc_tail(y)) + 0.5;
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// `erfc(y)` for `y > 0.46875` (Cody's two outer ranges), accurate to a relative 1e-15 even
/// where `erfc` is tiny: what `erf_f64` subtracts from 1 and what [`erfinv_f64`] refines
/// against in the tails.
fn erfc_tail(y: f64) -> f64 {
    if y <= 4.0 {
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
        // Also reached for NaN, which the callers handle.
        0.0
    }
}

/// The inverse error function in `f64`: `erfinv(erf(x)) == x`.
///
/// M. Giles' single-precision approximation (a polynomial in `w = -ln(1 - y²)`, two ranges)
/// gives a start within 4e-7 (relative) for `w < 16`; Newton steps on `erf(x) - y` bring it to a
/// few ulp.
/// In the tails the residual is formed as `(1 - y) - erfc(x)`, which stays accurate where
/// `erf(x)` rounds to 1. NaN for NaN or `|y| > 1`, ±inf at ±1.
pub fn erfinv_f64(y: f64) -> f64 {
    let a = y.abs();
    if a.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    if a == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    let w = -((1.0 - a) * (1.0 + a)).ln();
    let p = if w < 5.0 {
        let w = w - 2.5;
        let mut p = 2.810_226_36e-08;
        for c in [
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            2.185_808_7e-04,
            -1.253_725_03e-03,
            -4.177_681_64e-03,
            2.466_407_27e-01,
            1.501_409_41,
        ] {
            p = c + p * w;
        }
        p
    } else {
        let w = w.sqrt() - 3.0;
        let mut p = -2.002_142_57e-04;
        for c in [
            1.009_505_58e-04,
            1.349_343_22e-03,
            -3.673_428_44e-03,
            5.739_507_73e-03,
            -7.622_461_3e-03,
            9.438_870_47e-03,
            1.001_674_06,
            2.832_976_82,
        ] {
            p = c + p * w;
        }
        p
    };
    let mut x = p * a;
    // Two steps suffice where the start is good; beyond f32's range (w > 16) it is an
    // extrapolation, and a few more steps make up for it. In the tail the equation is solved as
    // `ln erfc(x) = ln(1 - y)`, which is nearly linear there, so Newton does not overshoot.
    for _ in 0..8 {
        let slope = std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp();
        let step = if x <= 0.468_75 {
            (erf_f64(x) - a) / slope
        } else {
            let erfc = erfc_tail(x);
            (erfc.ln() - (1.0 - a).ln()) * erfc / -slope
        };
        x = (x - step).min(26.0);
        if step.abs() <= 1e-16 * x {
            break;
        }
    }
    x.copysign(y)
}

// No unsafe code here, so nothing for Miri to check; its value scans would take hours under it.
#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    fn assert_rel(got: f64, want: f64, tol: f64) {
        let err = if want == 0.0 { got.abs() } else { ((got - want) / want).abs() };
        assert!(err <= tol, "got {got:e}, want {want:e}, rel err {err:e}");
    }

    /// Distance from `got` to the exact value `want` in units of the f32 spacing at `want`
    /// (the spacing of the smallest subnormal for tiny values).
    fn ulps(got: f32, want: f64) -> f64 {
        if got.is_nan() || want.is_nan() {
            return if got.is_nan() && want.is_nan() { 0.0 } else { f64::INFINITY };
        }
        if got.is_infinite() || want.abs() > f32::MAX as f64 {
            // Overflow: the exact value must round to the same infinity.
            return if (want as f32) == got { 0.0 } else { f64::INFINITY };
        }
        let w = want as f32;
        let spacing = if w == 0.0 || w.is_infinite() {
            f32::from_bits(1) as f64
        } else {
            let a = w.abs();
            (f32::from_bits(a.to_bits() + 1) - a) as f64
        };
        ((got as f64) - want).abs() / spacing
    }

    /// Every `step`-th f32 bit pattern of both signs (including subnormals, ±0, ±inf and NaNs),
    /// plus the given edge cases.
    fn sweep(step: u32, edges: &[f32]) -> Vec<f32> {
        let mut xs: Vec<f32> = (0..=u32::MAX / step).map(|i| f32::from_bits(i * step)).collect();
        xs.extend(edges);
        xs.extend([0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MIN_POSITIVE, f32::MAX, f32::MIN]);
        xs.extend([f32::from_bits(1), f32::from_bits(0x8000_0001), f32::EPSILON, 1.0, -1.0, 0.5, 2.0]);
        xs
    }

    /// Largest error of `f` against `reference` (computed in f64) over `xs`, with the input
    /// where it occurs.
    fn max_ulps(xs: &[f32], f: impl Fn(f32) -> f32, reference: impl Fn(f64) -> f64) -> (f64, f32) {
        let mut worst = (0.0, 0.0);
        for &x in xs {
            let e = ulps(f(x), reference(x as f64));
            if e > worst.0 || e.is_nan() {
                worst = (e, x);
            }
        }
        worst
    }

    #[test]
    fn exp_f32_is_within_one_ulp() {
        // Edges: overflow and underflow thresholds, the subnormal range, tiny arguments.
        let edges =
            [88.722_83, 88.722_84, 89.0, -87.336_55, -103.972_08, -103.972_09, -104.0, 1e-8, -1e-8, 0.346_573_6];
        let xs = sweep(61, &edges);
        let (e, x) = max_ulps(&xs, exp_f32, f64::exp);
        assert!(e <= 1.0, "exp_f32: {e} ulp at {x:e}");
        // Dense around the interesting range.
        let dense: Vec<f32> = (0..2_000_000).map(|i| -104.0 + i as f32 * (193.0 / 2e6)).collect();
        let (e, x) = max_ulps(&dense, exp_f32, f64::exp);
        assert!(e <= 1.0, "exp_f32: {e} ulp at {x:e}");
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(100.0), f32::INFINITY);
        assert_eq!(exp_f32(-110.0), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert!(exp_f32(-100.0) > 0.0 && exp_f32(-100.0) < f32::MIN_POSITIVE, "subnormal results");
    }

    #[test]
    fn log_f32_is_within_one_ulp() {
        let edges = [1.0 - f32::EPSILON, 1.0 + f32::EPSILON, std::f32::consts::FRAC_1_SQRT_2, std::f32::consts::SQRT_2];
        let xs = sweep(61, &edges);
        let (e, x) = max_ulps(&xs, log_f32, f64::ln);
        assert!(e <= 1.0, "log_f32: {e} ulp at {x:e}");
        let dense: Vec<f32> = (0..2_000_000).map(|i| 0.25 + i as f32 * (3.75 / 2e6)).collect();
        let (e, x) = max_ulps(&dense, log_f32, f64::ln);
        assert!(e <= 1.0, "log_f32: {e} ulp at {x:e}");
        assert_eq!(log_f32(1.0), 0.0);
        assert_eq!(log_f32(0.0), f32::NEG_INFINITY);
        assert_eq!(log_f32(-0.0), f32::NEG_INFINITY);
        assert_eq!(log_f32(f32::INFINITY), f32::INFINITY);
        assert!(log_f32(-1.0).is_nan() && log_f32(f32::NEG_INFINITY).is_nan() && log_f32(f32::NAN).is_nan());
    }

    #[test]
    fn tanh_f32_is_within_one_and_a_half_ulp() {
        let edges = [0.625, -0.625, 0.624_999_9, 9.0, 9.1, 1e-30, -1e-30];
        let xs = sweep(61, &edges);
        let (e, x) = max_ulps(&xs, tanh_f32, f64::tanh);
        assert!(e <= 1.5, "tanh_f32: {e} ulp at {x:e}");
        let dense: Vec<f32> = (0..2_000_000).map(|i| -10.0 + i as f32 * (20.0 / 2e6)).collect();
        let (e, x) = max_ulps(&dense, tanh_f32, f64::tanh);
        assert!(e <= 1.5, "tanh_f32: {e} ulp at {x:e}");
        assert_eq!(tanh_f32(f32::INFINITY), 1.0);
        assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
        assert!(tanh_f32(-0.0).is_sign_negative() && tanh_f32(-0.0) == 0.0);
        assert!(tanh_f32(f32::NAN).is_nan());
    }

    #[test]
    fn erf_f32_is_correctly_rounded_nearly_everywhere() {
        let edges = [1.0, 0.999_999_94, 4.0, 4.000_000_5, 3.9, -1.0, -4.0];
        let xs = sweep(61, &edges);
        let (e, x) = max_ulps(&xs, erf_f32, erf_f64);
        assert!(e <= 0.51, "erf_f32: {e} ulp at {x:e}");
        let dense: Vec<f32> = (0..2_000_000).map(|i| -5.0 + i as f32 * (10.0 / 2e6)).collect();
        let (e, x) = max_ulps(&dense, erf_f32, erf_f64);
        assert!(e <= 0.51, "erf_f32: {e} ulp at {x:e}");
        assert_eq!(erf_f32(f32::INFINITY), 1.0);
        assert_eq!(erf_f32(f32::NEG_INFINITY), -1.0);
        assert!(erf_f32(-0.0).is_sign_negative());
        assert!(erf_f32(f32::NAN).is_nan());
    }

    #[test]
    fn sin_cos_f32_are_correctly_rounded_nearly_everywhere() {
        // Huge arguments exercise the exact range reduction: 16367173·2^72 is one of the f32
        // values closest to a multiple of π/2.
        let hard = 16_367_173.0f32 * 2f32.powi(72);
        let edges = [hard, -hard, std::f32::consts::FRAC_PI_2, std::f32::consts::PI, 1e-40, 3.0e38, 8_388_608.0];
        let xs = sweep(61, &edges);
        let (e, x) = max_ulps(&xs, sin_f32, f64::sin);
        assert!(e <= 0.51, "sin_f32: {e} ulp at {x:e}");
        let (e, x) = max_ulps(&xs, cos_f32, f64::cos);
        assert!(e <= 0.51, "cos_f32: {e} ulp at {x:e}");
        let dense: Vec<f32> = (0..2_000_000).map(|i| -20.0 + i as f32 * (40.0 / 2e6)).collect();
        let (e, x) = max_ulps(&dense, sin_f32, f64::sin);
        assert!(e <= 0.51, "sin_f32: {e} ulp at {x:e}");
        let (e, x) = max_ulps(&dense, cos_f32, f64::cos);
        assert!(e <= 0.51, "cos_f32: {e} ulp at {x:e}");
        for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            assert!(sin_f32(x).is_nan() && cos_f32(x).is_nan());
        }
        assert!(sin_f32(-0.0).is_sign_negative() && sin_f32(-0.0) == 0.0);
        assert_eq!(cos_f32(0.0), 1.0);
    }

    #[test]
    fn erfinv_inverts_erf() {
        // Round trip through erf over the whole range, tails included: x = erfinv(erf(x)).
        for i in 0..=5800 {
            let x = i as f64 * 1e-3;
            let y = erf_f64(x);
            if y == 1.0 {
                break;
            }
            // erf's slope bounds the achievable accuracy: one ulp of y moves x by ulp(y) / erf'(x).
            let slack =
                (f64::EPSILON * y / (std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp())).max(4.0 * f64::EPSILON * x);
            let back = erfinv_f64(y);
            assert!((back - x).abs() <= 4.0 * slack + 1e-300, "erfinv(erf({x})) = {back}");
            assert_eq!(erfinv_f64(-y), -back);
        }
        // Known values: erfinv(0.5) and erfinv(f64(1 - 1e-10)) to 16 digits (from mpmath).
        assert_rel(erfinv_f64(0.5), 0.476_936_276_204_469_9, 4e-16);
        assert_rel(erfinv_f64(1.0 - 1e-10), 4.572_824_958_544_925, 1e-14);
        assert_eq!(erfinv_f64(1.0), f64::INFINITY);
        assert_eq!(erfinv_f64(-1.0), f64::NEG_INFINITY);
        assert!(erfinv_f64(1.5).is_nan() && erfinv_f64(f64::NAN).is_nan());
        assert!(erfinv_f64(-0.0).is_sign_negative());
    }

    #[test]
    fn sigmoid_and_friends_in_f32_are_accurate() {
        // From -87 on: below, e^-x overflows in f32 and the result flushes to 0 (as in PyTorch)
        // while the exact value is a subnormal.
        let dense: Vec<f32> = (0..400_000).map(|i| -87.0 + i as f32 * (187.0 / 4e5)).collect();
        let (e, x) = max_ulps(&dense, sigmoid::<f32>, |v| 1.0 / (1.0 + (-v).exp()));
        assert!(e <= 2.5, "sigmoid f32: {e} ulp at {x:e}");
        let (e, x) = max_ulps(&dense, silu::<f32>, |v| v / (1.0 + (-v).exp()));
        assert!(e <= 2.5, "silu f32: {e} ulp at {x:e}");
        // gelu from -1 on: further left `1 + erf(x/√2)` cancels (in PyTorch's formula too).
        let g: Vec<f32> = (0..400_000).map(|i| -1.0 + i as f32 * (9.0 / 4e5)).collect();
        let (e, x) = max_ulps(&g, gelu::<f32>, gelu::<f64>);
        assert!(e <= 3.0, "gelu f32: {e} ulp at {x:e}");
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
