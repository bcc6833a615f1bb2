//! Formula helpers of the nn family (activations, softmax, losses), after PyTorch's
//! `FunctionsManual.cpp`. Each is built from differentiable operators, so the gradients they
//! compute can be differentiated again.

use super::{cast_to, restore_reduced_dims};
use oxten_runtime::{ops, Result, Scalar, Tensor};

const ONE: Scalar = Scalar::Int(1);

/// `(t < 0)` as 0/1 in `like`'s dtype.
fn negative_mask(t: &Tensor, like: &Tensor) -> Result<Tensor> {
    cast_to(&ops::lt_scalar::call(t, Scalar::Int(0))?, like.dtype())
}

/// `t.sum(dim, keepdim=true)`.
fn sum_keepdim(t: &Tensor, dim: i64) -> Result<Tensor> {
    ops::sum_dim_intlist::call(t, Some(&[dim]), true, None)
}

/// The gradient of `elu_backward(grad_output, …, self_or_result)` with respect to
/// `self_or_result`: from the result, `grad * grad_output * input_scale` where it is negative;
/// from the input, `elu_backward(grad * grad_output * input_scale, …)` there (ELU's second
/// derivative is its first derivative times `input_scale` on the negative side, 0 elsewhere).
pub fn elu_double_backward(
    grad: &Tensor,
    grad_output: &Tensor,
    alpha: Scalar,
    scale: Scalar,
    input_scale: Scalar,
    is_result: bool,
    self_or_result: &Tensor,
) -> Result<Tensor> {
    let g = ops::mul_scalar::call(&ops::mul::call(grad, grad_output)?, input_scale)?;
    let mask = negative_mask(self_or_result, grad)?;
    if is_result {
        ops::mul::call(&g, &mask)
    } else {
        ops::mul::call(&ops::elu_backward::call(&g, alpha, scale, input_scale, false, self_or_result)?, &mask)
    }
}

/// The second derivative of softplus times `grad`: `grad * s * (1 - s) * beta` with `s =
/// sigmoid(x * beta)`, 0 in the linear region `x * beta >= threshold`.
pub fn softplus_double_backward(grad: &Tensor, x: &Tensor, beta: Scalar, threshold: Scalar) -> Result<Tensor> {
    let z = ops::mul_scalar::call(x, beta)?;
    let s = ops::sigmoid::call(&z)?;
    let one_minus_s = ops::add_scalar::call(&ops::neg::call(&s)?, ONE, ONE)?;
    let d = ops::mul::call(&ops::mul::call(grad, &s)?, &one_minus_s)?;
    let inside = cast_to(&ops::lt_scalar::call(&z, threshold)?, grad.dtype())?;
    ops::mul_scalar::call(&ops::mul::call(&d, &inside)?, beta)
}

/// The gradient of mish, `grad * (t + x * sigmoid(x) * (1 - t^2))` with `t = tanh(softplus(x))`,
/// built from differentiable operators (PyTorch's `infinitely_differentiable_mish_backward`).
pub fn mish_backward(grad: &Tensor, x: &Tensor) -> Result<Tensor> {
    let t = ops::tanh::call(&ops::softplus::call(x, ONE, Scalar::Int(20))?)?;
    let one_minus_t2 = ops::add_scalar::call(&ops::neg::call(&ops::mul::call(&t, &t)?)?, ONE, ONE)?;
    let slope = ops::mul::call(&ops::mul::call(x, &ops::sigmoid::call(x)?)?, &one_minus_t2)?;
    ops::mul::call(grad, &ops::add::call(&t, &slope, ONE)?)
}

/// The gradient of `hardswish_backward(grad_output, x)` with respect to `x`: `grad *
/// grad_output / 3` inside `(-3, 3)`, 0 outside.
pub fn hardswish_double_backward(grad: &Tensor, grad_output: &Tensor, x: &Tensor) -> Result<Tensor> {
    let above = cast_to(&ops::gt_scalar::call(x, Scalar::Int(-3))?, grad.dtype())?;
    let below = cast_to(&ops::lt_scalar::call(x, Scalar::Int(3))?, grad.dtype())?;
    let d = ops::mul::call(&ops::mul::call(grad, grad_output)?, &ops::mul::call(&above, &below)?)?;
    ops::div_scalar::call(&d, Scalar::Int(3))
}

/// The gradient of `_softmax_backward_data(grad_output, output)` with respect to `output`:
/// `grad_output * grad - sum(output * grad_output) * grad - grad_output * sum(output * grad)`,
/// sums along `dim`.
pub fn softmax_double_backward(grad: &Tensor, grad_output: &Tensor, dim: i64, output: &Tensor) -> Result<Tensor> {
    let a = ops::mul::call(grad_output, grad)?;
    let b = ops::mul::call(&sum_keepdim(&ops::mul::call(output, grad_output)?, dim)?, grad)?;
    let c = ops::mul::call(grad_output, &sum_keepdim(&ops::mul::call(output, grad)?, dim)?)?;
    ops::sub::call(&ops::sub::call(&a, &b, ONE)?, &c, ONE)
}

/// The gradient of `_log_softmax_backward_data(grad_output, output)` with respect to
/// `grad_output`: `grad - sum(grad * exp(output))` along `dim`.
pub fn log_softmax_double_backward_grad_output(grad: &Tensor, output: &Tensor, dim: i64) -> Result<Tensor> {
    let s = sum_keepdim(&ops::mul::call(grad, &ops::exp::call(output)?)?, dim)?;
    ops::sub::call(grad, &s, ONE)
}

/// The gradient of `_log_softmax_backward_data(grad_output, output)` with respect to `output`:
/// `-sum(grad_output) * exp(output) * grad`, the sum along `dim`.
pub fn log_softmax_double_backward_output(
    grad: &Tensor,
    grad_output: &Tensor,
    output: &Tensor,
    dim: i64,
) -> Result<Tensor> {
    let s = ops::neg::call(&sum_keepdim(grad_output, dim)?)?;
    ops::mul::call(&ops::mul::call(&s, &ops::exp::call(output)?)?, grad)
}

/// The gradient of `logsumexp(self, dim, keepdim)`: `grad * exp(self - result)`, with the
/// reduced dims restored.
pub fn logsumexp_backward(grad: &Tensor, x: &Tensor, result: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    let ndim = x.dim();
    let g = restore_reduced_dims(grad, Some(dim), keepdim, ndim)?;
    let r = restore_reduced_dims(result, Some(dim), keepdim, ndim)?;
    ops::mul::call(&g, &ops::exp::call(&ops::sub::call(x, &r, ONE)?)?)
}

/// The gradient of `mse_loss_backward` with respect to `self`, given `grad * grad_output`:
/// `2 * grad`, divided by the number of elements for a mean.
pub fn mse_loss_double_backward(grad: &Tensor, input: &Tensor, reduction: i64) -> Result<Tensor> {
    let g = ops::mul_scalar::call(grad, Scalar::Int(2))?;
    if reduction == 1 {
        ops::div_scalar::call(&g, Scalar::Int(input.numel()))
    } else {
        Ok(g)
    }
}

/// Scales an element-wise loss gradient by `weight` and, for a mean, by `1 / numel`.
fn weigh_and_reduce(g: Tensor, weight: Option<&Tensor>, reduction: i64, numel: i64) -> Result<Tensor> {
    let g = match weight {
        Some(w) => ops::mul::call(&g, w)?,
        None => g,
    };
    if reduction == 1 {
        ops::div_scalar::call(&g, Scalar::Int(numel))
    } else {
        Ok(g)
    }
}

/// The gradient of `binary_cross_entropy_with_logits` with respect to the logits:
/// `(sigmoid(x) - t) * grad` without `pos_weight`, `((p t + 1 - t) sigmoid(x) - p t) * grad`
/// with it; times `weight`, divided by `numel` for a mean.
pub fn binary_cross_entropy_with_logits_backward(
    grad: &Tensor,
    x: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    pos_weight: Option<&Tensor>,
    reduction: i64,
) -> Result<Tensor> {
    let s = ops::sigmoid::call(x)?;
    let g = match pos_weight {
        Some(pw) => {
            let t = ops::mul::call(pw, target)?;
            let coef = ops::sub::call(&ops::add_scalar::call(&t, ONE, ONE)?, target, ONE)?;
            ops::sub::call(&ops::mul::call(&coef, &s)?, &t, ONE)?
        }
        None => ops::sub::call(&s, target, ONE)?,
    };
    weigh_and_reduce(ops::mul::call(&g, grad)?, weight, reduction, x.numel())
}

/// `log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))` (PyTorch's formula: no overflow, and exact
/// for large `|x|`).
fn log_sigmoid(x: &Tensor) -> Result<Tensor> {
    let log1p_exp = ops::softplus::call(&ops::neg::call(&ops::abs::call(x)?)?, ONE, Scalar::Int(20))?;
    ops::sub::call(&ops::clamp::call(x, None, Some(Scalar::Int(0)))?, &log1p_exp, ONE)
}

/// The gradient of `binary_cross_entropy_with_logits` with respect to the target: `-x * grad`
/// without `pos_weight`, `(log_sigmoid(-x) - p log_sigmoid(x)) * grad` with it; times
/// `weight`, divided by `numel` for a mean.
pub fn binary_cross_entropy_with_logits_target_backward(
    grad: &Tensor,
    x: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    pos_weight: Option<&Tensor>,
    reduction: i64,
) -> Result<Tensor> {
    let g = match pos_weight {
        Some(pw) => ops::sub::call(&log_sigmoid(&ops::neg::call(x)?)?, &ops::mul::call(&log_sigmoid(x)?, pw)?, ONE)?,
        None => ops::neg::call(x)?,
    };
    weigh_and_reduce(ops::mul::call(&g, grad)?, weight, reduction, target.numel())
}

/// The gradients of the fused attention kernel's `query`, `key` and `value` (those `mask` asks
/// for): from its backward kernel, or, under `create_graph`, from the math decomposition with a
/// graph (so attention has second derivatives).
#[allow(clippy::too_many_arguments)]
pub fn sdpa_flash_grads(
    grad: &Tensor,
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    out: &Tensor,
    logsumexp: &Tensor,
    dropout_p: f64,
    is_causal: bool,
    attn_mask: Option<&Tensor>,
    scale: Option<f64>,
    mask: [bool; 3],
) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
    if oxten_runtime::autograd::is_grad_enabled() {
        // create_graph: the gradients must be differentiable again, and the fused backward kernel
        // is not (its outputs are marked non-differentiable). Recompute the attention with the
        // math decomposition and differentiate it with a graph, as a double backward through
        // PyTorch's math path does.
        let recomputed = ops::_scaled_dot_product_attention_math::call(
            query, key, value, attn_mask, dropout_p, is_causal, None, scale, false,
        )?
        .0;
        let wanted: Vec<&Tensor> =
            [query, key, value].into_iter().zip(mask).filter(|(_, m)| *m).map(|(t, _)| t).collect();
        let opts = oxten_runtime::autograd::GradOpts {
            grad_outputs: vec![Some(grad.clone())],
            create_graph: true,
            allow_unused: true,
            ..Default::default()
        };
        let mut g = oxten_runtime::autograd::grad_with(&[&recomputed], &wanted, opts)?.into_iter();
        let mut next = |m: bool| if m { g.next().flatten() } else { None };
        return Ok((next(mask[0]), next(mask[1]), next(mask[2])));
    }
    let (dq, dk, dv) = ops::_scaled_dot_product_flash_attention_for_cpu_backward::call(
        grad, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask, scale,
    )?;
    Ok((mask[0].then_some(dq), mask[1].then_some(dk), mask[2].then_some(dv)))
}
