//! `linalg_cholesky_ex`: `A = L Lᵀ` from the lower triangle of `A` (or `A = Uᵀ U` from its upper
//! triangle), row by row (Cholesky–Banachiewicz: each entry is a dot product of two rows of `L`
//! computed before it).

use super::{broadcast_matrices, check_floating, check_info, check_square, dot, with_field, zeros_vec, Field};
use crate::generated::decls::LinalgCholeskyExCpu;
use crate::Cpu;
use oxten_runtime::{ops, Result, Tensor};

/// Overwrites the lower triangle of the row-major `n x n` matrix `a` with its Cholesky factor and
/// zeroes the strict upper triangle. Returns 0, or `i + 1` when the leading minor of order
/// `i + 1` is not positive-definite; then rows before `i` hold the factor, row `i` the part
/// computed before the failure and later rows `A`'s lower triangle (the opposite triangle zero
/// throughout, as PyTorch's `tril_` leaves it).
fn factor<T: Field>(a: &mut [T], n: usize) -> i32 {
    for i in 0..n {
        for j in 0..=i {
            let (before, from_i) = a.split_at_mut(i * n);
            let row_i = &mut from_i[..n];
            let row_j: &[T] = if j == i { &*row_i } else { &before[j * n..j * n + n] };
            let s = row_i[j] - dot(&row_i[..j], &row_j[..j]);
            if j == i {
                // Not positive, or NaN.
                if s.partial_cmp(&T::ZERO) != Some(std::cmp::Ordering::Greater) {
                    for r in i..n {
                        for x in &mut a[r * n + r + 1..r * n + n] {
                            *x = T::ZERO;
                        }
                    }
                    return (i + 1) as i32;
                }
                row_i[i] = s.sqrt();
            } else {
                row_i[j] = s / row_j[j];
            }
        }
        for x in &mut a[i * n + i + 1..i * n + n] {
            *x = T::ZERO;
        }
    }
    0
}

fn cholesky_typed<T: Field>(a: &Tensor) -> Result<(Tensor, Tensor)> {
    let n = a.sizes()[a.dim() - 1] as usize;
    let batch = super::batch_dims(a);
    let (mut data, count) = broadcast_matrices::<T>(a, &batch)?;
    let mut info = zeros_vec::<i32>(count, 1)?;
    // An empty batch or empty matrices (whose `n * n` may wrap): nothing to factor.
    if !data.is_empty() {
        for (matrix, inf) in data.chunks_exact_mut(n * n).zip(&mut info) {
            *inf = factor(matrix, n);
        }
    }
    Ok((Tensor::from_vec(data, &a.sizes())?, Tensor::from_vec(info, &batch)?))
}

impl LinalgCholeskyExCpu for Cpu {
    fn linalg_cholesky_ex(a: &Tensor, upper: bool, check_errors: bool) -> Result<(Tensor, Tensor)> {
        const OP: &str = "linalg.cholesky";
        check_square(OP, "A", a)?;
        check_floating(OP, a)?;
        // The upper factor of `A` is the transposed lower factor of `Aᵀ`, whose lower triangle
        // is `A`'s upper one.
        let source = if upper { a.try_transpose(-2, -1)? } else { a.clone() };
        let (l, info) = with_field!(a.dtype(), T => cholesky_typed::<T>(&source))?;
        if check_errors {
            check_info(&info, "linalg.cholesky_ex", |i| {
                format!(
                    "The factorization could not be completed because the input is not positive-definite (the \
                     leading minor of order {i} is not positive-definite)."
                )
            })?;
        }
        let l = if upper {
            ops::contiguous::call(&l.try_transpose(-2, -1)?, oxten_runtime::MemoryFormat::Contiguous)?
        } else {
            l
        };
        Ok((l, info))
    }
}
