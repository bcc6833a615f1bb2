//! The element functions that generated kernels call: conversions, arithmetic for every
//! element type, comparisons and logic, and the floating-point functions.

use super::{Element, Float, Integer};
use oxten_special::polynomials::{self as p, Chebyshev as C};

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

/// Round toward negative infinity (integers are unchanged).
#[inline(always)]
pub fn floor<T: Element>(x: T) -> T {
    x.floor_value()
}

/// Round toward positive infinity (integers are unchanged).
#[inline(always)]
pub fn ceil<T: Element>(x: T) -> T {
    x.ceil_value()
}

/// Round to nearest, ties to even, as `torch.round` (integers are unchanged).
#[inline(always)]
pub fn round<T: Element>(x: T) -> T {
    x.round_value()
}

/// Round toward zero (integers are unchanged).
#[inline(always)]
pub fn trunc<T: Element>(x: T) -> T {
    x.trunc_value()
}

/// `a / b` rounded toward zero: integer division for integers (0 for a zero divisor, which
/// the op rejects before its loop), `trunc(a / b)` for floats.
#[inline(always)]
pub fn div_trunc<T: Element>(a: T, b: T) -> T {
    a.div_trunc(b)
}

/// `a - b * div_trunc(a, b)`: the remainder with the sign of `a` (`torch.fmod`).
#[inline(always)]
pub fn fmod<T: Element>(a: T, b: T) -> T {
    a.rem_trunc(b)
}

/// `a - b * div_floor(a, b)`: the remainder with the sign of `b` (`torch.remainder`, Python's
/// `%`).
#[inline(always)]
pub fn remainder<T: Element>(a: T, b: T) -> T {
    let m = a.rem_trunc(b);
    let zero = T::zero();
    where_((m != zero) & ((b < zero) != (m < zero)), m.add_wrapping(b), m)
}

/// `a / b` rounded toward negative infinity (Python's `//`, `torch.floor_divide`); see
/// [`Element::div_floor`].
#[inline(always)]
pub fn div_floor<T: Element>(a: T, b: T) -> T {
    a.div_floor(b)
}

/// The larger value, ignoring a NaN operand (`torch.fmax`: NaN only if both are NaN).
#[inline(always)]
pub fn fmax<T: Element>(a: T, b: T) -> T {
    where_(a.nan_value() | (a < b), b, a)
}

/// The smaller value, ignoring a NaN operand (`torch.fmin`: NaN only if both are NaN).
#[inline(always)]
pub fn fmin<T: Element>(a: T, b: T) -> T {
    where_(a.nan_value() | (a > b), b, a)
}

/// Whether `x` is NaN (never for integers).
#[inline(always)]
pub fn isnan<T: Element>(x: T) -> bool {
    x.nan_value()
}

/// Whether `x` is ±infinity (never for integers).
#[inline(always)]
pub fn isinf<T: Element>(x: T) -> bool {
    x.infinite_value()
}

/// Whether `x` is neither infinite nor NaN (always for integers).
#[inline(always)]
pub fn isfinite<T: Element>(x: T) -> bool {
    !(x.nan_value() | x.infinite_value())
}

/// Whether the sign bit of `x` is set (`-0.0` and `-NaN` included).
#[inline(always)]
pub fn signbit<T: Element>(x: T) -> bool {
    x.sign_bit()
}

/// Bitwise and.
#[inline(always)]
pub fn bitand<T: Integer>(a: T, b: T) -> T {
    a.bit_and(b)
}

/// Bitwise or.
#[inline(always)]
pub fn bitor<T: Integer>(a: T, b: T) -> T {
    a.bit_or(b)
}

/// Bitwise exclusive or.
#[inline(always)]
pub fn bitxor<T: Integer>(a: T, b: T) -> T {
    a.bit_xor(b)
}

/// Bitwise not (the bool loops use [`boolean::bitnot`](super::boolean::bitnot)).
#[inline(always)]
pub fn bitnot<T: Integer>(x: T) -> T {
    x.bit_not()
}

/// `a << b` with PyTorch's rule for counts outside `[0, bits)` (see [`Integer::shift_left`]).
#[inline(always)]
pub fn shl<T: Integer>(a: T, b: T) -> T {
    a.shift_left(b)
}

/// The greatest common divisor of `|a|` and `|b|` (see [`Integer::gcd`]).
#[inline(always)]
pub fn gcd<T: Integer>(a: T, b: T) -> T {
    a.gcd(b)
}

/// The least common multiple of `|a|` and `|b|`, 0 when their `gcd` is 0 (see [`Integer::lcm`]).
#[inline(always)]
pub fn lcm<T: Integer>(a: T, b: T) -> T {
    a.lcm(b)
}

/// `a >> b` with PyTorch's rule for counts outside `[0, bits)` (see [`Integer::shift_right`]).
#[inline(always)]
pub fn shr<T: Integer>(a: T, b: T) -> T {
    a.shift_right(b)
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

/// The complementary error function `1 - erf(x)`, accurate where it is tiny.
#[inline(always)]
pub fn erfc<T: Float>(x: T) -> T {
    x.erfc()
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

/// `|a|` with the sign of `b`.
#[inline(always)]
pub fn copysign<T: Float>(a: T, b: T) -> T {
    a.copysign(b)
}

/// The value next to `a` toward `b` in the element type `S` itself (C's `nextafter`; f16 and
/// bf16 compute in f32, where the next f32 would round back to `a`): `b` when they are equal, NaN
/// when either is. `a` and `b` are elements of `S`, so the conversions are exact.
#[inline(always)]
pub fn nextafter<S: crate::cpu::OpMath>(a: S::Math, b: S::Math) -> S::Math {
    S::from_math(a).next_toward(S::from_math(b)).to_math()
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

/// `a ^ b`: `powf` for floats, PyTorch's integer power for integers (see
/// [`Element::pow_value`]).
#[inline(always)]
pub fn pow<T: Element>(a: T, b: T) -> T {
    a.pow_value(b)
}

/// Four-quadrant arctangent of `a / b`.
#[inline(always)]
pub fn atan2<T: Float>(a: T, b: T) -> T {
    a.atan2(b)
}

/// `ln |Γ(x)|` (computed in `f64`; see [`oxten_special::lgamma`]).
#[inline]
pub fn lgamma<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::lgamma(x.to_f64()))
}

/// The digamma function `Γ'(x) / Γ(x)` (in `f64`; see [`oxten_special::digamma`]).
#[inline]
pub fn digamma<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::digamma(x.to_f64()))
}

/// The `n`-th derivative of the digamma function (in `f64`; see [`oxten_special::polygamma`]).
#[inline]
pub fn polygamma<T: Float>(n: T, x: T) -> T {
    if n.to_f64() == 1.0 && std::mem::size_of::<T>() == 4 {
        // PyTorch's single-precision trigamma (its value near the poles depends on it).
        return T::from_f64(oxten_special::trigamma_f32(x.to_f64() as f32) as f64);
    }
    T::from_f64(oxten_special::polygamma(n.to_f64(), x.to_f64()))
}

/// The Hurwitz zeta function `Σ_k (k + q)^-x` (in `f64`; see [`oxten_special::zeta`]).
#[inline]
pub fn zeta<T: Float>(x: T, q: T) -> T {
    T::from_f64(oxten_special::zeta(x.to_f64(), q.to_f64()))
}

/// `I₀(x)`, the modified Bessel function of the first kind of order 0 (in `f64`).
#[inline]
pub fn i0<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::i0(x.to_f64()))
}

/// `e^-|x| I₀(x)` (in `f64`).
#[inline]
pub fn i0e<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::i0e(x.to_f64()))
}

/// `I₁(x)`, the modified Bessel function of the first kind of order 1 (in `f64`).
#[inline]
pub fn i1<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::i1(x.to_f64()))
}

/// `e^-|x| I₁(x)` (in `f64`).
#[inline]
pub fn i1e<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::i1e(x.to_f64()))
}

/// The regularized lower incomplete gamma function `P(a, x)` (in `f64`; see
/// [`oxten_special::incomplete_gamma::igamma`]).
#[inline]
pub fn igamma<T: Float>(a: T, x: T) -> T {
    T::from_f64(oxten_special::incomplete_gamma::igamma(a.to_f64(), x.to_f64()))
}

/// The regularized upper incomplete gamma function `Q(a, x)` (in `f64`).
#[inline]
pub fn igammac<T: Float>(a: T, x: T) -> T {
    T::from_f64(oxten_special::incomplete_gamma::igammac(a.to_f64(), x.to_f64()))
}

/// `J₀(x)` (in `f64`; see [`oxten_special::bessel_j0`]).
#[inline]
pub fn bessel_j0<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::bessel_j0(x.to_f64()))
}

/// `J₁(x)` (in `f64`).
#[inline]
pub fn bessel_j1<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::bessel_j1(x.to_f64()))
}

/// `Y₀(x)` (in `f64`).
#[inline]
pub fn bessel_y0<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::bessel_y0(x.to_f64()))
}

/// `Y₁(x)` (in `f64`).
#[inline]
pub fn bessel_y1<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::bessel_y1(x.to_f64()))
}

/// `modified_bessel_k0` (in `f64`; see [`oxten_special::bessel_k::modified_bessel_k0`]).
#[inline]
pub fn modified_bessel_k0<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::bessel_k::modified_bessel_k0(x.to_f64()))
}

/// `modified_bessel_k1` (in `f64`; see [`oxten_special::bessel_k::modified_bessel_k1`]).
#[inline]
pub fn modified_bessel_k1<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::bessel_k::modified_bessel_k1(x.to_f64()))
}

/// `scaled_modified_bessel_k0` (in `f64`; see [`oxten_special::bessel_k::scaled_modified_bessel_k0`]).
#[inline]
pub fn scaled_modified_bessel_k0<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::bessel_k::scaled_modified_bessel_k0(x.to_f64()))
}

/// `scaled_modified_bessel_k1` (in `f64`; see [`oxten_special::bessel_k::scaled_modified_bessel_k1`]).
#[inline]
pub fn scaled_modified_bessel_k1<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::bessel_k::scaled_modified_bessel_k1(x.to_f64()))
}

/// The Airy function `Ai(x)` (in `f64`; see [`oxten_special::airy`]).
#[inline]
pub fn airy_ai<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::airy::airy_ai(x.to_f64()))
}

/// `sin(x) / x` (in `f64`; see [`oxten_special::spherical_bessel_j0`]).
#[inline]
pub fn spherical_bessel_j0<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::spherical_bessel_j0(x.to_f64()))
}

/// `exp(x²) erfc(x)` (in `f64`; see [`oxten_special::normal::erfcx`]).
#[inline]
pub fn erfcx<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::normal::erfcx(x.to_f64()))
}

/// The log of the standard normal CDF (in `f64`; see [`oxten_special::normal::log_ndtr`]).
#[inline]
pub fn log_ndtr<T: Float>(x: T) -> T {
    T::from_f64(oxten_special::normal::log_ndtr(x.to_f64()))
}

/// The standard normal quantile (in `f64`; see [`oxten_special::normal::ndtri`]).
#[inline]
pub fn ndtri<T: Float>(p: T) -> T {
    T::from_f64(oxten_special::normal::ndtri(p.to_f64()))
}

/// An orthogonal polynomial computed in the element type itself (`f32` or `f64`), as PyTorch's
/// kernels do, so that its long recurrence rounds as theirs: `single` for `f32`, `double` for
/// `f64` (the same function; closures cannot be generic).
#[inline]
fn in_own_precision<T: Float>(x: T, n: T, single: fn(f32, f32) -> f32, double: fn(f64, f64) -> f64) -> T {
    if std::mem::size_of::<T>() == 4 {
        T::from_f64(single(x.to_f64() as f32, n.to_f64() as f32) as f64)
    } else {
        T::from_f64(double(x.to_f64(), n.to_f64()))
    }
}

/// The Chebyshev polynomial of the first kind `T_n(x)`.
#[inline]
pub fn chebyshev_t<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, |x, n| p::chebyshev(C::T, x, n), |x, n| p::chebyshev(C::T, x, n))
}

/// The Chebyshev polynomial of the second kind `U_n(x)`.
#[inline]
pub fn chebyshev_u<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, |x, n| p::chebyshev(C::U, x, n), |x, n| p::chebyshev(C::U, x, n))
}

/// The Chebyshev polynomial of the third kind `V_n(x)`.
#[inline]
pub fn chebyshev_v<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, |x, n| p::chebyshev(C::V, x, n), |x, n| p::chebyshev(C::V, x, n))
}

/// The Chebyshev polynomial of the fourth kind `W_n(x)`.
#[inline]
pub fn chebyshev_w<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, |x, n| p::chebyshev(C::W, x, n), |x, n| p::chebyshev(C::W, x, n))
}

/// `T_n(2x - 1)`.
#[inline]
pub fn shifted_chebyshev_t<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, |x, n| p::shifted_chebyshev(C::T, x, n), |x, n| p::shifted_chebyshev(C::T, x, n))
}

/// `U_n(2x - 1)`.
#[inline]
pub fn shifted_chebyshev_u<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, |x, n| p::shifted_chebyshev(C::U, x, n), |x, n| p::shifted_chebyshev(C::U, x, n))
}

/// `V_n(2x - 1)`.
#[inline]
pub fn shifted_chebyshev_v<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, |x, n| p::shifted_chebyshev(C::V, x, n), |x, n| p::shifted_chebyshev(C::V, x, n))
}

/// `W_n(2x - 1)`.
#[inline]
pub fn shifted_chebyshev_w<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, |x, n| p::shifted_chebyshev(C::W, x, n), |x, n| p::shifted_chebyshev(C::W, x, n))
}

/// The physicists' Hermite polynomial `H_n(x)`.
#[inline]
pub fn hermite_h<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, p::hermite_h, p::hermite_h)
}

/// The probabilists' Hermite polynomial `He_n(x)`.
#[inline]
pub fn hermite_he<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, p::hermite_he, p::hermite_he)
}

/// The Laguerre polynomial `L_n(x)`.
#[inline]
pub fn laguerre_l<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, p::laguerre_l, p::laguerre_l)
}

/// The Legendre polynomial `P_n(x)`.
#[inline]
pub fn legendre_p<T: Float>(x: T, n: T) -> T {
    in_own_precision(x, n, p::legendre_p, p::legendre_p)
}
