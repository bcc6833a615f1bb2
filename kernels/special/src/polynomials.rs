//! The orthogonal polynomials of `torch.special`, evaluated the way PyTorch evaluates them.
//!
//! Each takes the point `x` and the degree `n` in the tensor's own type and computes in that
//! type (`f32` or `f64`), as PyTorch's CPU kernels do, so that the rounding of a long recurrence
//! matches theirs: the degree is `n` truncated to an integer (with x86's rule for NaN and values
//! out of `i64` range: they become `i64::MIN`, so the result is 0), a negative degree gives 0,
//! `±1` (Chebyshev, Legendre) and 0 (Laguerre) have their exact values, Chebyshev polynomials
//! of high degree inside `(-1, 1)` come from their trigonometric closed forms, and everything
//! else from the three-term recurrence, which stops early once it has become NaN.
//!
//! Where PyTorch's recurrence would not end in practice (a degree of 2^40 at a point where the
//! values neither grow nor decay), these stop: above [`MAX_RECURRENCE`] steps the Chebyshev
//! polynomials outside `[-1, 1]` use their hyperbolic closed forms, and the Legendre and
//! Laguerre polynomials return NaN (their values stay bounded inside `(-1, 1)` and at `x > 0`,
//! so the recurrence would not overflow and stop) — the way PyTorch's Hermite polynomials
//! already return NaN above degree 128 (`f32`) or 512 (`f64`).

use std::ops::{Add, Div, Mul, Neg, Sub};

/// The most recurrence steps a polynomial takes (above it: a closed form, or NaN): about a
/// millisecond per element, where the recurrence's rounding (`n ε`) has already grown to 1e-10 in
/// `f64` and swamped `f32` entirely.
pub const MAX_RECURRENCE: i64 = 1 << 20;

/// The floating-point types the polynomials compute in.
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// The value `v` (a small constant) in this type.
    fn of(v: f64) -> Self;
    /// The integer `n` in this type, rounded as C's conversion does.
    fn of_int(n: i64) -> Self;
    /// C's `static_cast<int64_t>` on x86: truncation, with NaN and out-of-range values giving
    /// `i64::MIN` (`cvttsd2si`'s "integer indefinite").
    fn degree(self) -> i64;
    /// `|x|`.
    fn abs(self) -> Self;
    /// Arccosine.
    fn acos(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Inverse hyperbolic cosine.
    fn acosh(self) -> Self;
    /// Hyperbolic cosine.
    fn cosh(self) -> Self;
    /// Hyperbolic sine.
    fn sinh(self) -> Self;
    /// Whether the value is NaN.
    fn is_nan(self) -> bool;
    /// PyTorch's cut-off degree for the Hermite polynomials (NaN above it).
    const HERMITE_LIMIT: i64;
}

macro_rules! real {
    ($t:ty, $hermite:expr) => {
        impl Real for $t {
            fn of(v: f64) -> Self {
                v as $t
            }
            fn of_int(n: i64) -> Self {
                n as $t
            }
            fn degree(self) -> i64 {
                // `i64::MAX` rounds to 2^63 in both types; `as` saturates, C's conversion does not.
                let two_63 = i64::MAX as $t;
                if self.is_nan() || self >= two_63 || self < -two_63 {
                    i64::MIN
                } else {
                    self as i64
                }
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn acos(self) -> Self {
                <$t>::acos(self)
            }
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            fn acosh(self) -> Self {
                <$t>::acosh(self)
            }
            fn cosh(self) -> Self {
                <$t>::cosh(self)
            }
            fn sinh(self) -> Self {
                <$t>::sinh(self)
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            const HERMITE_LIMIT: i64 = $hermite;
        }
    };
}
real!(f32, 128);
real!(f64, 512);

/// The four kinds of Chebyshev polynomials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chebyshev {
    /// First kind, `T_n(cos θ) = cos(nθ)`.
    T,
    /// Second kind, `U_n(cos θ) = sin((n+1)θ) / sin θ`.
    U,
    /// Third kind, `V_n(cos θ) = cos((n+½)θ) / cos(θ/2)`.
    V,
    /// Fourth kind, `W_n(cos θ) = sin((n+½)θ) / sin(θ/2)`.
    W,
}

/// `±(2n + 1)` and `±(n + 1)` as PyTorch computes them: in `i64` (wrapping where C's would
/// overflow), then converted.
fn odd<T: Real>(n: i64) -> T {
    T::of_int(n.wrapping_add(n).wrapping_add(1))
}

fn alternating<T: Real>(n: i64, value: T) -> T {
    if n % 2 == 0 {
        value
    } else {
        -value
    }
}

/// The Chebyshev polynomial of `kind` and degree `n` (as a float, truncated) at `x`.
pub fn chebyshev<T: Real>(kind: Chebyshev, x: T, n: T) -> T {
    chebyshev_degree(kind, x, n.degree(), false)
}

/// The shifted Chebyshev polynomial `P*_n(x) = P_n(2x - 1)` of `kind`.
pub fn shifted_chebyshev<T: Real>(kind: Chebyshev, x: T, n: T) -> T {
    chebyshev_degree(kind, x + x - T::of(1.0), n.degree(), true)
}

fn chebyshev_degree<T: Real>(kind: Chebyshev, x: T, n: i64, shifted: bool) -> T {
    let (one, zero) = (T::of(1.0), T::of(0.0));
    if n < 0 {
        return zero;
    }
    let ends = |x: T| match kind {
        Chebyshev::T => alternating(if x > zero { 0 } else { n }, one),
        Chebyshev::U => alternating(if x > zero { 0 } else { n }, T::of_int(n.wrapping_add(1))),
        Chebyshev::V => {
            if x > zero {
                one
            } else {
                alternating(n, odd(n))
            }
        }
        Chebyshev::W => {
            if x > zero {
                odd(n)
            } else {
                alternating(n, one)
            }
        }
    };
    if x.abs() == one {
        return ends(x);
    }
    // PyTorch switches to the closed form at these degrees (lower for the shifted kinds).
    let closed_above = match (kind, shifted) {
        (Chebyshev::T, _) => 6,
        (_, false) => 8,
        (Chebyshev::W, true) => 4,
        (_, true) => 6,
    };
    if n > closed_above && x.abs() < one {
        let theta = x.acos();
        let half = theta / T::of(2.0);
        let n_half = T::of_int(n) + T::of(0.5);
        return match kind {
            Chebyshev::T => (T::of_int(n) * theta).cos(),
            Chebyshev::U => {
                let n1 = T::of_int(n.wrapping_add(1));
                if theta.sin() != zero {
                    (n1 * theta).sin() / theta.sin()
                } else {
                    n1 * (n1 * theta).cos() / x
                }
            }
            Chebyshev::V => {
                if half.sin() != one {
                    (n_half * theta).cos() / half.cos()
                } else {
                    alternating(n, odd(n))
                }
            }
            Chebyshev::W => {
                if half.cos() != one {
                    (n_half * theta).sin() / half.sin()
                } else if x > zero && !shifted {
                    odd(n)
                } else {
                    alternating(n, one)
                }
            }
        };
    }
    if n > MAX_RECURRENCE && !x.is_nan() {
        return chebyshev_outside(kind, x, n);
    }
    let first = match kind {
        Chebyshev::T => x,
        Chebyshev::U => x + x,
        Chebyshev::V => x + x - one,
        Chebyshev::W => x + x + one,
    };
    if n == 0 {
        return one;
    }
    if n == 1 {
        return first;
    }
    let (mut p, mut q) = (one, first);
    let mut k = 2;
    while k <= n && !q.is_nan() {
        let r = (x + x) * q - p;
        p = q;
        q = r;
        k += 1;
    }
    q
}

/// The Chebyshev polynomials at `|x| > 1` from `x = ±cosh t`: `T_n = cosh(nt)`, `U_n =
/// sinh((n+1)t) / sinh t`, `V_n = cosh((n+½)t) / cosh(t/2)`, `W_n = sinh((n+½)t) / sinh(t/2)`,
/// and at `-x`: `T` and `U` times `(-1)^n`, `V` and `W` exchanged and times `(-1)^n`.
fn chebyshev_outside<T: Real>(kind: Chebyshev, x: T, n: i64) -> T {
    let t = x.abs().acosh();
    let (nf, n_half) = (T::of_int(n), T::of_int(n) + T::of(0.5));
    let half = t / T::of(2.0);
    let kind = match (kind, x > T::of(0.0)) {
        (Chebyshev::V, false) => Chebyshev::W,
        (Chebyshev::W, false) => Chebyshev::V,
        (k, _) => k,
    };
    let value = match kind {
        Chebyshev::T => (nf * t).cosh(),
        Chebyshev::U => ((nf + T::of(1.0)) * t).sinh() / t.sinh(),
        Chebyshev::V => (n_half * t).cosh() / half.cosh(),
        Chebyshev::W => (n_half * t).sinh() / half.sinh(),
    };
    if x > T::of(0.0) {
        value
    } else {
        alternating(n, value)
    }
}

/// The physicists' Hermite polynomial `H_n(x)` (`H_{k+1} = 2x H_k - 2k H_{k-1}`); NaN above
/// degree 128 (`f32`) or 512 (`f64`), and 0 for an infinite or NaN degree, as PyTorch.
pub fn hermite_h<T: Real>(x: T, n: T) -> T {
    let n = n.degree();
    if n < 0 {
        return T::of(0.0);
    }
    if n == 0 {
        return T::of(1.0);
    }
    if n == 1 {
        return x + x;
    }
    if n > T::HERMITE_LIMIT {
        return T::of(f64::NAN);
    }
    let (mut p, mut q, mut r) = (T::of(1.0), x + x, T::of(0.0));
    let mut k = 2;
    while k < n + n {
        r = (x + x) * q - T::of_int(k) * p;
        p = q;
        q = r;
        k += 2;
    }
    r
}

/// The probabilists' Hermite polynomial `He_n(x)` (`He_{k+1} = x He_k - k He_{k-1}`); NaN
/// above degree 128 (`f32`) or 512 (`f64`), as PyTorch.
pub fn hermite_he<T: Real>(x: T, n: T) -> T {
    let n = n.degree();
    if n < 0 {
        return T::of(0.0);
    }
    if n == 0 {
        return T::of(1.0);
    }
    if n == 1 {
        return x;
    }
    if n > T::HERMITE_LIMIT {
        return T::of(f64::NAN);
    }
    let (mut p, mut q) = (T::of(1.0), x);
    for k in 1..n {
        let r = x * q - T::of_int(k) * p;
        p = q;
        q = r;
    }
    q
}

/// The Laguerre polynomial `L_n(x)` (`(k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}`); 1 at
/// `x = 0`; NaN where the recurrence has not ended (overflowed) after 2^20 steps.
pub fn laguerre_l<T: Real>(x: T, n: T) -> T {
    let (zero, one) = (T::of(0.0), T::of(1.0));
    let n = n.degree();
    if n < 0 {
        return zero;
    }
    if x.abs() == zero {
        return one;
    }
    if n == 0 {
        return one;
    }
    if n == 1 {
        return one - x;
    }
    let (mut p, mut q) = (one, one - x);
    let mut k = 1;
    while k < n && !q.is_nan() {
        if k > MAX_RECURRENCE {
            return T::of(f64::NAN);
        }
        let r = ((T::of_int(k + k) + (one - x)) * q - T::of_int(k) * p) / T::of_int(k + 1);
        p = q;
        q = r;
        k += 1;
    }
    q
}

/// The Legendre polynomial `P_n(x)` (`(k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}`); exact at
/// `±1`; NaN where the recurrence has not ended (overflowed) after 2^20 steps.
pub fn legendre_p<T: Real>(x: T, n: T) -> T {
    let (zero, one) = (T::of(0.0), T::of(1.0));
    let n = n.degree();
    if n < 0 {
        return zero;
    }
    if x.abs() == one {
        return alternating(if x > zero { 0 } else { n }, one);
    }
    if n == 0 {
        return one;
    }
    if n == 1 {
        return x;
    }
    let (mut p, mut q) = (one, x);
    let mut k = 1;
    while k < n && !q.is_nan() {
        if k > MAX_RECURRENCE {
            return T::of(f64::NAN);
        }
        let r = (T::of_int(k + k + 1) * x * q - T::of_int(k) * p) / T::of_int(k + 1);
        p = q;
        q = r;
        k += 1;
    }
    q
}
