//! `_linalg_eigh`: the eigenvalues (ascending) and orthonormal eigenvectors of a (batch of)
//! symmetric matrices, read from the lower (`UPLO = "L"`) or upper triangle, the way LAPACK's
//! `syev` computes them: Householder reflections reduce the matrix to a tridiagonal `T =
//! Qᵀ A Q` (`4/3 n³` flops), then implicit QR sweeps with Wilkinson's shift diagonalize `T`
//! (`O(n²)` flops for the eigenvalues alone; the rotations applied to `Q` for the vectors).
//!
//! The matrix is kept whole (both triangles) and row-major: a reflector is a row (by symmetry,
//! the column below the diagonal is the row right of it), and the symmetric rank-two update
//! runs along rows. The eigenvectors are accumulated as the rows of `Zᵀ`, so a rotation of two
//! columns of `Z` is two contiguous row updates.

use super::{
    batch_dims, broadcast_matrices, check_floating, check_square, dot, elems, make_reflector, matrix_dims, with_field,
    zeros_vec, Field,
};
use crate::generated::decls::LinalgEighCpu;
use crate::Cpu;
use oxten_runtime::{Error, Result, Tensor};

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

/// The tridiagonal form of a symmetric matrix: diagonal `d`, off-diagonal `e` (`e[i] =
/// T[i, i+1]`), and the reflectors that produced it.
struct Tridiagonal<T> {
    d: Vec<T>,
    e: Vec<T>,
    /// `β_k` of reflector `k` (`H_k = I - β_k v_k v_kᵀ`, acting on indices `k+1..n`); zero when
    /// the column needed none.
    betas: Vec<T>,
}

/// Reduces the symmetric row-major `n x n` matrix `a` (both triangles set) to tridiagonal form
/// by Householder reflections `H_0 … H_{n-2}`, leaving `v_k` in row `k` of `a` (entries
/// `k+1..n`).
fn tridiagonalize<T: Field>(a: &mut [T], n: usize) -> Tridiagonal<T> {
    let mut t = Tridiagonal { d: vec![T::ZERO; n], e: vec![T::ZERO; n.saturating_sub(1)], betas: vec![T::ZERO; n] };
    let mut w = vec![T::ZERO; n];
    for k in 0..n.saturating_sub(1) {
        let m = n - k - 1;
        let (head, trailing) = a.split_at_mut((k + 1) * n);
        t.d[k] = head[k * n + k];
        let v = &mut head[k * n + k + 1..k * n + n];
        // `H x = α e₁` for the column below the diagonal.
        let (alpha, beta) = make_reflector(v);
        t.e[k] = alpha;
        if beta == T::ZERO {
            // Already tridiagonal in this column: no reflection.
            continue;
        }
        t.betas[k] = beta;
        // S ← H S H = S - v wᵀ - w vᵀ for the trailing block S, with p = β S v and
        // w = p - (β/2)(pᵀv) v.
        let w = &mut w[..m];
        for (i, wi) in w.iter_mut().enumerate() {
            *wi = beta * dot(&trailing[i * n + k + 1..i * n + n], v);
        }
        let half = T::from_f64(0.5) * beta * dot(w, v);
        for (wi, &vi) in w.iter_mut().zip(v.iter()) {
            *wi = *wi - half * vi;
        }
        for i in 0..m {
            let (vi, wi) = (v[i], w[i]);
            let row = &mut trailing[i * n + k + 1..i * n + n];
            for ((s, &vj), &wj) in row.iter_mut().zip(v.iter()).zip(w.iter()) {
                *s = *s - vi * wj - wi * vj;
            }
        }
    }
    if n > 0 {
        t.d[n - 1] = a[(n - 1) * n + n - 1];
    }
    t
}

/// `Qᵀ = H_{n-2} … H_0` (row-major) from the reflectors left in `a` by [`tridiagonalize`]:
/// `M ← M H_k` for `k` descending, which touches only rows and columns `k+1..n`.
fn reflectors_transposed<T: Field>(a: &[T], betas: &[T], n: usize) -> Vec<T> {
    let mut qt = vec![T::ZERO; n * n];
    for i in 0..n {
        qt[i * n + i] = T::ONE;
    }
    for k in (0..n.saturating_sub(1)).rev() {
        let beta = betas[k];
        if beta == T::ZERO {
            continue;
        }
        let v = &a[k * n + k + 1..k * n + n];
        for r in k + 1..n {
            let row = &mut qt[r * n + k + 1..r * n + n];
            let f = beta * dot(row, v);
            for (x, &vj) in row.iter_mut().zip(v) {
                *x = *x - f * vj;
            }
        }
    }
    qt
}

/// The start `l` of the unreduced block `[l, h]` at the bottom of a tridiagonal or bidiagonal
/// matrix with diagonal `d` and off-diagonal `off` (`off[i]` joins `i` and `i + 1`): an entry
/// negligible beside its two diagonal neighbours is set to zero, and the first such (going up
/// from `h`) ends the block; `l == h` when `d[h]` stands alone. Shared by the eigen- and
/// singular value sweeps.
pub(super) fn unreduced_block<T: Field>(d: &[T], off: &mut [T], h: usize) -> usize {
    let mut l = h;
    while l > 0 {
        if off[l - 1].abs() <= T::EPSILON * (d[l - 1].abs() + d[l].abs()) {
            off[l - 1] = T::ZERO;
            break;
        }
        l -= 1;
    }
    l
}

/// Diagonalizes the symmetric tridiagonal `(d, e)` in place by implicit QR sweeps with
/// Wilkinson's shift, chasing the bulge down each unreduced block and deflating off-diagonal
/// entries negligible beside their neighbours; each rotation of rows `k, k+1` is also applied
/// to the rows of `zt`. Returns whether it converged (30 sweeps per eigenvalue at most).
fn tridiagonal_qr<T: Field>(d: &mut [T], e: &mut [T], mut zt: Option<&mut [T]>, n: usize) -> bool {
    let two = T::from_f64(2.0);
    let mut sweeps = 0;
    let mut h = n.saturating_sub(1);
    while h > 0 {
        let l = unreduced_block(d, e, h);
        if l == h {
            h -= 1;
            continue;
        }
        sweeps += 1;
        if sweeps > 30 * n {
            return false;
        }
        // Wilkinson's shift: the eigenvalue of the trailing 2 x 2 block nearer `d[h]`.
        let (eh, delta) = (e[h - 1], (d[h - 1] - d[h]) / two);
        let root = delta.hypot(eh);
        let mu = d[h] - eh * (eh / if delta < T::ZERO { delta - root } else { delta + root });
        let (mut x, mut z) = (d[l] - mu, e[l]);
        for k in l..h {
            // The rotation with `s x + c z = 0`: it starts the bulge (k = l) or chases it from
            // (k+1, k-1) to (k+2, k).
            let r = x.hypot(z);
            let (c, s) = if r == T::ZERO { (T::ONE, T::ZERO) } else { (x / r, -z / r) };
            if k > l {
                e[k - 1] = r;
            }
            let (a, b, f) = (d[k], e[k], d[k + 1]);
            let (cc, ss, cs) = (c * c, s * s, c * s);
            d[k] = cc * a - two * cs * b + ss * f;
            d[k + 1] = ss * a + two * cs * b + cc * f;
            e[k] = cs * (a - f) + (cc - ss) * b;
            if k + 1 < h {
                let next = e[k + 1];
                z = -s * next;
                e[k + 1] = c * next;
                x = e[k];
            }
            if let Some(zt) = zt.as_deref_mut() {
                rotate_rows(zt, n, k, k + 1, c, s);
            }
        }
    }
    true
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

/// The eigenvalues of the symmetric row-major `n x n` matrix `a` (finite, both triangles set;
/// overwritten), ascending, and with `compute_v` its eigenvectors as the rows of `Zᵀ`, in the
/// same order. `None` if the sweeps did not converge.
fn eigh_matrix<T: Field>(a: &mut [T], n: usize, compute_v: bool) -> Option<(Vec<T>, Vec<T>)> {
    // Scaled by a power of two (exactly) to a largest entry in [1, 2), so that no square in the
    // reflectors overflows or underflows.
    let amax = a.iter().fold(0.0f64, |m, x| m.max(x.to_f64().abs()));
    let exponent = if amax > 0.0 { amax.log2().floor() as i32 } else { 0 };
    if exponent != 0 {
        let factor = T::from_f64(2f64.powi(-exponent));
        a.iter_mut().for_each(|x| *x = *x * factor);
    }
    let Tridiagonal { mut d, mut e, betas } = tridiagonalize(a, n);
    let mut zt = compute_v.then(|| reflectors_transposed(a, &betas, n));
    if !tridiagonal_qr(&mut d, &mut e, zt.as_deref_mut(), n) {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| d[i].partial_cmp(&d[j]).unwrap_or(std::cmp::Ordering::Equal));
    let unscale = T::from_f64(2f64.powi(exponent));
    let values = order.iter().map(|&i| d[i] * unscale).collect();
    let vectors = match zt {
        Some(zt) => order.iter().flat_map(|&i| zt[i * n..i * n + n].iter().copied()).collect(),
        None => vec![],
    };
    Some((values, vectors))
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
        for (b, matrix) in data.chunks_exact_mut(per_a).enumerate() {
            symmetrize(matrix, nu, lower);
            let found = if matrix.iter().all(|x| x.is_finite()) { eigh_matrix(matrix, nu, compute_v) } else { None };
            let Some((w, zt)) = found else {
                let nan = T::from_f64(f64::NAN);
                values[b * nu..(b + 1) * nu].fill(nan);
                if compute_v {
                    vectors[b * per_a..(b + 1) * per_a].fill(nan);
                }
                continue;
            };
            values[b * nu..(b + 1) * nu].copy_from_slice(&w);
            if compute_v {
                // Column `k` of `V` is row `k` of `Zᵀ`.
                let v = &mut vectors[b * per_a..(b + 1) * per_a];
                for k in 0..nu {
                    for (r, &x) in zt[k * nu..k * nu + nu].iter().enumerate() {
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
