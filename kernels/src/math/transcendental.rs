//! Vectorizable f32 transcendental functions, and f64 `erf`/`erfinv`.

use super::functions::where_;
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

/// The complementary error function in `f64`, `1 - erf(x)` with its relative accuracy kept in
/// the tails (Cody's outer ranges for `|x| > 0.46875`).
pub fn erfc_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let y = x.abs();
    if y <= 0.468_75 {
        return 1.0 - erf_f64(x);
    }
    let t = erfc_tail(y);
    if x > 0.0 {
        t
    } else {
        2.0 - t
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

/// C's `fmodf`, exact and branch-free so that it vectorizes (libm's `fmodf` is a scalar call
/// per element; PyTorch uses SLEEF's vectorized `fmod`).
///
/// In f64, `r = |a|` is reduced by `t·|b|`, `t` the quotient `r / |b|` truncated, with one fused
/// multiply-add. The quotient is off by at most `q·2^-52 + 1` (`1 / |b|` and the product each
/// round once), so each step divides the ratio `q = r / |b|` by about 2^52: six steps take the
/// largest ratio of two f32 values (2^277) to `|q| ≤ 1 + 2^-35`, and two corrections bring `r`
/// into `[0, |b|)`. Each step is exact: `r` and `t·|b|` are multiples of `ulp(|b|)·2^max(0,
/// e - 52)` (`e` the exponent of `t`), and the residual is below `(q·2^-52 + 1)·|b|`, so it
/// needs at most 26 significant bits — one rounding-free fma. The remainder of two f32 values
/// is an f32 value, so the final rounding is exact too. NaN for a NaN operand, an infinite `a`
/// or a zero `b`; `a` for an infinite `b`. (Vectorized, the fma is one instruction in the
/// AVX2/AVX-512 loops; the baseline loop calls libm's `fma`.)
#[inline(always)]
pub fn fmod_f32(a: f32, b: f32) -> f32 {
    let d = (b as f64).abs();
    let inv = 1.0 / d;
    let mut r = (a as f64).abs();
    for _ in 0..6 {
        let t = (r * inv).trunc();
        r = (-t).mul_add(d, r);
    }
    r = if r < 0.0 { r + d } else { r };
    r = if r >= d { r - d } else { r };
    let m = (r as f32).copysign(a);
    let m = if b.is_infinite() { a } else { m };
    if a.is_nan() | b.is_nan() | a.is_infinite() | (b == 0.0) {
        f32::NAN
    } else {
        m
    }
}
