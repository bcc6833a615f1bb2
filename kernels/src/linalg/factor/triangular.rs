//! `linalg_solve_triangular`: `A X = B` (or `X A = B`) by substitution, for a (broadcast batch
//! of) triangular `A`. A right solve is the left solve of the transposed system `Aᵀ Xᵀ = Bᵀ`.

use super::{
    batch_dims, broadcast_matrices, check_equation_shapes, check_solver_operands, dot, matrix_dims, with_field, Field,
};
use crate::generated::decls::LinalgSolveTriangularCpu;
use crate::iter::infer_size;
use crate::Cpu;
use oxten_runtime::{Result, Tensor};

/// Overwrites the row-major `n x k` matrix `x` (holding `B`) with `A⁻¹ B` for the row-major
/// `n x n` triangular `a`, reading only its `upper` or lower triangle (not its diagonal when
/// `unit`). Row `i` of the solution is row `i` of `B` less the rows solved before it, scaled by
/// `A[i, ·]`, then divided by `A[i, i]`: whole rows at a time.
fn solve_left<T: Field>(a: &[T], x: &mut [T], n: usize, k: usize, upper: bool, unit: bool) {
    if k < FEW_COLUMNS && n > k {
        return solve_columns(a, x, n, k, upper, unit);
    }
    let row_step = |x: &mut [T], i: usize, j: usize| {
        let c = a[i * n + j];
        if c != T::ZERO {
            let (lo, hi) = (i.min(j), i.max(j));
            let (first, second) = x.split_at_mut(hi * k);
            let (target, source) = if i < j {
                (&mut first[lo * k..lo * k + k], &second[..k])
            } else {
                (&mut second[..k], &first[lo * k..lo * k + k])
            };
            for (t, &s) in target.iter_mut().zip(source) {
                *t = *t - c * s;
            }
        }
    };
    let finish = |x: &mut [T], i: usize| {
        if !unit {
            let d = a[i * n + i];
            for t in &mut x[i * k..i * k + k] {
                *t = *t / d;
            }
        }
    };
    if upper {
        for i in (0..n).rev() {
            for j in i + 1..n {
                row_step(x, i, j);
            }
            finish(x, i);
        }
    } else {
        for i in 0..n {
            for j in 0..i {
                row_step(x, i, j);
            }
            finish(x, i);
        }
    }
}

/// Below this many right-hand sides (and fewer than the matrix has rows), rows are too short for
/// row operations to pay: each column of `X` is solved on its own, every entry a dot product of
/// a row of `A` with the entries solved before it.
const FEW_COLUMNS: usize = 32;

/// [`solve_left`] one column at a time (`x` row-major `n x k`, copied into a contiguous column).
fn solve_columns<T: Field>(a: &[T], x: &mut [T], n: usize, k: usize, upper: bool, unit: bool) {
    let mut col = vec![T::ZERO; n];
    for c in 0..k {
        for (i, v) in col.iter_mut().enumerate() {
            *v = x[i * k + c];
        }
        let mut solve = |i: usize, known: std::ops::Range<usize>| {
            let s = col[i] - dot(&a[i * n + known.start..i * n + known.end], &col[known]);
            col[i] = if unit { s } else { s / a[i * n + i] };
        };
        if upper {
            for i in (0..n).rev() {
                solve(i, i + 1..n);
            }
        } else {
            for i in 0..n {
                solve(i, 0..i);
            }
        }
        for (i, v) in col.iter().enumerate() {
            x[i * k + c] = *v;
        }
    }
}

/// The left solve of a broadcast batch: `a` `[..., n, n]`, `b` `[..., n, k]`.
fn solve_typed<T: Field>(a: &Tensor, b: &Tensor, upper: bool, unit: bool) -> Result<Tensor> {
    let batch = infer_size(&batch_dims(a), &batch_dims(b))?;
    let (n, k) = matrix_dims(b);
    let (nu, ku) = (n as usize, k as usize);
    let (a_data, count) = broadcast_matrices::<T>(a, &batch)?;
    let (mut x, _) = broadcast_matrices::<T>(b, &batch)?;
    if !x.is_empty() {
        for (am, xm) in a_data.chunks_exact(nu * nu).zip(x.chunks_exact_mut(nu * ku)).take(count) {
            solve_left(am, xm, nu, ku, upper, unit);
        }
    }
    let mut shape = batch;
    shape.extend([n, k]);
    Tensor::from_vec(x, &shape)
}

impl LinalgSolveTriangularCpu for Cpu {
    fn linalg_solve_triangular(a: &Tensor, b: &Tensor, upper: bool, left: bool, unit: bool) -> Result<Tensor> {
        const OP: &str = "linalg.solve_triangular";
        check_solver_operands(OP, ("A", a), b)?;
        check_equation_shapes(OP, a, b, left)?;
        if left {
            return with_field!(a.dtype(), T => solve_typed::<T>(a, b, upper, unit));
        }
        // X A = B  ⇔  Aᵀ Xᵀ = Bᵀ, and Aᵀ is triangular the other way.
        let (at, bt) = (a.try_transpose(-2, -1)?, b.try_transpose(-2, -1)?);
        let xt = with_field!(a.dtype(), T => solve_typed::<T>(&at, &bt, !upper, unit))?;
        oxten_runtime::ops::contiguous::call(&xt.try_transpose(-2, -1)?, oxten_runtime::MemoryFormat::Contiguous)
    }
}
