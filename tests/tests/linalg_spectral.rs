//! The QR, symmetric eigen- and singular value decompositions and what is built on them (rank,
//! pseudo-inverse, matrix norms, condition numbers), beyond PyTorch's OpInfo samples (which
//! `opinfo_samples` replays): PyTorch's values for fixed matrices (printed by PyTorch 2.15,
//! float64), the identities the factors must satisfy on larger and batched matrices
//! (`Q R = A`, `QᵀQ = I`, `A V = V diag(L)`, `U diag(S) Vᵀ = A`), rank-deficient, zero and empty
//! matrices, non-finite input and bad arguments; and the matrix exponential and the LDLᵀ
//! factorization.

// PyTorch's values are pasted as it prints them (17 digits).
#![allow(clippy::excessive_precision)]

use oxten::{ops, DType, Tensor};
use oxten_tests::matrices::seeded;

fn t64(rows: &[&[f64]]) -> Tensor {
    let n = rows[0].len() as i64;
    let v: Vec<f64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    Tensor::from_vec(v, &[rows.len() as i64, n]).unwrap()
}

fn max_abs(t: &Tensor) -> f64 {
    if t.numel() == 0 {
        return 0.0;
    }
    ops::amax::call(&t.try_abs().unwrap(), &[], false).unwrap().try_to_dtype(DType::F64).unwrap().item::<f64>().unwrap()
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.sizes(), b.sizes());
    max_abs(&a.try_sub(b).unwrap())
}

fn mt(x: &Tensor) -> Tensor {
    x.try_transpose(-2, -1).unwrap()
}

fn mm(a: &Tensor, b: &Tensor) -> Tensor {
    a.try_matmul(b).unwrap()
}

/// `QᵀQ - I` (the columns' departure from orthonormality).
fn orthonormality_error(q: &Tensor) -> f64 {
    let k = q.size(-1).unwrap();
    max_abs_diff(&mm(&mt(q), q), &oxten::eye(k).to_dtype(q.dtype()).try_expand(&mm(&mt(q), q).sizes()).unwrap())
}

fn err(r: oxten::Result<impl std::fmt::Debug>) -> String {
    r.expect_err("expected an error").to_string()
}

/// The 4 x 3 matrix of the fixed-value tests.
fn a43() -> Tensor {
    t64(&[&[2., -1., 0.5], &[1., 3., -2.], &[0.25, 4., 1.], &[-1., 0., 2.]])
}

#[test]
fn qr_matches_pytorch_signs_and_values() {
    let (q, r) = oxten::linalg_qr(&a43());
    let q_want = t64(&[
        &[-0.81227693210689522, 0.32972286864469519, -0.46347474015070739],
        &[-0.40613846605344761, -0.53042374521103142, 0.49039317939131055],
        &[-0.10153461651336190, -0.77822788872660986, -0.48366356958115975],
        &[0.40613846605344761, -0.06553498010329345, -0.55747219330539421],
    ]);
    let r_want = t64(&[
        &[-2.46221445044902598, -0.81227693210689522, 1.11688078164698101],
        &[0.0, -5.03390565918422972, 0.31641107581121330],
        &[0.0, 0.0, -2.81113168504992261],
    ]);
    assert!(max_abs_diff(&q, &q_want) < 1e-14);
    assert!(max_abs_diff(&r, &r_want) < 1e-14);
    // Wide: R is 3 x 4.
    let (q, r) = oxten::linalg_qr(&mt(&a43()));
    assert_eq!((q.sizes().to_vec(), r.sizes().to_vec()), (vec![3, 3], vec![3, 4]));
    assert!(
        (r.try_select(1, 3).unwrap().try_select(0, 2).unwrap().item::<f64>().unwrap() - 1.61935238854098129).abs()
            < 1e-14
    );
    // Complete and R-only modes.
    let (q, r) = ops::linalg_qr::call(&a43(), "complete").unwrap();
    assert_eq!((q.sizes().to_vec(), r.sizes().to_vec()), (vec![4, 4], vec![4, 3]));
    assert!(orthonormality_error(&q) < 1e-14);
    assert!(max_abs_diff(&mm(&q, &r), &a43()) < 1e-14);
    let (q, r) = ops::linalg_qr::call(&a43(), "r").unwrap();
    assert_eq!((q.sizes().to_vec(), r.sizes().to_vec()), (vec![0], vec![3, 3]));
    // The deprecated `qr(some=False)` is the complete mode.
    assert_eq!(ops::qr::call(&a43(), false).unwrap().0.sizes().to_vec(), vec![4, 4]);
}

#[test]
fn qr_factors_reassemble_batches() {
    for (seed, shape) in [vec![2, 40, 25], vec![3, 10, 30], vec![64, 64], vec![1, 1]].into_iter().enumerate() {
        let a = seeded(&shape, seed as u64);
        let (q, r) = oxten::linalg_qr(&a);
        assert!(orthonormality_error(&q) < 1e-13, "{shape:?}");
        assert!(max_abs_diff(&ops::triu::call(&r, 0).unwrap(), &r) == 0.0);
        assert!(max_abs_diff(&mm(&q, &r), &a) < 1e-13, "{shape:?}");
    }
    // A zero column: the reflector is the identity (LAPACK's `tau = 0`).
    let z = t64(&[&[0., 1.], &[0., 2.]]);
    let (q, r) = oxten::linalg_qr(&z);
    assert!(max_abs_diff(&mm(&q, &r), &z) < 1e-15);
    // Empty: a complete Q is the identity.
    let (q, r) = ops::linalg_qr::call(&oxten::zeros(&[3, 0]).to_dtype(DType::F64), "complete").unwrap();
    assert_eq!(max_abs_diff(&q, &oxten::eye(3).to_dtype(DType::F64)), 0.0);
    assert_eq!(r.sizes().to_vec(), vec![3, 0]);
}

#[test]
fn eigh_matches_pytorch_and_diagonalizes() {
    let s = t64(&[&[4., 1., -2.], &[1., 2., 0.], &[-2., 0., 3.]]);
    let l = oxten::linalg_eigvalsh(&s);
    let want = Tensor::from_vec(vec![0.99999999999999933, 2.26794919243112281, 5.73205080756887675], &[3]).unwrap();
    assert!(max_abs_diff(&l, &want) < 1e-14);
    for (seed, n) in [(1u64, 1i64), (2, 5), (3, 40)] {
        let x = seeded(&[2, n, n], seed);
        let a = x.try_add(&mt(&x)).unwrap();
        let (l, v) = oxten::linalg_eigh(&a);
        assert!(orthonormality_error(&v) < 1e-13);
        let av = mm(&a, &v);
        let vl = v.try_mul(&l.try_unsqueeze(-2).unwrap()).unwrap();
        assert!(max_abs_diff(&av, &vl) < 1e-12, "n = {n}");
        // Ascending.
        let d = ops::diff::call(&l, 1, -1, None, None).unwrap();
        assert!(max_abs(&d.try_clamp_max(0.0).unwrap()) == 0.0);
    }
    // UPLO picks the triangle read: the other may hold anything.
    let lower = t64(&[&[2., 99.], &[1., 2.]]);
    let upper = t64(&[&[2., 1.], &[-7., 2.]]);
    let want = Tensor::from_vec(vec![1.0, 3.0], &[2]).unwrap();
    assert!(max_abs_diff(&oxten::linalg_eigvalsh(&lower), &want) < 1e-15);
    assert!(max_abs_diff(&ops::linalg_eigvalsh::call(&upper, "U").unwrap(), &want) < 1e-15);
    // A zero matrix: zero eigenvalues, the identity as eigenvectors (as LAPACK).
    let (l, v) = oxten::linalg_eigh(&oxten::zeros(&[2, 2]));
    assert_eq!(l.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
    assert_eq!(v.to_vec::<f32>().unwrap(), vec![1.0, 0.0, 0.0, 1.0]);
    // NaN in the triangle read gives NaNs (PyTorch does not raise); in the other, nothing.
    let nan = t64(&[&[1., 2.], &[f64::NAN, 3.]]);
    assert!(oxten::linalg_eigvalsh(&nan).to_vec::<f64>().unwrap().iter().all(|x| x.is_nan()));
    assert!(ops::linalg_eigvalsh::call(&nan, "U").unwrap().to_vec::<f64>().unwrap().iter().all(|x| x.is_finite()));
}

#[test]
fn svd_matches_pytorch_and_reassembles() {
    let s = oxten::linalg_svdvals(&a43());
    let want = Tensor::from_vec(vec![5.16179116386127923, 3.19411620089926274, 2.11329923953908461], &[3]).unwrap();
    assert!(max_abs_diff(&s, &want) < 1e-14);
    for (seed, shape) in [vec![2, 30, 12], vec![3, 7, 19], vec![50, 50], vec![1, 4], vec![4, 1]].into_iter().enumerate()
    {
        let a = seeded(&shape, seed as u64 + 10);
        for full in [false, true] {
            let (u, s, vh) = ops::linalg_svd::call(&a, full, None).unwrap();
            let (m, n) = (shape[shape.len() - 2], shape[shape.len() - 1]);
            let k = m.min(n);
            let (uc, vr) = if full { (m, n) } else { (k, k) };
            assert_eq!(u.size(-1).unwrap(), uc);
            assert_eq!(vh.size(-2).unwrap(), vr);
            assert!(orthonormality_error(&u) < 1e-13, "{shape:?} full={full}");
            assert!(orthonormality_error(&mt(&vh)) < 1e-13, "{shape:?} full={full}");
            let u_k = ops::narrow::call(&u, -1, 0, k).unwrap();
            let vh_k = ops::narrow::call(&vh, -2, 0, k).unwrap();
            let back = mm(&u_k.try_mul(&s.try_unsqueeze(-2).unwrap()).unwrap(), &vh_k);
            assert!(max_abs_diff(&back, &a) < 1e-13, "{shape:?} full={full}");
        }
    }
}

#[test]
fn svd_of_rank_deficient_zero_and_empty_matrices() {
    // Rank 1: one nonzero singular value, and orthonormal factors all the same.
    let r1 = t64(&[&[1., 2., 3.], &[2., 4., 6.], &[-1., -2., -3.], &[0., 0., 0.]]);
    let (u, s, vh) = ops::linalg_svd::call(&r1, true, None).unwrap();
    let sv = s.to_vec::<f64>().unwrap();
    assert!((sv[0] - (14.0f64 * 6.0).sqrt()).abs() < 1e-13 && sv[1].abs() < 1e-14 && sv[2].abs() < 1e-14);
    assert!(orthonormality_error(&u) < 1e-14 && orthonormality_error(&vh) < 1e-14);
    // Zero: LAPACK's identities.
    let (u, s, vh) = oxten::linalg_svd(&oxten::zeros(&[3, 2]));
    assert_eq!(u.to_vec::<f32>().unwrap(), oxten::eye(3).to_vec::<f32>().unwrap());
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
    assert_eq!(vh.to_vec::<f32>().unwrap(), oxten::eye(2).to_vec::<f32>().unwrap());
    // Empty: U is 0 x 0, Vh the identity.
    let (u, s, vh) = oxten::linalg_svd(&oxten::zeros(&[0, 2]));
    assert_eq!((u.sizes().to_vec(), s.sizes().to_vec()), (vec![0, 0], vec![0]));
    assert_eq!(vh.to_vec::<f32>().unwrap(), oxten::eye(2).to_vec::<f32>().unwrap());
    // The deprecated `svd` returns V; without the vectors, zero m x m and n x n.
    let (u, s, v) = ops::svd::call(&a43(), true, true).unwrap();
    assert!(max_abs_diff(&mm(&u.try_mul(&s.try_unsqueeze(0).unwrap()).unwrap(), &mt(&v)), &a43()) < 1e-13);
    let (u, _, v) = ops::svd::call(&a43(), true, false).unwrap();
    assert_eq!((u.sizes().to_vec(), v.sizes().to_vec()), (vec![4, 4], vec![3, 3]));
    assert_eq!(max_abs(&u) + max_abs(&v), 0.0);
}

#[test]
fn svd_of_non_finite_input_follows_pytorch() {
    let nan = t64(&[&[1., f64::NAN], &[2., 3.]]);
    let e = err(ops::linalg_svd::call(&nan, true, None));
    assert!(
        e.ends_with(
            "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values."
        ),
        "{e}"
    );
    let e = err(ops::linalg_svdvals::call(&nan.try_expand(&[2, 2, 2]).unwrap(), None));
    assert!(e.contains("linalg.svd: (Batch element 0): The algorithm failed"), "{e}");
    let inf = t64(&[&[1., f64::INFINITY], &[1., 1.]]);
    assert!(oxten::linalg_svdvals(&inf).to_vec::<f64>().unwrap().iter().all(|x| x.is_nan()));
}

#[test]
fn rank_pinv_norms_and_cond_match_pytorch() {
    let a = a43();
    let pinv_want = t64(&[
        &[0.42287347001814740, 0.05467392563419429, 0.06471292327889115, -0.08340090350978792],
        &[-0.05513726398702650, 0.09440518938955167, 0.16541179196107952, 0.02548360940576856],
        &[0.16487123054944208, -0.17444688984130660, 0.17205297501834049, 0.19830881501216260],
    ]);
    assert!(max_abs_diff(&ops::linalg_pinv_atol_rtol_tensor::call(&a, None, None, false).unwrap(), &pinv_want) < 1e-14);
    assert!(max_abs_diff(&ops::pinverse::call(&a, 1e-15).unwrap(), &pinv_want) < 1e-14);
    let norm = |ord: f64| ops::linalg_matrix_norm::call(&a, oxten::Scalar::Float(ord), &[-2, -1], false, None).unwrap();
    let close = |t: Tensor, want: f64| (t.item::<f64>().unwrap() - want).abs() < 1e-12 * want.abs().max(1.0);
    assert!(close(norm(2.0), 5.16179116386127923));
    assert!(close(norm(-2.0), 2.11329923953908461));
    assert!(close(norm(1.0), 8.0) && close(norm(f64::INFINITY), 6.0) && close(norm(-1.0), 4.25));
    let nuc = ops::linalg_matrix_norm_str_ord::call(&a, "nuc", &[-2, -1], false, None).unwrap();
    assert!(close(nuc, 10.46920660429962702));
    let s = t64(&[&[4., 1., -2.], &[1., 2., 0.], &[-2., 0., 3.]]);
    assert!(close(oxten::linalg_cond(&s), 5.73205080756887853));
    assert!(close(ops::linalg_cond::call(&s, Some(oxten::Scalar::Int(1))).unwrap(), 7.0));
    assert!(close(ops::linalg_cond_p_str::call(&s, "fro").unwrap(), 6.91152883009473928));
    assert!(close(ops::linalg_cond_p_str::call(&s, "nuc").unwrap(), 14.53846153846154365));
    let b = t64(&[&[1., 2., 3.], &[2., 4., 6.], &[1., 0., 1.]]);
    let rank = |atol: Option<f64>, hermitian: bool| {
        ops::linalg_matrix_rank_atol_rtol_float::call(&b, atol, None, hermitian).unwrap().item::<i64>().unwrap()
    };
    assert_eq!((rank(None, false), rank(Some(1.0), false), rank(None, true)), (2, 1, 3));
    // keepdim puts both reduced dimensions back.
    let x = seeded(&[2, 3, 4, 5], 3);
    let k = ops::linalg_matrix_norm::call(&x, oxten::Scalar::Float(2.0), &[3, 1], true, None).unwrap();
    assert_eq!(k.sizes().to_vec(), vec![2, 1, 4, 1]);
}

#[test]
fn bad_input_gets_pytorchs_errors() {
    let e = err(ops::linalg_qr::call(&a43(), "x"));
    assert!(
        e.ends_with("qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or 'complete'"),
        "{e}"
    );
    let e = err(ops::linalg_eigh::call(&a43(), "L"));
    assert!(e.ends_with("linalg.eigh: A must be batches of square matrices, but they are 4 by 3 matrices"), "{e}");
    let e = err(ops::linalg_eigh::call(&oxten::eye(2), "X"));
    assert!(e.ends_with("Expected UPLO argument to be 'L' or 'U', but got X"), "{e}");
    let e = err(ops::linalg_svd::call(&oxten::ones(&[3]), true, None));
    assert!(e.ends_with("linalg.svd: The input tensor A must have at least 2 dimensions."), "{e}");
    let e = err(ops::linalg_svdvals::call(&oxten::ones(&[2, 2]).to_dtype(DType::I64), None));
    assert!(e.ends_with("linalg.svd: Expected a floating point or complex tensor as input. Got Long"), "{e}");
    let e = err(ops::linalg_svd::call(&oxten::eye(2), true, Some("gesvd")));
    assert!(e.contains("`driver=` is only supported on CUDA inputs"), "{e}");
    let e = err(ops::linalg_matrix_norm::call(&a43(), oxten::Scalar::Float(3.0), &[-2, -1], false, None));
    assert!(e.ends_with("linalg.matrix_norm: Order 3 not supported."), "{e}");
    let e = err(ops::linalg_matrix_norm::call(&a43(), oxten::Scalar::Float(1.0), &[1, -1], false, None));
    assert!(e.ends_with("linalg.matrix_norm: dims must be different. Got (1, 1)"), "{e}");
    let e = err(ops::linalg_cond_p_str::call(&a43(), "fro"));
    assert!(e.contains("linalg.cond(ord=fro): A must be batches of square matrices"), "{e}");
    // Differentiating through a mode that does not compute Q.
    let x = a43().requires_grad_(true);
    let (_, r) = ops::linalg_qr::call(&x, "r").unwrap();
    let e = err(r.try_sum().unwrap().try_backward());
    assert!(e.contains("The derivative of linalg.qr depends on Q, which is not computed when mode='r'"), "{e}");
}

#[test]
fn geqrf_reflectors_rebuild_q_and_apply_it() {
    let a = seeded(&[2, 6, 4], 21);
    let (packed, tau) = ops::geqrf::call(&a).unwrap();
    assert_eq!(tau.sizes().to_vec(), vec![2, 4]);
    let (q, r) = oxten::linalg_qr(&a);
    // R is on and above the diagonal; the reflectors rebuild the same Q.
    assert!(max_abs_diff(&ops::triu::call(&packed, 0).unwrap().try_narrow(-2, 0, 4).unwrap(), &r) < 1e-14);
    let q2 = ops::linalg_householder_product::call(&packed, &tau).unwrap();
    assert!(max_abs_diff(&q2, &q) < 1e-14);
    assert!(max_abs_diff(&ops::orgqr::call(&packed, &tau).unwrap(), &q) < 1e-14);
    // ormqr: Q (6 x 6, complete) or its transpose, from the left or the right.
    let q_full = ops::linalg_qr::call(&a, "complete").unwrap().0;
    let c_left = seeded(&[2, 6, 3], 22);
    let c_right = seeded(&[2, 3, 6], 23);
    for (left, transpose) in [(true, false), (true, true), (false, false), (false, true)] {
        let c = if left { &c_left } else { &c_right };
        let got = ops::ormqr::call(&packed, &tau, c, left, transpose).unwrap();
        let q = if transpose { mt(&q_full) } else { q_full.clone() };
        let want = if left { mm(&q, c) } else { mm(c, &q) };
        assert!(max_abs_diff(&got, &want) < 1e-13, "left={left} transpose={transpose}");
    }
    let e = err(ops::linalg_householder_product::call(&seeded(&[2, 3], 1), &seeded(&[2], 2)));
    assert!(
        e.ends_with(
            "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]"
        ),
        "{e}"
    );
    let e = err(ops::geqrf::call(&seeded(&[3], 1)));
    assert!(e.ends_with("torch.geqrf: input must have at least 2 dimensions."), "{e}");
}

#[test]
fn lstsq_solves_and_reports_as_each_driver() {
    let a = seeded(&[3, 7, 4], 31);
    let b = seeded(&[3, 7, 2], 32);
    // Full rank: the normal equations' solution.
    let (x, residuals, rank, sv) = ops::linalg_lstsq::call(&a, &b, None, None).unwrap();
    let normal = oxten::linalg_solve(&mm(&mt(&a), &a), &mm(&mt(&a), &b));
    assert!(max_abs_diff(&x, &normal) < 1e-12);
    // 'gelsy' (the default): the rank, no residuals or singular values.
    assert_eq!(rank.to_vec::<i64>().unwrap(), vec![4, 4, 4]);
    assert_eq!((residuals.numel(), sv.numel()), (0, 0));
    let (x, residuals, _, sv) = ops::linalg_lstsq::call(&a, &b, None, Some("gelsd")).unwrap();
    let r = mm(&a, &x).try_sub(&b).unwrap();
    let want = ops::sum_dim_intlist::call(&r.try_mul(&r).unwrap(), Some(&[-2]), false, None).unwrap();
    assert!(max_abs_diff(&residuals, &want) < 1e-13);
    assert!(max_abs_diff(&sv, &oxten::linalg_svdvals(&a)) < 1e-14);
    // Rank-deficient: the minimum-norm solution (the pseudo-inverse's), no residuals.
    let col = seeded(&[5, 1], 33);
    let deficient = oxten::try_cat(&[col.clone(), col.try_mul_scalar(2.0).unwrap()], 1).unwrap();
    let rhs = seeded(&[5], 34);
    let (x, residuals, rank, _) = ops::linalg_lstsq::call(&deficient, &rhs, None, Some("gelsd")).unwrap();
    assert_eq!((rank.item::<i64>().unwrap(), residuals.numel()), (1, 0));
    let pinv = ops::linalg_pinv_atol_rtol_tensor::call(&deficient, None, None, false).unwrap();
    assert!(max_abs_diff(&x, &pinv.try_mv(&rhs).unwrap()) < 1e-14);
    let e = err(ops::linalg_lstsq::call(&a, &b, None, Some("x")));
    assert!(e.ends_with("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"), "{e}");
    let e = err(ops::linalg_lstsq::call(&a, &seeded(&[3, 6, 2], 1), None, None));
    assert!(e.ends_with("torch.linalg.lstsq: input.size(-2) should match other.size(-2)"), "{e}");
}

#[test]
fn det_gradient_at_a_singular_matrix_is_the_cofactor_matrix() {
    // Rank 2 (the second row is twice the first; LU makes the determinant exactly 0): the
    // inverse does not exist, the cofactor matrix (PyTorch's gradient) does.
    let a = t64(&[&[1., 2., 3.], &[2., 4., 6.], &[1., 0., 1.]]).requires_grad_(true);
    let det = oxten::linalg_det(&a);
    assert_eq!(det.item::<f64>().unwrap(), 0.0);
    det.try_backward().unwrap();
    let cofactors = t64(&[&[4., 4., -4.], &[-2., -2., 2.], &[0., 0., 0.]]);
    assert!(max_abs_diff(&a.grad().unwrap(), &cofactors) < 1e-13, "{:?}", a.grad().unwrap().to_vec::<f64>());
    // In a batch with an invertible matrix, each gets its own formula.
    let b = t64(&[&[1., 2.], &[2., 4.]]).try_unsqueeze(0).unwrap();
    let c = t64(&[&[2., 1.], &[1., 3.]]).try_unsqueeze(0).unwrap();
    let batch = oxten::try_cat(&[b, c], 0).unwrap().requires_grad_(true);
    oxten::linalg_det(&batch).try_sum().unwrap().try_backward().unwrap();
    let want = Tensor::from_vec(vec![4., -2., -2., 1., 3., -1., -1., 2.], &[2, 2, 2]).unwrap();
    assert!(max_abs_diff(&batch.grad().unwrap(), &want) < 1e-14);
}

#[test]
fn det_double_backward_stays_finite_beside_a_singular_matrix() {
    // The identity (all singular values equal) batched with a zero matrix: the SVD route is
    // taken for the zero one only, so the identity's second derivative has no 0 / 0.
    let batch = oxten::try_stack(&[oxten::eye(3).to_dtype(DType::F64), oxten::zeros(&[3, 3]).to_dtype(DType::F64)], 0)
        .unwrap()
        .requires_grad_(true);
    let det = oxten::linalg_det(&batch).try_sum().unwrap();
    let opts = oxten::autograd::GradOpts { create_graph: true, ..Default::default() };
    let g = oxten::autograd::grad_with(&[det], std::slice::from_ref(&batch), opts).unwrap()[0].clone().unwrap();
    // d det / dA at I is I; at 0 (rank 0) it is 0.
    let want =
        oxten::try_stack(&[oxten::eye(3).to_dtype(DType::F64), oxten::zeros(&[3, 3]).to_dtype(DType::F64)], 0).unwrap();
    assert!(max_abs_diff(&g.detach(), &want) < 1e-15);
    let h =
        oxten::autograd::grad_with(&[g.try_sum().unwrap()], &[batch], Default::default()).unwrap()[0].clone().unwrap();
    assert!(h.to_vec::<f64>().unwrap().iter().all(|x| x.is_finite()), "{:?}", h.to_vec::<f64>());
}

/// A random orthogonal `n x n` matrix (the `Q` of a seeded matrix's QR).
fn orthogonal(n: i64, seed: u64) -> Tensor {
    oxten::linalg_qr(&seeded(&[n, n], seed)).0
}

/// `Q diag(values) Pᵀ`.
fn with_spectrum(q: &Tensor, values: &[f64], p: &Tensor) -> Tensor {
    let d = Tensor::from_vec(values.to_vec(), &[values.len() as i64]).unwrap();
    mm(&q.try_mul(&d.try_unsqueeze(0).unwrap()).unwrap(), &mt(p))
}

#[test]
fn decompositions_of_hard_spectra_are_accurate_to_the_norm() {
    // Graded, repeated, clustered and zero singular values: each within a few ε of the norm.
    let spectra: [&[f64]; 4] = [
        &[1.0, 1e-3, 1e-6, 1e-9, 1e-12, 1e-15, 0.0],
        &[2.0, 2.0, 2.0, 0.5, 0.5, 0.0, 0.0],
        &[1.0, 1.0 - 1e-12, 1.0 - 2e-12, 1e-8, 1e-8, 1e-8, 1e-8],
        &[7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
    ];
    for (i, sigma) in spectra.iter().enumerate() {
        let (u0, v0) = (orthogonal(7, 40 + i as u64), orthogonal(7, 50 + i as u64));
        let a = with_spectrum(&u0, sigma, &v0);
        let (u, s, vh) = oxten::linalg_svd(&a);
        let want = Tensor::from_vec(sigma.to_vec(), &[7]).unwrap();
        assert!(max_abs_diff(&s, &want) < 1e-14 * sigma[0], "spectrum {i}: {:?}", s.to_vec::<f64>());
        assert!(orthonormality_error(&u) < 1e-14 && orthonormality_error(&mt(&vh)) < 1e-14, "spectrum {i}");
        assert!(max_abs_diff(&with_spectrum(&u, &s.to_vec::<f64>().unwrap(), &mt(&vh)), &a) < 1e-14 * sigma[0]);
        // The same spectra, symmetric with signs: the eigenvalues, ascending.
        let signed: Vec<f64> = sigma.iter().enumerate().map(|(j, x)| if j % 2 == 1 { -x } else { *x }).collect();
        let a = with_spectrum(&u0, &signed, &u0);
        let (l, v) = oxten::linalg_eigh(&a);
        let mut sorted = signed.clone();
        sorted.sort_by(f64::total_cmp);
        let want = Tensor::from_vec(sorted, &[7]).unwrap();
        assert!(max_abs_diff(&l, &want) < 1e-14 * sigma[0], "spectrum {i}: {:?}", l.to_vec::<f64>());
        assert!(orthonormality_error(&v) < 1e-14, "spectrum {i}");
        assert!(max_abs_diff(&mm(&a, &v), &v.try_mul(&l.try_unsqueeze(0).unwrap()).unwrap()) < 1e-14 * sigma[0]);
    }
    // Zeros on the bidiagonal's diagonal (the shift matrix: singular values 1, 1, 1, 0), a
    // zero column and a zero row: the rotations that chase them out.
    for a in [
        t64(&[&[0., 1., 0., 0.], &[0., 0., 1., 0.], &[0., 0., 0., 1.], &[0., 0., 0., 0.]]),
        t64(&[&[1., 0., 2.], &[3., 0., 4.], &[5., 0., 6.]]),
        t64(&[&[0., 0., 0.], &[1., 2., 3.], &[0., 0., 0.], &[4., 5., 6.]]),
    ] {
        let (u, s, vh) = ops::linalg_svd::call(&a, true, None).unwrap();
        assert!(orthonormality_error(&u) < 1e-15 && orthonormality_error(&mt(&vh)) < 1e-15);
        let k = s.size(0).unwrap();
        let u_k = ops::narrow::call(&u, 1, 0, k).unwrap();
        let back = mm(&u_k.try_mul(&s.try_unsqueeze(0).unwrap()).unwrap(), &ops::narrow::call(&vh, 0, 0, k).unwrap());
        assert!(max_abs_diff(&back, &a) < 1e-14);
        let mut sv = s.to_vec::<f64>().unwrap();
        let want = match a.size(0).unwrap() {
            4 if a.size(1).unwrap() == 4 => vec![1.0, 1.0, 1.0, 0.0],
            3 => {
                // The nonzero columns' 3 x 2 block [[1, 2], [3, 4], [5, 6]]: singular values
                // from its Gram matrix [[35, 44], [44, 56]].
                let (t, d) = (91.0f64, 35.0 * 56.0 - 44.0 * 44.0);
                let r = (t * t / 4.0 - d).sqrt();
                vec![(t / 2.0 + r).sqrt(), (t / 2.0 - r).sqrt(), 0.0]
            }
            _ => {
                let (t, d) = (14.0f64 + 77.0, 14.0 * 77.0 - 32.0 * 32.0);
                let r = (t * t / 4.0 - d).sqrt();
                vec![(t / 2.0 + r).sqrt(), (t / 2.0 - r).sqrt(), 0.0]
            }
        };
        sv.iter_mut().zip(&want).for_each(|(x, w)| *x -= w);
        assert!(sv.iter().all(|x| x.abs() < 1e-14), "{sv:?}");
    }
    // Entries near either end of the exponent range are scaled, not squared into inf or 0.
    let base = a43().to_vec::<f64>().unwrap();
    let svals = [5.16179116386127923, 3.19411620089926274, 2.11329923953908461];
    for scale in [1e300, 1e-300] {
        let a = Tensor::from_vec(base.iter().map(|x| x * scale).collect(), &[4, 3]).unwrap();
        let s = oxten::linalg_svdvals(&a).to_vec::<f64>().unwrap();
        assert!(s.iter().zip(svals).all(|(x, w)| (x / scale - w).abs() < 1e-14), "{s:?}");
        let sym = [4., 1., -2., 1., 2., 0., -2., 0., 3.].map(|x: f64| x * scale);
        let l = oxten::linalg_eigvalsh(&Tensor::from_vec(sym.to_vec(), &[3, 3]).unwrap()).to_vec::<f64>().unwrap();
        let want = [1.0, 2.26794919243112281, 5.73205080756887675];
        assert!(l.iter().zip(want).all(|(x, w)| (x / scale - w).abs() < 1e-14), "{l:?}");
    }
}

#[test]
fn matrix_exp_matches_pytorch_and_its_identities() {
    // PyTorch 2.15's values (float64).
    let a = t64(&[&[1., 2.], &[3., 4.]]);
    let want = t64(&[&[51.96895619870502969, 74.73656456700322792], &[112.10484685050488451, 164.07380304920985736]]);
    assert!(max_abs_diff(&oxten::linalg_matrix_exp(&a), &want) < 1e-12);
    let b = t64(&[&[-20., 3., 1.], &[0.5, -30., 2.], &[1., 1., 5.]]);
    let want_b = t64(&[
        &[0.31033296223565393, 0.24496183200933030, 7.66822944067312573],
        &[0.38284471980225249, 0.30219910791529242, 9.45997212367972296],
        &[6.64217619727103248, 5.24301268354090766, 164.12607627204326377],
    ]);
    assert!(max_abs_diff(&oxten::matrix_exp(&b), &want_b) < 1e-12);
    // A rotation generator gives the rotation; a nilpotent matrix its finite series.
    let theta = 2.5f64;
    let rot = oxten::linalg_matrix_exp(&t64(&[&[0., -theta], &[theta, 0.]]));
    let want = t64(&[&[theta.cos(), -theta.sin()], &[theta.sin(), theta.cos()]]);
    assert!(max_abs_diff(&rot, &want) < 1e-15);
    let nil = oxten::linalg_matrix_exp(&t64(&[&[0., 1., 2.], &[0., 0., 3.], &[0., 0., 0.]]));
    assert_eq!(nil.to_vec::<f64>().unwrap(), vec![1., 1., 3.5, 0., 1., 3., 0., 0., 1.]);
    // A batch whose matrices need different numbers of squarings: each as when alone.
    let x = seeded(&[3, 4, 4], 7);
    let scale = Tensor::from_vec(vec![0.1f64, 8.0, 40.0], &[3, 1, 1]).unwrap();
    let batch = x.try_mul(&scale).unwrap();
    let e = oxten::linalg_matrix_exp(&batch);
    for i in 0..3 {
        let alone = oxten::linalg_matrix_exp(&batch.try_select(0, i).unwrap());
        assert_eq!(e.try_select(0, i).unwrap().to_vec::<f64>().unwrap(), alone.to_vec::<f64>().unwrap());
    }
    // exp(A) commutes with A (to rounding relative to the sizes of both), and exp(A) exp(-A) = I
    // where the norms are moderate.
    for i in 0..3 {
        let (a_i, e_i) = (batch.try_select(0, i).unwrap(), e.try_select(0, i).unwrap());
        let commutator = max_abs_diff(&mm(&a_i, &e_i), &mm(&e_i, &a_i));
        assert!(commutator < 1e-14 * 4.0 * max_abs(&a_i) * max_abs(&e_i), "{i}: {commutator}");
    }
    let moderate = batch.try_select(0, 0).unwrap();
    let product = mm(&oxten::linalg_matrix_exp(&moderate), &oxten::linalg_matrix_exp(&moderate.try_neg().unwrap()));
    assert!(max_abs_diff(&product, &oxten::eye(4).to_dtype(DType::F64)) < 1e-14);
    // f32, f16 and bf16 (computed in f64 and rounded; PyTorch 2.15 gives ±inf in f16 and bf16).
    for (dtype, tol) in [(DType::F32, 1e-5), (DType::F16, 1e-3), (DType::BF16, 1e-2)] {
        let got = oxten::linalg_matrix_exp(&a.to_dtype(dtype)).to_dtype(DType::F64);
        let exact = oxten::linalg_matrix_exp(&a);
        assert!(max_abs_diff(&got.try_div(&exact).unwrap(), &oxten::ones(&[2, 2]).to_dtype(DType::F64)) < tol);
    }
    // Empty batches and 1 x 1 matrices (an infinity stays one, as PyTorch's).
    assert_eq!(oxten::linalg_matrix_exp(&oxten::zeros(&[0, 3, 3])).sizes().to_vec(), vec![0, 3, 3]);
    let inf = Tensor::from_vec(vec![f64::INFINITY], &[1, 1]).unwrap();
    assert_eq!(oxten::linalg_matrix_exp(&inf).to_vec::<f64>().unwrap(), vec![f64::INFINITY]);
    // PyTorch's errors.
    let e = err(ops::linalg_matrix_exp::call(&Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2]).unwrap()));
    assert!(e.ends_with("linalg.matrix_exp: Expected a floating point or complex tensor as input. Got Long"), "{e}");
    let e = err(ops::linalg_matrix_exp::call(&oxten::ones(&[2, 3])));
    assert!(
        e.ends_with("linalg.matrix_exp: A must be batches of square matrices, but they are 2 by 3 matrices"),
        "{e}"
    );
    let e = err(ops::matrix_exp::call(&oxten::ones(&[3])));
    assert!(e.ends_with("linalg.matrix_exp: The input tensor A must have at least 2 dimensions."), "{e}");
}

#[test]
fn ldl_factor_and_solve_match_pytorch() {
    // PyTorch 2.15's factors (1 x 1 pivots, then a 2 x 2 block with an interchange) and solve.
    let a = t64(&[&[4., 1., -2., 0.5], &[1., -3., 0., 2.], &[-2., 0., 0.01, 1.], &[0.5, 2., 1., -1.]]);
    let (ld, pivots) = oxten::linalg_ldl_factor(&a);
    let want = t64(&[
        &[4., 0., 0., 0.],
        &[0.25, -3.25, 0., 0.],
        &[-0.5, -0.15384615384615385, -0.91307692307692312, 0.],
        &[0.125, -0.57692307692307698, 1.53846153846153855, 0.01923076923076938],
    ]);
    assert!(max_abs_diff(&ld, &want) < 1e-15);
    assert_eq!(pivots.to_vec::<i32>().unwrap(), vec![1, 2, -4, -4]);
    let b = t64(&[&[1., 2.], &[0., -1.], &[3., 1.], &[-2., 0.5]]);
    let x = oxten::linalg_ldl_solve(&ld, &pivots, &b);
    let want = t64(&[
        &[-0.82522784095491586, -0.04911686426324713],
        &[0.63456730381482385, 0.92088071618678924],
        &[-1.49205581095249618, -0.41132349383014771],
        &[1.36446487619969359, 0.90587950641180726],
    ]);
    assert!(max_abs_diff(&x, &want) < 1e-14);
    // The strict upper triangle is not read; a 2 x 2 pivot first (the example worked in the
    // kernel's comments: [-3, -3, 3]).
    let (ld, pivots) = oxten::linalg_ldl_factor(&t64(&[&[1., 2., 99.], &[2., -1., 99.], &[3., 0.5, 0.1]]));
    assert_eq!(pivots.to_vec::<i32>().unwrap(), vec![-3, -3, 3]);
    let want = t64(&[&[1., 0., 0.], &[3., 0.1, 0.], &[0.14606741573033707, 0.61797752808988760, -1.60112359550561800]]);
    assert!(max_abs_diff(&ld, &want) < 1e-15);
    // Larger batched indefinite systems, a broadcast right-hand side: A X = B.
    let x = seeded(&[3, 30, 30], 61);
    let sym = x.try_add(&mt(&x)).unwrap();
    let (ld, pivots) = oxten::linalg_ldl_factor(&sym);
    let b = seeded(&[2, 1, 30, 4], 62);
    let solution = oxten::linalg_ldl_solve(&ld, &pivots, &b);
    assert_eq!(solution.sizes().to_vec(), vec![2, 3, 30, 4]);
    let residual = max_abs_diff(&mm(&sym, &solution), &b.try_expand(&[2, 3, 30, 4]).unwrap());
    assert!(residual < 1e-11, "{residual}");
    // A singular D: info names the column; ldl_factor and check_errors raise.
    let (ld, pivots, info) = ops::linalg_ldl_factor_ex::call(&oxten::zeros(&[2, 3, 3]), false, false).unwrap();
    assert_eq!(info.to_vec::<i32>().unwrap(), vec![1, 1]);
    assert_eq!(pivots.to_vec::<i32>().unwrap(), vec![1, 2, 3, 1, 2, 3]);
    assert_eq!(max_abs(&ld), 0.0);
    let e = err(ops::linalg_ldl_factor::call(&oxten::ones(&[3, 3]), true));
    assert!(e.contains("torch.linalg.ldl_factor: The factorization could not be completed"), "{e}");
    assert!(e.contains("D[1,1]"), "{e}");
    let e = err(ops::linalg_ldl_factor_ex::call(&oxten::zeros(&[2, 3, 3]), false, true));
    assert!(e.contains("torch.linalg.ldl_factor_ex: (Batch element 0): The factorization"), "{e}");
    // PyTorch's errors.
    let e = err(ops::linalg_ldl_factor_ex::call(&oxten::zeros(&[2, 3]), false, false));
    assert!(
        e.ends_with("torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are 2 by 3 matrices")
    );
    let long = Tensor::from_vec(vec![1i64, 0, 0, 1], &[2, 2]).unwrap();
    let e = err(ops::linalg_ldl_factor_ex::call(&long, false, false));
    assert!(e.ends_with("torch.linalg.ldl_factor_ex: Expected a floating point or complex tensor as input. Got Long"));
    let (ld, pivots) = oxten::linalg_ldl_factor(&oxten::eye(3));
    let e = err(ops::linalg_ldl_solve::call(&ld, &pivots, &oxten::zeros(&[2, 2]), false));
    assert!(e.ends_with(
        "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 3 by 3 but each b matrix is 2 by 2"
    ));
    let e = err(ops::linalg_ldl_solve::call(
        &ld,
        &ops::narrow::call(&pivots, 0, 0, 2).unwrap(),
        &oxten::zeros(&[3, 2]),
        false,
    ));
    assert!(e.ends_with("torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape [2] instead"), "{e}");
    let e = err(ops::linalg_ldl_solve::call(&ld, &pivots.to_dtype(DType::F32), &oxten::zeros(&[3, 2]), false));
    assert!(e.ends_with("torch.linalg.ldl_solve: Expected pivots to be integers. Got Float"));
    let e = err(ops::linalg_ldl_solve::call(&ld, &pivots, &oxten::zeros(&[3, 2]).to_dtype(DType::F64), false));
    assert!(
        e.ends_with("Expected b and A to have the same dtype, but found b of type Double and A of type Float instead.")
    );
    // Pivots that no factorization writes are refused, not followed out of bounds.
    for bad in [vec![1i32, 4, 3], vec![0, 2, 3], vec![1, 2, -3], vec![-3, -2, 3]] {
        let p = Tensor::from_vec(bad, &[3]).unwrap();
        let e = err(ops::linalg_ldl_solve::call(&ld, &p, &oxten::zeros(&[3, 2]), false));
        assert!(e.contains("torch.linalg.ldl_solve: pivots[") && e.contains("is not a valid pivot"), "{e}");
    }
    // int64 pivots are accepted, as PyTorch's.
    let x = oxten::linalg_ldl_solve(&ld, &pivots.to_dtype(DType::I64), &oxten::ones(&[3, 1]));
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 1.0, 1.0]);
}

#[test]
fn rank_one_f32_matrices_leave_tiny_columns_that_neither_underflow_nor_hang() {
    // Found by the operator fuzzer: five equal rows (a stride-0 expand) in f32. The reduction
    // leaves columns of size 1e-21, whose squares underflow; the reflectors must not divide by
    // them (that gave inf, then NaN, and a deflation test NaN never passes looped for ever).
    let row = [0.0f32, 1.0, 1.0, 0.5, 10.0];
    let a = Tensor::from_vec(row.to_vec(), &[1, 5]).unwrap().try_expand(&[5, 5]).unwrap();
    let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt() * 5f32.sqrt();
    let s = oxten::linalg_svdvals(&a).to_vec::<f32>().unwrap();
    assert!((s[0] - norm).abs() < 1e-5 * norm && s[1..].iter().all(|x| x.abs() < 1e-5), "{s:?}");
    let (u, s, vh) = oxten::linalg_svd(&a);
    let back = mm(&u.try_mul(&s.try_unsqueeze(0).unwrap()).unwrap(), &vh);
    assert!(max_abs_diff(&back, &a.contiguous()) < 1e-5);
    let p = ops::linalg_pinv_atol_rtol_tensor::call(&a, None, None, false).unwrap();
    assert!(max_abs_diff(&mm(&mm(&a, &p), &a), &a.contiguous()) < 1e-4);
    // The symmetric rank-one v vᵀ: one eigenvalue ‖v‖², the others zero.
    let v = Tensor::from_vec(row.to_vec(), &[5, 1]).unwrap();
    let l = oxten::linalg_eigvalsh(&mm(&v, &mt(&v))).to_vec::<f32>().unwrap();
    let sq = row.iter().map(|x| x * x).sum::<f32>();
    assert!((l[4] - sq).abs() < 1e-5 * sq && l[..4].iter().all(|x| x.abs() < 1e-4), "{l:?}");
}
