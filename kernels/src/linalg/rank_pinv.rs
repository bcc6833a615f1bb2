//! `linalg_matrix_rank` and `linalg_pinv` (and `pinverse`) in each of PyTorch's overloads: the
//! singular values (absolute eigenvalues when `hermitian`) above the tolerance
//! `max(atol, rtol * largest)` count towards the rank and are inverted in the pseudo-inverse.
//! The pseudo-inverse (`linalg_pinv.atol_rtol_tensor`) is CompositeExplicitAutograd with its own
//! derivative (as PyTorch's); the other overloads are CompositeImplicitAutograd over it.

use super::factor::{check_floating, check_is_matrix, matrix_dims};
use crate::generated::decls::{
    LinalgMatrixRankCompositeImplicit, LinalgMatrixRankFloatCompositeImplicit, LinalgMatrixRankTolCompositeImplicit,
    LinalgMatrixRankTolTensorCompositeImplicit, LinalgPinvCompositeExplicit, LinalgPinvFloatCompositeImplicit,
    LinalgPinvRcondCompositeImplicit, LinalgPinvRcondTensorCompositeImplicit, PinverseCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, DType, Result, Scalar, Tensor};

/// A 0-dim tensor of `value` in `a`'s dtype and on its device.
fn scalar_like(a: &Tensor, value: f64) -> Result<Tensor> {
    ops::full::call(&[], Scalar::Float(value), Some(a.dtype()), None, Some(a.device()), None)
}

/// A tolerance tensor given as a float.
fn float_tolerance(a: &Tensor, value: Option<f64>) -> Result<Option<Tensor>> {
    value.map(|v| scalar_like(a, v)).transpose()
}

/// PyTorch's `get_atol_rtol`: `atol` defaults to 0; `rtol` to `eps * max(m, n)`, or to 0 where
/// a positive `atol` was given.
fn atol_rtol(a: &Tensor, atol: Option<&Tensor>, rtol: Option<&Tensor>) -> Result<(Tensor, Tensor)> {
    let zero = scalar_like(a, 0.0)?;
    let atol_t = atol.cloned().unwrap_or_else(|| zero.clone());
    let rtol_t = match rtol {
        Some(r) => r.clone(),
        None => {
            let (m, n) = matrix_dims(a);
            let eps = if a.dtype() == DType::F64 { f64::EPSILON } else { f32::EPSILON as f64 };
            let default = scalar_like(a, eps * m.max(n) as f64)?;
            match atol {
                Some(at) => ops::where_self::call(&ops::gt_scalar::call(at, Scalar::Int(0))?, &zero, &default)?,
                None => default,
            }
        }
    };
    Ok((atol_t, rtol_t))
}

/// The singular values (descending) or, when `hermitian`, the absolute eigenvalues.
fn spectrum_magnitudes(a: &Tensor, hermitian: bool) -> Result<Tensor> {
    if hermitian {
        ops::abs::call(&ops::linalg_eigvalsh::call(a, "L")?)
    } else {
        ops::linalg_svdvals::call(a, None)
    }
}

/// `max(atol, rtol * largest)` per matrix, shaped to broadcast against the values.
fn cutoff(s: &Tensor, atol: &Tensor, rtol: &Tensor) -> Result<Tensor> {
    let largest = ops::amax::call(s, &[-1], true)?;
    let relative = ops::mul::call(&ops::unsqueeze::call(rtol, -1)?, &largest)?;
    ops::maximum::call(&ops::unsqueeze::call(atol, -1)?, &relative)
}

fn matrix_rank(a: &Tensor, atol: Option<&Tensor>, rtol: Option<&Tensor>, hermitian: bool) -> Result<Tensor> {
    const OP: &str = "torch.linalg.matrix_rank";
    check_is_matrix(OP, "input", a)?;
    check_floating(OP, a)?;
    let (atol, rtol) = atol_rtol(a, atol, rtol)?;
    let s = spectrum_magnitudes(a, hermitian)?;
    let (m, n) = matrix_dims(a);
    if m.min(n) == 0 {
        // No singular values: rank 0 (a maximum over none is undefined).
        let sizes = s.sizes();
        let shape = &sizes[..sizes.len() - 1];
        return ops::full::call(shape, Scalar::Int(0), Some(DType::I64), None, Some(a.device()), None);
    }
    let above = ops::gt::call(&s, &cutoff(&s, &atol, &rtol)?)?;
    ops::sum_dim_intlist::call(&above, Some(&[-1]), false, None)
}

impl LinalgMatrixRankCompositeImplicit for Composite {
    fn linalg_matrix_rank(
        input: &Tensor,
        atol: Option<&Tensor>,
        rtol: Option<&Tensor>,
        hermitian: bool,
    ) -> Result<Tensor> {
        matrix_rank(input, atol, rtol, hermitian)
    }
}

impl LinalgMatrixRankFloatCompositeImplicit for Composite {
    fn linalg_matrix_rank_float(
        self_: &Tensor,
        atol: Option<f64>,
        rtol: Option<f64>,
        hermitian: bool,
    ) -> Result<Tensor> {
        let (atol, rtol) = (float_tolerance(self_, atol)?, float_tolerance(self_, rtol)?);
        matrix_rank(self_, atol.as_ref(), rtol.as_ref(), hermitian)
    }
}

impl LinalgMatrixRankTolCompositeImplicit for Composite {
    fn linalg_matrix_rank_tol(self_: &Tensor, tol: f64, hermitian: bool) -> Result<Tensor> {
        // The deprecated `tol` is absolute: `rtol = 0`.
        matrix_rank(self_, Some(&scalar_like(self_, tol)?), Some(&scalar_like(self_, 0.0)?), hermitian)
    }
}

impl LinalgMatrixRankTolTensorCompositeImplicit for Composite {
    fn linalg_matrix_rank_tol_tensor(input: &Tensor, tol: &Tensor, hermitian: bool) -> Result<Tensor> {
        matrix_rank(input, Some(tol), Some(&scalar_like(input, 0.0)?), hermitian)
    }
}

fn pinv(a: &Tensor, atol: Option<&Tensor>, rtol: Option<&Tensor>, hermitian: bool) -> Result<Tensor> {
    const OP: &str = "torch.linalg.pinv";
    check_is_matrix(OP, "input", a)?;
    check_floating(OP, a)?;
    let (atol, rtol) = atol_rtol(a, atol, rtol)?;
    if a.numel() == 0 {
        // The pseudo-inverse of an empty `m x n` matrix is an empty `n x m` one.
        let mut shape = a.sizes();
        let l = shape.len();
        shape.swap(l - 2, l - 1);
        return ops::full::call(&shape, Scalar::Int(0), Some(a.dtype()), None, Some(a.device()), None);
    }
    let zero = scalar_like(a, 0.0)?;
    if hermitian {
        let (l, v) = ops::linalg_eigh::call(a, "L")?;
        let l_abs = ops::abs::call(&l)?;
        let keep = ops::gt::call(&l_abs, &cutoff(&l_abs, &atol, &rtol)?)?;
        let l_inv = ops::where_self::call(&keep, &ops::reciprocal::call(&l)?, &zero)?;
        // V diag(1 / L) Vᵀ
        let scaled = ops::mul::call(&v, &ops::unsqueeze::call(&l_inv, -2)?)?;
        return ops::matmul::call(&scaled, &ops::transpose::call(&v, -2, -1)?);
    }
    let (u, s, vh) = ops::linalg_svd::call(a, false, None)?;
    let keep = ops::gt::call(&s, &cutoff(&s, &atol, &rtol)?)?;
    let s_inv = ops::where_self::call(&keep, &ops::reciprocal::call(&s)?, &zero)?;
    // V diag(1 / S) Uᵀ
    let scaled = ops::mul::call(&ops::transpose::call(&vh, -2, -1)?, &ops::unsqueeze::call(&s_inv, -2)?)?;
    ops::matmul::call(&scaled, &ops::transpose::call(&u, -2, -1)?)
}

impl LinalgPinvCompositeExplicit for Composite {
    fn linalg_pinv(self_: &Tensor, atol: Option<&Tensor>, rtol: Option<&Tensor>, hermitian: bool) -> Result<Tensor> {
        pinv(self_, atol, rtol, hermitian)
    }
}

impl LinalgPinvFloatCompositeImplicit for Composite {
    fn linalg_pinv_float(self_: &Tensor, atol: Option<f64>, rtol: Option<f64>, hermitian: bool) -> Result<Tensor> {
        let (atol, rtol) = (float_tolerance(self_, atol)?, float_tolerance(self_, rtol)?);
        ops::linalg_pinv_atol_rtol_tensor::call(self_, atol.as_ref(), rtol.as_ref(), hermitian)
    }
}

impl LinalgPinvRcondCompositeImplicit for Composite {
    fn linalg_pinv_rcond(self_: &Tensor, rcond: f64, hermitian: bool) -> Result<Tensor> {
        // NumPy's `rcond` is the relative tolerance, with no absolute one.
        let (atol, rtol) = (scalar_like(self_, 0.0)?, scalar_like(self_, rcond)?);
        ops::linalg_pinv_atol_rtol_tensor::call(self_, Some(&atol), Some(&rtol), hermitian)
    }
}

impl LinalgPinvRcondTensorCompositeImplicit for Composite {
    fn linalg_pinv_rcond_tensor(self_: &Tensor, rcond: &Tensor, hermitian: bool) -> Result<Tensor> {
        ops::linalg_pinv_atol_rtol_tensor::call(self_, Some(&scalar_like(self_, 0.0)?), Some(rcond), hermitian)
    }
}

impl PinverseCompositeImplicit for Composite {
    fn pinverse(self_: &Tensor, rcond: f64) -> Result<Tensor> {
        ops::linalg_pinv::call(self_, rcond, false)
    }
}
