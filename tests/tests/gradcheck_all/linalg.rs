//! Cases for the matrix-product entries: `bmm`, `addmm` (with its scalars, a broadcast bias and
//! the in-place variant), `dot` and `mv`, on contiguous and transposed operands; the LU and
//! Cholesky factorizations and the triangular solves, on matrices built to be well conditioned
//! (a dominant diagonal, `X Xᵀ + 3 I`) inside the checked function.

use super::{case, fresh, Case, Rng};
use oxten::options::*;
use oxten::{ops, Scalar, Tensor};

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
        // ---- factorizations and triangular solves ----
        case("linalg_lu_factor_ex", "square", vec![r.any(&[3, 3])], |x| lu(&x[0])),
        case("linalg_lu_factor_ex", "wide, batched", vec![r.any(&[2, 3, 5])], |x| lu(&x[0])),
        case("linalg_lu_factor_ex", "tall", vec![r.any(&[5, 3])], |x| lu(&x[0])),
        case("linalg_lu_factor_ex", "transposed", vec![r.transposed(&[4, 4])], |x| lu(&x[0])),
        case("linalg_solve_triangular", "lower, left", vec![r.any(&[3, 3]), r.any(&[3, 2])], |x| {
            ops::linalg_solve_triangular::call(&dominant(&x[0])?, &x[1], false, true, false)
        }),
        case("linalg_solve_triangular", "upper, right, unit diagonal", vec![r.any(&[3, 3]), r.any(&[2, 3])], |x| {
            ops::linalg_solve_triangular::call(&x[0], &x[1], true, false, true)
        }),
        case(
            "linalg_solve_triangular",
            "upper, left, broadcast batches",
            vec![r.any(&[2, 1, 3, 3]), r.any(&[4, 3, 2])],
            |x| ops::linalg_solve_triangular::call(&dominant(&x[0])?, &x[1], true, true, false),
        ),
        case("linalg_cholesky_ex", "lower", vec![r.any(&[3, 3])], |x| {
            Ok(ops::linalg_cholesky_ex::call(&spd(&x[0])?, false, false)?.0)
        }),
        case("linalg_cholesky_ex", "upper, batched", vec![r.any(&[2, 3, 3])], |x| {
            Ok(ops::linalg_cholesky_ex::call(&spd(&x[0])?, true, false)?.0)
        }),
        case("cholesky_solve", "lower factor", vec![r.any(&[3, 2]), r.any(&[3, 3])], |x| {
            ops::cholesky_solve::call(&x[0], &factor(&x[1], false)?, false)
        }),
        case("cholesky_solve", "upper factor, broadcast batches", vec![r.any(&[2, 3, 2]), r.any(&[3, 3])], |x| {
            ops::cholesky_solve::call(&x[0], &factor(&x[1], true)?, true)
        }),
        case("cholesky_inverse", "lower factor", vec![r.any(&[3, 3])], |x| {
            ops::cholesky_inverse::call(&factor(&x[0], false)?, false)
        }),
        case("cholesky_inverse", "upper factor", vec![r.any(&[2, 3, 3])], |x| {
            ops::cholesky_inverse::call(&factor(&x[0], true)?, true)
        }),
        // ---- QR, eigen- and singular value decompositions (gauge-free functions of the factors) ----
        case("linalg_qr", "tall", vec![r.any(&[5, 3])], |x| qr(&x[0], "reduced")),
        case("linalg_qr", "wide, batched", vec![r.any(&[2, 3, 5])], |x| qr(&x[0], "reduced")),
        case("linalg_qr", "complete, square, transposed", vec![r.transposed(&[3, 3])], |x| qr(&x[0], "complete")),
        case("_linalg_eigh", "lower", vec![r.any(&[3, 3])], |x| eigh(&x[0], "L")),
        case("_linalg_eigh", "upper, batched", vec![r.any(&[2, 4, 4])], |x| eigh(&x[0], "U")),
        case("_linalg_svd", "tall", vec![r.any(&[4, 3])], |x| svd(&x[0], false)),
        case("_linalg_svd", "wide, batched", vec![r.any(&[2, 3, 5])], |x| svd(&x[0], false)),
        case("_linalg_svd", "full matrices, square", vec![r.any(&[3, 3])], |x| svd(&x[0], true)),
        case("_linalg_svd", "full matrices, tall", vec![r.any(&[4, 2])], |x| svd(&x[0], true)),
        case("linalg_pinv.atol_rtol_tensor", "tall", vec![r.any(&[4, 3])], |x| {
            ops::linalg_pinv_atol_rtol_tensor::call(&x[0], None, None, false)
        }),
        case("linalg_pinv.atol_rtol_tensor", "wide, batched", vec![r.any(&[2, 2, 3])], |x| {
            ops::linalg_pinv_atol_rtol_tensor::call(&x[0], None, None, false)
        }),
        case("_linalg_det", "", vec![r.any(&[3, 3])], |x| Ok(ops::_linalg_det::call(&x[0])?.0)),
        case("_linalg_det", "batched", vec![r.any(&[2, 4, 4])], |x| Ok(ops::_linalg_det::call(&x[0])?.0)),
        case("_linalg_det", "transposed", vec![r.transposed(&[4, 4])], |x| Ok(ops::_linalg_det::call(&x[0])?.0)),
        case("linalg_lstsq", "tall, matrix right-hand side", vec![r.any(&[5, 3]), r.any(&[5, 2])], |x| {
            Ok(ops::linalg_lstsq::call(&x[0], &x[1], None, None)?.0)
        }),
        case("linalg_lstsq", "residuals ('gelsd'), batched", vec![r.any(&[2, 5, 3]), r.any(&[2, 5, 2])], |x| {
            Ok(ops::linalg_lstsq::call(&x[0], &x[1], None, Some("gelsd"))?.1)
        }),
        case("linalg_lstsq", "wide, batched, vector right-hand side", vec![r.any(&[2, 2, 4]), r.any(&[2, 2])], |x| {
            Ok(ops::linalg_lstsq::call(&x[0], &x[1], None, Some("gelsd"))?.0)
        }),
        case("linalg_matrix_exp", "", vec![r.any(&[3, 3])], |x| ops::linalg_matrix_exp::call(&x[0])),
        // Norms above one (scaled and squared), different per matrix.
        case("linalg_matrix_exp", "batched, squared", vec![r.any(&[2, 3, 3])], |x| {
            let scale = Tensor::from_vec(vec![4.0f64, 0.5], &[2, 1, 1])?;
            ops::linalg_matrix_exp::call(&x[0].try_mul(&scale)?)
        }),
        case("linalg_matrix_exp", "transposed", vec![r.transposed(&[4, 4])], |x| ops::linalg_matrix_exp::call(&x[0])),
        case("linalg_pinv.atol_rtol_tensor", "hermitian", vec![r.any(&[3, 3])], |x| {
            let sym = x[0].try_add(&x[0].try_transpose(-2, -1)?)?;
            ops::linalg_pinv_atol_rtol_tensor::call(&sym, None, None, true)
        }),
    ]
}

/// `Q` and `R`, flattened and joined.
fn qr(a: &Tensor, mode: &str) -> oxten::Result<Tensor> {
    let (q, r) = ops::linalg_qr::call(a, mode)?;
    oxten::try_cat(&[q.try_flatten(0)?, r.try_flatten(0)?], 0)
}

/// The eigenvalues and the eigenvectors' magnitudes (their signs are arbitrary) of `a + aᵀ`.
fn eigh(a: &Tensor, uplo: &str) -> oxten::Result<Tensor> {
    let sym = a.try_add(&a.try_transpose(-2, -1)?)?;
    let (l, v) = ops::_linalg_eigh::call(&sym, uplo, true)?;
    oxten::try_cat(&[l.try_flatten(0)?, v.try_abs()?.try_flatten(0)?], 0)
}

/// `U Vᵀ`, `S` and the singular vectors' magnitudes: functions of the factors that do not
/// depend on the signs picked.
fn svd(a: &Tensor, full: bool) -> oxten::Result<Tensor> {
    let (u, s, vh) = ops::_linalg_svd::call(a, full, true)?;
    // The full factors' extra columns are any orthonormal completion: only the first k count.
    let k = s.size(-1)?;
    let (u, vh) = (ops::narrow::call(&u, -1, 0, k)?, ops::narrow::call(&vh, -2, 0, k)?);
    let u_vh = u.try_matmul(&vh)?;
    let parts = [u_vh.try_flatten(0)?, s.try_flatten(0)?, u.try_abs()?.try_flatten(0)?, vh.try_abs()?.try_flatten(0)?];
    oxten::try_cat(&parts, 0)
}

/// The packed LU factors of `a`.
fn lu(a: &Tensor) -> oxten::Result<Tensor> {
    Ok(ops::linalg_lu_factor_ex::call(a, true, false)?.0)
}

/// `a + 4 I`: a triangle of it is far from singular.
fn dominant(a: &Tensor) -> oxten::Result<Tensor> {
    let n = a.size(-1)?;
    a.try_add(&oxten::try_eye(n)?.try_mul_scalar(4.0)?.try_to_dtype(a.dtype())?)
}

/// `a aᵀ + 3 I`: symmetric positive-definite.
fn spd(a: &Tensor) -> oxten::Result<Tensor> {
    let n = a.size(-1)?;
    a.try_matmul(&a.try_transpose(-2, -1)?)?.try_add(&oxten::try_eye(n)?.try_mul_scalar(3.0)?.try_to_dtype(a.dtype())?)
}

/// A Cholesky factor made of `a`'s lower (or upper) triangle with a dominant diagonal: the
/// factors' gradients are over the whole matrix, so the leaf's other triangle must not be read.
fn factor(a: &Tensor, upper: bool) -> oxten::Result<Tensor> {
    let t = if upper { a.try_triu()? } else { a.try_tril()? };
    dominant(&t)
}
