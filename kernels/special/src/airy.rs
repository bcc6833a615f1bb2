//! The Airy function `Ai(x)`, the solution of `y'' = x y` that decays for `x → +∞`, in `f64`
//! to about 1e-12 (absolute, where `|Ai| ≤ 0.54`), by three methods for three ranges:
//!
//! * `−6.7 ≤ x ≤ 1`: the Maclaurin series `Ai = c₁ f(x) − c₂ g(x)`, whose terms grow at most to
//!   about `e^ζ` (`ζ = ⅔ |x|^{3/2}`), costing under five digits at the left end;
//! * `x > 1`: `Ai(x) = e^{−ζ}/π ∫₀^∞ e^{−√x t²} cos(t³/3) dt`, whose integrand is even and entire,
//!   so the trapezoidal rule converges geometrically (step 0.05, about 130 points at `x = 1` and
//!   fewer beyond; the factor `e^{−ζ}` underflows to 0 past `x ≈ 104`);
//! * `x < −6.7`: the oscillatory asymptotic expansion, summed to its smallest term (`≈ e^{−2ζ}`,
//!   below 1e-10 there).
//!
//! `±∞` and NaN give NaN, as PyTorch's (Cephes') `airy_ai`.

use std::f64::consts::{FRAC_PI_4, PI};

/// `Ai(0) = 1 / (3^{2/3} Γ(2/3))`.
const C1: f64 = 0.355_028_053_887_817_2;
/// `−Ai'(0) = 1 / (3^{1/3} Γ(1/3))`.
const C2: f64 = 0.258_819_403_792_806_8;

/// The Airy function of the first kind.
pub fn airy_ai(x: f64) -> f64 {
    if !x.is_finite() {
        f64::NAN
    } else if x > 1.0 {
        damped_integral(x)
    } else if x >= -6.7 {
        maclaurin(x)
    } else {
        oscillatory(-x)
    }
}

/// `c₁ Σ 3ᵏ (1/3)ₖ x^{3k}/(3k)! − c₂ Σ 3ᵏ (2/3)ₖ x^{3k+1}/(3k+1)!`, term by term from the ratios.
fn maclaurin(x: f64) -> f64 {
    let x3 = x * x * x;
    let (mut f, mut g, mut tf, mut tg) = (1.0, x, 1.0, x);
    for k in 1..200 {
        let k = k as f64;
        tf *= x3 / ((3.0 * k - 1.0) * (3.0 * k));
        tg *= x3 / ((3.0 * k) * (3.0 * k + 1.0));
        f += tf;
        g += tg;
        if tf.abs() <= 1e-17 * f.abs() && tg.abs() <= 1e-17 * g.abs() {
            break;
        }
    }
    C1 * f - C2 * g
}

/// `e^{−ζ}/π ∫₀^∞ e^{−√x t²} cos(t³/3) dt` by the trapezoidal rule, up to where the Gaussian
/// factor is below `e^{−40}`.
fn damped_integral(x: f64) -> f64 {
    const STEP: f64 = 0.05;
    let root = x.sqrt();
    let zeta = 2.0 / 3.0 * x * root;
    let points = ((40.0 / root).sqrt() / STEP) as usize + 1;
    let mut sum = 0.5;
    for i in 1..=points {
        let t = i as f64 * STEP;
        sum += (-root * t * t).exp() * (t * t * t / 3.0).cos();
    }
    (-zeta).exp() / PI * sum * STEP
}

/// `Ai(−z) ≈ (sin(ζ + π/4) P − cos(ζ + π/4) Q) / (√π z^{1/4})` with
/// `P = Σ (−1)ᵏ u₂ₖ ζ^{−2k}`, `Q = Σ (−1)ᵏ u₂ₖ₊₁ ζ^{−2k−1}`, for `z > 6.7`.
fn oscillatory(z: f64) -> f64 {
    let zeta = 2.0 / 3.0 * z * z.sqrt();
    let (mut p, mut q) = (0.0, 0.0);
    // u₀ = 1, uₖ = uₖ₋₁ (6k − 5)(6k − 3)(6k − 1) / ((2k − 1) 216 k); `term` is uₖ / ζᵏ.
    let mut term = 1.0f64;
    let mut previous = f64::INFINITY;
    for k in 0..80 {
        if term.abs() >= previous {
            break;
        }
        previous = term.abs();
        match k % 4 {
            0 => p += term,
            1 => q += term,
            2 => p -= term,
            _ => q -= term,
        }
        let n = (k + 1) as f64;
        term *= (6.0 * n - 5.0) * (6.0 * n - 3.0) * (6.0 * n - 1.0) / ((2.0 * n - 1.0) * 216.0 * n * zeta);
    }
    let phase = zeta + FRAC_PI_4;
    (phase.sin() * p - phase.cos() * q) / (PI.sqrt() * z.sqrt().sqrt())
}
