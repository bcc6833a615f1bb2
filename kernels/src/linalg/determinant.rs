//! Determinants from the LU factorization `A = P L U`: `det(A) = sign(P) * prod(diag(U))`, with
//! `sign(P)` the parity of the row swaps. `_linalg_det` (CompositeExplicitAutograd, with its own
//! derivative, defined at singular matrices too) under `linalg_det` (`det`); `linalg_slogdet`
//! (`slogdet`) and `logdet`, whose gradients come through `linalg_lu_factor_ex`'s.

use super::factor::{check_floating, check_square};
use crate::generated::decls::{
    DetCompositeImplicit, LinalgDetCompositeExplicit, LinalgDetCompositeImplicit, LinalgSlogdetCompositeImplicit,
    LogdetCompositeImplicit, SlogdetCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, DType, Result, Scalar, Tensor};

/// `diag(U)` and the sign of the permutation (±1 in `A`'s dtype), per matrix, and the factors.
fn lu_diagonal_and_sign(op: &str, a: &Tensor) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    check_square(op, "A", a)?;
    check_floating(op, a)?;
    let (lu, pivots, _info) = ops::linalg_lu_factor_ex::call(a, true, false)?;
    let k = *pivots.sizes().last().expect("pivots of a matrix");
    let unswapped =
        ops::arange_start::call(Scalar::Int(1), Scalar::Int(k + 1), Some(DType::I32), None, Some(a.device()), None)?;
    let swaps = ops::sum_dim_intlist::call(&ops::ne::call(&pivots, &unswapped)?, Some(&[-1]), false, None)?;
    // 1 - 2 * (swaps mod 2)
    let odd = ops::bitwise_and_scalar::call(&swaps, Scalar::Int(1))?;
    let sign = ops::add_scalar::call(&ops::mul_scalar::call(&odd, Scalar::Int(-2))?, Scalar::Int(1), Scalar::Int(1))?;
    let sign = ops::to_dtype::call(&sign, a.dtype(), false, false, None)?;
    Ok((ops::diagonal::call(&lu, 0, -2, -1)?, sign, lu, pivots))
}

impl LinalgDetCompositeExplicit for Composite {
    fn _linalg_det(a: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
        let (diagonal, sign, lu, pivots) = lu_diagonal_and_sign("linalg.det", a)?;
        let det = ops::mul::call(&ops::prod_dim_int::call(&diagonal, -1, false, None)?, &sign)?;
        Ok((det, lu, pivots))
    }
}

impl LinalgDetCompositeImplicit for Composite {
    fn linalg_det(a: &Tensor) -> Result<Tensor> {
        Ok(ops::_linalg_det::call(a)?.0)
    }
}

impl DetCompositeImplicit for Composite {
    fn det(a: &Tensor) -> Result<Tensor> {
        ops::linalg_det::call(a)
    }
}

impl LinalgSlogdetCompositeImplicit for Composite {
    fn linalg_slogdet(a: &Tensor) -> Result<(Tensor, Tensor)> {
        let (diagonal, sign, _, _) = lu_diagonal_and_sign("linalg.slogdet", a)?;
        let diagonal_sign = ops::prod_dim_int::call(&ops::sgn::call(&diagonal)?, -1, false, None)?;
        // Piecewise constant: its gradient is zero (it requires grad, as PyTorch's does).
        let sign = ops::mul::call(&diagonal_sign, &sign)?;
        let logabsdet =
            ops::sum_dim_intlist::call(&ops::log::call(&ops::abs::call(&diagonal)?)?, Some(&[-1]), false, None)?;
        Ok((sign, logabsdet))
    }
}

impl SlogdetCompositeImplicit for Composite {
    fn slogdet(a: &Tensor) -> Result<(Tensor, Tensor)> {
        ops::linalg_slogdet::call(a)
    }
}

impl LogdetCompositeImplicit for Composite {
    fn logdet(a: &Tensor) -> Result<Tensor> {
        check_square("logdet", "A", a)?;
        check_floating("logdet", a)?;
        let (sign, logabsdet) = ops::linalg_slogdet::call(a)?;
        ops::where_scalarself::call(&ops::eq_scalar::call(&sign, Scalar::Int(-1))?, Scalar::Float(f64::NAN), &logabsdet)
    }
}
