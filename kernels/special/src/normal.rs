//! The scaled complementary error function and the standard normal distribution's log-CDF and
//! quantile, accurate far into the tails where the naive formulas underflow or cancel.

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// `1 / sqrt(pi)`.
const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;
/// `sqrt(2 pi)`.
const SQRT_2PI: f64 = 2.506_628_274_631_000_7;

/// The scaled complementary error function `erfcx(x) = exp(x²) erfc(x)`: `erfc` times the
/// exponential below 5, Laplace's continued fraction `1 / (sqrt(pi) (x + ½/(x + 1/(x + 3/2/
/// (x + …)))))` above (where `erfc` would underflow), and `2 exp(x²) - erfcx(-x)` below 0
/// (`+inf` once `exp(x²)` overflows).
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 0.0 {
        if x < -26.7 {
            return f64::INFINITY;
        }
        return 2.0 * (x * x).exp() - erfcx(-x);
    }
    if x < 5.0 {
        return (x * x).exp() * libm::erfc(x);
    }
    // Evaluated from the 60th partial denominator up: converged to 1 ulp for x >= 5.
    let mut f = x;
    for k in (1..=60).rev() {
        f = x + 0.5 * k as f64 / f;
    }
    FRAC_1_SQRT_PI / f
}

/// The standard normal CDF.
fn ndtr(x: f64) -> f64 {
    0.5 * libm::erfc(-x * FRAC_1_SQRT_2)
}

/// `log Φ(x)`, the log of the standard normal CDF: through `erfcx` in the lower tail (where
/// `Φ` underflows), `log1p(-Φ(-x))` elsewhere.
pub fn log_ndtr(x: f64) -> f64 {
    if x < -1.0 {
        (0.5 * erfcx(-x * FRAC_1_SQRT_2)).ln() - 0.5 * x * x
    } else {
        (-0.5 * libm::erfc(x * FRAC_1_SQRT_2)).ln_1p()
    }
}

/// The standard normal quantile `Φ⁻¹(p)`: `∓inf` at 0 and 1, NaN outside `[0, 1]`. Halley's
/// method on `erf` in the centre (`2p - 1` is exact there) and on the lower tail's `Φ` (whose
/// `erfc` keeps full relative accuracy) elsewhere, `Φ⁻¹(p) = -Φ⁻¹(1 - p)` above ½.
pub fn ndtri(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if (p - 0.5).abs() <= 0.25 {
        // Φ(x) = (1 + erf(x / sqrt 2)) / 2; from erf's linear term, five Halley steps.
        let q = 2.0 * p - 1.0;
        let mut x = q * (PI / 2.0).sqrt();
        for _ in 0..5 {
            let e = libm::erf(x * FRAC_1_SQRT_2) - q;
            x = halley(x, 0.5 * e);
        }
        return x;
    }
    if p > 0.5 {
        return -ndtri_lower(1.0 - p);
    }
    ndtri_lower(p)
}

/// One Halley step for `Φ(x) = c` given the residual `Φ(x) - c` (`Φ' = φ`, `Φ'' = -x φ`).
fn halley(x: f64, residual: f64) -> f64 {
    // `1 / φ(x)` in two halves: `exp(x² / 2)` alone overflows for the deepest subnormal `p`.
    let half = (0.25 * x * x).exp();
    let u = residual * SQRT_2PI * half * half;
    x - u / (1.0 + 0.5 * x * u)
}

/// `Φ⁻¹(p)` for `0 < p < ¼`: Abramowitz and Stegun's 26.2.23 (error below 4.5e-4), then three
/// Halley steps.
fn ndtri_lower(p: f64) -> f64 {
    let t = (-2.0 * p.ln()).sqrt();
    let mut x = -(t
        - (2.515_517 + t * (0.802_853 + t * 0.010_328)) / (1.0 + t * (1.432_788 + t * (0.189_269 + t * 0.001_308))));
    for _ in 0..3 {
        x = halley(x, ndtr(x) - p);
    }
    x
}
