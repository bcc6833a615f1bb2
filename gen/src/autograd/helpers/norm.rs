//! Formula helpers of the normalization operators (`native_batch_norm`, `native_layer_norm`,
//! `native_group_norm` and their backward operators).
//!
//! As in PyTorch:
//!
//! - batch and layer norm always differentiate through their fused backward operators
//!   (`native_batch_norm_backward`, `native_layer_norm_backward`); with `create_graph` those
//!   record their own node, whose formula is the closed-form double backward below
//!   ([`norm_double_backward`], PyTorch's `batchnorm_double_backward` /
//!   `layer_norm_double_backward`);
//! - group norm, whose `mean` and `rstd` outputs are differentiable too, calls its fused kernel
//!   without `create_graph` and otherwise computes the same gradients from differentiable
//!   operators (PyTorch's `native_group_norm_backward_dispatcher`).
//!
//! The double backward treats the saved statistics as what they are, functions of the input:
//! it rebuilds them from the input with operators whose *values* are the saved ones
//! (`s(x) - detach(s(x)) + saved`) and whose *derivatives* are those of the input's own
//! statistics, so that the formula is exact at every order.

use oxten_runtime::autograd::is_grad_enabled;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

/// The three optional gradients of a normalization's `(input, weight, bias)`.
pub type NormGrads = (Option<Tensor>, Option<Tensor>, Option<Tensor>);

const ONE: Scalar = Scalar::Int(1);

/// PyTorch's `not_implemented`: the gradient of an input no formula covers.
pub fn not_implemented(what: &str) -> Result<Tensor> {
    Err(Error::runtime(format!("the derivative for '{what}' is not implemented.")))
}

fn keep(mask: [bool; 3], (a, b, c): (Tensor, Tensor, Tensor)) -> NormGrads {
    (mask[0].then_some(a), mask[1].then_some(b), mask[2].then_some(c))
}

fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::mul::call(a, b)
}

fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::sub::call(a, b, ONE)
}

fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::add::call(a, b, ONE)
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

/// Whether a gradient is all zeros with no history: the engine's stand-in for one that did not
/// flow, whose terms can be left out. (A zero gradient that requires grad is kept, so that
/// higher derivatives with respect to it still reach it.)
fn all_zero(t: &Tensor) -> Result<bool> {
    if t.is_meta() || t.requires_grad() {
        return Ok(false);
    }
    Ok(t.to_f64_vec()?.iter().all(|&v| v == 0.0))
}

/// `grads[k]` when output `k` was computed (`output_mask`) and received a nonzero gradient.
fn flowing(grads: &[Tensor], output_mask: &[bool], k: usize) -> Result<Option<Tensor>> {
    match grads.get(k) {
        Some(g) if output_mask.get(k) == Some(&true) && !all_zero(g)? => Ok(Some(g.clone())),
        _ => Ok(None),
    }
}

/// Sums the terms (broadcasting), expanded to `sizes`; zeros shaped like `like` when empty.
fn total(terms: Vec<Tensor>, like: &Tensor) -> Result<Tensor> {
    let mut it = terms.into_iter();
    let Some(mut acc) = it.next() else { return ops::zeros_like::call(like, None, None, None, None, None) };
    for t in it {
        acc = add(&acc, &t)?;
    }
    if acc.sizes() != like.sizes() {
        acc = ops::expand::call(&acc, &like.sizes(), false)?;
    }
    Ok(acc)
}

// ---------------------------------------------------------------------------------------------
// first-order formulas
// ---------------------------------------------------------------------------------------------

/// The gradients of `native_batch_norm`'s `(input, weight, bias)`: `native_batch_norm_backward`
/// with its second and third outputs (`save_mean`, `save_invstd`; empty in evaluation mode).
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
    Ok(keep(mask, r))
}

/// The gradients of `native_layer_norm`'s `(input, weight, bias)`: `native_layer_norm_backward`.
#[allow(clippy::too_many_arguments)]
pub fn native_layer_norm_grads(
    grad: &Tensor,
    input: &Tensor,
    normalized_shape: &[i64],
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    mask: [bool; 3],
) -> Result<NormGrads> {
    let r = ops::native_layer_norm_backward::call(grad, input, normalized_shape, mean, rstd, weight, bias, &mask)?;
    Ok(keep(mask, r))
}

/// `rstd · (g - mean(g) - xhat · mean(g · xhat))` over `dims`: the input gradient of a
/// normalization by batch statistics, with `g` the output gradient times the weight. The
/// Jacobian is symmetric, so with `g` a tangent of the input this is `xhat`'s tangent.
pub(super) fn normalized_input_grad(g: &Tensor, xhat: &Tensor, rstd: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let centered = sub(g, &mean_keep(g, dims)?)?;
    let proj = mul(xhat, &mean_keep(&mul(g, xhat)?, dims)?)?;
    mul(rstd, &sub(&centered, &proj)?)
}

/// The input gradient coming from group norm's `mean` and `rstd` outputs (`[N, G]`), with `xc`
/// the centered input and `rstd` as `[N, G, 1]`: `d mean/dx = 1/D` and
/// `d rstd/dx = -rstd³ (x - mean)/D` for the `D` elements of a group.
fn stat_grads_term(g_mean: &Tensor, g_rstd: &Tensor, xc: &Tensor, rstd: &Tensor, n: i64, group: i64) -> Result<Tensor> {
    let d = (xc.numel() / (n * group).max(1)) as f64;
    let gm = ops::reshape::call(g_mean, &[n, group, 1])?;
    let gr = ops::reshape::call(g_rstd, &[n, group, 1])?;
    let r3 = ops::pow_tensor_scalar::call(rstd, Scalar::Int(3))?;
    let from_rstd = mul(&mul(&gr, &r3)?, xc)?;
    ops::div_scalar::call(&sub(&gm, &from_rstd)?, Scalar::Float(d))
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
    let d = (c / group) * hxw;
    if !is_grad_enabled() {
        let r = ops::native_group_norm_backward::call(grad, input, mean, rstd, weight, n, c, hxw, group, &mask)?;
        let (mut gi, gw, gb) = keep(mask, r);
        if let (true, Some(g)) = (stat_grads, gi.as_ref()) {
            let xg = ops::reshape::call(input, &[n, group, d])?;
            let xc = sub(&xg, &ops::reshape::call(mean, &[n, group, 1])?)?;
            let extra =
                stat_grads_term(&grads[1], &grads[2], &xc, &ops::reshape::call(rstd, &[n, group, 1])?, n, group)?;
            gi = Some(add(g, &ops::reshape::call(&extra, &sizes)?)?);
        }
        return Ok((gi, gw, gb));
    }
    let x3 = ops::reshape::call(input, &[n, c, hxw])?;
    let g3 = ops::reshape::call(grad, &[n, c, hxw])?;
    let xg = ops::reshape::call(&x3, &[n, group, d])?;
    let mean_g = mean_keep(&xg, &[2])?;
    let xc = sub(&xg, &mean_g)?;
    let var = mean_keep(&mul(&xc, &xc)?, &[2])?;
    let rstd_g = ops::rsqrt::call(&ops::add_scalar::call(&var, Scalar::Float(eps), ONE)?)?;
    let xhat_g = mul(&xc, &rstd_g)?;
    let xhat = ops::reshape::call(&xhat_g, &[n, c, hxw])?;
    let gi = if mask[0] {
        let gw3 = match weight {
            Some(w) => mul(&g3, &ops::reshape::call(w, &[1, c, 1])?)?,
            None => g3.clone(),
        };
        let gg = ops::reshape::call(&gw3, &[n, group, d])?;
        let mut gi = normalized_input_grad(&gg, &xhat_g, &rstd_g, &[2])?;
        if stat_grads {
            gi = add(&gi, &stat_grads_term(&grads[1], &grads[2], &xc, &rstd_g, n, group)?)?;
        }
        Some(ops::reshape::call(&gi, &sizes)?)
    } else {
        None
    };
    let gw = if mask[1] { Some(sum_over(&mul(&g3, &xhat)?, &[0, 2])?) } else { None };
    let gb = if mask[2] { Some(sum_over(&g3, &[0, 2])?) } else { None };
    Ok((gi, gw, gb))
}

// ---------------------------------------------------------------------------------------------
// double backward
// ---------------------------------------------------------------------------------------------

type TensorFn<'a> = Box<dyn Fn(&Tensor) -> Result<Tensor> + 'a>;

/// How one normalization reduces and broadcasts, on tensors of its working shape (the input's
/// shape, `[N, C, HxW]` for group norm).
struct Spec<'a> {
    /// The mean over each normalization group, broadcastable back to the working shape.
    gmean: TensorFn<'a>,
    /// A working-shape tensor summed to the weight's shape.
    wsum: TensorFn<'a>,
    /// A weight-shaped tensor made broadcastable against the working shape.
    wb: TensorFn<'a>,
}

/// The gradients of `(grad_out, input, weight)` of a normalization's backward operator, from
/// the gradients `ggi`, `ggw`, `ggb` of its three outputs (`None`: none flowed). `mean_b` and
/// `rstd_b` are the saved statistics, broadcastable against the working shape.
///
/// With `L(v) = r·(v - mean(v) - x̂·mean(v·x̂))` (the input gradient of the normalization for
/// an output gradient `v`, self-adjoint), `g = grad_out·w` and `gI = L(g)`:
///
/// - `d grad_out = w·L(ggi) + ggw·x̂ + ggb`
/// - `d weight = Σ grad_out·L(ggi)`
/// - `d input = -r·(x̂·mean(ggi·gI) + mean(g·x̂)·L(ggi) + mean(ggi·x̂)·gI) + L(ggw·grad_out)`
#[allow(clippy::too_many_arguments)]
fn norm_double_backward(
    s: &Spec,
    x: &Tensor,
    w: Option<&Tensor>,
    go: &Tensor,
    ggi: Option<&Tensor>,
    ggw: Option<&Tensor>,
    ggb: Option<&Tensor>,
    mean_b: &Tensor,
    rstd_b: &Tensor,
    mask: [bool; 3],
) -> Result<NormGrads> {
    // Statistics with the saved values and the derivatives of the input's own statistics.
    let mx = (s.gmean)(x)?;
    let mu = add(&sub(&mx, &mx.detach())?, mean_b)?;
    let xc = sub(x, &mu)?;
    let vx = (s.gmean)(&mul(&xc, &xc)?)?;
    let inv_var = ops::pow_tensor_scalar::call(rstd_b, Scalar::Int(-2))?;
    let r = ops::rsqrt::call(&add(&sub(&vx, &vx.detach())?, &inv_var)?)?;
    let xhat = mul(&xc, &r)?;
    let l = |v: &Tensor| -> Result<Tensor> {
        let centered = sub(v, &(s.gmean)(v)?)?;
        let proj = mul(&xhat, &(s.gmean)(&mul(v, &xhat)?)?)?;
        mul(&r, &sub(&centered, &proj)?)
    };
    let wfull = w.map(|w| (s.wb)(w)).transpose()?;
    let times_w = |t: Tensor| -> Result<Tensor> {
        match &wfull {
            Some(w) => mul(&t, w),
            None => Ok(t),
        }
    };
    let l_ggi = ggi.map(l).transpose()?;
    let d_go = if mask[0] {
        let mut terms = Vec::new();
        if let Some(lg) = &l_ggi {
            terms.push(times_w(lg.clone())?);
        }
        if let Some(gw) = ggw {
            terms.push(mul(&(s.wb)(gw)?, &xhat)?);
        }
        if let Some(gb) = ggb {
            terms.push((s.wb)(gb)?);
        }
        Some(total(terms, go)?)
    } else {
        None
    };
    let d_x = if mask[1] {
        let mut terms = Vec::new();
        if let (Some(ggi), Some(lg)) = (ggi, &l_ggi) {
            let g = times_w(go.clone())?;
            let gi = l(&g)?;
            let a = mul(&xhat, &(s.gmean)(&mul(ggi, &gi)?)?)?;
            let b = mul(&(s.gmean)(&mul(&g, &xhat)?)?, lg)?;
            let c = mul(&(s.gmean)(&mul(ggi, &xhat)?)?, &gi)?;
            terms.push(ops::neg::call(&mul(&r, &add(&add(&a, &b)?, &c)?)?)?);
        }
        if let Some(gw) = ggw {
            terms.push(l(&mul(&(s.wb)(gw)?, go)?)?);
        }
        Some(total(terms, x)?)
    } else {
        None
    };
    let d_w = match (mask[2], w) {
        (true, Some(w)) => Some(match &l_ggi {
            Some(lg) => (s.wsum)(&mul(go, lg)?)?,
            None => ops::zeros_like::call(w, None, None, None, None, None)?,
        }),
        _ => None,
    };
    Ok((d_go, d_x, d_w))
}

/// The double backward of `native_batch_norm_backward`: gradients of `(grad_out, input,
/// weight)` from the gradients of its outputs (`grads`).
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_double_backward(
    grads: &[Tensor],
    grad_out: &Tensor,
    input: &Tensor,
    weight: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    save_mean: Option<&Tensor>,
    save_invstd: Option<&Tensor>,
    train: bool,
    eps: f64,
    output_mask: &[bool],
    mask: [bool; 3],
) -> Result<NormGrads> {
    let nd = input.dim() as i64;
    let c = input.sizes()[1];
    let dims: Vec<i64> = std::iter::once(0).chain(2..nd).collect();
    let mut cshape = vec![1i64; nd as usize];
    cshape[1] = c;
    let (ggi, ggw, ggb) =
        (flowing(grads, output_mask, 0)?, flowing(grads, output_mask, 1)?, flowing(grads, output_mask, 2)?);
    let spec = Spec {
        gmean: Box::new(|t| mean_keep(t, &dims)),
        wsum: Box::new(|t| sum_over(t, &dims)),
        wb: Box::new(|t| ops::reshape::call(t, &cshape)),
    };
    if train {
        let (Some(sm), Some(si)) = (save_mean, save_invstd) else {
            return Err(Error::value("save_mean and save_invstd must be defined when train=True"));
        };
        let (mb, rb) = ((spec.wb)(sm)?, (spec.wb)(si)?);
        return norm_double_backward(
            &spec,
            input,
            weight,
            grad_out,
            ggi.as_ref(),
            ggw.as_ref(),
            ggb.as_ref(),
            &mb,
            &rb,
            mask,
        );
    }
    // Evaluation: y = (x - running_mean)·r·w + b with constant r, linear in x.
    let (Some(rm), Some(rv)) = (running_mean, running_var) else {
        return Err(Error::value("running_mean and running_var must be defined when train=False"));
    };
    let r = (spec.wb)(&ops::rsqrt::call(&ops::add_scalar::call(rv, Scalar::Float(eps), ONE)?)?)?;
    let xhat = mul(&sub(input, &(spec.wb)(rm)?)?, &r)?;
    let wfull = weight.map(|w| (spec.wb)(w)).transpose()?;
    let d_go = if mask[0] {
        let mut terms = Vec::new();
        if let Some(g) = &ggi {
            let t = mul(g, &r)?;
            terms.push(match &wfull {
                Some(w) => mul(&t, w)?,
                None => t,
            });
        }
        if let Some(g) = &ggw {
            terms.push(mul(&(spec.wb)(g)?, &xhat)?);
        }
        if let Some(g) = &ggb {
            terms.push((spec.wb)(g)?);
        }
        Some(total(terms, grad_out)?)
    } else {
        None
    };
    let d_x = if mask[1] {
        let terms = match &ggw {
            Some(g) => vec![mul(&mul(&(spec.wb)(g)?, grad_out)?, &r)?],
            None => vec![],
        };
        Some(total(terms, input)?)
    } else {
        None
    };
    let d_w = match (mask[2], weight) {
        (true, Some(w)) => Some(match &ggi {
            Some(g) => sum_over(&mul(&mul(g, grad_out)?, &r)?, &dims)?,
            None => ops::zeros_like::call(w, None, None, None, None, None)?,
        }),
        _ => None,
    };
    Ok((d_go, d_x, d_w))
}

/// The double backward of `native_layer_norm_backward`: gradients of `(grad_out, input,
/// weight)` from the gradients of its outputs (`grads`).
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_double_backward(
    grads: &[Tensor],
    grad_out: &Tensor,
    input: &Tensor,
    normalized_shape: &[i64],
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    output_mask: &[bool],
    mask: [bool; 3],
) -> Result<NormGrads> {
    let nd = input.dim() as i64;
    let axis = nd - normalized_shape.len() as i64;
    let dims: Vec<i64> = (axis..nd).collect();
    let lead: Vec<i64> = (0..axis).collect();
    let (ggi, ggw, ggb) =
        (flowing(grads, output_mask, 0)?, flowing(grads, output_mask, 1)?, flowing(grads, output_mask, 2)?);
    let spec = Spec {
        gmean: Box::new(|t| mean_keep(t, &dims)),
        wsum: Box::new(|t| sum_over(t, &lead)),
        wb: Box::new(|t| Ok(t.clone())),
    };
    norm_double_backward(&spec, input, weight, grad_out, ggi.as_ref(), ggw.as_ref(), ggb.as_ref(), mean, rstd, mask)
}

/// The double backward of `native_group_norm_backward`: gradients of `(grad_out, input,
/// weight)` from the gradients of its outputs (`grads`), computed on `[N, C, HxW]` views.
#[allow(clippy::too_many_arguments)]
pub fn group_norm_double_backward(
    grads: &[Tensor],
    grad_out: &Tensor,
    input: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
    output_mask: &[bool],
    mask: [bool; 3],
) -> Result<NormGrads> {
    let d = (c / group) * hxw;
    let (ggi, ggw, ggb) =
        (flowing(grads, output_mask, 0)?, flowing(grads, output_mask, 1)?, flowing(grads, output_mask, 2)?);
    let work = [n, c, hxw];
    // A per-(n, group) tensor repeated over the group's channels and positions.
    let per_group = move |t: &Tensor| -> Result<Tensor> {
        let t = ops::reshape::call(t, &[n, group, 1])?;
        ops::reshape::call(&ops::expand::call(&t, &[n, group, d], false)?, &work)
    };
    let spec = Spec {
        gmean: Box::new(move |t| per_group(&mean_keep(&ops::reshape::call(t, &[n, group, d])?, &[2])?)),
        wsum: Box::new(|t| sum_over(t, &[0, 2])),
        wb: Box::new(|t| ops::reshape::call(t, &[1, c, 1])),
    };
    let view = |t: &Tensor| ops::reshape::call(t, &work);
    let ggi = ggi.as_ref().map(view).transpose()?;
    let (d_go, d_x, d_w) = norm_double_backward(
        &spec,
        &view(input)?,
        weight,
        &view(grad_out)?,
        ggi.as_ref(),
        ggw.as_ref(),
        ggb.as_ref(),
        &per_group(mean)?,
        &per_group(rstd)?,
        mask,
    )?;
    let back = |t: Option<Tensor>, like: &Tensor| t.map(|t| ops::reshape::call(&t, &like.sizes())).transpose();
    Ok((back(d_go, grad_out)?, back(d_x, input)?, d_w))
}
