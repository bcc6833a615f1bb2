//! `_linalg_svd`: `A = U diag(S) Vᴴ` by the one-sided Jacobi method (Hestenes): plane rotations
//! make the rows of `W` (`Aᵀ` for a tall matrix, `A` for a wide one) mutually orthogonal; their
//! norms are the singular values, the normalized rows the singular vectors of the long side,
//! and the accumulated rotations those of the short side. It computes the small singular values
//! to high relative accuracy (no `AᵀA` is formed). Rows of `W` are contiguous, so a rotation and
//! the dot products that decide it run along memory.

use super::eigh::{jacobi_rotation, rotate_rows};
use super::qr::axpy;
use super::{
    batch_dims, broadcast_matrices, check_floating, check_is_matrix, dot, elems, matrix_dims, with_field, zeros_vec,
    Field,
};
use crate::generated::decls::LinalgSvdCpu;
use crate::Cpu;
use oxten_runtime::{Error, Result, Tensor};

/// The most sweeps; convergence is quadratic and takes under 15 in practice.
const MAX_SWEEPS: usize = 40;

/// Orthogonalizes the `k x len` row-major `w` in place (and applies the same rotations to the
/// `k x k` rows of `y`).
fn orthogonalize<T: Field>(w: &mut [T], y: &mut [T], k: usize, len: usize) {
    let tol = T::EPSILON * T::from_f64((len.max(1) as f64).sqrt());
    let mut norms = vec![T::ZERO; k];
    for _ in 0..MAX_SWEEPS {
        for (i, n) in norms.iter_mut().enumerate() {
            *n = dot(&w[i * len..i * len + len], &w[i * len..i * len + len]);
        }
        let mut rotated = false;
        for p in 0..k {
            for q in p + 1..k {
                let (alpha, beta) = (norms[p], norms[q]);
                let gamma = dot(&w[p * len..p * len + len], &w[q * len..q * len + len]);
                if gamma == T::ZERO || gamma.abs() <= tol * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                // The rotation that diagonalizes the Gram matrix [[α, γ], [γ, β]].
                let (t, c, s) = jacobi_rotation(alpha, beta, gamma);
                rotate_rows(w, len, p, q, c, s);
                rotate_rows(y, k, p, q, c, s);
                norms[p] = alpha - t * gamma;
                norms[q] = beta + t * gamma;
            }
        }
        if !rotated {
            return;
        }
    }
}

/// Makes `rows x len` row-major `v` orthonormal where its rows are marked missing (zero), keeping
/// the others: each missing row is the first standard basis vector that is not (nearly) in the
/// span of the rows kept so far, orthogonalized against them (twice, for accuracy). With every
/// row missing this gives the identity, as LAPACK does for a zero matrix.
fn complete_orthonormal_rows<T: Field>(v: &mut [T], rows: usize, len: usize, missing: &[bool]) {
    let mut kept: Vec<usize> = (0..rows).filter(|&r| !missing[r]).collect();
    let mut candidate = 0;
    let mut e = vec![T::ZERO; len];
    for r in (0..rows).filter(|&r| missing[r]) {
        while candidate < len {
            e.fill(T::ZERO);
            e[candidate] = T::ONE;
            candidate += 1;
            for _ in 0..2 {
                for &j in &kept {
                    let row = &v[j * len..j * len + len];
                    let d = dot(&e, row);
                    axpy(&mut e, -d, row);
                }
            }
            let norm = dot(&e, &e).sqrt();
            // Some basis vector keeps at least 1/len of its square norm; taking the first above
            // half that keeps the result well-conditioned.
            if norm * norm * T::from_f64(2.0 * len as f64) > T::ONE {
                for (x, &y) in v[r * len..r * len + len].iter_mut().zip(&e) {
                    *x = y / norm;
                }
                kept.push(r);
                break;
            }
        }
    }
}

/// One matrix's factors.
struct Factors<T> {
    u: Vec<T>,
    s: Vec<T>,
    vh: Vec<T>,
}

/// The SVD of the row-major `m x n` matrix `a`, whose entries are finite: `U` row-major
/// `m x uc`, `S` (descending), `Vᴴ` row-major `vr x n` (`uc = vr = min(m, n)` unless `full`).
fn svd_matrix<T: Field>(a: &[T], m: usize, n: usize, full: bool) -> Factors<T> {
    let k = m.min(n);
    let tall = m >= n;
    let len = m.max(n);
    // W: the columns of A (tall) or its rows (wide), scaled so that no square overflows.
    let scale = a.iter().fold(T::ZERO, |s, &x| if x.abs() > s { x.abs() } else { s });
    let inv = if scale > T::ZERO { T::ONE / scale } else { T::ONE };
    let mut w = vec![T::ZERO; k * len];
    for i in 0..m {
        for j in 0..n {
            let (r, c) = if tall { (j, i) } else { (i, j) };
            w[r * len + c] = a[i * n + j] * inv;
        }
    }
    let mut y = vec![T::ZERO; k * k];
    for i in 0..k {
        y[i * k + i] = T::ONE;
    }
    orthogonalize(&mut w, &mut y, k, len);
    let norms: Vec<T> = (0..k).map(|i| dot(&w[i * len..i * len + len], &w[i * len..i * len + len]).sqrt()).collect();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&i, &j| norms[j].partial_cmp(&norms[i]).unwrap_or(std::cmp::Ordering::Equal));
    // The long side's vectors (rows), then the short side's (rows of `Y`, columns of `J`).
    let long_rows = if full { len } else { k };
    let mut long = vec![T::ZERO; long_rows * len];
    let mut missing = vec![true; long_rows];
    let mut s = vec![T::ZERO; k];
    let mut short = vec![T::ZERO; k * k];
    for (dst, &src) in order.iter().enumerate() {
        s[dst] = norms[src] * scale;
        if norms[src] > T::ZERO {
            for (x, &v) in long[dst * len..dst * len + len].iter_mut().zip(&w[src * len..src * len + len]) {
                *x = v / norms[src];
            }
            missing[dst] = false;
        }
        short[dst * k..dst * k + k].copy_from_slice(&y[src * k..src * k + k]);
    }
    complete_orthonormal_rows(&mut long, long_rows, len, &missing);
    // Tall: `U` = `long`ᵀ, `Vᴴ` = `Y`; wide: `U` = `Y`ᵀ, `Vᴴ` = `long`.
    let transpose = |x: &[T], rows: usize, cols: usize| {
        let mut t = vec![T::ZERO; rows * cols];
        for r in 0..rows {
            for c in 0..cols {
                t[c * rows + r] = x[r * cols + c];
            }
        }
        t
    };
    if tall {
        Factors { u: transpose(&long, long_rows, len), s, vh: short }
    } else {
        Factors { u: transpose(&short, k, k), s, vh: long }
    }
}

/// The factors of a batch; `Err` names the first matrix holding a NaN.
fn svd_typed<T: Field>(a: &Tensor, full: bool, compute_uv: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let (m, n) = matrix_dims(a);
    let (mu, nu) = (m as usize, n as usize);
    let k = mu.min(nu);
    let (uc, vr) = if full { (mu, nu) } else { (k, k) };
    let batch = batch_dims(a);
    let (data, count) = broadcast_matrices::<T>(a, &batch)?;
    const OP: &str = "linalg.svd";
    let (per_a, per_u, per_vh) = (elems(OP, mu, nu)?, elems(OP, mu, uc)?, elems(OP, vr, nu)?);
    let mut u = if compute_uv { zeros_vec::<T>(count, per_u)? } else { vec![] };
    let mut s = zeros_vec::<T>(count, k)?;
    let mut vh = if compute_uv { zeros_vec::<T>(count, per_vh)? } else { vec![] };
    // Empty matrices have the same (identity or empty) factors; a batch with nothing to write
    // (whose count may be anything) is not walked.
    let writes = count > 0 && (k > 0 || (compute_uv && per_u + per_vh > 0));
    let empty_factors = (writes && per_a == 0).then(|| svd_matrix::<T>(&[], mu, nu, full));
    for b in (0..count).filter(|_| writes) {
        let matrix = &data[b * per_a..(b + 1) * per_a];
        if matrix.iter().any(|x| x.is_nan()) {
            let at = if a.dim() > 2 { format!("(Batch element {b}): ") } else { String::new() };
            return Err(Error::runtime(format!(
                "{OP}: {at}The algorithm failed to converge because the input matrix contained non-finite values."
            )));
        }
        let f = if let Some(f) = &empty_factors {
            Factors { u: f.u.clone(), s: f.s.clone(), vh: f.vh.clone() }
        } else if matrix.iter().all(|x| x.is_finite()) {
            svd_matrix(matrix, mu, nu, full)
        } else {
            // An infinity: NaN factors, as LAPACK's.
            let nan = T::from_f64(f64::NAN);
            Factors { u: vec![nan; per_u], s: vec![nan; k], vh: vec![nan; per_vh] }
        };
        s[b * k..(b + 1) * k].copy_from_slice(&f.s);
        if compute_uv {
            u[b * per_u..(b + 1) * per_u].copy_from_slice(&f.u);
            vh[b * per_vh..(b + 1) * per_vh].copy_from_slice(&f.vh);
        }
    }
    let with = |tail: &[i64]| {
        let mut v = batch.clone();
        v.extend_from_slice(tail);
        v
    };
    let empty = || Tensor::from_vec(Vec::<T>::new(), &[0]);
    let (u, vh) = if compute_uv {
        (Tensor::from_vec(u, &with(&[m, uc as i64]))?, Tensor::from_vec(vh, &with(&[vr as i64, n]))?)
    } else {
        (empty()?, empty()?)
    };
    Ok((u, Tensor::from_vec(s, &with(&[k as i64]))?, vh))
}

impl LinalgSvdCpu for Cpu {
    fn _linalg_svd(a: &Tensor, full_matrices: bool, compute_uv: bool) -> Result<(Tensor, Tensor, Tensor)> {
        const OP: &str = "linalg.svd";
        check_is_matrix(OP, "A", a)?;
        check_floating(OP, a)?;
        with_field!(a.dtype(), T => svd_typed::<T>(a, full_matrices, compute_uv))
    }
}
