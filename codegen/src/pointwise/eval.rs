//! Reference evaluation of pointwise expressions in `f64`.
//!
//! The semantics mirror `oxten_kernels::math` for `T = f64` exactly
//! (same formulas, same NaN handling); booleans are represented as `0.0` and
//! `1.0`.

use super::ast::{BinaryOp, Conversion, Expr, Func, UnaryOp};
use oxten_special::polynomials::{self, Chebyshev};

fn from_bool(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

fn maximum(a: f64, b: f64) -> f64 {
    if a.is_nan() || a > b {
        a
    } else {
        b
    }
}

fn minimum(a: f64, b: f64) -> f64 {
    if a.is_nan() || a < b {
        a
    } else {
        b
    }
}

/// Evaluates `expr`, looking argument values up with `env`.
pub(super) fn eval(expr: &Expr, env: &dyn Fn(&str) -> f64) -> f64 {
    match expr {
        Expr::Number { value, .. } => *value,
        Expr::Bool(b) => from_bool(*b),
        Expr::Arg { name, .. } => env(name),
        Expr::Unary { op, operand } => {
            let v = eval(operand, env);
            match op {
                UnaryOp::Neg => -v,
                UnaryOp::Not => from_bool(v == 0.0),
            }
        }
        Expr::Binary { op, lhs, rhs } => {
            let a = eval(lhs, env);
            let b = eval(rhs, env);
            match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => a / b,
                BinaryOp::Lt => from_bool(a < b),
                BinaryOp::Le => from_bool(a <= b),
                BinaryOp::Gt => from_bool(a > b),
                BinaryOp::Ge => from_bool(a >= b),
                BinaryOp::Eq => from_bool(a == b),
                BinaryOp::Ne => from_bool(a != b),
                BinaryOp::And => from_bool(a != 0.0 && b != 0.0),
                BinaryOp::Or => from_bool(a != 0.0 || b != 0.0),
            }
        }
        Expr::Convert { conv, operand } => {
            let v = eval(operand, env);
            match conv {
                Conversion::ToBool => from_bool(v != 0.0),
                Conversion::ToNumber => v,
            }
        }
        Expr::Call { func, args } => {
            let v: Vec<f64> = args.iter().map(|a| eval(a, env)).collect();
            call(*func, &v)
        }
    }
}

fn call(func: Func, v: &[f64]) -> f64 {
    let x = v[0];
    match func {
        Func::Exp => x.exp(),
        Func::Log => x.ln(),
        Func::Log1p => x.ln_1p(),
        Func::Expm1 => x.exp_m1(),
        Func::Sqrt => x.sqrt(),
        Func::Rsqrt => 1.0 / x.sqrt(),
        Func::Abs => x.abs(),
        Func::Tanh => x.tanh(),
        Func::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Func::Sin => x.sin(),
        Func::Cos => x.cos(),
        Func::Tan => x.tan(),
        Func::Asin => x.asin(),
        Func::Acos => x.acos(),
        Func::Atan => x.atan(),
        Func::Sinh => x.sinh(),
        Func::Cosh => x.cosh(),
        Func::Asinh => x.asinh(),
        Func::Acosh => x.acosh(),
        Func::Atanh => x.atanh(),
        Func::Log2 => x.log2(),
        Func::Log10 => x.log10(),
        Func::Exp2 => x.exp2(),
        Func::Deg2rad => x * (std::f64::consts::PI / 180.0),
        Func::Rad2deg => x * (180.0 / std::f64::consts::PI),
        Func::Erf => erf(x),
        Func::Erfinv => erfinv(x),
        Func::Erfc => erfc(x),
        Func::Lgamma => oxten_special::lgamma(x),
        Func::Digamma => oxten_special::digamma(x),
        Func::Polygamma => oxten_special::polygamma(x, v[1]),
        Func::Zeta => oxten_special::zeta(x, v[1]),
        Func::I0 => oxten_special::i0(x),
        Func::I0e => oxten_special::i0e(x),
        Func::I1 => oxten_special::i1(x),
        Func::I1e => oxten_special::i1e(x),
        Func::Igamma => oxten_special::incomplete_gamma::igamma(x, v[1]),
        Func::Igammac => oxten_special::incomplete_gamma::igammac(x, v[1]),
        Func::BesselJ0 => oxten_special::bessel_j0(x),
        Func::BesselJ1 => oxten_special::bessel_j1(x),
        Func::BesselY0 => oxten_special::bessel_y0(x),
        Func::BesselY1 => oxten_special::bessel_y1(x),
        Func::ModifiedBesselK0 => oxten_special::bessel_k::modified_bessel_k0(x),
        Func::ModifiedBesselK1 => oxten_special::bessel_k::modified_bessel_k1(x),
        Func::ScaledModifiedBesselK0 => oxten_special::bessel_k::scaled_modified_bessel_k0(x),
        Func::ScaledModifiedBesselK1 => oxten_special::bessel_k::scaled_modified_bessel_k1(x),
        Func::SphericalBesselJ0 => oxten_special::spherical_bessel_j0(x),
        Func::AiryAi => oxten_special::airy::airy_ai(x),
        Func::Erfcx => oxten_special::normal::erfcx(x),
        Func::LogNdtr => oxten_special::normal::log_ndtr(x),
        Func::Ndtri => oxten_special::normal::ndtri(x),
        Func::ChebyshevT => polynomials::chebyshev(Chebyshev::T, x, v[1]),
        Func::ChebyshevU => polynomials::chebyshev(Chebyshev::U, x, v[1]),
        Func::ChebyshevV => polynomials::chebyshev(Chebyshev::V, x, v[1]),
        Func::ChebyshevW => polynomials::chebyshev(Chebyshev::W, x, v[1]),
        Func::ShiftedChebyshevT => polynomials::shifted_chebyshev(Chebyshev::T, x, v[1]),
        Func::ShiftedChebyshevU => polynomials::shifted_chebyshev(Chebyshev::U, x, v[1]),
        Func::ShiftedChebyshevV => polynomials::shifted_chebyshev(Chebyshev::V, x, v[1]),
        Func::ShiftedChebyshevW => polynomials::shifted_chebyshev(Chebyshev::W, x, v[1]),
        Func::HermiteH => polynomials::hermite_h(x, v[1]),
        Func::HermiteHe => polynomials::hermite_he(x, v[1]),
        Func::LaguerreL => polynomials::laguerre_l(x, v[1]),
        Func::LegendreP => polynomials::legendre_p(x, v[1]),
        Func::Floor => x.floor(),
        Func::Ceil => x.ceil(),
        Func::Round => x.round_ties_even(),
        Func::Trunc => x.trunc(),
        Func::Reciprocal => 1.0 / x,
        Func::Sign => from_bool(0.0 < x) - from_bool(x < 0.0),
        Func::Relu => maximum(x, 0.0),
        Func::Gelu => x * 0.5 * (1.0 + erf(x * std::f64::consts::FRAC_1_SQRT_2)),
        Func::GeluTanh => {
            let beta = std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2;
            let inner = beta * (x + 0.044715 * x * x * x);
            0.5 * x * (1.0 + inner.tanh())
        }
        Func::Silu => x / (1.0 + (-x).exp()),
        Func::Softplus => {
            if x > 20.0 {
                x
            } else {
                x.exp().ln_1p()
            }
        }
        Func::Pow => x.powf(v[1]),
        Func::Min => minimum(x, v[1]),
        Func::Max => maximum(x, v[1]),
        Func::Clamp => minimum(maximum(x, v[1]), v[2]),
        Func::Atan2 => x.atan2(v[1]),
        Func::Hypot => x.hypot(v[1]),
        Func::Where => {
            if x != 0.0 {
                v[1]
            } else {
                v[2]
            }
        }
        Func::Isnan => from_bool(x.is_nan()),
        Func::Isinf => from_bool(x.is_infinite()),
        Func::Isfinite => from_bool(x.is_finite()),
        Func::Signbit => from_bool(x.is_sign_negative()),
        Func::DivTrunc => (x / v[1]).trunc(),
        Func::DivFloor => div_floor(x, v[1]),
        Func::Remainder => {
            let m = x % v[1];
            if m != 0.0 && (v[1] < 0.0) != (m < 0.0) {
                m + v[1]
            } else {
                m
            }
        }
        Func::Fmod => x % v[1],
        Func::Fmax => {
            if x.is_nan() || x < v[1] {
                v[1]
            } else {
                x
            }
        }
        Func::Fmin => {
            if x.is_nan() || x > v[1] {
                v[1]
            } else {
                x
            }
        }
        Func::Copysign => x.copysign(v[1]),
        Func::Nextafter => next_after(x, v[1]),
        // Bit operations on the i64 values (the reference has no narrower widths).
        Func::Bitand => ((x as i64) & (v[1] as i64)) as f64,
        Func::Bitor => ((x as i64) | (v[1] as i64)) as f64,
        Func::Bitxor => ((x as i64) ^ (v[1] as i64)) as f64,
        Func::Bitnot => !(x as i64) as f64,
        Func::Shl => {
            let b = v[1] as i64;
            if (0..64).contains(&b) {
                ((x as i64 as u64) << b) as i64 as f64
            } else {
                0.0
            }
        }
        Func::Gcd => gcd(x as i64, v[1] as i64) as f64,
        Func::Lcm => {
            let g = gcd(x as i64, v[1] as i64);
            if g == 0 {
                0.0
            } else {
                (x as i64).wrapping_div(g).wrapping_mul(v[1] as i64).wrapping_abs() as f64
            }
        }
        Func::Shr => {
            let b = v[1] as i64;
            ((x as i64) >> if (0..64).contains(&b) { b } else { 63 }) as f64
        }
    }
}

/// Euclid's algorithm on the absolute values (wrapping, as PyTorch's `calc_gcd`).
/// C's `nextafter` on f64 (the reference evaluates in f64): `b` when equal, NaN when either is,
/// else one step of the bit pattern away from or toward zero.
fn next_after(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == b {
        return b;
    }
    if a == 0.0 {
        return f64::from_bits(1).copysign(b);
    }
    let bits = a.to_bits();
    // Moving away from zero increments the magnitude bits, toward zero decrements them.
    f64::from_bits(if (a < b) == (a > 0.0) { bits + 1 } else { bits - 1 })
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.wrapping_abs(), b.wrapping_abs());
    while a != 0 {
        let c = a;
        a = b.wrapping_rem(a);
        b = c;
    }
    b
}

/// Python's floor division of floats, computed as PyTorch does: from `fmod`, so that the
/// quotient is consistent with `remainder` (`a == b * div_floor(a, b) + remainder(a, b)`).
fn div_floor(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        return a / b;
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 && (b < 0.0) != (m < 0.0) {
        div -= 1.0;
    }
    if div == 0.0 {
        return 0.0f64.copysign(a / b);
    }
    let mut q = div.floor();
    if div - q > 0.5 {
        q += 1.0;
    }
    q
}

// W. J. Cody's rational Chebyshev approximations for erf/erfc (SPECFUN
// CALERF); the same algorithm as `oxten_kernels::math::erf_f64`.
// The coefficients are kept exactly as published (more digits than an f64
// holds), so that they can be checked against the reference.
#[allow(clippy::excessive_precision)]
mod cody {
    pub(super) const A: [f64; 5] = [
        3.161_123_743_870_565_6,
        1.138_641_541_510_501_56e2,
        3.774_852_376_853_020_21e2,
        3.209_377_589_138_469_47e3,
        1.857_777_061_846_031_53e-1,
    ];
    pub(super) const B: [f64; 4] = [
        2.360_129_095_234_412_09e1,
        2.440_246_379_344_441_73e2,
        1.282_616_526_077_372_28e3,
        2.844_236_833_439_170_62e3,
    ];
    pub(super) const C: [f64; 9] = [
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
    pub(super) const D: [f64; 8] = [
        1.574_492_611_070_983_47e1,
        1.176_939_508_913_124_99e2,
        5.371_811_018_620_098_58e2,
        1.621_389_574_566_690_19e3,
        3.290_799_235_733_459_63e3,
        4.362_619_090_143_247_16e3,
        3.439_367_674_143_721_64e3,
        1.230_339_354_803_749_42e3,
    ];
    pub(super) const P: [f64; 6] = [
        3.053_266_349_612_323_44e-1,
        3.603_448_999_498_044_39e-1,
        1.257_817_261_112_292_46e-1,
        1.608_378_514_874_227_66e-2,
        6.587_491_615_298_378_03e-4,
        1.631_538_713_730_209_78e-2,
    ];
    pub(super) const Q: [f64; 5] = [
        2.568_520_192_289_822_42,
        1.872_952_849_923_460_47,
        5.279_051_029_514_284_12e-1,
        6.051_834_131_244_131_91e-2,
        2.335_204_976_268_691_85e-3,
    ];
}
use cody::{A, B, C, D, P, Q};

fn exp_neg_sq(y: f64) -> f64 {
    let s = (y * 16.0).trunc() / 16.0;
    let del = (y - s) * (y + s);
    (-s * s).exp() * (-del).exp()
}

/// The error function (relative error below 1e-15).
pub(super) fn erf(x: f64) -> f64 {
    let y = x.abs();
    if y <= 0.468_75 {
        let ysq = if y > 1.11e-16 { y * y } else { 0.0 };
        let mut num = A[4] * ysq;
        let mut den = ysq;
        for i in 0..3 {
            num = (num + A[i]) * ysq;
            den = (den + B[i]) * ysq;
        }
        return x * (num + A[3]) / (den + B[3]);
    }
    let erfc = erfc_tail(y);
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

/// `erfc(y)` for `y > 0.46875`, relative error below 1e-15 (0 past 26.5, and for NaN).
fn erfc_tail(y: f64) -> f64 {
    if y <= 4.0 {
        let mut num = C[8] * y;
        let mut den = y;
        for i in 0..7 {
            num = (num + C[i]) * y;
            den = (den + D[i]) * y;
        }
        exp_neg_sq(y) * ((num + C[7]) / (den + D[7]))
    } else if y < 26.543 {
        let z = 1.0 / (y * y);
        let mut num = P[5] * z;
        let mut den = z;
        for i in 0..4 {
            num = (num + P[i]) * z;
            den = (den + Q[i]) * z;
        }
        let r = z * (num + P[4]) / (den + Q[4]);
        exp_neg_sq(y) * ((std::f64::consts::FRAC_2_SQRT_PI * 0.5 - r) / y)
    } else {
        0.0
    }
}

/// The complementary error function, accurate where it is tiny.
fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.abs() <= 0.468_75 {
        return 1.0 - erf(x);
    }
    let t = erfc_tail(x.abs());
    if x > 0.0 {
        t
    } else {
        2.0 - t
    }
}

/// The inverse error function, by bisection on [`erf`]: slow, but plainly right, which is what
/// a reference needs.
fn erfinv(y: f64) -> f64 {
    if y.is_nan() || y.abs() > 1.0 {
        return f64::NAN;
    }
    if y.abs() == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    let (mut lo, mut hi) = (-6.0f64, 6.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid == lo || mid == hi {
            break;
        }
        if erf(mid) < y {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}
