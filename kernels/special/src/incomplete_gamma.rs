//! The regularized incomplete gamma functions `P(a, x) = γ(a, x) / Γ(a)` (`torch.igamma`) and
//! `Q(a, x) = 1 - P(a, x)` (`torch.igammac`).
//!
//! Each is computed directly where it is the smaller, so neither loses its relative accuracy to
//! a subtraction from 1: `P` by its power series below `x = a + 1`, `Q` by Legendre's continued
//! fraction above, and for `a > 10⁸` (where both would need on the order of `sqrt(a)` terms)
//! Temme's uniform asymptotic expansion. The common factor `x^a e^-x / Γ(a)` goes through
//! Stirling's series for `a ≥ 10`, so that it stays accurate where `a ln x` and `ln Γ(a)` are
//! each huge and nearly cancel.

/// Above this `a`, Temme's expansion (its first correction term is below 1e-11).
const ASYMPTOTIC_A: f64 = 1e8;
/// The most terms of the series or of the continued fraction (enough for `a ≤ 10⁸`).
const MAX_TERMS: usize = 200_000;

/// `P(a, x)`, the regularized lower incomplete gamma function, with PyTorch's edge values:
/// NaN for a negative or NaN argument and at `a = x = 0` or `a = x = inf`, 1 for `a = 0 < x`,
/// 0 at `x = 0` and for an infinite `a`, 1 for an infinite `x`.
pub fn igamma(a: f64, x: f64) -> f64 {
    match edge(a, x) {
        Some(p) => p,
        None => regularized(a, x).0,
    }
}

/// `Q(a, x) = 1 - P(a, x)`, the regularized upper incomplete gamma function, with the
/// complementary edge values.
pub fn igammac(a: f64, x: f64) -> f64 {
    match edge(a, x) {
        Some(p) if p.is_nan() => p,
        Some(p) => 1.0 - p,
        None => regularized(a, x).1,
    }
}

/// `P` where an argument is at the edge of the domain.
fn edge(a: f64, x: f64) -> Option<f64> {
    if a.is_nan() || x.is_nan() || a < 0.0 || x < 0.0 {
        return Some(f64::NAN);
    }
    if a == 0.0 {
        return Some(if x > 0.0 { 1.0 } else { f64::NAN });
    }
    if x == 0.0 {
        return Some(0.0);
    }
    if a.is_infinite() {
        return Some(if x.is_infinite() { f64::NAN } else { 0.0 });
    }
    if x.is_infinite() {
        return Some(1.0);
    }
    None
}

/// `(P, Q)` for finite `a, x > 0`.
fn regularized(a: f64, x: f64) -> (f64, f64) {
    if a > ASYMPTOTIC_A {
        return temme(a, x);
    }
    // Below x ≈ 1 with a small against x, Q is the small one but P's series would give it
    // only as 1 - P: its own series (the choice of Cephes and SciPy).
    let q_small = if x <= 0.5 { a <= -0.4 / x.ln() } else { x <= 1.1 && a <= 1.1 * x };
    if q_small {
        let q = upper_series(a, x);
        return (1.0 - q, q);
    }
    let front = power_exp_over_gamma(a, x);
    if x < a + 1.0 {
        let p = front * lower_series(a, x);
        (p, 1.0 - p)
    } else {
        let q = front * upper_fraction(a, x);
        (1.0 - q, q)
    }
}

/// `ln Γ(1 + a)`, accurate for small `|a|` (where `1 + a` would round): its Taylor series
/// `-γa + Σ_{k≥2} (-1)^k ζ(k) a^k / k` below `|a| = 0.2`.
fn lgamma1p(a: f64) -> f64 {
    if a.abs() >= 0.2 {
        return libm::lgamma(1.0 + a);
    }
    // ζ(2) … ζ(24).
    #[rustfmt::skip]
    const ZETA: [f64; 23] = [
        1.644_934_066_848_226_4, 1.202_056_903_159_594_2, 1.082_323_233_711_138_1,
        1.036_927_755_143_37, 1.017_343_061_984_449_2, 1.008_349_277_381_923,
        1.004_077_356_197_944_4, 1.002_008_392_826_082_1, 1.000_994_575_127_818,
        1.000_494_188_604_119_4, 1.000_246_086_553_308, 1.000_122_713_347_578_5,
        1.000_061_248_135_058_8, 1.000_030_588_236_307, 1.000_015_282_259_408_6,
        1.000_007_637_197_637_9, 1.000_003_817_293_265, 1.000_001_908_212_716_5,
        1.000_000_953_962_033_8, 1.000_000_476_932_986_9, 1.000_000_238_450_502_7,
        1.000_000_119_219_926, 1.000_000_059_608_189,
    ];
    const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;
    // (-a)^k for k = 2, 3, …
    let mut power = -a;
    let mut sum = 0.0;
    for (k, zeta) in ZETA.iter().enumerate() {
        power *= -a;
        sum += zeta * power / (k + 2) as f64;
    }
    -EULER_GAMMA * a + sum
}

/// `Q` for small `x`: `1 - x^a / Γ(a+1) - x^a / Γ(a) · Σ_{n≥1} (-x)^n / (n! (a + n))`, the first
/// two terms as one `expm1`.
fn upper_series(a: f64, x: f64) -> f64 {
    let mut factor = 1.0;
    let mut sum = 0.0;
    for n in 1..2000 {
        factor *= -x / n as f64;
        let term = factor / (a + n as f64);
        sum += term;
        if term.abs() <= sum.abs() * 1e-17 {
            break;
        }
    }
    let log_x = x.ln();
    -(a * log_x - lgamma1p(a)).exp_m1() - (a * log_x - libm::lgamma(a)).exp() * sum
}

/// `t - ln(1 + t)`, without cancellation for small `t`.
fn t_minus_log1p(t: f64) -> f64 {
    if t.abs() < 0.01 {
        // t²/2 - t³/3 + t⁴/4 - …: twelve terms reach 1e-28 relative at |t| = 0.01.
        let mut power = t * t;
        let mut sum = 0.0;
        for k in 2..14 {
            sum += power / k as f64;
            power *= -t;
        }
        sum
    } else {
        t - t.ln_1p()
    }
}

/// `x^a e^-x / Γ(a)`.
fn power_exp_over_gamma(a: f64, x: f64) -> f64 {
    if a < 10.0 {
        return (a * x.ln() - x - libm::lgamma(a)).exp();
    }
    // ln Γ(a) = (a - ½) ln a - a + ½ ln 2π + s(a): the exponent is then
    // -a (t - ln(1 + t)) + ½ ln(a / 2π) - s(a) with t = x/a - 1.
    let t = (x - a) / a;
    let inv = 1.0 / a;
    let inv2 = inv * inv;
    let stirling = inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)));
    (-a * t_minus_log1p(t) - stirling).exp() * (a / (2.0 * std::f64::consts::PI)).sqrt()
}

/// `Σ x^n / (a (a+1) ⋯ (a+n))`, so that `P = x^a e^-x / Γ(a)` times it.
fn lower_series(a: f64, x: f64) -> f64 {
    let mut term = 1.0 / a;
    let mut sum = term;
    let mut denominator = a;
    for _ in 0..MAX_TERMS {
        denominator += 1.0;
        term *= x / denominator;
        sum += term;
        if term.abs() < sum.abs() * 1e-17 {
            break;
        }
    }
    sum
}

/// Legendre's continued fraction `1 / (x + 1 - a - 1(1-a) / (x + 3 - a - 2(2-a) / (x + 5 - a
/// - …)))` by the modified Lentz method, so that `Q = x^a e^-x / Γ(a)` times it.
fn upper_fraction(a: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut b = x + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..=MAX_TERMS {
        let an = -(i as f64) * (i as f64 - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// `(P, Q)` by Temme's expansion: with `λ = x/a` and `η = sign(λ - 1) sqrt(2(λ - 1 - ln λ))`,
/// `Q = ½ erfc(η sqrt(a/2)) + R` and `P = ½ erfc(-η sqrt(a/2)) - R`, where
/// `R = e^(-aη²/2) / sqrt(2πa) · (c₀(η) + O(1/a))` and `c₀(η) = 1/(λ - 1) - 1/η` (DLMF 8.12).
fn temme(a: f64, x: f64) -> (f64, f64) {
    let t = (x - a) / a;
    let half_eta2 = t_minus_log1p(t);
    let eta = (2.0 * half_eta2).sqrt().copysign(t);
    let c0 = if t.abs() < 1e-3 {
        // The two terms cancel near λ = 1: c₀'s Taylor series there.
        -1.0 / 3.0 + eta * (1.0 / 12.0 - eta * (2.0 / 135.0 - eta / 864.0))
    } else {
        1.0 / t - 1.0 / eta
    };
    let r = (-a * half_eta2).exp() / (2.0 * std::f64::consts::PI * a).sqrt() * c0;
    let z = eta * (a / 2.0).sqrt();
    (0.5 * libm::erfc(-z) - r, 0.5 * libm::erfc(z) + r)
}
