//! `_linalg_svd`: `A = U diag(S) Vᴴ` the way LAPACK's `gesvd` computes it: Householder
//! reflections from both sides reduce `A` (`Aᵀ` when wide) to an upper bidiagonal `B = Uᵀ A V`
//! (Golub–Kahan, `4 m n² - 4/3 n³` flops), then implicit QR sweeps with a Wilkinson shift
//! diagonalize `B` (`O(n²)` flops for the singular values alone; the rotations applied to `Uᵀ`
//! and `Vᵀ` for the vectors). Accurate to a small multiple of `ε ‖A‖`, as PyTorch's LAPACK
//! routines.
//!
//! Everything is row-major and row-oriented: a left reflector updates whole rows (`w = vᵀ A`,
//! then rank one), a right one takes a dot product and an update per row, and the singular
//! vectors are accumulated as the rows of `Uᵀ` and `Vᵀ`, so a rotation is two contiguous row
//! updates.

use super::eigh::{rotate_rows, unreduced_block};
use super::qr::axpy;
use super::{
    batch_dims, broadcast_matrices, check_floating, check_is_matrix, dot, elems, make_reflector, matrix_dims,
    with_field, zeros_vec, Field,
};
use crate::generated::decls::LinalgSvdCpu;
use crate::Cpu;
use oxten_runtime::{Error, Result, Tensor};

/// `M ← M H` for `H = I - β v vᵀ` acting on columns `c0..c0 + v.len()` of rows `rows` of the
/// row-major matrix `m` with `cols` columns.
fn reflect_rows<T: Field>(m: &mut [T], cols: usize, rows: std::ops::Range<usize>, c0: usize, v: &[T], beta: T) {
    for r in rows {
        let row = &mut m[r * cols + c0..r * cols + c0 + v.len()];
        let f = beta * dot(row, v);
        axpy(row, -f, v);
    }
}

/// An upper bidiagonal matrix (diagonal `d`, superdiagonal `f`) and the reflectors that
/// produced it from a tall `m x n` matrix.
struct Bidiagonal<T> {
    d: Vec<T>,
    f: Vec<T>,
    /// Left reflector `k`: `v` over rows `k..m` (stored `m - k` long each, packed).
    left: Vec<(Vec<T>, T)>,
    /// Right reflector `k`: `v` over columns `k+1..n`.
    right: Vec<(Vec<T>, T)>,
}

/// Reduces the row-major `m x n` matrix `a` (`m >= n`; overwritten) to upper bidiagonal form.
fn bidiagonalize<T: Field>(a: &mut [T], m: usize, n: usize) -> Bidiagonal<T> {
    let mut b = Bidiagonal { d: vec![T::ZERO; n], f: vec![T::ZERO; n.saturating_sub(1)], left: vec![], right: vec![] };
    let mut w = vec![T::ZERO; n];
    for k in 0..n {
        // Left: zero column k below the diagonal. H A = A - β v (vᵀ A), row by row.
        let mut v: Vec<T> = (k..m).map(|i| a[i * n + k]).collect();
        let (alpha, beta) = make_reflector(&mut v);
        b.d[k] = alpha;
        if beta != T::ZERO && k + 1 < n {
            let w = &mut w[k + 1..n];
            w.fill(T::ZERO);
            for (i, &vi) in v.iter().enumerate() {
                axpy(w, vi, &a[(k + i) * n + k + 1..(k + i) * n + n]);
            }
            for (i, &vi) in v.iter().enumerate() {
                axpy(&mut a[(k + i) * n + k + 1..(k + i) * n + n], -beta * vi, w);
            }
        }
        b.left.push((v, beta));
        if k + 1 >= n {
            break;
        }
        // Right: zero row k right of the superdiagonal. A H = A - β (A v) vᵀ, row by row.
        let mut v = a[k * n + k + 1..k * n + n].to_vec();
        let (alpha, beta) = make_reflector(&mut v);
        b.f[k] = alpha;
        if beta != T::ZERO {
            reflect_rows(a, n, k + 1..m, k + 1, &v, beta);
        }
        b.right.push((v, beta));
    }
    b
}

/// `(c, s, r)` with `c x - s z = r = hypot(x, z)` and `s x + c z = 0`.
fn givens<T: Field>(x: T, z: T) -> (T, T, T) {
    let r = x.hypot(z);
    if r == T::ZERO {
        (T::ONE, T::ZERO, r)
    } else {
        (x / r, -z / r, r)
    }
}

/// The rows of `Uᵀ` and `Vᵀ` the sweeps rotate, when the vectors are wanted.
struct Vectors<'a, T> {
    ut: &'a mut [T],
    u_len: usize,
    vt: &'a mut [T],
    v_len: usize,
}

/// Diagonalizes the upper bidiagonal `(d, f)` by implicit QR sweeps with a Wilkinson shift
/// (Golub–Kahan), deflating negligible superdiagonal entries and chasing out the row or column
/// of a negligible diagonal entry; every rotation is applied to the rows of `Uᵀ` (left) or `Vᵀ`
/// (right). Returns whether it converged (30 sweeps per singular value at most).
fn bidiagonal_qr<T: Field>(d: &mut [T], f: &mut [T], mut vectors: Option<Vectors<'_, T>>) -> bool {
    let n = d.len();
    let bnorm = d.iter().chain(f.iter()).fold(T::ZERO, |m, x| if x.abs() > m { x.abs() } else { m });
    let tiny = T::EPSILON * bnorm;
    let two = T::from_f64(2.0);
    let mut sweeps = 0;
    let mut h = n.saturating_sub(1);
    while h > 0 {
        let l = unreduced_block(d, f, h);
        if l == h {
            h -= 1;
            continue;
        }
        // Every sweep and chase counts: a NaN (which no deflation test passes) cannot loop.
        sweeps += 1;
        if sweeps > 30 * n {
            return false;
        }
        if let Some(k) = (l..h).find(|&k| d[k].abs() <= tiny) {
            // Row k is `f[k]` alone: rotations with rows k+1..=h push it right and out.
            d[k] = T::ZERO;
            let mut x = f[k];
            f[k] = T::ZERO;
            for j in k + 1..=h {
                let r = x.hypot(d[j]);
                let (c, s) = if r == T::ZERO { (T::ONE, T::ZERO) } else { (d[j] / r, x / r) };
                d[j] = r;
                if j < h {
                    x = -s * f[j];
                    f[j] = c * f[j];
                }
                if let Some(v) = vectors.as_mut() {
                    rotate_rows(v.ut, v.u_len, k, j, c, s);
                }
            }
            continue;
        }
        if d[h].abs() <= tiny {
            // Column h is `f[h-1]` alone: rotations with columns h-1..=l push it up and out.
            d[h] = T::ZERO;
            let mut x = f[h - 1];
            f[h - 1] = T::ZERO;
            for j in (l..h).rev() {
                let r = d[j].hypot(x);
                let (c, s) = if r == T::ZERO { (T::ONE, T::ZERO) } else { (d[j] / r, -x / r) };
                d[j] = r;
                if j > l {
                    x = s * f[j - 1];
                    f[j - 1] = c * f[j - 1];
                }
                if let Some(v) = vectors.as_mut() {
                    rotate_rows(v.vt, v.v_len, j, h, c, s);
                }
            }
            continue;
        }
        // Wilkinson's shift from the trailing 2 x 2 block of BᵀB.
        let t11 = d[h - 1] * d[h - 1] + if h - 1 > l { f[h - 2] * f[h - 2] } else { T::ZERO };
        let t12 = d[h - 1] * f[h - 1];
        let t22 = d[h] * d[h] + f[h - 1] * f[h - 1];
        let delta = (t11 - t22) / two;
        let root = delta.hypot(t12);
        let denominator = if delta < T::ZERO { delta - root } else { delta + root };
        let mu = if denominator == T::ZERO { t22 } else { t22 - t12 * (t12 / denominator) };
        let (mut y, mut z) = (d[l] * d[l] - mu, d[l] * f[l]);
        for k in l..h {
            // From the right (columns k, k+1): starts the bulge, or moves it from (k-1, k+1) to
            // (k+1, k).
            let (c, s, r) = givens(y, z);
            if k > l {
                f[k - 1] = r;
            }
            let (dk, fk, dn) = (d[k], f[k], d[k + 1]);
            d[k] = c * dk - s * fk;
            f[k] = s * dk + c * fk;
            let bulge = -s * dn;
            d[k + 1] = c * dn;
            if let Some(v) = vectors.as_mut() {
                rotate_rows(v.vt, v.v_len, k, k + 1, c, s);
            }
            // From the left (rows k, k+1): moves it from (k+1, k) to (k, k+2).
            let (c, s, r) = givens(d[k], bulge);
            d[k] = r;
            let (fk, dn) = (f[k], d[k + 1]);
            f[k] = c * fk - s * dn;
            d[k + 1] = s * fk + c * dn;
            if k + 1 < h {
                let next = f[k + 1];
                z = -s * next;
                f[k + 1] = c * next;
                y = f[k];
            }
            if let Some(v) = vectors.as_mut() {
                rotate_rows(v.ut, v.u_len, k, k + 1, c, s);
            }
        }
    }
    true
}

/// One matrix's factors.
struct Factors<T> {
    u: Vec<T>,
    s: Vec<T>,
    vh: Vec<T>,
}

/// The SVD of the row-major `m x n` matrix `a`, whose entries are finite: `U` row-major
/// `m x uc`, `S` (descending), `Vᴴ` row-major `vr x n` (`uc = vr = min(m, n)` unless `full`);
/// `None` if the sweeps did not converge.
fn svd_matrix<T: Field>(a: &[T], m: usize, n: usize, full: bool, compute_uv: bool) -> Option<Factors<T>> {
    // A wide matrix is factored through its transpose: Aᵀ = U' S V'ᵀ gives U = V', Vᵀ = U'ᵀ.
    let tall = m >= n;
    let (rows, cols) = if tall { (m, n) } else { (n, m) };
    // Scaled by a power of two (exactly) to a largest entry in [1, 2), so that no square in the
    // reflectors or shifts overflows or underflows.
    let amax = a.iter().fold(0.0f64, |s, x| s.max(x.to_f64().abs()));
    let exponent = if amax > 0.0 { amax.log2().floor() as i32 } else { 0 };
    let factor = T::from_f64(2f64.powi(-exponent));
    let mut w = vec![T::ZERO; rows * cols];
    for i in 0..m {
        for j in 0..n {
            let at = if tall { i * n + j } else { j * m + i };
            w[at] = a[i * n + j] * factor;
        }
    }
    let Bidiagonal { mut d, mut f, left, right } = bidiagonalize(&mut w, rows, cols);
    // Uᵀ (u_rows x rows) = Eᵀ H_{cols-1} … H_0 and Vᵀ (cols x cols) = G_{cols-2} … G_0, each
    // reflector applied from the right with k descending (it touches only rows and columns
    // from k on).
    let u_rows = if full { rows } else { cols };
    let identity = |r: usize, c: usize| {
        let mut x = vec![T::ZERO; r * c];
        (0..r.min(c)).for_each(|i| x[i * c + i] = T::ONE);
        x
    };
    let (mut ut, mut vt) = (vec![], vec![]);
    if compute_uv {
        ut = identity(u_rows, rows);
        for (k, (v, beta)) in left.iter().enumerate().rev() {
            if *beta != T::ZERO {
                reflect_rows(&mut ut, rows, k..u_rows, k, v, *beta);
            }
        }
        vt = identity(cols, cols);
        for (k, (v, beta)) in right.iter().enumerate().rev() {
            if *beta != T::ZERO {
                reflect_rows(&mut vt, cols, k + 1..cols, k + 1, v, *beta);
            }
        }
    }
    let vectors = compute_uv.then(|| Vectors { ut: &mut ut, u_len: rows, vt: &mut vt, v_len: cols });
    if !bidiagonal_qr(&mut d, &mut f, vectors) {
        return None;
    }
    // Nonnegative singular values (a sign moves into Vᵀ), descending.
    for (i, x) in d.iter_mut().enumerate() {
        if *x < T::ZERO {
            *x = -*x;
            if compute_uv {
                vt[i * cols..(i + 1) * cols].iter_mut().for_each(|y| *y = -*y);
            }
        }
    }
    let mut order: Vec<usize> = (0..cols).collect();
    order.sort_by(|&i, &j| d[j].partial_cmp(&d[i]).unwrap_or(std::cmp::Ordering::Equal));
    let unscale = T::from_f64(2f64.powi(exponent));
    let s = order.iter().map(|&i| d[i] * unscale).collect();
    if !compute_uv {
        return Some(Factors { u: vec![], s, vh: vec![] });
    }
    // Rows of Uᵀ past `cols` (the full factor's completion) keep their place.
    let u_order: Vec<usize> = order.iter().copied().chain(cols..u_rows).collect();
    let ut: Vec<T> = u_order.iter().flat_map(|&i| ut[i * rows..(i + 1) * rows].iter().copied()).collect();
    let vt: Vec<T> = order.iter().flat_map(|&i| vt[i * cols..(i + 1) * cols].iter().copied()).collect();
    let transpose = |x: &[T], r: usize, c: usize| {
        let mut t = vec![T::ZERO; r * c];
        for i in 0..r {
            for j in 0..c {
                t[j * r + i] = x[i * c + j];
            }
        }
        t
    };
    // Tall: U = (Uᵀ)ᵀ, Vᴴ = Vᵀ. Wide: U = V' = (Vᵀ)ᵀ, Vᴴ = U'ᵀ.
    Some(if tall {
        Factors { u: transpose(&ut, u_rows, rows), s, vh: vt }
    } else {
        Factors { u: transpose(&vt, cols, cols), s, vh: ut }
    })
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
    // A batch with nothing to write (whose count may be anything) is not walked.
    let writes = count > 0 && (k > 0 || (compute_uv && per_u + per_vh > 0));
    for b in (0..count).filter(|_| writes) {
        let matrix = &data[b * per_a..(b + 1) * per_a];
        let at = || if a.dim() > 2 { format!("(Batch element {b}): ") } else { String::new() };
        if matrix.iter().any(|x| x.is_nan()) {
            return Err(Error::runtime(format!(
                "{OP}: {}The algorithm failed to converge because the input matrix contained non-finite values.",
                at()
            )));
        }
        let f = if matrix.iter().all(|x| x.is_finite()) {
            svd_matrix(matrix, mu, nu, full, compute_uv).ok_or_else(|| {
                Error::runtime(format!(
                    "{OP}: {}The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values.",
                    at()
                ))
            })?
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
