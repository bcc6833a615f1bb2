//! `linalg_lstsq`: the least-squares solution of `A X = B` as `A⁺ B` from one SVD, singular
//! values at or below `rcond * largest` dropped (the minimum-norm solution for a
//! rank-deficient `A`, as LAPACK's `gelsy`, `gelsd` and `gelss` give). CompositeExplicitAutograd
//! with PyTorch's derivative (through the pseudo-inverse's). The other outputs follow what each
//! of PyTorch's CPU drivers reports.

use super::factor::{check_floating, matrix_dims};
use crate::generated::decls::LinalgLstsqCompositeExplicit;
use crate::iter::{infer_size, scalar_type_name};
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

const OP: &str = "torch.linalg.lstsq";

/// `b` as a batch of matrices (a vector right-hand side gets a last dimension of one), with
/// PyTorch's checks of the two operands; returns whether `b` was a vector.
fn right_hand_side(a: &Tensor, b: &Tensor) -> Result<(Tensor, bool)> {
    if a.dim() < 2 {
        return Err(Error::runtime(format!("{OP}: input must have at least 2 dimensions.")));
    }
    if b.dim() < 1 {
        return Err(Error::runtime(format!("{OP}: other must have at least 1 dimension.")));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "{OP}: Expected input and other to have the same dtype, but got input's dtype {} and other's dtype {}",
            scalar_type_name(a.dtype()),
            scalar_type_name(b.dtype())
        )));
    }
    check_floating(OP, a)?;
    let dim_diff = a.dim() as i64 - b.dim() as i64;
    if !(0..=1).contains(&dim_diff) {
        return Err(Error::runtime(format!(
            "{OP}: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1"
        )));
    }
    let vector = dim_diff == 1;
    let b2 = if vector { ops::unsqueeze::call(b, -1)? } else { b.clone() };
    if matrix_dims(a).0 != matrix_dims(&b2).0 {
        let which = if vector { "other.size(-1)" } else { "other.size(-2)" };
        return Err(Error::runtime(format!("{OP}: input.size(-2) should match {which}")));
    }
    Ok((b2, vector))
}

impl LinalgLstsqCompositeExplicit for Composite {
    fn linalg_lstsq(
        a: &Tensor,
        b: &Tensor,
        rcond: Option<f64>,
        driver: Option<&str>,
    ) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
        let driver = driver.unwrap_or("gelsy");
        if !["gels", "gelsy", "gelsd", "gelss"].contains(&driver) {
            return Err(Error::runtime(format!(
                "{OP}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
            )));
        }
        let (b2, vector) = right_hand_side(a, b)?;
        let ((m, n), k) = (matrix_dims(a), matrix_dims(&b2).1);
        let (a_batch, b_batch) = (a.sizes(), b2.sizes());
        let batch = infer_size(&a_batch[..a_batch.len() - 2], &b_batch[..b_batch.len() - 2])?;
        let with = |tail: &[i64]| {
            let mut s = batch.to_vec();
            s.extend_from_slice(tail);
            s
        };
        let a_b = ops::expand::call(a, &with(&[m, n]), false)?;
        let b_b = ops::expand::call(&b2, &with(&[m, k]), false)?;
        let eps = if a.dtype() == DType::F64 { f64::EPSILON } else { f32::EPSILON as f64 };
        // LAPACK's reading of `rcond`: none is PyTorch's default, a negative one machine epsilon.
        let rcond = match rcond {
            None => eps * m.max(n) as f64,
            Some(r) if r < 0.0 => eps,
            Some(r) => r,
        };
        // One SVD gives the solution, the rank and the singular values: the singular values
        // above `rcond * largest` are inverted (the pseudo-inverse's and `matrix_rank`'s cut),
        // `X = V diag(1 / S) Uᵀ B` without forming `A⁺`.
        let (u, s, vh) = ops::linalg_svd::call(&a_b, false, None)?;
        let kept = if m.min(n) == 0 {
            ops::gt::call(&s, &s)?
        } else {
            let largest = ops::narrow::call(&s, -1, 0, 1)?;
            ops::gt::call(&s, &ops::mul_scalar::call(&largest, Scalar::Float(rcond))?)?
        };
        let zero = ops::full::call(&[], Scalar::Int(0), Some(a.dtype()), None, Some(a.device()), None)?;
        let s_inv = ops::where_self::call(&kept, &ops::reciprocal::call(&s)?, &zero)?;
        let ut_b = ops::mul::call(
            &ops::matmul::call(&ops::transpose::call(&u, -2, -1)?, &b_b)?,
            &ops::unsqueeze::call(&s_inv, -1)?,
        )?;
        let x = ops::matmul::call(&ops::transpose::call(&vh, -2, -1)?, &ut_b)?;
        let empty = |dtype: DType| ops::full::call(&[0], Scalar::Int(0), Some(dtype), None, Some(a.device()), None);
        let rank = if driver == "gels" {
            empty(DType::I64)?
        } else {
            ops::sum_dim_intlist::call(&kept, Some(&[-1]), false, Some(DType::I64))?
        };
        let singular_values = if driver == "gelsd" || driver == "gelss" { s } else { empty(a.dtype())? };
        // PyTorch reports the residuals for a tall `A`, but not from 'gelsy', and (for the
        // rank-revealing drivers) only when every matrix has full rank.
        let full_rank =
            driver == "gels" || ops::all::call(&ops::eq_scalar::call(&rank, Scalar::Int(n))?)?.item::<bool>()?;
        let residuals = if m > n && driver != "gelsy" && full_rank {
            let r = ops::sub::call(&ops::matmul::call(&a_b, &x)?, &b_b, Scalar::Int(1))?;
            ops::sum_dim_intlist::call(&ops::mul::call(&r, &r)?, Some(&[-2]), false, None)?
        } else {
            empty(a.dtype())?
        };
        let solution = if vector { ops::squeeze_dim::call(&x, -1)? } else { x };
        Ok((solution, residuals, rank, singular_values))
    }
}
