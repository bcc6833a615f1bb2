//! `_linalg_eigh`: the eigenvalues (ascending) and orthonormal eigenvectors of a (batch of)
//! symmetric matrices, read from the lower (`UPLO = "L"`) or upper triangle, by the cyclic
//! Jacobi method: plane rotations zero the off-diagonal entries one pair at a time until none is
//! significant. Slower than LAPACK's tridiagonal methods for large matrices (about `25 n³`
//! flops against `9 n³`) but accurate to the last bits, including the small eigenvalues.
//!
//! The matrix is kept whole (both triangles) and row-major, and a rotation of rows `p`, `q` is
//! two contiguous row updates; the symmetric column update is then a copy of those rows into
//! the columns. The eigenvectors are accumulated as the rows of `Vᵀ`, contiguous too.

use super::{
    batch_dims, broadcast_matrices, check_floating, check_square, elems, matrix_dims, with_field, zeros_vec, Field,
};
use crate::generated::decls::LinalgEighCpu;
use crate::Cpu;
use oxten_runtime::{Error, Result, Tensor};

/// The most sweeps before giving up; convergence is quadratic and takes under 15 in practice.
const MAX_SWEEPS: usize = 60;

/// Rotates rows `p < q` of the row-major `? x n` matrix `x`: `(x_p, x_q) ← (c x_p - s x_q,
/// s x_p + c x_q)`.
pub(super) fn rotate_rows<T: Field>(x: &mut [T], n: usize, p: usize, q: usize, c: T, s: T) {
    let (head, tail) = x.split_at_mut(q * n);
    let (rp, rq) = (&mut head[p * n..p * n + n], &mut tail[..n]);
    for (a, b) in rp.iter_mut().zip(rq.iter_mut()) {
        let (x, y) = (*a, *b);
        *a = c * x - s * y;
        *b = s * x + c * y;
    }
}

/// The plane rotation that diagonalizes the symmetric 2 x 2 matrix `[[app, apq], [apq, aqq]]`:
/// `(t, c, s)` with `t = tan θ` the smaller root of `t² + 2 ζ t - 1 = 0` for
/// `ζ = (aqq - app) / (2 apq)`, `c = cos θ`, `s = sin θ`. The new diagonal is
/// `(app - t apq, aqq + t apq)`. Shared by the eigen- and singular value decompositions.
pub(super) fn jacobi_rotation<T: Field>(app: T, aqq: T, apq: T) -> (T, T, T) {
    let zeta = (aqq - app) / (apq + apq);
    let t = T::ONE / (zeta.abs() + zeta.hypot(T::ONE));
    let t = if zeta < T::ZERO { -t } else { t };
    let c = T::ONE / t.hypot(T::ONE);
    (t, c, t * c)
}

/// Diagonalizes the symmetric row-major `n x n` matrix `a` in place and accumulates the
/// rotations into `vt` (`Vᵀ`, starting as the identity). Returns whether it converged.
fn jacobi<T: Field>(a: &mut [T], vt: &mut [T], n: usize) -> bool {
    for sweep in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq == T::ZERO {
                    continue;
                }
                let (app, aqq) = (a[p * n + p], a[q * n + q]);
                // Negligible beside both diagonal entries (after a few sweeps, so that the large
                // entries go first): dropped, as the rounding of a rotation would be.
                let g = T::from_f64(100.0) * apq.abs();
                if sweep > 3 && app.abs() + g == app.abs() && aqq.abs() + g == aqq.abs() {
                    a[p * n + q] = T::ZERO;
                    a[q * n + p] = T::ZERO;
                    continue;
                }
                rotated = true;
                let (t, c, s) = jacobi_rotation(app, aqq, apq);
                // Jᵀ A J with J the rotation in the (p, q) plane: rows, then (by symmetry)
                // columns; the 2 x 2 block is set exactly.
                rotate_rows(a, n, p, q, c, s);
                for k in 0..n {
                    a[k * n + p] = a[p * n + k];
                    a[k * n + q] = a[q * n + k];
                }
                a[p * n + p] = app - t * apq;
                a[q * n + q] = aqq + t * apq;
                a[p * n + q] = T::ZERO;
                a[q * n + p] = T::ZERO;
                rotate_rows(vt, n, p, q, c, s);
            }
        }
        if !rotated {
            return true;
        }
    }
    false
}

/// Fills the strict upper (`lower = true`: from the lower) triangle from the other one.
fn symmetrize<T: Field>(a: &mut [T], n: usize, from_lower: bool) {
    for i in 0..n {
        for j in 0..i {
            if from_lower {
                a[j * n + i] = a[i * n + j];
            } else {
                a[i * n + j] = a[j * n + i];
            }
        }
    }
}

/// The eigenvalues of each matrix (ascending) and, when `compute_v`, the eigenvectors as
/// columns. A matrix with a NaN or infinity in the triangle read gives NaNs (as LAPACK's
/// `syevd` does in PyTorch).
fn eigh_typed<T: Field>(a: &Tensor, lower: bool, compute_v: bool) -> Result<(Tensor, Tensor)> {
    let (n, _) = matrix_dims(a);
    let nu = n as usize;
    let batch = batch_dims(a);
    let (mut data, count) = broadcast_matrices::<T>(a, &batch)?;
    let mut values = zeros_vec::<T>(count, nu)?;
    let per_a = elems("linalg.eigh", nu, nu)?;
    let mut vectors = if compute_v { zeros_vec::<T>(count, per_a)? } else { vec![] };
    if per_a > 0 && count > 0 {
        let mut vt = vec![T::ZERO; per_a];
        for (b, matrix) in data.chunks_exact_mut(per_a).enumerate() {
            symmetrize(matrix, nu, lower);
            vt.fill(T::ZERO);
            for i in 0..nu {
                vt[i * nu + i] = T::ONE;
            }
            if !matrix.iter().all(|x| x.is_finite()) || !jacobi(matrix, &mut vt, nu) {
                let nan = T::from_f64(f64::NAN);
                values[b * nu..(b + 1) * nu].fill(nan);
                if compute_v {
                    vectors[b * per_a..(b + 1) * per_a].fill(nan);
                }
                continue;
            }
            // Ascending eigenvalues; their eigenvectors (rows of `vt`) follow.
            let mut order: Vec<usize> = (0..nu).collect();
            order.sort_by(|&i, &j| {
                matrix[i * nu + i].partial_cmp(&matrix[j * nu + j]).unwrap_or(std::cmp::Ordering::Equal)
            });
            for (k, &i) in order.iter().enumerate() {
                values[b * nu + k] = matrix[i * nu + i];
                if compute_v {
                    // Column `k` of `V` is row `i` of `Vᵀ`.
                    let v = &mut vectors[b * per_a..(b + 1) * per_a];
                    for (r, &x) in vt[i * nu..i * nu + nu].iter().enumerate() {
                        v[r * nu + k] = x;
                    }
                }
            }
        }
    }
    let mut value_shape = batch.clone();
    value_shape.push(n);
    let values = Tensor::from_vec(values, &value_shape)?;
    let vectors =
        if compute_v { Tensor::from_vec(vectors, &a.sizes())? } else { Tensor::from_vec(Vec::<T>::new(), &[0])? };
    Ok((values, vectors))
}

impl LinalgEighCpu for Cpu {
    fn _linalg_eigh(a: &Tensor, uplo: &str, compute_v: bool) -> Result<(Tensor, Tensor)> {
        const OP: &str = "linalg.eigh";
        let lower = match uplo {
            "L" | "l" => true,
            "U" | "u" => false,
            _ => return Err(Error::runtime(format!("Expected UPLO argument to be 'L' or 'U', but got {uplo}"))),
        };
        check_square(OP, "A", a)?;
        check_floating(OP, a)?;
        with_field!(a.dtype(), T => eigh_typed::<T>(a, lower, compute_v))
    }
}
