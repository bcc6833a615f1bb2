//! Formula helpers of the normalization operators (`native_batch_norm`, `native_layer_norm`,
//! `native_group_norm`).
//!
//! Each helper returns the gradients of `(input, weight, bias)` that `grad_input_mask` asks for.
//! Without `create_graph` (grad mode off while backward runs) they call the fused backward
//! kernels (`native_*_norm_backward`). With `create_graph` they compute the same gradients from
//! differentiable operators instead, recomputing the statistics from `input` so that their
//! dependence on it is recorded too: the returned gradients then have a history, and double
//! (and higher) backward works through the operators' own formulas. This is PyTorch's approach
//! for `group_norm` and `rms_norm` (`GradMode::is_enabled() ? <composite> : <kernel>`), used here
//! for all three; PyTorch's hand-derived `batchnorm_double_backward` /
//! `layer_norm_double_backward` give the same values.

use oxten_runtime::autograd::is_grad_enabled;
use oxten_runtime::{ops, Result, Scalar, Tensor};

/// The three optional gradients of a normalization's `(input, weight, bias)`.
pub type NormGrads = (Option<Tensor>, Option<Tensor>, Option<Tensor>);

const ONE: Scalar = Scalar::Int(1);

fn keep(mask: [bool; 3], (a, b, c): (Tensor, Tensor, Tensor)) -> NormGrads {
    (mask[0].then_some(a), mask[1].then_some(b), mask[2].then_some(c))
}

fn mean_keep(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    ops::mean_dim::call(t, Some(dims), true, None)
}

fn sum_over(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    if dims.is_empty() {
        return Ok(t.clone());
    }
    ops::sum_dim_intlist::call(t, Some(dims), false, None)
}

/// `rstd · (g - mean(g) - xhat · mean(g · xhat))` over `dims`: the input gradient of a
/// normalization by batch statistics, with `g` the output gradient times the weight.
fn normalized_input_grad(g: &Tensor, xhat: &Tensor, rstd: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let centered = ops::sub::call(g, &mean_keep(g, dims)?, ONE)?;
    let proj = ops::mul::call(xhat, &mean_keep(&ops::mul::call(g, xhat)?, dims)?)?;
    ops::mul::call(rstd, &ops::sub::call(&centered, &proj, ONE)?)
}

/// `(mean, rstd, xhat)` of `x` over `dims` (biased variance), from differentiable operators.
fn moments(x: &Tensor, dims: &[i64], eps: f64) -> Result<(Tensor, Tensor, Tensor)> {
    let mean = mean_keep(x, dims)?;
    let xc = ops::sub::call(x, &mean, ONE)?;
    let var = mean_keep(&ops::mul::call(&xc, &xc)?, dims)?;
    let rstd = ops::rsqrt::call(&ops::add_scalar::call(&var, Scalar::Float(eps), ONE)?)?;
    let xhat = ops::mul::call(&xc, &rstd)?;
    Ok((mean, rstd, xhat))
}

fn times_weight(grad: &Tensor, weight: Option<&Tensor>, shape: &[i64]) -> Result<Tensor> {
    match weight {
        Some(w) => ops::mul::call(grad, &ops::reshape::call(w, shape)?),
        None => Ok(grad.clone()),
    }
}

// ---------------------------------------------------------------------------------------------
// batch norm
// ---------------------------------------------------------------------------------------------

/// The gradients of `native_batch_norm`'s `(input, weight, bias)`; `save_mean`/`save_invstd`
/// are its second and third outputs (empty in evaluation mode).
#[allow(clippy::too_many_arguments)]
pub fn native_batch_norm_grads(
    grad: &Tensor,
    input: &Tensor,
    weight: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    save_mean: &Tensor,
    save_invstd: &Tensor,
    training: bool,
    eps: f64,
    mask: [bool; 3],
) -> Result<NormGrads> {
    if !is_grad_enabled() {
        let (sm, si) = if training { (Some(save_mean), Some(save_invstd)) } else { (None, None) };
        let r = ops::native_batch_norm_backward::call(
            grad,
            input,
            weight,
            running_mean,
            running_var,
            sm,
            si,
            training,
            eps,
            &mask,
        )?;
        return Ok(keep(mask, r));
    }
    let nd = input.dim() as i64;
    let c = input.sizes()[1];
    let dims: Vec<i64> = std::iter::once(0).chain(2..nd).collect();
    let mut cshape = vec![1i64; nd as usize];
    cshape[1] = c;
    let (rstd, xhat) = if training {
        let (_, rstd, xhat) = moments(input, &dims, eps)?;
        (rstd, xhat)
    } else {
        let (Some(rm), Some(rv)) = (running_mean, running_var) else {
            return Err(oxten_runtime::Error::value("running_mean and running_var must be defined in evaluation mode"));
        };
        let rstd = ops::rsqrt::call(&ops::add_scalar::call(rv, Scalar::Float(eps), ONE)?)?;
        let rstd = ops::reshape::call(&rstd, &cshape)?;
        let xc = ops::sub::call(input, &ops::reshape::call(rm, &cshape)?, ONE)?;
        let xhat = ops::mul::call(&xc, &rstd)?;
        (rstd, xhat)
    };
    let gi = if mask[0] {
        let g = times_weight(grad, weight, &cshape)?;
        Some(if training { normalized_input_grad(&g, &xhat, &rstd, &dims)? } else { ops::mul::call(&g, &rstd)? })
    } else {
        None
    };
    let gw = if mask[1] { Some(sum_over(&ops::mul::call(grad, &xhat)?, &dims)?) } else { None };
    let gb = if mask[2] { Some(sum_over(grad, &dims)?) } else { None };
    Ok((gi, gw, gb))
}

// ---------------------------------------------------------------------------------------------
// layer norm
// ---------------------------------------------------------------------------------------------

/// The gradients of `native_layer_norm`'s `(input, weight, bias)`; `mean`/`rstd` are its second
/// and third outputs.
#[allow(clippy::too_many_arguments)]
pub fn native_layer_norm_grads(
    grad: &Tensor,
    input: &Tensor,
    normalized_shape: &[i64],
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    mask: [bool; 3],
) -> Result<NormGrads> {
    if !is_grad_enabled() {
        let r = ops::native_layer_norm_backward::call(grad, input, normalized_shape, mean, rstd, weight, bias, &mask)?;
        return Ok(keep(mask, r));
    }
    let nd = input.dim() as i64;
    let axis = nd - normalized_shape.len() as i64;
    let dims: Vec<i64> = (axis..nd).collect();
    let lead: Vec<i64> = (0..axis).collect();
    let (_, rstd, xhat) = moments(input, &dims, eps)?;
    let gi = if mask[0] {
        let g = times_weight(grad, weight, normalized_shape)?;
        Some(normalized_input_grad(&g, &xhat, &rstd, &dims)?)
    } else {
        None
    };
    let gw = if mask[1] { Some(sum_over(&ops::mul::call(grad, &xhat)?, &lead)?) } else { None };
    let gb = if mask[2] { Some(sum_over(grad, &lead)?) } else { None };
    Ok((gi, gw, gb))
}

// ---------------------------------------------------------------------------------------------
// group norm
// ---------------------------------------------------------------------------------------------

/// Whether a gradient is all zeros (the engine's stand-in for one that did not flow).
fn all_zero(t: &Tensor) -> Result<bool> {
    if t.is_meta() {
        return Ok(false);
    }
    Ok(t.to_f64_vec()?.iter().all(|&v| v == 0.0))
}

/// The input gradient coming from the `mean` and `rstd` outputs (`[N, G]`), with `xc` the
/// centered input and `rstd` broadcast as `[N, G, 1]`: `d mean/dx = 1/D` and
/// `d rstd/dx = -rstd³ (x - mean)/D` for the `D` elements of a group.
fn stat_grads_term(g_mean: &Tensor, g_rstd: &Tensor, xc: &Tensor, rstd: &Tensor, n: i64, group: i64) -> Result<Tensor> {
    let d = (xc.numel() / (n * group).max(1)) as f64;
    let gm = ops::reshape::call(g_mean, &[n, group, 1])?;
    let gr = ops::reshape::call(g_rstd, &[n, group, 1])?;
    let r3 = ops::pow_tensor_scalar::call(rstd, Scalar::Int(3))?;
    let from_rstd = ops::mul::call(&ops::mul::call(&gr, &r3)?, xc)?;
    ops::div_scalar::call(&ops::sub::call(&gm, &from_rstd, ONE)?, Scalar::Float(d))
}

/// The gradients of `native_group_norm`'s `(input, weight, bias)` from the gradients of its
/// three outputs (`y`, `mean`, `rstd`), which `grads` holds in order.
#[allow(clippy::too_many_arguments)]
pub fn native_group_norm_grads(
    grads: &[Tensor],
    input: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
    eps: f64,
    mask: [bool; 3],
) -> Result<NormGrads> {
    let grad = &grads[0];
    let stat_grads = !all_zero(&grads[1])? || !all_zero(&grads[2])?;
    let sizes = input.sizes();
    if !is_grad_enabled() {
        let r = ops::native_group_norm_backward::call(grad, input, mean, rstd, weight, n, c, hxw, group, &mask)?;
        let (mut gi, gw, gb) = keep(mask, r);
        if let (true, Some(g)) = (stat_grads, gi.as_ref()) {
            let xg = ops::reshape::call(input, &[n, group, (c / group) * hxw])?;
            let mean3 = ops::reshape::call(mean, &[n, group, 1])?;
            let rstd3 = ops::reshape::call(rstd, &[n, group, 1])?;
            let xc = ops::sub::call(&xg, &mean3, ONE)?;
            let extra = stat_grads_term(&grads[1], &grads[2], &xc, &rstd3, n, group)?;
            gi = Some(ops::add::call(g, &ops::reshape::call(&extra, &sizes)?, ONE)?);
        }
        return Ok((gi, gw, gb));
    }
    let x3 = ops::reshape::call(input, &[n, c, hxw])?;
    let g3 = ops::reshape::call(grad, &[n, c, hxw])?;
    let xg = ops::reshape::call(&x3, &[n, group, (c / group) * hxw])?;
    let (mean_g, rstd_g, xhat_g) = moments(&xg, &[2], eps)?;
    let xhat = ops::reshape::call(&xhat_g, &[n, c, hxw])?;
    let gi = if mask[0] {
        let gw3 = times_weight(&g3, weight, &[1, c, 1])?;
        let gg = ops::reshape::call(&gw3, &[n, group, (c / group) * hxw])?;
        let mut gi = normalized_input_grad(&gg, &xhat_g, &rstd_g, &[2])?;
        if stat_grads {
            let xc = ops::sub::call(&xg, &mean_g, ONE)?;
            gi = ops::add::call(&gi, &stat_grads_term(&grads[1], &grads[2], &xc, &rstd_g, n, group)?, ONE)?;
        }
        Some(ops::reshape::call(&gi, &sizes)?)
    } else {
        None
    };
    let gw = if mask[1] { Some(sum_over(&ops::mul::call(&g3, &xhat)?, &[0, 2])?) } else { None };
    let gb = if mask[2] { Some(sum_over(&g3, &[0, 2])?) } else { None };
    Ok((gi, gw, gb))
}
