//! `linalg_qr` and `geqrf`: `A = Q R` by Householder reflections, with LAPACK's conventions (`geqrf`'s
//! reflector `H = I - τ v vᵀ`, `v₀ = 1`, `R[j, j] = -sign(A[j, j]) ‖x‖`), so `Q` and `R` come
//! out with the signs PyTorch's do. Row-major throughout: a reflection of a block of rows is a
//! sum of rows (`w = vᵀ B`) and a rank-one update of rows, both along contiguous rows.

use super::{
    batch_dims, broadcast_matrices, check_floating, check_is_matrix, elems, matrix_dims, with_field, zeros_vec, Field,
};
use crate::generated::decls::{GeqrfCpu, LinalgQrCpu};
use crate::Cpu;
use oxten_runtime::{Error, Result, Tensor};

/// `y += a x`.
pub(super) fn axpy<T: Field>(y: &mut [T], a: T, x: &[T]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y = *y + a * x;
    }
}

/// Applies `H = I - τ v vᵀ` from the left to columns `c0..` of rows `r0..` of the row-major
/// `rows x cols` matrix `b`, where `v = [1, v[1..]]` (`v[i]` for row `r0 + i`); `w` is scratch of
/// `cols - c0` elements.
fn apply_reflector<T: Field>(b: &mut [T], cols: usize, r0: usize, c0: usize, v: &[T], tau: T, w: &mut [T]) {
    w.fill(T::ZERO);
    for (i, &vi) in v.iter().enumerate() {
        let row = (r0 + i) * cols;
        axpy(w, vi, &b[row + c0..row + cols]);
    }
    for (i, &vi) in v.iter().enumerate() {
        let row = (r0 + i) * cols;
        axpy(&mut b[row + c0..row + cols], -(tau * vi), w);
    }
}

/// Factors the row-major `m x n` matrix `a` in place (LAPACK's `geqrf`): `R` on and above the
/// diagonal, the reflectors' `v[1..]` below it; returns the `τ`s.
fn geqrf<T: Field>(a: &mut [T], m: usize, n: usize) -> Vec<T> {
    let k = m.min(n);
    let mut taus = vec![T::ZERO; k];
    let mut v = vec![T::ZERO; m];
    let mut w = vec![T::ZERO; n];
    for j in 0..k {
        let alpha = a[j * n + j];
        let xnorm = (j + 1..m).fold(T::ZERO, |s, i| s.hypot(a[i * n + j]));
        if xnorm == T::ZERO {
            // Already upper triangular in this column: `H = I`.
            continue;
        }
        let norm = alpha.hypot(xnorm);
        let beta = if alpha >= T::ZERO { -norm } else { norm };
        taus[j] = (beta - alpha) / beta;
        let scale = T::ONE / (alpha - beta);
        v[0] = T::ONE;
        for i in j + 1..m {
            a[i * n + j] = a[i * n + j] * scale;
            v[i - j] = a[i * n + j];
        }
        a[j * n + j] = beta;
        if j + 1 < n {
            apply_reflector(a, n, j, j + 1, &v[..m - j], taus[j], &mut w[..n - j - 1]);
        }
    }
    taus
}

/// `Q`'s first `qc` columns (`qc = k` or `m`), row-major `m x qc`: the reflectors applied in
/// reverse order to the identity (LAPACK's `orgqr`).
fn orgqr<T: Field>(a: &[T], taus: &[T], m: usize, n: usize, qc: usize) -> Vec<T> {
    let mut q = vec![T::ZERO; m * qc];
    for i in 0..m.min(qc) {
        q[i * qc + i] = T::ONE;
    }
    let mut v = vec![T::ZERO; m];
    let mut w = vec![T::ZERO; qc];
    for j in (0..taus.len()).rev() {
        if taus[j] == T::ZERO {
            continue;
        }
        v[0] = T::ONE;
        for i in j + 1..m {
            v[i - j] = a[i * n + j];
        }
        apply_reflector(&mut q, qc, j, j, &v[..m - j], taus[j], &mut w[..qc - j]);
    }
    q
}

/// The modes of `linalg_qr`: whether `Q` is computed, and whether it is `m x m`.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Reduced,
    Complete,
    ROnly,
}

fn parse_mode(mode: &str) -> Result<Mode> {
    match mode {
        "reduced" => Ok(Mode::Reduced),
        "complete" => Ok(Mode::Complete),
        "r" => Ok(Mode::ROnly),
        _ => Err(Error::runtime(format!(
            "qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        ))),
    }
}

fn qr_typed<T: Field>(a: &Tensor, mode: Mode) -> Result<(Tensor, Tensor)> {
    let (m, n) = matrix_dims(a);
    let (mu, nu) = (m as usize, n as usize);
    let k = mu.min(nu);
    let batch = batch_dims(a);
    let (mut data, count) = broadcast_matrices::<T>(a, &batch)?;
    let (qc, rr) = if mode == Mode::Complete { (mu, mu) } else { (k, k) };
    let (per_a, per_q, per_r) = (elems("linalg.qr", mu, nu)?, elems("linalg.qr", mu, qc)?, elems("linalg.qr", rr, nu)?);
    let mut q = zeros_vec::<T>(count, per_q)?;
    let mut r = zeros_vec::<T>(count, per_r)?;
    if per_a > 0 {
        for (b, matrix) in data.chunks_exact_mut(per_a).enumerate() {
            let taus = geqrf(matrix, mu, nu);
            let rb = &mut r[b * per_r..(b + 1) * per_r];
            for i in 0..rr.min(mu) {
                rb[i * nu + i.min(nu)..i * nu + nu].copy_from_slice(&matrix[i * nu + i.min(nu)..i * nu + nu]);
            }
            if mode != Mode::ROnly && qc > 0 {
                q[b * per_q..(b + 1) * per_q].copy_from_slice(&orgqr(matrix, &taus, mu, nu, qc));
            }
        }
    } else if mode == Mode::Complete {
        // No columns to reflect: `Q` is the identity.
        for b in 0..count {
            for i in 0..mu {
                q[b * mu * mu + i * mu + i] = T::ONE;
            }
        }
    }
    let with = |rows: usize, cols: usize| {
        let mut s = batch.clone();
        s.extend([rows as i64, cols as i64]);
        s
    };
    let q = if mode == Mode::ROnly {
        Tensor::from_vec(Vec::<T>::new(), &[0])?
    } else {
        Tensor::from_vec(q, &with(mu, qc))?
    };
    Ok((q, Tensor::from_vec(r, &with(rr, nu))?))
}

impl LinalgQrCpu for Cpu {
    fn linalg_qr(a: &Tensor, mode: &str) -> Result<(Tensor, Tensor)> {
        const OP: &str = "linalg.qr";
        let mode = parse_mode(mode)?;
        check_is_matrix(OP, "A", a)?;
        check_floating(OP, a)?;
        with_field!(a.dtype(), T => qr_typed::<T>(a, mode))
    }
}

fn geqrf_typed<T: Field>(a: &Tensor) -> Result<(Tensor, Tensor)> {
    let (m, n) = matrix_dims(a);
    let (mu, nu) = (m as usize, n as usize);
    let k = mu.min(nu);
    let batch = batch_dims(a);
    let (mut data, count) = broadcast_matrices::<T>(a, &batch)?;
    let mut taus = zeros_vec::<T>(count, k)?;
    let per_a = elems("torch.geqrf", mu, nu)?;
    if per_a > 0 {
        for (matrix, t) in data.chunks_exact_mut(per_a).zip(taus.chunks_exact_mut(k)) {
            t.copy_from_slice(&geqrf(matrix, mu, nu));
        }
    }
    let mut tau_shape = batch.clone();
    tau_shape.push(k as i64);
    Ok((Tensor::from_vec(data, &a.sizes())?, Tensor::from_vec(taus, &tau_shape)?))
}

impl GeqrfCpu for Cpu {
    fn geqrf(a: &Tensor) -> Result<(Tensor, Tensor)> {
        if a.dim() < 2 {
            return Err(Error::runtime("torch.geqrf: input must have at least 2 dimensions."));
        }
        check_floating("torch.geqrf", a)?;
        with_field!(a.dtype(), T => geqrf_typed::<T>(a))
    }
}
