//! Helpers of the forward-mode formulas (`result:` keys of derivatives.yaml).
//!
//! Reductions whose backward is "expand the gradient, times weights that depend on the input"
//! (`amax`, `logsumexp`, the norms, `var` …) have the JVP "sum over the reduced dimensions of
//! the weights times the tangent": [`weighted_sum`] with the weights read off the backward
//! formula at a gradient of ones.

use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

const ONE: Scalar = Scalar::Int(1);

/// Ones shaped like `t`.
pub fn ones_like(t: &Tensor) -> Result<Tensor> {
    ops::ones_like::call(t, None, None, None, None, None)
}

/// `sum(weights · tangent)` over `dim` (every dimension for `None`), as the reduction that
/// produced the primal output.
pub fn weighted_sum(weights: &Tensor, tangent: &Tensor, dim: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    let prod = ops::mul::call(weights, tangent)?;
    match dim {
        Some([]) | None => {
            let total = ops::sum::call(&prod, None)?;
            if keepdim {
                let ones = vec![1i64; prod.dim()];
                ops::reshape::call(&total, &ones)
            } else {
                Ok(total)
            }
        }
        Some(d) => ops::sum_dim_intlist::call(&prod, Some(d), keepdim, None),
    }
}

/// `1` where `won`, `0.5` where `tie`, else `0`, in `dtype`: how `maximum`/`minimum` share a
/// tangent between the inputs.
pub fn tie_weight(won: &Tensor, tie: &Tensor, dtype: DType) -> Result<Tensor> {
    let w = ops::to_dtype::call(won, dtype, false, false, None)?;
    let t = ops::to_dtype::call(tie, dtype, false, false, None)?;
    ops::add::call(&w, &t, Scalar::Float(0.5))
}

/// The tangent of the values a reduction selected at `indices` along `dim` (`max.dim`,
/// `kthvalue` …): `tangent` gathered there.
pub fn gather_reduced(tangent: &Tensor, dim: i64, indices: &Tensor, keepdim: bool) -> Result<Tensor> {
    if keepdim || tangent.dim() == 0 {
        return ops::gather::call(tangent, dim, indices, false);
    }
    let idx = ops::unsqueeze::call(indices, dim)?;
    ops::squeeze_dim::call(&ops::gather::call(tangent, dim, &idx, false)?, dim)
}

/// A loss's reduction (`0` none, `1` mean, `2` sum) applied to elementwise terms.
pub fn apply_loss_reduction(t: &Tensor, reduction: i64) -> Result<Tensor> {
    match reduction {
        0 => Ok(t.clone()),
        1 => ops::mean_dim::call(t, None, false, None),
        2 => ops::sum::call(t, None),
        r => Err(Error::value(format!("{r} is not a valid value for reduction"))),
    }
}

/// `sum(t, dim, keepdim=true)`.
pub fn sum_keepdim(t: &Tensor, dim: i64) -> Result<Tensor> {
    ops::sum_dim_intlist::call(t, Some(&[dim]), true, None)
}

/// `x̂_t · w + x̂ · w_t + b_t`, with `w`, `w_t`, `b_t` viewed by `view` (to broadcast).
fn affine_tangent(
    xhat: &Tensor,
    xhat_t: Tensor,
    weight: Option<&Tensor>,
    weight_t: Option<&Tensor>,
    bias_t: Option<&Tensor>,
    view: &dyn Fn(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let mut out = match weight {
        Some(w) => ops::mul::call(&xhat_t, &view(w)?)?,
        None => xhat_t,
    };
    if let Some(wt) = weight_t {
        out = ops::add::call(&out, &ops::mul::call(xhat, &view(wt)?)?, ONE)?;
    }
    if let Some(bt) = bias_t {
        out = ops::add::call(&out, &view(bt)?, ONE)?;
    }
    Ok(out)
}

/// The tangent of `native_layer_norm`'s output, from its saved `mean` and `rstd`.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_jvp(
    input: &Tensor,
    input_t: &Tensor,
    weight: Option<&Tensor>,
    weight_t: Option<&Tensor>,
    bias_t: Option<&Tensor>,
    mean: &Tensor,
    rstd: &Tensor,
    normalized_shape: &[i64],
) -> Result<Tensor> {
    let n = input.dim() as i64;
    let dims: Vec<i64> = (n - normalized_shape.len() as i64..n).collect();
    let xhat = ops::mul::call(&ops::sub::call(input, mean, ONE)?, rstd)?;
    let xhat_t = super::norm::normalized_input_grad(input_t, &xhat, rstd, &dims)?;
    affine_tangent(&xhat, xhat_t, weight, weight_t, bias_t, &|w| Ok(w.clone()))
}

/// The tangent of `native_batch_norm`'s output: statistics over every dimension but 1 in
/// training (the saved ones), the running ones (constants) in evaluation.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_jvp(
    input: &Tensor,
    input_t: &Tensor,
    weight: Option<&Tensor>,
    weight_t: Option<&Tensor>,
    bias_t: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    save_mean: &Tensor,
    save_invstd: &Tensor,
    training: bool,
    eps: f64,
) -> Result<Tensor> {
    let mut shape = vec![1i64; input.dim()];
    if shape.len() > 1 {
        shape[1] = -1;
    }
    let view = |t: &Tensor| ops::reshape::call(t, &shape);
    let dims: Vec<i64> = (0..input.dim() as i64).filter(|&d| d != 1).collect();
    let (mean, invstd) = if training {
        (view(save_mean)?, view(save_invstd)?)
    } else {
        let (Some(rm), Some(rv)) = (running_mean, running_var) else {
            return Err(Error::value("batch_norm: running_mean and running_var must be defined in evaluation mode"));
        };
        (view(rm)?, ops::rsqrt::call(&ops::add_scalar::call(&view(rv)?, Scalar::Float(eps), ONE)?)?)
    };
    let xhat = ops::mul::call(&ops::sub::call(input, &mean, ONE)?, &invstd)?;
    let xhat_t = if training {
        super::norm::normalized_input_grad(input_t, &xhat, &invstd, &dims)?
    } else {
        ops::mul::call(input_t, &invstd)?
    };
    affine_tangent(&xhat, xhat_t, weight, weight_t, bias_t, &view)
}

/// The tangent of `native_group_norm`'s output, from its saved `mean` and `rstd` (`[N, G]`).
#[allow(clippy::too_many_arguments)]
pub fn group_norm_jvp(
    input: &Tensor,
    input_t: &Tensor,
    weight: Option<&Tensor>,
    weight_t: Option<&Tensor>,
    bias_t: Option<&Tensor>,
    mean: &Tensor,
    rstd: &Tensor,
    n: i64,
    group: i64,
) -> Result<Tensor> {
    let grouped = |t: &Tensor| ops::reshape::call(t, &[n, group, -1]);
    let stat = |t: &Tensor| ops::reshape::call(t, &[n, group, 1]);
    let (x, x_t) = (grouped(input)?, grouped(input_t)?);
    let rstd = stat(rstd)?;
    let xhat = ops::mul::call(&ops::sub::call(&x, &stat(mean)?, ONE)?, &rstd)?;
    let xhat_t = super::norm::normalized_input_grad(&x_t, &xhat, &rstd, &[2])?;
    let sizes = input.sizes();
    let (xhat, xhat_t) = (ops::reshape::call(&xhat, &sizes)?, ops::reshape::call(&xhat_t, &sizes)?);
    let mut shape = vec![1i64; input.dim()];
    if shape.len() > 1 {
        shape[1] = -1;
    }
    affine_tangent(&xhat, xhat_t, weight, weight_t, bias_t, &|t| ops::reshape::call(t, &shape))
}

/// The tangents of `native_group_norm`'s `mean` (`which` 1) or `rstd` (2), `[N, G]`:
/// `mean(x_t)` and `-rstd³ · mean((x - mean) · x_t)` over each group.
pub fn group_norm_stat_jvp(
    input: &Tensor,
    input_t: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
    n: i64,
    group: i64,
    which: usize,
) -> Result<Tensor> {
    let x_t = ops::reshape::call(input_t, &[n, group, -1])?;
    if which == 1 {
        return ops::mean_dim::call(&x_t, Some(&[2]), false, None);
    }
    let x = ops::reshape::call(input, &[n, group, -1])?;
    let xc = ops::sub::call(&x, &ops::reshape::call(mean, &[n, group, 1])?, ONE)?;
    let m = ops::mean_dim::call(&ops::mul::call(&xc, &x_t)?, Some(&[2]), false, None)?;
    let r3 = ops::pow_tensor_scalar::call(rstd, Scalar::Int(3))?;
    ops::neg::call(&ops::mul::call(&r3, &m)?)
}

/// The tangent of `max_pool2d_with_indices`'s values: the input tangent read at the saved flat
/// per-plane indices.
pub fn max_pool_jvp(input_t: &Tensor, indices: &Tensor) -> Result<Tensor> {
    let s = input_t.sizes();
    let planes: i64 = s[..s.len().saturating_sub(2)].iter().product();
    let flat_in = ops::reshape::call(input_t, &[planes, -1])?;
    let flat_idx = ops::reshape::call(indices, &[planes, -1])?;
    ops::reshape::call(&ops::gather::call(&flat_in, 1, &flat_idx, false)?, &indices.sizes())
}

/// The tangents of `convolution_backward`'s `(grad_input, grad_weight, grad_bias)` (`which` 0,
/// 1, 2): each is linear in the output gradient and in one of input / weight, so its tangent is
/// the same backward with one tangent in place at a time.
#[allow(clippy::too_many_arguments)]
pub fn convolution_backward_jvp(
    grad_output: (&Tensor, &Tensor),
    input: (&Tensor, &Tensor),
    weight: (&Tensor, &Tensor),
    bias_sizes: Option<&[i64]>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
    which: usize,
) -> Result<Tensor> {
    let mut mask = [false; 3];
    mask[which] = true;
    let pick = |r: (Tensor, Tensor, Tensor)| match which {
        0 => r.0,
        1 => r.1,
        _ => r.2,
    };
    let bw = |go: &Tensor, x: &Tensor, w: &Tensor| {
        ops::convolution_backward::call(
            go,
            x,
            w,
            bias_sizes,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            &mask,
        )
        .map(pick)
    };
    let from_grad = bw(grad_output.1, input.0, weight.0)?;
    let other = match which {
        0 => bw(grad_output.0, input.0, weight.1)?,
        1 => bw(grad_output.0, input.1, weight.0)?,
        _ => return Ok(from_grad),
    };
    ops::add::call(&from_grad, &other, ONE)
}

/// The tangent of the fused attention's output: the JVP of the math decomposition (the same
/// function), computed at a level of its own.
#[allow(clippy::too_many_arguments)]
pub fn sdpa_jvp(
    query: (&Tensor, &Tensor),
    key: (&Tensor, &Tensor),
    value: (&Tensor, &Tensor),
    dropout_p: f64,
    is_causal: bool,
    attn_mask: Option<&Tensor>,
    scale: Option<f64>,
) -> Result<Tensor> {
    if dropout_p > 0.0 {
        return Err(Error::runtime(
            "Trying to use forward AD with _scaled_dot_product_flash_attention_for_cpu with dropout_p > 0, which does not support it.",
        ));
    }
    let mask = attn_mask.cloned();
    let f = move |x: &[Tensor]| {
        ops::_scaled_dot_product_attention_math::call(
            &x[0],
            &x[1],
            &x[2],
            mask.as_ref(),
            0.0,
            is_causal,
            None,
            scale,
            false,
        )
        .map(|r| r.0)
    };
    let primals = [query.0.clone(), key.0.clone(), value.0.clone()];
    let tangents = [query.1.clone(), key.1.clone(), value.1.clone()];
    let (_, mut t) = crate::func::jvp(f, &primals, &tangents)?;
    Ok(t.remove(0))
}

/// Which normalization a backward operator belongs to, for [`norm_backward_jvp`].
pub enum NormKind<'a> {
    /// Layer norm.
    Layer {
        /// How many trailing dimensions are normalized.
        n: usize,
        /// The saved mean (the input's shape with the normalized dimensions kept as 1).
        mean: &'a Tensor,
        /// The saved reciprocal standard deviation, shaped like `mean`.
        rstd: &'a Tensor,
    },
    /// Batch norm.
    Batch {
        /// Whether the forward used the batch statistics.
        train: bool,
        /// The saved per-channel mean (training).
        mean: Option<&'a Tensor>,
        /// The saved per-channel `1 / sqrt(var + eps)` (training).
        invstd: Option<&'a Tensor>,
        /// The running mean and variance (evaluation), constants.
        running: (Option<&'a Tensor>, Option<&'a Tensor>),
        /// The epsilon added to the running variance.
        eps: f64,
    },
    /// Group norm.
    Group {
        /// The batch size.
        n: i64,
        /// The number of groups.
        group: i64,
        /// The saved per-group mean, `[N, G]`.
        mean: &'a Tensor,
        /// The saved per-group reciprocal standard deviation, `[N, G]`.
        rstd: &'a Tensor,
    },
}

/// `x ↦ x̂`, the normalization with the saved statistics.
type Normalize = Box<dyn Fn(&Tensor) -> Result<Tensor>>;

/// The tangents of a normalization backward operator's `(grad_input, grad_weight)`: the JVP of
/// the same gradients recomputed by reverse mode over the normalization written with
/// differentiable operators, the saved statistics standing for functions of the input (their
/// values kept, their first derivatives those of the input's own statistics, as the double
/// backward treats them). `which` is 0 or 1; grad_bias's tangent is linear (see the formulas).
pub fn norm_backward_jvp(
    kind: NormKind<'_>,
    grad_out: (&Tensor, &Tensor),
    input: (&Tensor, &Tensor),
    weight: (Option<&Tensor>, Option<&Tensor>),
    which: usize,
) -> Result<Tensor> {
    let x_sizes = input.0.sizes().to_vec();
    let dim = x_sizes.len();
    let layer = matches!(kind, NormKind::Layer { .. });
    // The normalization of x (values as the forward computed them) and the dims its statistics
    // reduce, on the grouped layout.
    let normalize: Normalize = match kind {
        NormKind::Layer { n, mean, rstd } => {
            let dims: Vec<i64> = (dim - n..dim).map(|d| d as i64).collect();
            let (mean, rstd) = (mean.clone(), rstd.clone());
            Box::new(move |x: &Tensor| tracked_stats(x, &dims, &mean, &rstd))
        }
        NormKind::Batch { train: true, mean: Some(m), invstd: Some(s), .. } => {
            let dims: Vec<i64> = (0..dim as i64).filter(|&d| d != 1).collect();
            let mut shape = vec![1i64; dim];
            shape[1] = -1;
            let (mean, invstd) = (ops::reshape::call(m, &shape)?, ops::reshape::call(s, &shape)?);
            Box::new(move |x: &Tensor| tracked_stats(x, &dims, &mean, &invstd))
        }
        NormKind::Batch { train: false, running: (Some(rm), Some(rv)), eps, .. } => {
            let mut shape = vec![1i64; dim];
            shape[1] = -1;
            let mean = ops::reshape::call(rm, &shape)?;
            let invstd =
                ops::rsqrt::call(&ops::add_scalar::call(&ops::reshape::call(rv, &shape)?, Scalar::Float(eps), ONE)?)?;
            Box::new(move |x: &Tensor| ops::mul::call(&ops::sub::call(x, &mean, ONE)?, &invstd))
        }
        NormKind::Batch { .. } => {
            return Err(Error::value("batch_norm backward: the statistics it needs are missing"));
        }
        NormKind::Group { n, group, mean, rstd } => {
            let (mean, rstd) = (ops::reshape::call(mean, &[n, group, 1])?, ops::reshape::call(rstd, &[n, group, 1])?);
            let sizes = x_sizes.clone();
            Box::new(move |x: &Tensor| {
                let g = ops::reshape::call(x, &[n, group, -1])?;
                ops::reshape::call(&tracked_stats(&g, &[2], &mean, &rstd)?, &sizes)
            })
        }
    };
    // Layer norm's weight has the normalized shape (it broadcasts as is); the others' weights
    // are per channel (dim 1).
    let affine_shape: Vec<i64> = match weight.0 {
        Some(w) if layer => w.sizes().to_vec(),
        Some(_) => (0..dim).map(|d| if d == 1 { -1 } else { 1 }).collect(),
        None => Vec::new(),
    };
    let has_weight = weight.0.is_some();
    // (go, x, w) ↦ (∂/∂x, ∂/∂w) of <go, normalize(x)·w>, by reverse mode.
    let grads = move |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let go = xs[0].clone();
        let affine_shape = affine_shape.clone();
        let forward = |ys: &[Tensor]| -> Result<Tensor> {
            let xhat = normalize(&ys[0])?;
            match ys.get(1) {
                Some(w) => ops::mul::call(&xhat, &ops::reshape::call(w, &affine_shape)?),
                None => Ok(xhat),
            }
        };
        let (_, pull) = crate::func::vjp(forward, &xs[1..])?;
        pull.call(&[go])
    };
    let mut primals = vec![grad_out.0.clone(), input.0.clone()];
    let mut tangents = vec![grad_out.1.clone(), input.1.clone()];
    if let (Some(w), Some(wt)) = weight {
        primals.push(w.clone());
        tangents.push(wt.clone());
    } else if has_weight {
        return Err(Error::value("norm backward: a weight without a tangent"));
    }
    let (_, t) = crate::func::jvp(grads, &primals, &tangents)?;
    t.into_iter().nth(which).ok_or_else(|| Error::value("norm backward: no weight, so no weight gradient"))
}

/// `(x - mean) · rstd` over `dims`, with the saved `mean` / `rstd` as values and, at every
/// order, the derivatives of `x`'s own statistics: `rstd = rsqrt(var(x) - detach(var(x)) +
/// rstd⁻²)` (the saved `var + eps` is `rstd⁻²`), as the double backward rebuilds them.
fn tracked_stats(x: &Tensor, dims: &[i64], mean: &Tensor, rstd: &Tensor) -> Result<Tensor> {
    let moving = |t: &Tensor| ops::sub::call(t, &t.detach(), ONE);
    let m = ops::mean_dim::call(x, Some(dims), true, None)?;
    let mu = ops::add::call(mean, &moving(&m)?, ONE)?;
    let xc = ops::sub::call(x, &mu, ONE)?;
    let var = ops::mean_dim::call(&ops::mul::call(&xc, &xc)?, Some(dims), true, None)?;
    let var_eps = ops::add::call(&moving(&var)?, &ops::pow_tensor_scalar::call(rstd, Scalar::Int(-2))?, ONE)?;
    ops::mul::call(&xc, &ops::rsqrt::call(&var_eps)?)
}

/// `t` summed over its first `n` dimensions (the gradient of a bias broadcast over them).
pub fn sum_leading(t: &Tensor, n: usize) -> Result<Tensor> {
    if n == 0 {
        return Ok(t.clone());
    }
    let dims: Vec<i64> = (0..n as i64).collect();
    ops::sum_dim_intlist::call(t, Some(&dims), false, None)
}

/// `t` summed over every dimension but 1 (a per-channel bias's gradient).
pub fn sum_except_channel(t: &Tensor) -> Result<Tensor> {
    let dims: Vec<i64> = (0..t.dim() as i64).filter(|&d| d != 1).collect();
    ops::sum_dim_intlist::call(t, Some(&dims), false, None)
}
