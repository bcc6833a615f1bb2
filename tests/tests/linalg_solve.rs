//! The factorizations, solves, inverses and determinants beyond PyTorch's OpInfo samples (which
//! `opinfo_samples` replays): larger and rectangular matrices checked through the identities
//! they must satisfy (`P L U = A`, `A X = B`, `A A⁻¹ = I`, `L Lᵀ = A`), singular and
//! non-positive-definite matrices (`info`, PyTorch's errors), empty batches, and bad input.

use oxten::options::{LinalgLuFactorExOpts, LinalgSolveTriangularOpts};
use oxten::{ops, DType, Tensor};
use oxten_tests::matrices::seeded;

/// The largest magnitude in `t`, in f64.
fn max_abs(t: &Tensor) -> f64 {
    ops::amax::call(&t.try_abs().unwrap(), &[], false).unwrap().try_to_dtype(DType::F64).unwrap().item::<f64>().unwrap()
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    max_abs(&a.try_sub(b).unwrap())
}

fn eye(n: i64) -> Tensor {
    oxten::eye(n).to_dtype(DType::F64)
}

/// The error's text: the chain of operators it passed through (the one called first), then
/// PyTorch's message.
fn err(r: oxten::Result<impl std::fmt::Debug>) -> String {
    r.expect_err("expected an error").to_string()
}

#[test]
fn lu_factors_reassemble_the_matrix() {
    // Up to 64 pivots the factorization is unblocked; beyond, blocked in panels (square, tall, wide).
    let shapes = [vec![64, 64], vec![3, 7, 4], vec![2, 4, 9], vec![1, 1], vec![130, 130], vec![150, 90], vec![70, 200]];
    for (seed, shape) in shapes.into_iter().enumerate() {
        let seed = seed as u64;
        let a = seeded(&shape, seed);
        let (p, l, u) = oxten::linalg_lu(&a);
        let k = shape[shape.len() - 2].min(shape[shape.len() - 1]);
        assert_eq!(l.sizes()[l.dim() - 1], k);
        assert_eq!(u.sizes()[u.dim() - 2], k);
        // L is unit lower triangular, U upper triangular, P a permutation.
        let unit = oxten::eye_m(l.size(-2).unwrap(), k).to_dtype(DType::F64);
        assert_eq!(max_abs_diff(&ops::tril::call(&l, -1).unwrap(), &l.try_sub(&unit).unwrap()), 0.0);
        assert_eq!(max_abs_diff(&ops::triu::call(&u, 0).unwrap(), &u), 0.0);
        let rows = ops::sum_dim_intlist::call(&p, Some(&[-1]), false, None).unwrap();
        assert_eq!(max_abs(&rows.try_sub_scalar(1.0).unwrap()), 0.0);
        let back = p.matmul(&l).matmul(&u);
        assert!(max_abs_diff(&back, &a) < 1e-12, "{shape:?}: {}", max_abs_diff(&back, &a));
        // Partial pivoting: every multiplier is at most 1 in magnitude.
        assert!(max_abs(&l) <= 1.0);
    }
}

#[test]
fn solves_and_inverses_satisfy_their_equations() {
    let n = 80;
    let a = seeded(&[n, n], 7).try_add(&eye(n).try_mul_scalar(2.0).unwrap()).unwrap();
    let b = seeded(&[n, 5], 8);
    let x = oxten::linalg_solve(&a, &b);
    assert!(max_abs_diff(&a.matmul(&x), &b) < 1e-12);
    // X A = B.
    let bt = seeded(&[5, n], 9);
    let opts = oxten::options::LinalgSolveOpts { left: false };
    let xr = oxten::linalg_solve_with(&a, &bt, opts);
    assert!(max_abs_diff(&xr.matmul(&a), &bt) < 1e-12);
    // A vector right-hand side, broadcast over a batch of matrices.
    let batch = seeded(&[3, 4, 4], 10).try_add(&eye(4).try_mul_scalar(3.0).unwrap()).unwrap();
    let v = seeded(&[4], 11);
    let xv = oxten::linalg_solve(&batch, &v);
    assert_eq!(xv.sizes(), [3, 4]);
    let back = batch.matmul(&xv.unsqueeze(-1)).squeeze_dim(-1);
    assert!(max_abs_diff(&back, &ops::expand::call(&v, &[3, 4], false).unwrap()) < 1e-12);
    let inv = oxten::linalg_inv(&a);
    assert!(max_abs_diff(&inv.matmul(&a), &eye(n)) < 1e-12);
    // Negative powers are powers of the inverse.
    let a3 = a.try_narrow(0, 0, 6).unwrap().try_narrow(1, 0, 6).unwrap();
    let inv3 = oxten::linalg_inv(&a3);
    assert!(max_abs_diff(&a3.matrix_power(-3), &inv3.matmul(&inv3).matmul(&inv3)) < 1e-10);
    // LU solves with the adjoint: Aᵀ X = B.
    let (lu, piv) = oxten::linalg_lu_factor(&a);
    let xt =
        oxten::linalg_lu_solve_with(&lu, &piv, &b, oxten::options::LinalgLuSolveOpts { left: true, adjoint: true });
    assert!(max_abs_diff(&a.t().matmul(&xt), &b) < 1e-12);
}

#[test]
fn triangular_and_cholesky_solves() {
    let n = 40;
    let g = seeded(&[n, n], 12);
    let spd = g.matmul(&g.t()).try_add(&eye(n)).unwrap();
    let l = oxten::linalg_cholesky(&spd);
    assert_eq!(max_abs_diff(&ops::tril::call(&l, 0).unwrap(), &l), 0.0);
    assert!(max_abs_diff(&l.matmul(&l.t()), &spd) < 1e-12);
    let u = oxten::linalg_cholesky_with(&spd, oxten::options::LinalgCholeskyOpts { upper: true });
    assert!(max_abs_diff(&u, &l.t()) < 1e-14);
    let b = seeded(&[n, 3], 13);
    let x = oxten::cholesky_solve(&b, &l);
    assert!(max_abs_diff(&spd.matmul(&x), &b) < 1e-11);
    assert!(max_abs_diff(&oxten::cholesky_inverse(&l).matmul(&spd), &eye(n)) < 1e-11);
    // Right solve with a unit upper triangle: the diagonal and the lower triangle are not read.
    let t = seeded(&[n, n], 14);
    let unit_upper = ops::triu::call(&t, 1).unwrap().try_add(&eye(n)).unwrap();
    let opts = LinalgSolveTriangularOpts { left: false, unitriangular: true };
    let xr = oxten::linalg_solve_triangular_with(&t, &b.t(), true, opts);
    assert!(max_abs_diff(&xr.matmul(&unit_upper), &b.t()) < 1e-11);
}

#[test]
fn singular_and_indefinite_matrices_report_info_and_raise_pytorchs_errors() {
    let singular = Tensor::from_vec(vec![1.0f64, 2.0, 2.0, 4.0], &[2, 2]).unwrap();
    let (_, _, info) = oxten::linalg_lu_factor_ex(&singular);
    assert_eq!(info.item::<i32>().unwrap(), 2);
    assert_eq!(oxten::linalg_det(&singular).item::<f64>().unwrap(), 0.0);
    let (sign, logabsdet) = oxten::linalg_slogdet(&singular);
    assert_eq!((sign.item::<f64>().unwrap(), logabsdet.item::<f64>().unwrap()), (0.0, f64::NEG_INFINITY));
    assert!(err(oxten::try_linalg_solve(&singular, &Tensor::from_vec(vec![1.0f64, 1.0], &[2]).unwrap()))
        .ends_with("torch.linalg.solve: The solver failed because the input matrix is singular."));
    let batch = ops::stack::call(&[eye(2), singular.clone()], 0).unwrap();
    assert!(err(oxten::try_linalg_inv(&batch)).contains(
        "linalg.inv: (Batch element 1): The diagonal element 2 is zero, the inversion could not be completed"
    ));
    let opts = LinalgLuFactorExOpts { pivot: true, check_errors: true };
    assert!(err(oxten::try_linalg_lu_factor_ex_with(&singular, opts)).contains("U[2,2] is zero"));
    // A negative determinant: slogdet's sign is -1 and logdet is NaN.
    let swap = Tensor::from_vec(vec![0.0f64, 2.0, 3.0, 0.0], &[2, 2]).unwrap();
    assert_eq!(oxten::linalg_det(&swap).item::<f64>().unwrap(), -6.0);
    assert_eq!(oxten::linalg_slogdet(&swap).0.item::<f64>().unwrap(), -1.0);
    assert!(swap.logdet().item::<f64>().unwrap().is_nan());
    let indefinite = Tensor::from_vec(vec![1.0f64, 2.0, 2.0, 1.0], &[2, 2]).unwrap();
    assert_eq!(oxten::linalg_cholesky_ex(&indefinite).1.item::<i32>().unwrap(), 2);
    assert!(err(oxten::try_linalg_cholesky(&indefinite)).ends_with(
        "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the \
         leading minor of order 2 is not positive-definite)."
    ));
}

#[test]
fn empty_matrices_and_batches() {
    let empty = Tensor::from_vec(Vec::<f32>::new(), &[0, 0]).unwrap();
    assert_eq!(oxten::linalg_det(&empty).item::<f32>().unwrap(), 1.0);
    assert_eq!(oxten::linalg_inv(&empty).sizes(), [0, 0]);
    let no_batch = Tensor::from_vec(Vec::<f64>::new(), &[0, 3, 3]).unwrap();
    let (lu, piv, info) = oxten::linalg_lu_factor_ex(&no_batch);
    assert_eq!(
        (lu.sizes().to_vec(), piv.sizes().to_vec(), info.sizes().to_vec()),
        (vec![0, 3, 3], vec![0, 3], vec![0])
    );
    assert_eq!(oxten::linalg_det(&no_batch).sizes(), [0]);
    assert_eq!(oxten::linalg_cholesky(&no_batch).sizes(), [0, 3, 3]);
}

#[test]
fn integer_matrix_powers() {
    let a = Tensor::from_vec(vec![1i64, 1, 1, 0], &[2, 2]).unwrap();
    // Fibonacci numbers.
    assert_eq!(a.matrix_power(10).to_vec::<i64>().unwrap(), [89, 55, 55, 34]);
    assert_eq!(a.matrix_power(0).to_vec::<i64>().unwrap(), [1, 0, 0, 1]);
    assert!(err(a.try_matrix_power(-1)).contains("Expected a floating point or complex tensor as input. Got Long"));
}

#[test]
fn bad_input_is_an_error_naming_the_operator() {
    let ints = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2]).unwrap();
    assert!(err(oxten::try_linalg_lu_factor(&ints))
        .ends_with("torch.linalg.lu_factor: Expected a floating point or complex tensor as input. Got Long"));
    let half = ints.to_dtype(DType::F16);
    assert!(err(oxten::try_linalg_det(&half)).contains("linalg.det: Low precision dtypes not supported. Got Half"));
    let wide = seeded(&[2, 3], 20);
    assert!(err(oxten::try_linalg_inv(&wide))
        .contains("A must be batches of square matrices, but they are 2 by 3 matrices"));
    assert!(err(oxten::try_linalg_cholesky(&seeded(&[3], 21))).contains("must have at least 2 dimensions"));
    let opts = LinalgLuFactorExOpts { pivot: false, check_errors: false };
    assert!(err(oxten::try_linalg_lu_factor_ex_with(&seeded(&[2, 2], 22), opts)).contains("LU without pivoting"));
    let a = seeded(&[3, 3], 23);
    let (lu, piv) = oxten::linalg_lu_factor(&a);
    // Pivots out of range, of the wrong dtype or shape.
    let bad = Tensor::from_vec(vec![1i32, 7, 3], &[3]).unwrap();
    assert!(err(oxten::try_lu_unpack(&lu, &bad)).contains("pivots must hold row numbers in [1, 3]"));
    assert!(err(oxten::try_linalg_lu_solve(&lu, &bad, &a)).contains("pivots must hold row numbers in [1, 3]"));
    assert!(err(oxten::try_linalg_lu_solve(&lu, &piv.to_dtype(DType::I64), &a)).contains("torch.int32"));
    assert!(err(oxten::try_linalg_lu_solve(&lu, &piv, &seeded(&[2, 3], 24))).contains("Number of rows of B"));
    assert!(err(oxten::try_linalg_solve(&a, &seeded(&[4, 2], 25))).contains("Incompatible shapes of A and B"));
    assert!(err(oxten::try_linalg_solve(&a, &a.to_dtype(DType::F32))).contains("same dtype"));
    assert!(err(oxten::try_linalg_solve_triangular(&a, &seeded(&[2, 3], 26), true)).contains("AX = B (3x3 and 2x3)"));
    assert!(err(oxten::try_linalg_tensorinv_with(
        &seeded(&[4, 2, 2], 27),
        oxten::options::LinalgTensorinvOpts { ind: 5 }
    ))
    .contains("'ind' (5) is larger"));
    assert!(err(oxten::try_linalg_tensorinv_with(
        &seeded(&[4, 2, 3], 28),
        oxten::options::LinalgTensorinvOpts { ind: 1 }
    ))
    .contains("prod(self.shape[ind:]) == prod(self.shape[:ind])"));
}

#[test]
fn batches_too_large_for_memory_are_errors() {
    use oxten::{Device, MemoryFormat};
    let empty = |s: &[i64]| Tensor::empty(s, DType::F32, Device::Cpu, MemoryFormat::Contiguous).unwrap();
    // 2^40 empty matrices: `info` alone would need 4 TiB.
    let many = empty(&[1 << 40, 0, 0]);
    assert!(err(oxten::try_linalg_lu_factor_ex(&many)).contains("out of memory"));
    assert!(err(oxten::try_linalg_cholesky_ex(&many)).contains("out of memory"));
    // No matrices at all, each of 2^32 x 2^32 (whose element count wraps in 64 bits).
    let (l, info) = oxten::try_linalg_cholesky_ex(&empty(&[0, 1 << 32, 1 << 32])).unwrap();
    assert_eq!((l.sizes().to_vec(), info.sizes().to_vec()), (vec![0, 1 << 32, 1 << 32], vec![0]));
}
