//! Cases for the matrix-product entries: `bmm`, `addmm` (with its scalars, a broadcast bias and
//! the in-place variant), `dot` and `mv`, on contiguous and transposed operands.

use super::{case, fresh, Case, Rng};
use oxten::options::*;
use oxten::{Scalar, Tensor};

/// The transpose of the last two dims of a leaf of shape `[b, cols, rows]`: a non-contiguous
/// `[b, rows, cols]` operand.
fn mt(x: &Tensor) -> oxten::Result<Tensor> {
    x.try_transpose(1, 2)
}

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    let scaled = |beta: f64, alpha: f64| AddmmOpts { beta: Scalar::Float(beta), alpha: Scalar::Float(alpha) };
    vec![
        // ---- bmm ----
        case("bmm", "", vec![r.any(&[2, 2, 3]), r.any(&[2, 3, 4])], |x| x[0].try_bmm(&x[1])),
        case("bmm", "transposed operands", vec![r.any(&[3, 3, 2]), r.any(&[3, 4, 3])], |x| {
            mt(&x[0])?.try_bmm(&mt(&x[1])?)
        }),
        case("bmm", "same input twice", vec![r.any(&[2, 3, 3])], |x| x[0].try_bmm(&x[0])),
        // ---- addmm ----
        case("addmm", "", vec![r.any(&[2, 4]), r.any(&[2, 3]), r.any(&[3, 4])], |x| x[0].try_addmm(&x[1], &x[2])),
        case("addmm", "beta, alpha, broadcast bias", vec![r.any(&[4]), r.any(&[2, 3]), r.any(&[3, 4])], move |x| {
            x[0].try_addmm_with(&x[1], &x[2], scaled(0.5, -1.5))
        }),
        case("addmm", "beta = 0", vec![r.any(&[2, 1]), r.any(&[2, 3]), r.any(&[3, 4])], move |x| {
            x[0].try_addmm_with(&x[1], &x[2], scaled(0.0, 2.0))
        }),
        case("addmm", "x @ w.t() + b, as a linear layer", vec![r.any(&[3]), r.any(&[2, 4]), r.any(&[3, 4])], |x| {
            x[0].try_addmm(&x[1], &x[2].try_t()?)
        }),
        case("addmm", "column-major mat1", vec![r.any(&[2, 4]), r.transposed(&[2, 3]), r.any(&[3, 4])], move |x| {
            x[0].try_addmm_with(&x[1], &x[2], scaled(1.0, 0.75))
        }),
        case("addmm", "in-place", vec![r.any(&[2, 4]), r.any(&[2, 3]), r.any(&[3, 4])], move |x| {
            fresh(&x[0])?.try_addmm_with_(
                &x[1],
                &x[2],
                AddmmInplaceOpts { beta: Scalar::Float(2.0), alpha: Scalar::Int(3) },
            )
        }),
        // ---- dot ----
        case("dot", "", vec![r.any(&[5]), r.any(&[5])], |x| x[0].try_dot(&x[1])),
        case("dot", "strided", vec![r.any(&[6]), r.any(&[3, 2])], |x| {
            let every_other = x[0].try_slice(0, Some(0), None, 2)?;
            every_other.try_dot(&x[1].try_select(1, 0)?)
        }),
        case("dot", "same input twice", vec![r.any(&[4])], |x| x[0].try_dot(&x[0])),
        // ---- mv ----
        case("mv", "", vec![r.any(&[3, 4]), r.any(&[4])], |x| x[0].try_mv(&x[1])),
        case("mv", "transposed matrix", vec![r.transposed(&[3, 4]), r.any(&[4])], |x| x[0].try_mv(&x[1])),
        // ---- matmul's reshape ----
        case("_unsafe_view", "", vec![r.any(&[2, 6])], |x| {
            oxten::try__unsafe_view(&x[0].try_mul_scalar(2.0)?, &[3, 2, 2])
        }),
    ]
}
