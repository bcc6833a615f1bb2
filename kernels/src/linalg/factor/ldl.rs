//! `linalg_ldl_factor_ex` and `linalg_ldl_solve`: the Bunch–Kaufman factorization `A = L D Lᵀ`
//! of a (batch of) symmetric matrices, read from the lower triangle, with LAPACK's `sytrf`
//! conventions so that the factors and pivots equal PyTorch's: `D` block diagonal with 1 x 1 and
//! 2 x 2 blocks (on the diagonal and first subdiagonal of `LD`), the unit lower `L`'s multipliers
//! below them, and 1-based int32 `pivots` (`p > 0`: a 1 x 1 block with rows and columns `k` and
//! `p - 1` swapped; `pivots[k] = pivots[k+1] = -p`: a 2 x 2 block, rows and columns `k + 1` and
//! `p - 1` swapped). As in LAPACK's unblocked `sytf2`, each interchange applies to the trailing
//! matrix only, so `L` is the product of the steps' permuted factors. The solve is `sytrs`;
//! `linalg_ldl_factor` is the factorization that raises for a singular `D`.

use super::{
    batch_dims, broadcast_matrices, check_floating, check_info, check_square, elems, matrix_dims, with_field,
    zeros_vec, Field,
};
use crate::generated::decls::{LinalgLdlFactorCompositeImplicit, LinalgLdlFactorExCpu, LinalgLdlSolveCpu};
use crate::iter::{infer_size, scalar_type_name};
use crate::{Composite, Cpu};
use oxten_runtime::{DType, Error, Result, Tensor};

/// The first index of the largest magnitude among `values` (BLAS's `idamax`: a NaN is never
/// larger), and that magnitude.
fn largest_magnitude<T: Field>(values: impl Iterator<Item = T>) -> (usize, T) {
    let mut best = (0, T::ZERO);
    for (i, x) in values.enumerate() {
        if i == 0 || x.abs() > best.1 {
            best = (i, x.abs());
        }
    }
    best
}

/// Swaps rows and columns `kk < kp` of the trailing lower triangle of the row-major `n x n`
/// matrix `a` (from row and column `k`), as `sytf2` does; with a 2 x 2 pivot (`kk = k + 1`) the
/// entry `(k + 1, k)` trades places with `(kp, k)` too.
fn swap_symmetric<T: Field>(a: &mut [T], n: usize, k: usize, kk: usize, kp: usize) {
    for i in kp + 1..n {
        a.swap(i * n + kk, i * n + kp);
    }
    for j in kk + 1..kp {
        a.swap(j * n + kk, kp * n + j);
    }
    a.swap(kk * n + kk, kp * n + kp);
    if kk > k {
        a.swap(kk * n + k, kp * n + k);
    }
}

/// Factors the row-major `n x n` matrix `a` in place (its lower triangle read; the strict upper
/// triangle is zeroed), writing the pivots; returns LAPACK's `info`: 0, or `k + 1` for the first
/// exactly zero column (the factorization goes on past it).
fn bunch_kaufman<T: Field>(a: &mut [T], n: usize, pivots: &mut [i32]) -> i32 {
    // Bunch and Kaufman's α = (1 + √17) / 8, which bounds the growth of the entries.
    let alpha = (T::ONE + T::from_f64(17.0).sqrt()) / T::from_f64(8.0);
    let mut info = 0;
    let mut k = 0;
    while k < n {
        let mut kstep = 1;
        let absakk = a[k * n + k].abs();
        let (imax, colmax) = if k + 1 < n {
            let (i, m) = largest_magnitude((k + 1..n).map(|i| a[i * n + k]));
            (k + 1 + i, m)
        } else {
            (k, T::ZERO)
        };
        let big = if absakk > colmax { absakk } else { colmax };
        let kp;
        if big == T::ZERO || absakk.is_nan() {
            // A zero column: D[k, k] = 0, nothing to eliminate.
            if info == 0 {
                info = (k + 1) as i32;
            }
            kp = k;
        } else {
            if absakk >= alpha * colmax {
                kp = k;
            } else {
                // The largest off-diagonal magnitude in row and column `imax`.
                let (_, mut rowmax) = largest_magnitude((k..imax).map(|j| a[imax * n + j]));
                if imax + 1 < n {
                    let (_, below) = largest_magnitude((imax + 1..n).map(|i| a[i * n + imax]));
                    if below > rowmax {
                        rowmax = below;
                    }
                }
                if absakk >= alpha * colmax * (colmax / rowmax) {
                    kp = k;
                } else if a[imax * n + imax].abs() >= alpha * rowmax {
                    kp = imax;
                } else {
                    kp = imax;
                    kstep = 2;
                }
            }
            let kk = k + kstep - 1;
            if kp != kk {
                swap_symmetric(a, n, k, kk, kp);
            }
            if kstep == 1 {
                // A[k+1.., k+1..] -= v vᵀ / d, then v /= d (v the column below the pivot).
                let r = T::ONE / a[k * n + k];
                for j in k + 1..n {
                    let t = -r * a[j * n + k];
                    for i in j..n {
                        a[i * n + j] = a[i * n + j] + a[i * n + k] * t;
                    }
                }
                for i in k + 1..n {
                    a[i * n + k] = r * a[i * n + k];
                }
            } else if k + 2 < n {
                // The columns below the 2 x 2 block times its inverse, and the rank-two update.
                let d21 = a[(k + 1) * n + k];
                let d11 = a[(k + 1) * n + k + 1] / d21;
                let d22 = a[k * n + k] / d21;
                let t = T::ONE / (d11 * d22 - T::ONE);
                let d21 = t / d21;
                for j in k + 2..n {
                    let wk = d21 * (d11 * a[j * n + k] - a[j * n + k + 1]);
                    let wkp1 = d21 * (d22 * a[j * n + k + 1] - a[j * n + k]);
                    for i in j..n {
                        a[i * n + j] = a[i * n + j] - a[i * n + k] * wk - a[i * n + k + 1] * wkp1;
                    }
                    a[j * n + k] = wk;
                    a[j * n + k + 1] = wkp1;
                }
            }
        }
        let p = (kp + 1) as i32;
        if kstep == 1 {
            pivots[k] = p;
        } else {
            pivots[k] = -p;
            pivots[k + 1] = -p;
        }
        k += kstep;
    }
    for i in 0..n {
        a[i * n + i + 1..i * n + n].fill(T::ZERO);
    }
    info
}

fn ldl_factor_typed<T: Field>(a: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
    let (n, _) = matrix_dims(a);
    let nu = n as usize;
    let batch = batch_dims(a);
    let (mut data, count) = broadcast_matrices::<T>(a, &batch)?;
    let per_a = elems("torch.linalg.ldl_factor_ex", nu, nu)?;
    let mut pivots = zeros_vec::<i32>(count, nu)?;
    let mut info = zeros_vec::<i32>(count, 1)?;
    if per_a > 0 {
        for ((matrix, piv), inf) in data.chunks_exact_mut(per_a).zip(pivots.chunks_exact_mut(nu)).zip(&mut info) {
            *inf = bunch_kaufman(matrix, nu, piv);
        }
    }
    let mut piv_shape = batch.clone();
    piv_shape.push(n);
    Ok((Tensor::from_vec(data, &a.sizes())?, Tensor::from_vec(pivots, &piv_shape)?, Tensor::from_vec(info, &batch)?))
}

impl LinalgLdlFactorExCpu for Cpu {
    fn linalg_ldl_factor_ex(a: &Tensor, _hermitian: bool, check_errors: bool) -> Result<(Tensor, Tensor, Tensor)> {
        const OP: &str = "torch.linalg.ldl_factor_ex";
        check_square(OP, "A", a)?;
        check_floating(OP, a)?;
        // Real matrices: the Hermitian factorization is the symmetric one.
        let (ld, pivots, info) = with_field!(a.dtype(), T => ldl_factor_typed::<T>(a))?;
        if check_errors {
            check_info(&info, OP, singular_block)?;
        }
        Ok((ld, pivots, info))
    }
}

/// The message for `info = i > 0`: `D[i-1, i-1]` is exactly zero.
fn singular_block(i: i32) -> String {
    format!(
        "The factorization could not be completed because the block diagonal matrix D has an exactly zero \
         diagonal element D[{0},{0}]: the matrix is singular and a solve with it would divide by zero.",
        i - 1
    )
}

/// Checks one matrix's pivots as the factorization writes them: each names a row in `1..=n`,
/// and a 2 x 2 block's two entries agree and fit.
fn check_pivots(pivots: &[i64], n: usize) -> Result<()> {
    const OP: &str = "torch.linalg.ldl_solve";
    let bad = |k: usize| Err(Error::runtime(format!("{OP}: pivots[{k}] = {} is not a valid pivot", pivots[k])));
    let mut k = 0;
    while k < n {
        let p = pivots[k];
        if p == 0 || p.unsigned_abs() as usize > n {
            return bad(k);
        }
        if p > 0 {
            k += 1;
        } else {
            if k + 1 >= n || pivots[k + 1] != p || ((-p) as usize) < k + 2 {
                return bad(k);
            }
            k += 2;
        }
    }
    Ok(())
}

/// Solves `A X = B` in place for the row-major `n x r` right-hand sides `b`, from one matrix's
/// factors `ld` (row-major) and checked `pivots` (LAPACK's `sytrs`): `L D Y = B`, then `Lᵀ X = Y`.
fn ldl_substitute<T: Field>(ld: &[T], pivots: &[i64], b: &mut [T], n: usize, r: usize) {
    let swap_rows = |b: &mut [T], i: usize, j: usize| {
        if i != j {
            for c in 0..r {
                b.swap(i * r + c, j * r + c);
            }
        }
    };
    // b[rows] -= l ⊗ b[row], the multipliers `l` of column `col` from row `from` on.
    let eliminate = |b: &mut [T], col: usize, row: usize, from: usize| {
        let (head, tail) = b.split_at_mut(from * r);
        let src = &head[row * r..row * r + r];
        for (i, dst) in tail.chunks_exact_mut(r).enumerate() {
            let l = ld[(from + i) * n + col];
            for (x, &y) in dst.iter_mut().zip(src) {
                *x = *x - l * y;
            }
        }
    };
    let mut k = 0;
    while k < n {
        if pivots[k] > 0 {
            swap_rows(b, k, (pivots[k] - 1) as usize);
            eliminate(b, k, k, k + 1);
            let d = ld[k * n + k];
            b[k * r..k * r + r].iter_mut().for_each(|x| *x = *x / d);
            k += 1;
        } else {
            swap_rows(b, k + 1, (-pivots[k] - 1) as usize);
            eliminate(b, k, k, k + 2);
            eliminate(b, k + 1, k + 1, k + 2);
            // The 2 x 2 block [[a, c], [c, d]] inverted as LAPACK does (scaled by c).
            let c = ld[(k + 1) * n + k];
            let a = ld[k * n + k] / c;
            let d = ld[(k + 1) * n + k + 1] / c;
            let denom = a * d - T::ONE;
            for j in 0..r {
                let (x0, x1) = (b[k * r + j] / c, b[(k + 1) * r + j] / c);
                b[k * r + j] = (d * x0 - x1) / denom;
                b[(k + 1) * r + j] = (a * x1 - x0) / denom;
            }
            k += 2;
        }
    }
    // b[row] -= Σ_{i > last} l_i b[i], the multipliers of column `col`.
    let back = |b: &mut [T], col: usize, row: usize, last: usize| {
        let (head, tail) = b.split_at_mut(last * r);
        let dst = &mut head[row * r..row * r + r];
        for (i, src) in tail.chunks_exact(r).enumerate() {
            let l = ld[(last + i) * n + col];
            for (x, &y) in dst.iter_mut().zip(src) {
                *x = *x - l * y;
            }
        }
    };
    let mut k = n;
    while k > 0 {
        let kk = k - 1;
        if pivots[kk] > 0 {
            back(b, kk, kk, kk + 1);
            swap_rows(b, kk, (pivots[kk] - 1) as usize);
            k -= 1;
        } else {
            back(b, kk, kk, kk + 1);
            back(b, kk - 1, kk - 1, kk + 1);
            swap_rows(b, kk, (-pivots[kk] - 1) as usize);
            k -= 2;
        }
    }
}

fn ldl_solve_typed<T: Field>(ld: &Tensor, pivots: &Tensor, b: &Tensor, batch: &[i64]) -> Result<Tensor> {
    const OP: &str = "torch.linalg.ldl_solve";
    let (n, _) = matrix_dims(ld);
    let (_, r) = matrix_dims(b);
    let (nu, ru) = (n as usize, r as usize);
    let (ld_data, count) = broadcast_matrices::<T>(ld, batch)?;
    let mut piv_shape = batch.to_vec();
    piv_shape.push(n);
    let piv_data = oxten_runtime::ops::to_dtype::call(&pivots.try_expand(&piv_shape)?, DType::I64, false, false, None)?
        .to_vec::<i64>()?;
    let (mut b_data, _) = broadcast_matrices::<T>(b, batch)?;
    let (per_ld, per_b) = (elems(OP, nu, nu)?, elems(OP, nu, ru)?);
    if per_ld > 0 && count > 0 {
        for (m, piv) in piv_data.chunks_exact(nu).enumerate() {
            check_pivots(piv, nu)?;
            if per_b > 0 {
                let rhs = &mut b_data[m * per_b..(m + 1) * per_b];
                ldl_substitute(&ld_data[m * per_ld..(m + 1) * per_ld], piv, rhs, nu, ru);
            }
        }
    }
    let mut out_shape = batch.to_vec();
    out_shape.extend([n, r]);
    Tensor::from_vec(b_data, &out_shape)
}

impl LinalgLdlSolveCpu for Cpu {
    fn linalg_ldl_solve(ld: &Tensor, pivots: &Tensor, b: &Tensor, _hermitian: bool) -> Result<Tensor> {
        const OP: &str = "torch.linalg.ldl_solve";
        check_square(OP, "A", ld)?;
        check_floating(OP, ld)?;
        if b.dim() < 2 {
            return Err(Error::runtime(format!(
                "{OP}: Expected B to have at least 2 dimensions, but it has {} dimensions instead",
                b.dim()
            )));
        }
        if b.dtype() != ld.dtype() {
            return Err(Error::runtime(format!(
                "Expected b and A to have the same dtype, but found b of type {} and A of type {} instead.",
                scalar_type_name(b.dtype()),
                scalar_type_name(ld.dtype())
            )));
        }
        let (n, _) = matrix_dims(ld);
        let (rows, cols) = matrix_dims(b);
        if rows != n {
            return Err(Error::runtime(format!(
                "Incompatible matrix sizes for {OP}: each A matrix is {n} by {n} but each b matrix is {rows} by {cols}"
            )));
        }
        let ld_sizes = ld.sizes();
        if pivots.sizes()[..] != ld_sizes[..ld_sizes.len() - 1] {
            return Err(Error::runtime(format!(
                "{OP}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape {:?} instead",
                pivots.sizes()
            )));
        }
        if !matches!(pivots.dtype(), DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64) {
            return Err(Error::runtime(format!(
                "{OP}: Expected pivots to be integers. Got {}",
                scalar_type_name(pivots.dtype())
            )));
        }
        let batch = infer_size(&batch_dims(ld), &batch_dims(b))?;
        with_field!(ld.dtype(), T => ldl_solve_typed::<T>(ld, pivots, b, &batch))
    }
}

impl LinalgLdlFactorCompositeImplicit for Composite {
    fn linalg_ldl_factor(a: &Tensor, hermitian: bool) -> Result<(Tensor, Tensor)> {
        let (ld, pivots, info) = oxten_runtime::ops::linalg_ldl_factor_ex::call(a, hermitian, false)?;
        check_info(&info, "torch.linalg.ldl_factor", singular_block)?;
        Ok((ld, pivots))
    }
}
