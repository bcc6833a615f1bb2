//! Formula helpers of the pointwise operators declared by `pointwise:` expressions.

use oxten_runtime::{ops, Result, Scalar, Tensor};

use super::{where_, zeros_like};

/// `grad * sinc'(x)` with `sinc'(x) = (cos(πx) πx − sin(πx)) / (πx²)`, and 0 at `x = 0`
/// (PyTorch's `sinc_backward`).
pub fn sinc_backward(grad: &Tensor, x: &Tensor) -> Result<Tensor> {
    let pi = std::f64::consts::PI;
    let pix = x.try_mul_scalar(pi)?;
    let num = pix.try_cos()?.try_mul(&pix)?.try_sub(&pix.try_sin()?)?;
    let d = num.try_div(&x.try_mul(x)?.try_mul_scalar(pi)?)?;
    let zero = x.try_eq_scalar(0)?;
    grad.try_mul(&where_(&zero, &zeros_like(&d)?, &d)?)
}

/// The derivative of `copysign(x, s)` in `x` applied to `grad`: `grad * result / x`, the sign
/// ratio (±1), and 0 where `x` is 0 (PyTorch's `copysign_tensor_self_backward`).
pub fn copysign_backward(grad: &Tensor, x: &Tensor, result: &Tensor) -> Result<Tensor> {
    let ratio = result.try_div(x)?;
    let ratio = ratio.try_masked_fill_scalar(&x.try_eq_scalar(0)?, Scalar::Int(0))?;
    grad.try_mul(&ratio)
}

/// Where `fmax`/`fmin`'s gradient goes to `self`: where `self` won (`won`, e.g. `self >= other`
/// for `fmax`: ties go to `self`) or `other` is NaN (then `self` is the result).
pub fn fmax_fmin_to_self(won: &Tensor, other: &Tensor) -> Result<Tensor> {
    let other_nan = ops::isnan::call(other)?;
    where_(&other_nan, &other_nan, won)
}
