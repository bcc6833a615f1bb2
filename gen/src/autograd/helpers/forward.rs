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

/// The tangent of `x̂ = (x - mean) · rstd` with statistics over `dims`:
/// `rstd · (x_t - mean(x_t) - x̂ · mean(x̂ · x_t))`.
fn normalized_tangent(xhat: &Tensor, x_t: &Tensor, rstd: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let mean = |t: &Tensor| ops::mean_dim::call(t, Some(dims), true, None);
    let centered = ops::sub::call(x_t, &mean(x_t)?, ONE)?;
    let proj = ops::mul::call(xhat, &mean(&ops::mul::call(xhat, x_t)?)?)?;
    ops::mul::call(rstd, &ops::sub::call(&centered, &proj, ONE)?)
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
    let xhat_t = normalized_tangent(&xhat, input_t, rstd, &dims)?;
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
    let xhat_t =
        if training { normalized_tangent(&xhat, input_t, &invstd, &dims)? } else { ops::mul::call(input_t, &invstd)? };
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
    let xhat_t = normalized_tangent(&xhat, &x_t, &rstd, &[2])?;
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
