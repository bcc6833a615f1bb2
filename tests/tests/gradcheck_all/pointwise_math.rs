//! Cases for the special functions, `atan2 hypot logaddexp`, `lerp`, `addcmul`/`addcdiv` and
//! the hard activations. Inputs stay inside each function's domain (`erfinv`, `asin`, `acos`,
//! `atanh` in (-1, 1), `acosh` above 1, `log1p` above -1) and away from the kinks of `hardswish`/`hardsigmoid` at ±3.

use super::{case, fresh, leaf, Case, Rng};
use oxten::ops;
use oxten::Scalar;

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    // Values on both sides of ±3, none near them.
    let hard = || leaf(vec![-4.5, -2.5, -1.0, 0.4, 2.2, 3.8], &[2, 3]);
    let inside = || leaf(vec![-0.8, -0.3, 0.1, 0.45, 0.7, 0.9], &[2, 3]);
    let half = Scalar::Float(0.5);
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
        case("erf", "transposed", vec![r.transposed(&[2, 3])], |x| ops::erf::call(&x[0])),
        case("erfinv", "", vec![inside()], |x| ops::erfinv::call(&x[0])),
        case("atan2", "broadcast", vec![r.any(&[2, 3]), r.away_from_zero(&[3])], |x| ops::atan2::call(&x[0], &x[1])),
        case("atan2", "in-place", vec![r.any(&[2, 3]), r.away_from_zero(&[2, 3])], |x| {
            ops::atan2_::call(&fresh(&x[0])?, &x[1])
        }),
        case("hypot", "broadcast", vec![r.away_from_zero(&[2, 3]), r.away_from_zero(&[2, 1])], |x| {
            ops::hypot::call(&x[0], &x[1])
        }),
        case("logaddexp", "broadcast", vec![r.any(&[2, 3]), r.any(&[3])], |x| ops::logaddexp::call(&x[0], &x[1])),
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
    ]
}
