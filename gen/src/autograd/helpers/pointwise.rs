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

/// `pow(self, exponent)`'s gradient in `self`: `grad * exponent * self^(exponent - 1)`, and 0
/// where the exponent is 0 (so `0^0` passes no gradient), as PyTorch's `pow_backward_self`.
pub fn pow_backward_self(grad: &Tensor, x: &Tensor, exponent: &Tensor) -> Result<Tensor> {
    let d = exponent.try_mul(&ops::pow_tensor_tensor::call(x, &exponent.try_sub_scalar(Scalar::Int(1))?)?)?;
    let d = grad.try_mul(&d)?;
    where_(&exponent.try_eq_scalar(0)?, &zeros_like(&d)?, &d)
}

/// `pow(self, exponent)`'s gradient in `exponent`: `grad * result * log(self)`, and 0 where
/// `self` is 0 and `exponent ≥ 0` (the limit of `0^e · log 0` for `e > 0`), as PyTorch's
/// `pow_backward_exponent`.
pub fn pow_backward_exponent(grad: &Tensor, x: &Tensor, exponent: &Tensor, result: &Tensor) -> Result<Tensor> {
    let d = grad.try_mul(&result.try_mul(&x.try_log()?)?)?;
    let zero_base = x.try_eq_scalar(0)?.try_logical_and(&exponent.try_ge_scalar(0)?)?;
    where_(&zero_base, &zeros_like(&d)?, &d)
}

/// `pow(base, exponent)`'s gradient in `exponent` for a number `base`: `grad * result *
/// log(base)`, and 0 where `base` is 0 and `exponent ≥ 0`.
pub fn pow_backward_scalar_base(grad: &Tensor, base: Scalar, exponent: &Tensor, result: &Tensor) -> Result<Tensor> {
    let d = grad.try_mul(&result.try_mul_scalar(base.to_f64().ln())?)?;
    if base.to_f64() == 0.0 {
        return where_(&exponent.try_ge_scalar(0)?, &zeros_like(&d)?, &d);
    }
    Ok(d)
}

/// The error of a derivative PyTorch does not implement either (`special_zeta` in its first
/// argument): backward fails when it reaches it, naming the operator and the argument.
pub fn derivative_not_implemented(op: &str, arg: &str) -> Result<Tensor> {
    Err(oxten_runtime::Error::runtime(format!("the derivative of {op} for '{arg}' is not implemented")))
}

/// Whether `|x|` is not at or below the dtype's epsilon (where `1/x` is safe; NaN is not tiny, so
/// it propagates as in PyTorch), and `x` with the tiny ones replaced by epsilon: the Bessel `I₁`
/// and `J₁` derivatives divide by `x` and take their limit 1/2 at 0.
fn not_tiny(x: &Tensor) -> Result<(Tensor, Tensor)> {
    let eps = if x.dtype() == oxten_runtime::DType::F64 { f64::EPSILON } else { f32::EPSILON as f64 };
    let tiny = x.try_abs()?.try_le_scalar(eps)?;
    let safe = x.try_masked_fill_scalar(&tiny, Scalar::Float(eps))?;
    Ok((tiny.try_logical_not()?, safe))
}

/// `grad · I₁'(x)` with `I₁'(x) = I₀(x) - I₁(x)/x`, and 1/2 at `x = 0` (PyTorch's `i1_backward`).
pub fn i1_backward(grad: &Tensor, x: &Tensor, result: &Tensor) -> Result<Tensor> {
    bessel_order_one_backward(grad, x, result, ops::i0::call, 0.5)
}

/// `grad · (order0(x) - result / x)`, the derivative of a Bessel function of order 1 (`I₁`, `J₁`,
/// `Y₁`) through its order-0 partner, and its limit `at_zero` at 0 (1/2 for `I₁` and `J₁`, inf for
/// `Y₁`). Where that limit is finite the function is regular at 0, and below epsilon `result / x`
/// (a subnormal over a subnormal) would only lose it: the limit is used there; a singular `Y₁`
/// keeps its huge finite derivative down to 0 itself.
pub fn bessel_order_one_backward(
    grad: &Tensor,
    x: &Tensor,
    result: &Tensor,
    order0: fn(&Tensor) -> Result<Tensor>,
    at_zero: f64,
) -> Result<Tensor> {
    let (ok, safe) = if at_zero.is_finite() {
        not_tiny(x)?
    } else {
        let ok = x.try_ne_scalar(0)?;
        let safe = x.try_masked_fill_scalar(&ok.try_logical_not()?, Scalar::Float(1.0))?;
        (ok, safe)
    };
    let d = order0(&safe)?.try_sub(&result.try_div(&safe)?)?;
    grad.try_mul(&d.try_masked_fill_scalar(&ok.try_logical_not()?, Scalar::Float(at_zero))?)
}

/// `grad · d/dx[e^-|x| I₁(x)] = grad · (i0e(x) - i1e(x) · (sgn(x) + 1/x))`, and 1/2 at `x = 0`
/// (PyTorch's `i1e_backward`).
pub fn i1e_backward(grad: &Tensor, x: &Tensor, result: &Tensor) -> Result<Tensor> {
    let (ok, safe) = not_tiny(x)?;
    let scale = safe.try_sgn()?.try_add(&safe.try_reciprocal()?)?;
    let d = ops::special_i0e::call(&safe)?.try_sub(&result.try_mul(&scale)?)?;
    let half = ops::full_like::call(&d, Scalar::Float(0.5), None, None, None, None, None)?;
    grad.try_mul(&where_(&ok, &d, &half)?)
}

/// `x^(a-1) e^-x / Γ(a)`, the derivative of `igamma(a, x)` in `x` (and minus that of `igammac`).
pub fn incomplete_gamma_dx(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    a.try_add_scalar(-1.0)?.try_mul(&x.try_log()?)?.try_sub(x)?.try_sub(&a.try_lgamma()?)?.try_exp()
}

/// The forward derivative of `igamma(self, other)` (`upper`: of `igammac`): `other_t` times
/// [`incomplete_gamma_dx`]. PyTorch has no derivative in `self`, so a non-zero tangent of it is
/// an error rather than a silently dropped term.
pub fn incomplete_gamma_jvp(
    self_t: &Tensor,
    self_p: &Tensor,
    other_t: &Tensor,
    other_p: &Tensor,
    upper: bool,
) -> Result<Tensor> {
    let op = if upper { "igammac" } else { "igamma" };
    if !self_t.is_meta() && self_t.try_ne_scalar(0)?.try_any()?.item::<bool>()? {
        return derivative_not_implemented(op, "self");
    }
    let d = incomplete_gamma_dx(self_p, other_p)?;
    other_t.try_mul(&if upper { d.try_neg()? } else { d })
}

/// The forward derivative of `special_zeta(self, other)`: `other_t · -self · ζ(self + 1, other)`.
/// Its derivative in `self` is not implemented (as the backward's), so a non-zero tangent of
/// `self` is an error rather than a silently dropped term.
pub fn special_zeta_jvp(self_t: &Tensor, self_p: &Tensor, other_t: &Tensor, other_p: &Tensor) -> Result<Tensor> {
    if !self_t.is_meta() && self_t.try_ne_scalar(0)?.try_any()?.item::<bool>()? {
        return derivative_not_implemented("special_zeta", "self");
    }
    let d = self_p.try_neg()?.try_mul(&ops::special_zeta::call(&self_p.try_add_scalar(1.0)?, other_p)?)?;
    other_t.try_mul(&d)
}
