//! Accuracy and semantics of the element math against f64 references and PyTorch.

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
    let edges = [88.722_83, 88.722_84, 89.0, -87.336_55, -103.972_08, -103.972_09, -104.0, 1e-8, -1e-8, 0.346_573_6];
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
    let cases = [(0.5, 0.0), (1.5, 2.0), (2.5, 2.0), (-0.5, -0.0), (-1.5, -2.0), (-2.5, -2.0), (2.4, 2.0), (2.6, 3.0)];
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

#[test]
fn integer_division_never_panics_and_rounds_like_python() {
    // Python's `//` and `%`, C's truncating `/` and `%`.
    for (a, b, floor, rem, trunc, fmod) in [(-7i64, 2, -4, 1, -3, -1), (7, -2, -4, -1, -3, 1), (-6, 3, -2, 0, -2, 0)] {
        assert_eq!((div_floor(a, b), remainder(a, b), div_trunc(a, b), super::fmod(a, b)), (floor, rem, trunc, fmod));
    }
    // The overflowing quotient wraps; zero divisors (rejected by the ops before) give 0.
    assert_eq!((div_trunc(i8::MIN, -1), div_floor(i8::MIN, -1), remainder(i8::MIN, -1)), (i8::MIN, i8::MIN, 0));
    assert_eq!((div_trunc(5i32, 0), div_floor(5i32, 0), remainder(5i32, 0), super::fmod(5i32, 0)), (0, 0, 0, 0));
    assert_eq!((div_floor(250u8, 7), remainder(250u8, 7)), (35, 5));
    // Rounding leaves integers alone; floats round half to even.
    assert_eq!((floor(-3i16), ceil(-3i16), round(7u8), trunc(-9i64)), (-3, -3, 7, -9));
    assert_eq!((round(2.5f32), round(-0.5f64), floor(-0.5f32), ceil(-0.5f64)), (2.0, -0.0, -1.0, -0.0));
}

#[test]
fn float_division_matches_pytorch() {
    // div_floor from fmod: consistent with remainder, a zero quotient keeps its sign, a zero
    // divisor gives ±inf/NaN.
    assert_eq!((div_floor(7.5f32, -2.0), remainder(7.5f32, -2.0)), (-4.0, -0.5));
    assert!(div_floor(-0.0f64, 3.0).is_sign_negative() && div_floor(1.0f32, 0.0) == f32::INFINITY);
    assert!(div_floor(0.0f64, 0.0).is_nan() && remainder(1.0f32, 0.0).is_nan());
    assert_eq!(super::fmod(-7.5f64, 2.0), -1.5);
    assert_eq!((fmax(f32::NAN, 1.0), fmin(2.0f64, f64::NAN)), (1.0, 2.0));
    assert!(fmax(f64::NAN, f64::NAN).is_nan());
    assert_eq!((copysign(3.0f32, -0.0), copysign(-2.0f64, 1.0)), (-3.0, 2.0));
    assert!(isnan(f32::NAN) && !isnan(3i32) && isinf(f64::NEG_INFINITY) && !isinf(i64::MAX));
    assert!(isfinite(1.0f32) && !isfinite(f32::NAN) && isfinite(0u8));
    assert!(signbit(-0.0f32) && !signbit(0.0f64) && signbit(-1i8) && !signbit(200u8));
}

#[test]
fn bit_operations_follow_pytorch() {
    // Shift counts outside [0, bits): 0 for <<, every bit out for >> (u8 counts read as signed).
    assert_eq!((shl(-8i8, 1), shl(3i8, 7), shl(127i8, 8), shl(-128i8, -1)), (-16, -128, 0, 0));
    assert_eq!((shr(-8i8, 1), shr(3i8, 7), shr(127i8, 8), shr(-128i8, -1)), (-4, 0, 0, -1));
    assert_eq!((shr(200u8, 1), shr(3u8, 8), shr(255u8, 9), shl(1u8, 200), shr(255u8, 200)), (100, 0, 0, 0, 0));
    assert_eq!((shl(1i64, 63), shr(i64::MIN, 70)), (i64::MIN, -1));
    assert_eq!((bitand(12i32, 10), bitor(12i32, 10), bitxor(12i32, 10), bitnot(5u8)), (8, 14, 6, 250));
    // Bools are 0/1 bytes: `bitnot` is logical not there.
    assert_eq!((boolean::bitnot(1u8), boolean::bitnot(0u8)), (0, 1));
}

/// The branch-free `fmod_f32` is bit-identical to libm's `fmodf` (Rust's `%`), signed zeros
/// and NaNs included, over random bit patterns (every exponent pairing, subnormals and
/// specials) and the edge values.
#[test]
fn fmod_f32_matches_libm_bit_for_bit() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        f32::from_bits((state >> 32) as u32)
    };
    let edges = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        3.0,
        -7.5,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        16_777_217.0,
        0.1,
        -0.3,
    ];
    let mut pairs: Vec<(f32, f32)> = edges.iter().flat_map(|&a| edges.iter().map(move |&b| (a, b))).collect();
    pairs.extend((0..200_000).map(|_| (next(), next())));
    // Ratios near the largest (2^277): huge numerators over subnormal and tiny divisors.
    pairs.extend((0..20_000).map(|_| {
        let (a, b) = (next().to_bits(), next().to_bits());
        (f32::from_bits((a & 0x807f_ffff) | (0xf0 + (a >> 23) % 15) << 23), f32::from_bits(b & 0x80ff_ffff))
    }));
    // Quotients close to integers, where a rounded f64 quotient can land on the wrong side.
    pairs.extend((1..2000).map(|k| (k as f32 * 0.1, 0.1)));
    pairs.extend((1..2000).map(|k| (-(k as f32) * 3.3, 1.1)));
    for (a, b) in pairs {
        let (got, want) = (fmod_f32(a, b), a % b);
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "fmod({a:e}, {b:e}) = {got:e}, libm gives {want:e}"
        );
    }
}
