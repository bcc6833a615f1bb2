//! The composites over `linalg_lu_factor_ex`: `linalg_lu_factor` (raising for a singular
//! matrix), the deprecated `_lu_with_info` (`torch.lu`), `linalg_lu` and `lu_unpack` (the factors as matrices), `linalg_lu_solve` and the
//! deprecated `lu_solve` (two triangular solves of the packed factors and a row permutation).

use super::factor::{batch_dims, check_info, check_solver_operands, matrix_dims};
use crate::generated::decls::{
    LinalgLuCompositeImplicit, LinalgLuFactorCompositeImplicit, LinalgLuSolveCompositeImplicit,
    LuSolveCompositeImplicit, LuUnpackCompositeImplicit, LuWithInfoCompositeImplicit,
};
use crate::iter::infer_size;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

impl LinalgLuFactorCompositeImplicit for Composite {
    fn linalg_lu_factor(a: &Tensor, pivot: bool) -> Result<(Tensor, Tensor)> {
        let (lu, pivots, info) = ops::linalg_lu_factor_ex::call(a, pivot, false)?;
        check_info(&info, "torch.linalg.lu_factor", |i| {
            format!(
                "U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If you still want to \
                 perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
            )
        })?;
        Ok((lu, pivots))
    }
}

impl LuWithInfoCompositeImplicit for Composite {
    fn _lu_with_info(a: &Tensor, pivot: bool, check_errors: bool) -> Result<(Tensor, Tensor, Tensor)> {
        ops::linalg_lu_factor_ex::call(a, pivot, check_errors)
    }
}

impl LinalgLuCompositeImplicit for Composite {
    fn linalg_lu(a: &Tensor, pivot: bool) -> Result<(Tensor, Tensor, Tensor)> {
        let (lu, pivots, _info) = ops::linalg_lu_factor_ex::call(a, pivot, false)?;
        ops::lu_unpack::call(&lu, &pivots, true, pivot)
    }
}

/// The row order LAPACK's swaps `pivots` (1-based, applied in turn) give the `m` rows of each
/// matrix of the batch: `Pᵀ A` has row `perm[i]` of `A` as its row `i`. Errors name `op` for a
/// pivot outside `1..=m`.
fn permutations(op: &str, pivots: &Tensor, m: i64) -> Result<(Vec<i64>, usize)> {
    let swaps = pivots.to_vec::<i32>()?;
    let sizes = pivots.sizes();
    let k = sizes.last().copied().unwrap_or(0) as usize;
    let count = sizes[..sizes.len().saturating_sub(1)].iter().product::<i64>() as usize;
    let mu = m as usize;
    let total = count.checked_mul(mu).ok_or_else(|| Error::runtime(format!("{op}: too many rows")))?;
    let mut perm = oxten_runtime::error::try_vec_with_capacity(total)?;
    for b in 0..count {
        let start = perm.len();
        perm.extend(0..m);
        for (i, &p) in swaps[b * k..(b + 1) * k].iter().enumerate() {
            if p < 1 || p as i64 > m || i >= mu {
                return Err(Error::runtime(format!(
                    "{op}: pivots must hold row numbers in [1, {m}] (as linalg.lu_factor returns them), but one is {p}"
                )));
            }
            perm.swap(start + i, start + p as usize - 1);
        }
    }
    Ok((perm, count))
}

/// The `[..., m]` tensor of row orders of [`permutations`] (or their inverses: `P B` takes row
/// `inv[r]` of `B` as its row `r`), on `device`.
fn permutation_tensor(
    op: &str,
    pivots: &Tensor,
    m: i64,
    device: oxten_runtime::Device,
    inverse: bool,
) -> Result<Tensor> {
    let (mut perm, _) = permutations(op, pivots, m)?;
    if inverse {
        for rows in perm.chunks_mut(m.max(1) as usize) {
            let order = rows.to_vec();
            for (i, &r) in order.iter().enumerate() {
                rows[r as usize] = i as i64;
            }
        }
    }
    let mut shape = pivots.sizes()[..pivots.dim() - 1].to_vec();
    shape.push(m);
    Tensor::from_vec(perm, &shape)?.try_to_device(device)
}

impl LuUnpackCompositeImplicit for Composite {
    fn lu_unpack(
        lu: &Tensor,
        pivots: &Tensor,
        unpack_data: bool,
        unpack_pivots: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        const OP: &str = "torch.lu_unpack";
        if lu.dim() < 2 {
            return Err(Error::runtime(format!(
                "{OP}: Expected tensor with 2 or more dimensions. Got size: {:?} instead",
                lu.sizes()
            )));
        }
        let (m, n) = matrix_dims(lu);
        let k = m.min(n);
        let batch = batch_dims(lu);
        let empty = || ops::empty::call(&[0], Some(lu.dtype()), None, Some(lu.device()), None, None);
        let (l, u) = if unpack_data {
            let l = ops::tril::call(&ops::narrow::call(lu, -1, 0, k)?, -1)?;
            let eye = ops::eye_m::call(m, k, Some(lu.dtype()), None, Some(lu.device()), None)?;
            let u = ops::triu::call(&ops::narrow::call(lu, -2, 0, k)?, 0)?;
            (ops::add::call(&l, &eye, Scalar::Int(1))?, u)
        } else {
            (empty()?, empty()?)
        };
        let p = if unpack_pivots {
            if pivots.dtype() != DType::I32 {
                return Err(Error::runtime(format!(
                    "{OP}: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. Note: this function is \
                     intended to be used with the output produced by torch.linalg.lu_factor"
                )));
            }
            let mut piv_shape = batch.clone();
            piv_shape.push(k);
            if pivots.sizes()[..] != piv_shape[..] {
                return Err(Error::runtime(format!(
                    "{OP}: Expected LU_pivots of shape {piv_shape:?} (LU_data's batch and min(m, n)), but got {:?}",
                    pivots.sizes()
                )));
            }
            // `P` has a one at (perm[i], i): `Pᵀ A` takes row perm[i] of `A` as its row i.
            let (perm, count) = permutations(OP, pivots, m)?;
            let mu = m as usize;
            let mut ones = super::factor::zeros_vec::<f64>(count, mu.saturating_mul(mu))?;
            for (b, rows) in perm.chunks(mu.max(1)).enumerate().take(count) {
                for (i, &r) in rows.iter().enumerate() {
                    ones[b * mu * mu + r as usize * mu + i] = 1.0;
                }
            }
            let mut shape = batch;
            shape.extend([m, m]);
            let p = Tensor::from_vec(ones, &shape)?.try_to_device(lu.device())?;
            ops::to_dtype::call(&p, lu.dtype(), false, false, None)?
        } else {
            empty()?
        };
        Ok((p, l, u))
    }
}

/// Rows of a batch `b` (`[..., n, k]`) gathered by the row orders `perm` (`[..., n]`, the same
/// batch dimensions), differentiably.
fn permute_rows(b: &Tensor, perm: &Tensor) -> Result<Tensor> {
    let index = ops::expand::call(&ops::unsqueeze::call(perm, -1)?, &b.sizes(), false)?;
    ops::gather::call(b, -2, &index, false)
}

impl LinalgLuSolveCompositeImplicit for Composite {
    fn linalg_lu_solve(lu: &Tensor, pivots: &Tensor, b: &Tensor, left: bool, adjoint: bool) -> Result<Tensor> {
        const OP: &str = "linalg.lu_solve";
        check_solver_operands(OP, ("LU", lu), b)?;
        if pivots.dtype() != DType::I32 {
            return Err(Error::runtime(format!("{OP}: pivots should be a Tensor of scalar type torch.int32")));
        }
        let (n, _) = matrix_dims(lu);
        let (rows, cols) = matrix_dims(b);
        if (left && rows != n) || (!left && cols != n) {
            let side = if left { "rows" } else { "columns" };
            return Err(Error::runtime(format!(
                "{OP}: Number of {side} of B must match the number of columns of LU, but got {} and {n}",
                if left { rows } else { cols }
            )));
        }
        if pivots.sizes() != lu.sizes()[..lu.dim() - 1] {
            return Err(Error::runtime(format!(
                "{OP}: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape {:?} instead",
                pivots.sizes()
            )));
        }
        if !left {
            // X A = B  ⇔  Aᵀ Xᵀ = Bᵀ (real dtypes: the adjoint is the transpose).
            let xt = ops::linalg_lu_solve::call(lu, pivots, &ops::transpose::call(b, -2, -1)?, true, !adjoint)?;
            return ops::transpose::call(&xt, -2, -1);
        }
        let batch = infer_size(&batch_dims(lu), &batch_dims(b))?;
        let mut b_shape = batch.clone();
        b_shape.extend([rows, cols]);
        let b = ops::expand::call(b, &b_shape, false)?;
        let mut perm_shape = batch;
        perm_shape.push(n);
        let perm = permutation_tensor(OP, pivots, n, lu.device(), adjoint)?;
        let perm = ops::expand::call(&perm, &perm_shape, false)?;
        if adjoint {
            // Aᵀ X = B with A = P L U: Uᵀ Lᵀ Pᵀ X = B.
            let lu_t = ops::transpose::call(lu, -2, -1)?;
            let y = ops::linalg_solve_triangular::call(&lu_t, &b, false, true, false)?;
            let y = ops::linalg_solve_triangular::call(&lu_t, &y, true, true, true)?;
            permute_rows(&y, &perm)
        } else {
            // L U X = Pᵀ B, reading L (unit diagonal) and U from the packed factors.
            let y = ops::linalg_solve_triangular::call(lu, &permute_rows(&b, &perm)?, false, true, true)?;
            ops::linalg_solve_triangular::call(lu, &y, true, true, false)
        }
    }
}

impl LuSolveCompositeImplicit for Composite {
    fn lu_solve(b: &Tensor, lu: &Tensor, pivots: &Tensor) -> Result<Tensor> {
        ops::linalg_lu_solve::call(lu, pivots, b, true, false)
    }
}
