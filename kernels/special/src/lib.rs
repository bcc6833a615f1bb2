//! Special functions in `f64`, with PyTorch's values at the edges of their domains.
//!
//! One implementation serves the CPU kernels (`oxten_kernels::math`, which computes `f32` and
//! the reduced types through these) and the generator's reference evaluator of `pointwise:`
//! expressions, so the two cannot drift apart. The CUDA prelude follows the same algorithms.
//!
//! * [`lgamma`]: `ln |Γ(x)|` (musl's, through the `libm` crate): `+inf` at 0 and the negative
//!   integers.
//! * [`digamma`]: `ψ(x) = Γ'(x)/Γ(x)`: reflection below 0, recurrence up to 10, then the
//!   asymptotic series; `∓inf` at `±0` and NaN at the negative integers, as PyTorch.
//! * [`trigamma`] and [`polygamma`]: `ψ⁽ⁿ⁾(x)`, PyTorch's formulas (a reflection and six steps
//!   of the recurrence before the asymptotic series for `n = 1`; `(-1)ⁿ⁺¹ n! ζ(n+1, x)` above).
//! * [`zeta`]: the Hurwitz zeta function `ζ(x, q) = Σₖ (k + q)^-x`, by Euler–Maclaurin
//!   summation, with Cephes' domain rules (`inf` at `x = 1`, NaN below).
//! * [`i0`], [`i0e`], [`i1`], [`i1e`]: modified Bessel functions of the first kind of orders 0
//!   and 1, and their exponentially scaled forms `e^-|x| I(x)`: the power series up to
//!   `|x| = 20`, the asymptotic expansion beyond (both below 1e-15 relative error).
//! * [`spherical_bessel_j0`]: `sin(x) / x`, by its Taylor polynomial near 0.
//! * [`bessel_j0`], [`bessel_j1`], [`bessel_y0`], [`bessel_y1`]: Bessel functions of the first
//!   and second kinds of orders 0 and 1 (musl's, through the `libm` crate), NaN at `±inf` as
//!   PyTorch's.
//! * [`airy`]: the Airy function `Ai(x)`.
//! * [`bessel_k`]: the modified Bessel functions of the second kind `K₀`, `K₁` and `eˣ K`.
//! * [`incomplete_gamma`]: the regularized incomplete gamma functions `P(a, x)` and `Q(a, x)`.
//! * [`normal`]: `erfcx`, and the standard normal distribution's log-CDF and quantile.
//! * [`polynomials`]: the orthogonal polynomials (Chebyshev, Hermite, Laguerre, Legendre), in
//!   `f32` or `f64` as PyTorch evaluates them.

pub mod airy;
pub mod bessel_k;
pub mod incomplete_gamma;
pub mod normal;
pub mod polynomials;

/// `ln |Γ(x)|`.
pub fn lgamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// The digamma function `ψ(x)`.
pub fn digamma(x: f64) -> f64 {
    if x == 0.0 {
        // As C's gamma functions and SciPy: ψ(±0) = ∓inf.
        return f64::INFINITY.copysign(-x);
    }
    if x < 0.0 {
        if x == x.trunc() {
            return f64::NAN;
        }
        // Reflection ψ(x) = ψ(1 - x) - π / tan(πx), with the fractional part for accuracy.
        let r = x.fract();
        return digamma(1.0 - x) - std::f64::consts::PI / (std::f64::consts::PI * r).tan();
    }
    if x.is_nan() {
        return x;
    }
    let mut x = x;
    let mut result = 0.0;
    while x < 10.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    if x == 10.0 {
        return result + 2.251_752_589_066_721;
    }
    // ψ(x) ~ ln x - 1/(2x) - Σ B₂ₖ / (2k x²ᵏ), seven terms (enough for x ≥ 10).
    const B: [f64; 7] = [
        8.333_333_333_333_333e-2,
        -2.109_279_609_279_609_3e-2,
        7.575_757_575_757_576e-3,
        -4.166_666_666_666_667e-3,
        3.968_253_968_253_968e-3,
        -8.333_333_333_333_333e-3,
        8.333_333_333_333_333e-2,
    ];
    let mut y = 0.0;
    if x < 1.0e17 {
        let z = 1.0 / (x * x);
        y = B.iter().fold(0.0, |acc, &c| acc * z + c) * z;
    }
    result + x.ln() - 0.5 / x - y
}

/// The trigamma function `ψ'(x)`.
pub fn trigamma(x: f64) -> f64 {
    let pi = std::f64::consts::PI;
    let mut x = x;
    let mut sign = 1.0;
    let mut result = 0.0;
    if x < 0.5 {
        sign = -1.0;
        let s = (pi * x).sin();
        result -= pi * pi / (s * s);
        x = 1.0 - x;
    }
    for _ in 0..6 {
        result += 1.0 / (x * x);
        x += 1.0;
    }
    let ixx = 1.0 / (x * x);
    result += (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6.0 - ixx * (1.0 / 30.0 - ixx * (1.0 / 42.0)))) / x;
    sign * result
}

/// [`trigamma`] in `f32` arithmetic, as PyTorch computes it for `float`: near the poles (0 and the
/// negative integers) `sin(πx)` in single precision sets the (huge) value, so a double-precision
/// evaluation would disagree with PyTorch by orders of magnitude there.
pub fn trigamma_f32(x: f32) -> f32 {
    let pi = std::f32::consts::PI;
    let mut x = x;
    let mut sign = 1.0f32;
    let mut result = 0.0f32;
    if x < 0.5 {
        sign = -1.0;
        let s = (pi * x).sin();
        result -= pi * pi / (s * s);
        x = 1.0 - x;
    }
    for _ in 0..6 {
        result += 1.0 / (x * x);
        x += 1.0;
    }
    let ixx = 1.0 / (x * x);
    result += (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6.0 - ixx * (1.0 / 30.0 - ixx * (1.0 / 42.0)))) / x;
    sign * result
}

/// `ψ⁽ⁿ⁾(x)`, the `n`-th derivative of the digamma function (`n ≥ 0`; a negative or
/// non-integral `n` gives NaN).
pub fn polygamma(n: f64, x: f64) -> f64 {
    if n == 0.0 {
        return digamma(x);
    }
    if n == 1.0 {
        return trigamma(x);
    }
    if n.is_nan() || n <= 0.0 || n != n.trunc() {
        return f64::NAN;
    }
    let sign = if n % 2.0 == 1.0 { 1.0 } else { -1.0 };
    sign * lgamma(n + 1.0).exp() * zeta(n + 1.0, x)
}

/// `(2k)! / B₂ₖ` for k = 1..=12: the Euler–Maclaurin correction terms of [`zeta`].
const ZETA_A: [f64; 12] = [
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.892_437_580_318_379_2e9,
    7.47242496e10,
    -2.950_130_727_918_164e12,
    1.164_678_281_435_006_7e14,
    -4.597_978_722_407_473e15,
    1.815_210_540_194_354_6e17,
    -7.166_165_256_175_667e18,
];

/// The Hurwitz zeta function `ζ(x, q) = Σ_{k≥0} (k + q)^-x`.
pub fn zeta(x: f64, q: f64) -> f64 {
    const EPS: f64 = 1.11e-16;
    if x == 1.0 {
        return f64::INFINITY;
    }
    if x < 1.0 || x.is_nan() || q.is_nan() {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if x != x.floor() {
            return f64::NAN;
        }
    }
    // The first terms summed directly (at least nine, and until q + k > 9) ...
    let mut s = q.powf(-x);
    let mut a = q;
    let mut b = 0.0;
    let mut i = 0;
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        b = a.powf(-x);
        s += b;
        if (b / s).abs() < EPS {
            return s;
        }
    }
    // ... then the tail by Euler–Maclaurin: the integral, half the last term, and the
    // Bernoulli corrections.
    let w = a;
    s += b * w / (x - 1.0);
    s -= 0.5 * b;
    let mut a = 1.0;
    let mut k = 0.0;
    for c in ZETA_A {
        a *= x + k;
        b /= w;
        let t = a * b / c;
        s += t;
        if (t / s).abs() < EPS {
            return s;
        }
        k += 1.0;
        a *= x + k;
        b /= w;
        k += 1.0;
    }
    s
}

/// `Σ_k (x²/4)^k / (k! (k + ν)!)` for ν ∈ {0, 1}: the series of `I_ν(x) / (x/2)^ν`.
fn bessel_series(x: f64, nu: f64) -> f64 {
    let q = x * x / 4.0;
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut k = 0.0;
    loop {
        k += 1.0;
        term *= q / (k * (k + nu));
        sum += term;
        if term < sum * 1e-17 {
            return sum;
        }
    }
}

/// `√(2π|x|) e^-|x| I_ν(|x|)` by the asymptotic expansion (ν ∈ {0, 1}, `|x| > 20`).
fn bessel_asymptotic(ax: f64, nu: f64) -> f64 {
    let mu = 4.0 * nu * nu;
    let mut term = 1.0f64;
    let mut sum = 1.0f64;
    let mut k = 1.0;
    loop {
        let next = -term * (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * ax);
        if next.abs() >= term.abs() || next.abs() < sum.abs() * 1e-17 {
            return sum + next;
        }
        term = next;
        sum += term;
        k += 1.0;
    }
}

/// Beyond this `|x|` the asymptotic expansions are accurate to machine precision.
const BESSEL_ASYMPTOTIC: f64 = 20.0;

/// The modified Bessel function of the first kind of order 0, `I₀(x)`.
pub fn i0(x: f64) -> f64 {
    let ax = x.abs();
    if !ax.is_finite() {
        return ax;
    }
    if ax <= BESSEL_ASYMPTOTIC {
        return bessel_series(ax, 0.0);
    }
    // e^ax in two halves, so I₀ is finite as far as it can be.
    let half = (0.5 * ax).exp();
    bessel_asymptotic(ax, 0.0) / (2.0 * std::f64::consts::PI * ax).sqrt() * half * half
}

/// `e^-|x| I₀(x)`.
pub fn i0e(x: f64) -> f64 {
    let ax = x.abs();
    if !ax.is_finite() {
        return if ax.is_nan() { ax } else { 0.0 };
    }
    if ax <= BESSEL_ASYMPTOTIC {
        return bessel_series(ax, 0.0) * (-ax).exp();
    }
    bessel_asymptotic(ax, 0.0) / (2.0 * std::f64::consts::PI * ax).sqrt()
}

/// The modified Bessel function of the first kind of order 1, `I₁(x)` (odd in `x`).
pub fn i1(x: f64) -> f64 {
    let ax = x.abs();
    if !ax.is_finite() {
        return x;
    }
    let v = if ax <= BESSEL_ASYMPTOTIC {
        0.5 * ax * bessel_series(ax, 1.0)
    } else {
        let half = (0.5 * ax).exp();
        bessel_asymptotic(ax, 1.0) / (2.0 * std::f64::consts::PI * ax).sqrt() * half * half
    };
    v.copysign(x)
}

/// `e^-|x| I₁(x)`.
pub fn i1e(x: f64) -> f64 {
    let ax = x.abs();
    if !ax.is_finite() {
        return if ax.is_nan() { x } else { 0.0f64.copysign(x) };
    }
    let v = if ax <= BESSEL_ASYMPTOTIC {
        0.5 * ax * bessel_series(ax, 1.0) * (-ax).exp()
    } else {
        bessel_asymptotic(ax, 1.0) / (2.0 * std::f64::consts::PI * ax).sqrt()
    };
    v.copysign(x)
}

/// The spherical Bessel function of the first kind of order 0, `j₀(x) = sin(x) / x`: 1 at 0,
/// 0 at `±inf`, and its Taylor polynomial of degree 14 below `|x| = ½` (PyTorch's, one term longer).
pub fn spherical_bessel_j0(x: f64) -> f64 {
    if x.is_infinite() {
        return 0.0;
    }
    if x.abs() < 0.5 {
        let x2 = x * x;
        // 1 - x²/3! + x⁴/5! - … - x¹²/13! + x¹⁴/15!.
        return 1.0
            + x2 * (-1.0 / 6.0
                + x2 * (1.0 / 120.0
                    + x2 * (-1.0 / 5040.0
                        + x2 * (1.0 / 362_880.0
                            + x2 * (-1.0 / 39_916_800.0
                                + x2 * (1.0 / 6_227_020_800.0 + x2 * (-1.0 / 1_307_674_368_000.0)))))));
    }
    x.sin() / x
}

/// The Bessel function of the first kind of order 0, `J₀(x)` (NaN at `±inf`, as PyTorch).
pub fn bessel_j0(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    libm::j0(x)
}

/// The Bessel function of the first kind of order 1, `J₁(x)` (NaN at `±inf`, as PyTorch).
pub fn bessel_j1(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    libm::j1(x)
}

/// The Bessel function of the second kind of order 0, `Y₀(x)`: `-inf` at 0, NaN below 0 and
/// at `+inf` (as PyTorch).
pub fn bessel_y0(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    libm::y0(x)
}

/// The Bessel function of the second kind of order 1, `Y₁(x)`: `-inf` at 0, NaN below 0 and
/// at `+inf` (as PyTorch).
pub fn bessel_y1(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    libm::y1(x)
}

#[cfg(test)]
mod tests;
