//! `linalg_lu_factor_ex`: `A = P L U` with partial pivoting (LAPACK's `getrf`), one matrix at a
//! time in the right-looking order: pick the largest magnitude in the column (the first of
//! equals, as `idamax`), swap it up, scale the column below it and update the trailing rows.

use super::{broadcast_matrices, check_floating, check_info, matrix_dims, with_field, zeros_vec, Field};
use crate::generated::decls::LinalgLuFactorExCpu;
use crate::Cpu;
use oxten_runtime::{Error, Result, Tensor};

/// Columns per panel of the blocked factorization of a matrix with `k = min(m, n)` pivots: the
/// panel is factored column by column and the rest of the matrix is then updated by one matrix
/// product (`gemm`), where most of the work is. Wider panels make fewer, deeper products
/// (measured on this host: 32 columns best at 256², 64 at 512²).
fn panel_width(k: usize) -> usize {
    if k >= 512 {
        64
    } else {
        32
    }
}

/// Factors the row-major `m x n` matrix `a` in place (`L` below the diagonal, `U` on and above
/// it), writing the 1-based row swaps into `pivots` (`min(m, n)` of them). Returns LAPACK's
/// `info`: 0, or `j + 1` for the first zero pivot `U[j, j]` (the factorization goes on past it).
///
/// Blocked as LAPACK's `getrf` (right-looking): for each panel of [`panel_width`] columns, factor the
/// panel ([`factor_columns`]), solve for the block of `U` to its right (`U12 = L11⁻¹ A12`), and
/// subtract `L21 U12` from the trailing matrix.
fn factor<T: Field>(a: &mut [T], m: usize, n: usize, pivots: &mut [i32]) -> i32 {
    let k = m.min(n);
    let panel = panel_width(k);
    if k <= 2 * panel {
        return factor_columns(a, m, n, 0, k, n, pivots);
    }
    let mut info = 0;
    for j0 in (0..k).step_by(panel) {
        let nb = panel.min(k - j0);
        let panel_info = factor_columns(a, m, n, j0, nb, j0 + nb, pivots);
        if info == 0 {
            info = panel_info;
        }
        let right = j0 + nb;
        if right == n {
            continue;
        }
        // U12 = L11⁻¹ A12: rows j0..right, columns right..n (L11 unit lower).
        for i in j0 + 1..right {
            let (above, from_i) = a.split_at_mut(i * n);
            for r in j0..i {
                let l = from_i[r];
                if l != T::ZERO {
                    for (x, &u) in from_i[right..n].iter_mut().zip(&above[r * n + right..r * n + n]) {
                        *x = *x - l * u;
                    }
                }
            }
        }
        if right == m {
            continue;
        }
        // A22 -= L21 U12.
        let (rows, cols) = (m - right, n - right);
        let par = if rows * cols * nb >= 64 * 64 * 64 {
            gemm::Parallelism::Rayon(oxten_runtime::parallel::threads_now())
        } else {
            gemm::Parallelism::None
        };
        let base = a.as_mut_ptr();
        let one = T::from_f64(1.0);
        // SAFETY: the three blocks lie inside `a` (row stride `n`): L21 is rows right..m,
        // columns j0..right; U12 rows j0..right, columns right..n; A22 rows right..m, columns
        // right..n. A22 overlaps neither of the blocks read; `gemm` writes `A22 + (-1) L21 U12`.
        unsafe {
            gemm::gemm(
                rows,
                cols,
                nb,
                base.add(right * n + right),
                1,
                n as isize,
                true,
                base.add(right * n + j0) as *const T,
                1,
                n as isize,
                base.add(j0 * n + right) as *const T,
                1,
                n as isize,
                one,
                -one,
                false,
                false,
                false,
                par,
            );
        }
    }
    info
}

/// Factors columns `j0 .. j0 + nb` of the row-major `m x n` matrix `a` with partial pivoting:
/// the pivot is the largest magnitude in the column (the first of equals, as `idamax`), its row
/// swapped up across all `n` columns, the column below it scaled, and the rows below updated in
/// columns up to `update_to` (the whole matrix when unblocked, the panel when blocked). Returns
/// the first zero pivot's `j + 1`, or 0.
fn factor_columns<T: Field>(
    a: &mut [T],
    m: usize,
    n: usize,
    j0: usize,
    nb: usize,
    update_to: usize,
    pivots: &mut [i32],
) -> i32 {
    let mut info = 0;
    for j in j0..j0 + nb {
        let mut p = j;
        let mut best = a[j * n + j].abs();
        for i in j + 1..m {
            let v = a[i * n + j].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        pivots[j] = (p + 1) as i32;
        let pivot = a[p * n + j];
        if pivot == T::ZERO {
            if info == 0 {
                info = (j + 1) as i32;
            }
            continue;
        }
        if p != j {
            let (top, bottom) = a.split_at_mut(p * n);
            top[j * n..j * n + n].swap_with_slice(&mut bottom[..n]);
        }
        let (done, below) = a.split_at_mut((j + 1) * n);
        let row_j = &done[j * n + j + 1..j * n + update_to];
        for row in below.chunks_exact_mut(n) {
            let l = row[j] / pivot;
            row[j] = l;
            if l != T::ZERO {
                for (x, &u) in row[j + 1..update_to].iter_mut().zip(row_j) {
                    *x = *x - l * u;
                }
            }
        }
    }
    info
}

fn lu_typed<T: Field>(a: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
    let (m, n) = matrix_dims(a);
    let batch = super::batch_dims(a);
    let (mut data, count) = broadcast_matrices::<T>(a, &batch)?;
    let (mu, nu) = (m as usize, n as usize);
    let k = mu.min(nu);
    let mut pivots = zeros_vec::<i32>(count, k)?;
    let mut info = zeros_vec::<i32>(count, 1)?;
    // An empty batch or empty matrices (whose `m * n` may wrap): nothing to factor.
    if !data.is_empty() {
        for ((matrix, piv), inf) in data.chunks_exact_mut(mu * nu).zip(pivots.chunks_exact_mut(k)).zip(&mut info) {
            *inf = factor(matrix, mu, nu, piv);
        }
    }
    let mut piv_shape = batch.clone();
    piv_shape.push(k as i64);
    Ok((Tensor::from_vec(data, &a.sizes())?, Tensor::from_vec(pivots, &piv_shape)?, Tensor::from_vec(info, &batch)?))
}

impl LinalgLuFactorExCpu for Cpu {
    fn linalg_lu_factor_ex(a: &Tensor, pivot: bool, check_errors: bool) -> Result<(Tensor, Tensor, Tensor)> {
        const OP: &str = "torch.linalg.lu_factor";
        if a.dim() < 2 {
            return Err(Error::runtime(format!(
                "{OP}: Expected tensor with 2 or more dimensions. Got size: {:?} instead",
                a.sizes()
            )));
        }
        check_floating(OP, a)?;
        if !pivot {
            return Err(Error::runtime("linalg.lu_factor: LU without pivoting is not implemented on the CPU"));
        }
        let (lu, pivots, info) = with_field!(a.dtype(), T => lu_typed::<T>(a))?;
        if check_errors {
            check_info(&info, "torch.linalg.lu_factor_ex", |i| {
                format!(
                    "U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If you still want \
                     to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
                )
            })?;
        }
        Ok((lu, pivots, info))
    }
}
