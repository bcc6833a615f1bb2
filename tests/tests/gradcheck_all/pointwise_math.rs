//! Cases for the special functions, `atan2 hypot logaddexp`, `lerp`, `addcmul`/`addcdiv`, the
//! hard activations, rounding, sign and division remainders. Inputs stay inside each function's
//! domain (`erfinv`, `asin`, `acos`, `atanh` in (-1, 1), `acosh` above 1, `log1p` above -1),
//! away from the kinks of `hardswish`/`hardsigmoid` at ±3 and from the jumps of the rounding
//! functions and of `floor`/`trunc` of a quotient.

use super::{case, fresh, leaf, Case, Rng};
use oxten::ops;
use oxten::Scalar;

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    // Values on both sides of ±3, none near them.
    let hard = || leaf(vec![-4.5, -2.5, -1.0, 0.4, 2.2, 3.8], &[2, 3]);
    let inside = || leaf(vec![-0.8, -0.3, 0.1, 0.45, 0.7, 0.9], &[2, 3]);
    let half = Scalar::Float(0.5);
    // Dividends and divisors whose quotients stay at least 0.05 from an integer.
    let num = || leaf(vec![2.3, -1.7, 4.1, 0.6, -3.2, 5.5], &[2, 3]);
    let den = || leaf(vec![1.5, 1.5, -2.0, 0.7, 2.5, -1.2], &[2, 3]);
    vec![
        case("log1p", "", vec![r.pos(&[2, 3])], |x| ops::log1p::call(&x[0])),
        case("log1p", "in-place", vec![r.pos(&[4])], |x| ops::log1p_::call(&fresh(&x[0])?)),
        case("expm1", "", vec![r.any(&[2, 3])], |x| ops::expm1::call(&x[0])),
        case("tan", "", vec![r.any(&[2, 3])], |x| ops::tan::call(&x[0])),
        case("asin", "", vec![inside()], |x| ops::asin::call(&x[0])),
        case("acos", "", vec![inside()], |x| ops::acos::call(&x[0])),
        case("atan", "", vec![r.any(&[2, 3])], |x| ops::atan::call(&x[0])),
        case("sinh", "", vec![r.any(&[2, 3])], |x| ops::sinh::call(&x[0])),
        case("cosh", "", vec![r.any(&[2, 3])], |x| ops::cosh::call(&x[0])),
        case("asinh", "", vec![r.any(&[2, 3])], |x| ops::asinh::call(&x[0])),
        case("acosh", "", vec![leaf(vec![1.2, 1.5, 2.0, 3.1, 1.05, 4.0], &[2, 3])], |x| ops::acosh::call(&x[0])),
        case("atanh", "", vec![inside()], |x| ops::atanh::call(&x[0])),
        case("atanh", "in-place", vec![inside()], |x| ops::atanh_::call(&fresh(&x[0])?)),
        case("log2", "", vec![r.pos(&[2, 3])], |x| ops::log2::call(&x[0])),
        case("log10", "", vec![r.pos(&[2, 3])], |x| ops::log10::call(&x[0])),
        case("exp2", "", vec![r.any(&[2, 3])], |x| ops::exp2::call(&x[0])),
        case("deg2rad", "", vec![r.any(&[2, 3])], |x| ops::deg2rad::call(&x[0])),
        case("rad2deg", "", vec![r.any(&[2, 3])], |x| ops::rad2deg::call(&x[0])),
        case("reciprocal", "", vec![r.pos(&[2, 3])], |x| ops::reciprocal::call(&x[0])),
        case("reciprocal", "negative, in-place", vec![r.pos(&[4])], |x| ops::reciprocal_::call(&x[0].try_neg()?)),
        case("erf", "", vec![r.any(&[2, 3])], |x| ops::erf::call(&x[0])),
        case("erfc", "", vec![r.any(&[2, 3])], |x| ops::erfc::call(&x[0])),
        case("special_ndtr", "", vec![r.any(&[2, 3])], |x| ops::special_ndtr::call(&x[0])),
        case("special_entr", "positive", vec![r.pos(&[2, 3])], |x| ops::special_entr::call(&x[0])),
        case("special_xlog1py", "", vec![r.any(&[2, 3]), r.pos(&[2, 3])], |x| ops::special_xlog1py::call(&x[0], &x[1])),
        case("erf", "transposed", vec![r.transposed(&[2, 3])], |x| ops::erf::call(&x[0])),
        case("erfinv", "", vec![inside()], |x| ops::erfinv::call(&x[0])),
        case("lgamma", "both signs", vec![leaf(vec![0.3, 1.7, 4.2, -0.4, -2.6, 9.1], &[2, 3])], |x| {
            ops::lgamma::call(&x[0])
        }),
        case("digamma", "both signs", vec![leaf(vec![0.3, 1.7, 4.2, -0.4, -2.6, 12.5], &[2, 3])], |x| {
            ops::digamma::call(&x[0])
        }),
        case("polygamma", "n 1", vec![r.pos(&[2, 3])], |x| ops::polygamma::call(1, &x[0])),
        case("polygamma", "n 3, negative", vec![leaf(vec![-0.4, -1.3, 0.6, 2.2], &[4])], |x| {
            ops::polygamma::call(3, &x[0])
        }),
        case("i0", "", vec![r.any(&[2, 3])], |x| ops::i0::call(&x[0])),
        case("special_i0e", "", vec![r.any(&[2, 3])], |x| ops::special_i0e::call(&x[0])),
        case("special_i1", "", vec![r.any(&[2, 3])], |x| ops::special_i1::call(&x[0])),
        case("special_i1", "at 0", vec![leaf(vec![0.0, 1.5], &[2])], |x| ops::special_i1::call(&x[0])),
        case("special_i1e", "", vec![r.any(&[2, 3])], |x| ops::special_i1e::call(&x[0])),
        case("special_modified_bessel_i0", "", vec![r.any(&[2, 3])], |x| ops::special_modified_bessel_i0::call(&x[0])),
        case("special_modified_bessel_i1", "through 0", vec![leaf(vec![0.0, -1.5, 2.5], &[3])], |x| {
            ops::special_modified_bessel_i1::call(&x[0])
        }),
        case("special_bessel_j0", "", vec![r.any(&[2, 3])], |x| ops::special_bessel_j0::call(&x[0])),
        case("special_bessel_j1", "through 0", vec![leaf(vec![0.0, -1.5, 2.5, 7.0], &[4])], |x| {
            ops::special_bessel_j1::call(&x[0])
        }),
        case("special_bessel_y0", "positive", vec![r.pos(&[2, 3])], |x| ops::special_bessel_y0::call(&x[0])),
        case("special_bessel_y1", "positive", vec![leaf(vec![0.4, 1.5, 2.5, 9.0], &[4])], |x| {
            ops::special_bessel_y1::call(&x[0])
        }),
        case(
            "special_modified_bessel_k0",
            "all three ranges",
            vec![leaf(vec![0.3, 1.9, 2.5, 12.0, 24.0], &[5])],
            |x| ops::special_modified_bessel_k0::call(&x[0]),
        ),
        case(
            "special_modified_bessel_k1",
            "all three ranges",
            vec![leaf(vec![0.3, 1.9, 2.5, 12.0, 24.0], &[5])],
            |x| ops::special_modified_bessel_k1::call(&x[0]),
        ),
        case("special_erfcx", "both tails", vec![leaf(vec![-2.5, -0.4, 0.3, 1.8, 4.5, 7.5], &[2, 3])], |x| {
            ops::special_erfcx::call(&x[0])
        }),
        case("special_log_ndtr", "both tails", vec![leaf(vec![-9.0, -2.0, -0.7, 0.4, 1.9, 5.0], &[2, 3])], |x| {
            ops::special_log_ndtr::call(&x[0])
        }),
        case("special_ndtri", "", vec![leaf(vec![0.01, 0.2, 0.45, 0.55, 0.8, 0.995], &[2, 3])], |x| {
            ops::special_ndtri::call(&x[0])
        }),
        case("special_zeta", "q only (self has no derivative)", vec![r.pos(&[2, 3])], |x| {
            ops::special_zeta::call(&oxten::Tensor::from_vec(vec![2.5, 3.0, 4.5], &[3])?, &x[0])
        }),
        case("igamma", "x only (a has no derivative)", vec![r.pos(&[2, 3])], |x| {
            ops::igamma::call(&oxten::Tensor::from_vec(vec![0.7, 2.5, 12.0], &[3])?, &x[0])
        }),
        case("igammac", "x only (a has no derivative)", vec![r.pos(&[2, 3])], |x| {
            ops::igammac::call(&oxten::Tensor::from_vec(vec![0.7, 2.5, 12.0], &[3])?, &x[0])
        }),
        case("special_zeta.self_scalar", "", vec![r.pos(&[2, 3])], |x| {
            ops::special_zeta_self_scalar::call(Scalar::Float(3.0), &x[0])
        }),
        case("pow.Tensor_Tensor", "broadcast", vec![r.pos(&[2, 3]), r.any(&[3])], |x| {
            ops::pow_tensor_tensor::call(&x[0], &x[1])
        }),
        case("pow.Tensor_Tensor", "in-place", vec![r.pos(&[2, 3]), r.any(&[2, 3])], |x| {
            ops::pow_::call(&fresh(&x[0])?, &x[1])
        }),
        case("pow.Scalar", "", vec![r.any(&[2, 3])], |x| ops::pow_scalar::call(Scalar::Float(1.7), &x[0])),
        case("atan2", "broadcast", vec![r.any(&[2, 3]), r.away_from_zero(&[3])], |x| ops::atan2::call(&x[0], &x[1])),
        case("atan2", "in-place", vec![r.any(&[2, 3]), r.away_from_zero(&[2, 3])], |x| {
            ops::atan2_::call(&fresh(&x[0])?, &x[1])
        }),
        case("hypot", "broadcast", vec![r.away_from_zero(&[2, 3]), r.away_from_zero(&[2, 1])], |x| {
            ops::hypot::call(&x[0], &x[1])
        }),
        case("logaddexp", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| ops::logaddexp::call(&x[0], &x[1])),
        case("logaddexp2", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| ops::logaddexp2::call(&x[0], &x[1])),
        case("lerp.Scalar", "weight 0.3", vec![r.any(&[2, 3]), r.any(&[2, 3])], |x| {
            ops::lerp_scalar::call(&x[0], &x[1], Scalar::Float(0.3))
        }),
        case("lerp.Scalar", "weight 0.8, broadcast, in-place", vec![r.any(&[2, 3]), r.any(&[3])], |x| {
            ops::lerp_scalar_::call(&fresh(&x[0])?, &x[1], Scalar::Float(0.8))
        }),
        case("lerp.Tensor", "both branches of the weight", vec![r.any(&[2, 3]), r.any(&[2, 3]), inside()], |x| {
            ops::lerp::call(&x[0], &x[1], &x[2])
        }),
        case("lerp.Tensor", "broadcast weight", vec![r.any(&[2, 3]), r.any(&[3]), r.any(&[2, 1])], |x| {
            ops::lerp::call(&x[0], &x[1], &x[2])
        }),
        case("addcmul", "value 0.5, broadcast", vec![r.any(&[2, 3]), r.any(&[3]), r.any(&[2, 1])], move |x| {
            ops::addcmul::call(&x[0], &x[1], &x[2], half)
        }),
        case("addcmul", "in-place", vec![r.any(&[2, 3]), r.any(&[2, 3]), r.any(&[2, 3])], |x| {
            ops::addcmul_::call(&fresh(&x[0])?, &x[1], &x[2], Scalar::Int(-2))
        }),
        case("addcdiv", "value 0.5, broadcast", vec![r.any(&[2, 3]), r.any(&[3]), r.pos(&[2, 1])], move |x| {
            ops::addcdiv::call(&x[0], &x[1], &x[2], half)
        }),
        case("addcdiv", "in-place", vec![r.any(&[2, 3]), r.any(&[2, 3]), r.pos(&[2, 3])], |x| {
            ops::addcdiv_::call(&fresh(&x[0])?, &x[1], &x[2], Scalar::Int(1))
        }),
        case("mish", "", vec![r.any(&[2, 3])], |x| ops::mish::call(&x[0])),
        case("mish", "in-place", vec![r.any(&[4])], |x| ops::mish_::call(&fresh(&x[0])?)),
        case("hardswish", "both sides of the kinks", vec![hard()], |x| ops::hardswish::call(&x[0])),
        case("hardswish_backward", "", vec![r.any(&[2, 3]), hard()], |x| ops::hardswish_backward::call(&x[0], &x[1])),
        case("hardsigmoid", "both sides of the kinks", vec![hard()], |x| ops::hardsigmoid::call(&x[0])),
        case("hardsigmoid_backward", "", vec![r.any(&[2, 3]), hard()], |x| {
            ops::hardsigmoid_backward::call(&x[0], &x[1])
        }),
        // Rounding and sign: zero gradients (inputs away from integers and from 0).
        case("floor", "", vec![r.any(&[2, 3])], |x| ops::floor::call(&x[0])),
        case("ceil", "", vec![r.any(&[2, 3])], |x| ops::ceil::call(&x[0])),
        case("trunc", "in-place", vec![r.any(&[2, 3])], |x| ops::trunc_::call(&fresh(&x[0])?)),
        case("round", "", vec![r.any(&[2, 3])], |x| ops::round::call(&x[0])),
        case("round.decimals", "2 places", vec![r.any(&[2, 3])], |x| ops::round_decimals::call(&x[0], 2)),
        case("frac", "", vec![r.any(&[2, 3])], |x| ops::frac::call(&x[0])),
        case("sign", "", vec![r.away_from_zero(&[2, 3])], |x| ops::sign::call(&x[0])),
        case("sgn", "", vec![r.away_from_zero(&[2, 3])], |x| ops::sgn::call(&x[0])),
        case("sinc", "", vec![leaf(vec![0.2, -0.7, 0.35, 1.3, -1.9, 2.6], &[2, 3])], |x| ops::sinc::call(&x[0])),
        Case {
            // The first derivative is 0 at 0 (PyTorch's `sinc_backward` masks it there), so the
            // formula's own derivative is 0 at 0 too, unlike sinc''(0) = -pi^2/3: only gradcheck.
            gradgrad: false,
            ..case("sinc", "at 0", vec![leaf(vec![0.0, -0.7, 0.35], &[3])], |x| ops::sinc::call(&x[0]))
        },
        // Division remainders: quotients away from integers, where floor/trunc jump.
        case("remainder.Tensor", "both signs", vec![num(), den()], |x| ops::remainder::call(&x[0], &x[1])),
        case("remainder.Scalar", "", vec![num()], |x| ops::remainder_scalar::call(&x[0], Scalar::Float(-1.5))),
        case("remainder.Scalar_Tensor", "", vec![leaf(vec![1.5, -2.2, 3.1, 0.7, -1.3, 2.6], &[2, 3])], |x| {
            ops::remainder_scalar_tensor::call(Scalar::Float(5.0), &x[0])
        }),
        case("fmod.Tensor", "both signs", vec![num(), den()], |x| ops::fmod::call(&x[0], &x[1])),
        case("fmod.Scalar", "in-place", vec![num()], |x| ops::fmod_scalar_::call(&fresh(&x[0])?, Scalar::Float(1.5))),
        case("floor_divide", "", vec![num(), den()], |x| ops::floor_divide::call(&x[0], &x[1])),
        case("floor_divide.Scalar", "", vec![num()], |x| ops::floor_divide_scalar::call(&x[0], Scalar::Float(0.7))),
        // `other` far from `self`, so a finite-difference step never crosses it.
        case("nextafter", "broadcast", vec![r.away_from_zero(&[2, 3]), leaf(vec![10.0, -12.0, 15.0], &[3])], |x| {
            ops::nextafter::call(&x[0], &x[1])
        }),
        case("copysign.Tensor", "broadcast", vec![r.away_from_zero(&[2, 3]), r.away_from_zero(&[3])], |x| {
            ops::copysign::call(&x[0], &x[1])
        }),
        case("copysign.Scalar", "", vec![r.away_from_zero(&[2, 3])], |x| {
            ops::copysign_scalar::call(&x[0], Scalar::Float(-2.0))
        }),
        case("fmax", "broadcast", vec![r.distinct(&[2, 3]), r.any(&[3])], |x| ops::fmax::call(&x[0], &x[1])),
        case("fmin", "broadcast", vec![r.distinct(&[2, 3]), r.any(&[3])], |x| ops::fmin::call(&x[0], &x[1])),
        case("xlogy.Tensor", "broadcast", vec![r.any(&[2, 3]), r.pos(&[3])], |x| ops::xlogy::call(&x[0], &x[1])),
        case("xlogy.Scalar_Other", "", vec![r.any(&[2, 3])], |x| {
            ops::xlogy_scalar_other::call(&x[0], Scalar::Float(2.5))
        }),
        case("xlogy.Scalar_Self", "", vec![r.pos(&[2, 3])], |x| {
            ops::xlogy_scalar_self::call(Scalar::Float(1.5), &x[0])
        }),
        case("log_sigmoid", "", vec![r.any(&[2, 3])], |x| ops::log_sigmoid::call(&x[0])),
        // clamp_min/clamp_max: bounds away from the inputs (no ties).
        case("clamp_min", "", vec![r.away_from_zero(&[2, 3])], |x| ops::clamp_min::call(&x[0], Scalar::Float(0.1))),
        case("clamp_min.Tensor", "broadcast", vec![r.distinct(&[2, 3]), r.any(&[3])], |x| {
            ops::clamp_min_tensor::call(&x[0], &x[1])
        }),
        case("clamp_max", "in-place", vec![r.away_from_zero(&[2, 3])], |x| {
            ops::clamp_max_::call(&fresh(&x[0])?, Scalar::Float(-0.1))
        }),
        case("clamp_max.Tensor", "broadcast", vec![r.distinct(&[2, 3]), r.any(&[2, 1])], |x| {
            ops::clamp_max_tensor::call(&x[0], &x[1])
        }),
        case("_div_trunc", "", vec![num(), den()], |x| ops::_div_trunc::call(&x[0], &x[1])),
        case("_div_trunc.Scalar", "", vec![num()], |x| ops::_div_trunc_scalar::call(&x[0], Scalar::Float(0.7))),
    ]
}
