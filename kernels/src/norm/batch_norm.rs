//! Batch normalization: `native_batch_norm`, `native_batch_norm_backward` and the composite
//! `batch_norm`.
//!
//! Statistics are per channel (dim 1) over every other dim. In training the batch mean and the
//! biased variance normalize the input, `save_mean`/`save_invstd` return them (`invstd =
//! 1/√(var + eps)`), and the running statistics, when given, are updated in place with
//! `momentum` and the *unbiased* variance. In evaluation the running statistics normalize the
//! input and the two saved outputs are empty, as PyTorch returns them.
//!
//! Both passes reduce to per-channel coefficients: the forward pass is `y = scale·x + shift`,
//! the backward pass `dx = k1·dy + k2·x + k3`, so each is one sweep over the data in the
//! input's memory format (channels_last inputs keep channels_last outputs and gradients).
//!
//! The forms `torch.export` and functionalization trace (`_native_batch_norm_legit*`,
//! `_batch_norm_with_update`, `_batch_norm_no_update`) are composites over `native_batch_norm`.

use super::{
    check_floating, dense, dispatch_float, elems, nc_apply, nc_reduce, param_dtype, suggest_format, tensor_of, to_m,
    undefined, values, write_values, NormElem, Out, Stat,
};
use crate::generated::decls::{
    BatchNormBackwardCpuCpu, BatchNormBackwardMetaMeta, BatchNormCompositeImplicit, BatchNormCpuCpu, BatchNormMetaMeta,
    BatchNormNoUpdateCompositeImplicit, BatchNormWithUpdateCompositeImplicit, NativeBatchNormLegitCompositeImplicit,
    NativeBatchNormLegitNoStatsCompositeImplicit, NativeBatchNormLegitNoTrainingCompositeImplicit,
};
use crate::iter::scalar_type_name;
use crate::{Composite, Cpu, Meta};
use oxten_runtime::{ops, wrap_dim, DType, Error, MemoryFormat, Result, Scalar, Tensor};

/// PyTorch's `check_dims_match_num_input_features`.
fn check_features(arg: &str, expected: i64, t: Option<&Tensor>) -> Result<()> {
    match t {
        Some(t) if t.numel() != expected => {
            Err(Error::runtime(format!("{arg} should contain {expected} elements not {}", t.numel())))
        }
        _ => Ok(()),
    }
}

/// What the forward kernels share: the checks, the channel count and the statistics' dtype.
struct Plan {
    c: i64,
    stat_dtype: DType,
    format: MemoryFormat,
}

fn plan(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    training: bool,
) -> Result<Plan> {
    // `input.size(1)`: a 0-d or 1-d input has no channel dim.
    wrap_dim(1, input.dim())?;
    let c = input.sizes()[1];
    if !training {
        if running_mean.is_none() {
            return Err(Error::value("running_mean must be defined in evaluation mode"));
        }
        if running_var.is_none() {
            return Err(Error::value("running_var must be defined in evaluation mode"));
        }
    }
    check_floating("batch_norm", input.dtype())?;
    let stat_dtype = param_dtype(input, &[weight, bias, running_mean, running_var])?;
    // PyTorch reads the first C elements of each parameter without checking; oxten requires
    // exactly C (reading past a shorter one would be out of bounds).
    check_features("weight", c, weight)?;
    check_features("bias", c, bias)?;
    check_features("running_mean", c, running_mean)?;
    check_features("running_var", c, running_var)?;
    if training && input.numel() == 0 {
        return Err(Error::runtime(format!(
            "input tensor must have at least one element, but got input_sizes = {:?}",
            &input.sizes()[..]
        )));
    }
    Ok(Plan { c, stat_dtype, format: suggest_format(input) })
}

impl BatchNormMetaMeta for Meta {
    fn batch_norm_meta(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        training: bool,
        _momentum: f64,
        _eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let p = plan(input, weight, bias, running_mean, running_var, training)?;
        let dev = input.device();
        let y = Tensor::empty(&input.sizes(), input.dtype(), dev, p.format)?;
        let n = if training { p.c } else { 0 };
        let stat = || Tensor::empty(&[n], p.stat_dtype, dev, MemoryFormat::Contiguous);
        Ok((y, stat()?, stat()?))
    }
}

/// `y = scale[c]·x + shift[c]` into a new tensor in `format`.
fn affine<T: NormElem>(x: &Tensor, format: MemoryFormat, scale: &[f64], shift: &[f64]) -> Result<Tensor> {
    let (xd, l) = dense(x, format)?;
    let mut out = Out::new(&x.sizes(), x.dtype(), x.device(), format)?;
    let (mut k2, mut k3) = (Vec::with_capacity(l.n * l.c), Vec::with_capacity(l.n * l.c));
    for _ in 0..l.n {
        k2.extend(to_m::<T::M>(scale));
        k3.extend(to_m::<T::M>(shift));
    }
    // SAFETY: `xd` is dense in `format` with elements of type `T` (the input's dtype), and
    // `out` is a fresh output of the same shape and format, written in full by `nc_apply`.
    unsafe {
        nc_apply(out.slice::<T>(), elems::<T>(&xd), None, &k2, &k3, l);
        Ok(out.finish())
    }
}

/// The batch mean and biased variance per channel (two passes).
fn batch_stats<T: NormElem>(x: &Tensor, format: MemoryFormat) -> Result<(Vec<f64>, Vec<f64>, usize)> {
    let (xd, l) = dense(x, format)?;
    // SAFETY: `xd` is dense with elements of type `T`.
    let xs = unsafe { elems::<T>(&xd) };
    let count = l.n * l.s;
    let per_channel = |v: &[f64]| -> Vec<f64> { (0..l.c).map(|c| (0..l.n).map(|n| v[n * l.c + c]).sum()).collect() };
    let mean: Vec<f64> = per_channel(&nc_reduce(xs, l, Stat::Sum)).iter().map(|s| s / count as f64).collect();
    let centers: Vec<T::M> = (0..l.n).flat_map(|_| to_m::<T::M>(&mean)).collect();
    let var: Vec<f64> =
        per_channel(&nc_reduce(xs, l, Stat::SqDev(&centers))).iter().map(|s| s / count as f64).collect();
    Ok((mean, var, count))
}

impl BatchNormCpuCpu for Cpu {
    fn batch_norm_cpu(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let p = plan(input, weight, bias, running_mean, running_var, training)?;
        let c = p.c as usize;
        let dev = input.device();
        let (mean, invstd) = if training {
            let (mean, var, count) =
                dispatch_float!(input.dtype(), "batch_norm", T => batch_stats::<T>(input, p.format)?);
            let unbiased = |v: f64| v * count as f64 / (count as f64 - 1.0);
            if let Some(rm) = running_mean {
                let old = rm.to_f64_vec()?;
                write_values(rm, old.iter().zip(&mean).map(|(r, m)| momentum * m + (1.0 - momentum) * r).collect())?;
            }
            if let Some(rv) = running_var {
                let old = rv.to_f64_vec()?;
                write_values(
                    rv,
                    old.iter().zip(&var).map(|(r, v)| momentum * unbiased(*v) + (1.0 - momentum) * r).collect(),
                )?;
            }
            let invstd: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
            (mean, invstd)
        } else {
            let mean = values(running_mean)?.unwrap_or_default();
            let var = values(running_var)?.unwrap_or_default();
            (mean, var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect())
        };
        let w = values(weight)?.unwrap_or_else(|| vec![1.0; c]);
        let b = values(bias)?.unwrap_or_else(|| vec![0.0; c]);
        let scale: Vec<f64> = (0..c).map(|i| w[i] * invstd[i]).collect();
        let shift: Vec<f64> = (0..c).map(|i| b[i] - mean[i] * scale[i]).collect();
        let y = dispatch_float!(input.dtype(), "batch_norm", T => affine::<T>(input, p.format, &scale, &shift)?);
        if training {
            Ok((y, tensor_of(mean, &[p.c], p.stat_dtype, dev)?, tensor_of(invstd, &[p.c], p.stat_dtype, dev)?))
        } else {
            Ok((y, undefined(p.stat_dtype, dev)?, undefined(p.stat_dtype, dev)?))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// backward
// ---------------------------------------------------------------------------------------------

/// The backward pass's checks and output dtypes.
struct BackPlan {
    c: i64,
    param_dtype: DType,
    format: MemoryFormat,
}

#[allow(clippy::too_many_arguments)]
fn back_plan(
    grad_out: &Tensor,
    input: &Tensor,
    weight: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    save_mean: Option<&Tensor>,
    save_invstd: Option<&Tensor>,
    train: bool,
    output_mask: &[bool],
) -> Result<BackPlan> {
    wrap_dim(1, input.dim())?;
    check_floating("batch_norm_backward_cpu", input.dtype())?;
    if output_mask.len() != 3 {
        return Err(Error::value(format!("output_mask must have 3 elements, got {}", output_mask.len())));
    }
    if grad_out.sizes() != input.sizes() {
        return Err(Error::shape(format!(
            "grad_out of shape {:?} does not match input of shape {:?}",
            &grad_out.sizes()[..],
            &input.sizes()[..]
        )));
    }
    if grad_out.dtype() != input.dtype() {
        return Err(Error::dtype(format!(
            "expected grad_out to have dtype {} like input, got {}",
            scalar_type_name(input.dtype()),
            scalar_type_name(grad_out.dtype())
        )));
    }
    let c = input.sizes()[1];
    let (mean, invstd, what) = if train {
        (save_mean, save_invstd, ["save_mean", "save_invstd"])
    } else {
        (running_mean, running_var, ["running_mean", "running_var"])
    };
    if mean.is_none() || invstd.is_none() {
        return Err(Error::value(format!(
            "{} and {} must be defined when train={}",
            what[0],
            what[1],
            if train { "True" } else { "False" }
        )));
    }
    check_features("weight", c, weight)?;
    check_features(what[0], c, mean)?;
    check_features(what[1], c, invstd)?;
    let param_dtype = weight.or(mean).map_or(input.dtype(), Tensor::dtype);
    Ok(BackPlan { c, param_dtype, format: suggest_format(input) })
}

impl BatchNormBackwardMetaMeta for Meta {
    fn batch_norm_backward_meta(
        grad_out: &Tensor,
        input: &Tensor,
        weight: Option<&Tensor>,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        save_mean: Option<&Tensor>,
        save_invstd: Option<&Tensor>,
        train: bool,
        _eps: f64,
        output_mask: &[bool],
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let p =
            back_plan(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, output_mask)?;
        let dev = input.device();
        let gi = if output_mask[0] {
            Tensor::empty(&input.sizes(), input.dtype(), dev, p.format)?
        } else {
            undefined(input.dtype(), dev)?
        };
        let param = |on: bool| {
            if on {
                Tensor::empty(&[p.c], p.param_dtype, dev, MemoryFormat::Contiguous)
            } else {
                undefined(p.param_dtype, dev)
            }
        };
        Ok((gi, param(output_mask[1])?, param(output_mask[2])?))
    }
}

/// The backward pass for one element type: per-channel Σdy and Σdy·(x - mean), then
/// `dx = k1·dy + k2·x + k3`.
#[allow(clippy::too_many_arguments)]
fn backward<T: NormElem>(
    grad_out: &Tensor,
    input: &Tensor,
    mean: &[f64],
    invstd: &[f64],
    w: &[f64],
    train: bool,
    format: MemoryFormat,
    output_mask: &[bool],
) -> Result<(Option<Tensor>, Vec<f64>, Vec<f64>)> {
    let (xd, l) = dense(input, format)?;
    let (dyd, _) = dense(grad_out, format)?;
    // SAFETY: both are dense in `format` with elements of type `T` (the dtypes were checked).
    let (xs, dys) = unsafe { (elems::<T>(&xd), elems::<T>(&dyd)) };
    let c = l.c;
    let need_sums = train || output_mask[1] || output_mask[2];
    let (sum_dy, dot) = if need_sums {
        let centers: Vec<T::M> = (0..l.n).flat_map(|_| to_m::<T::M>(mean)).collect();
        let r = nc_reduce(xs, l, Stat::Grad(dys, &centers));
        let (s, d) = r.split_at(l.n * c);
        let fold = |v: &[f64]| -> Vec<f64> { (0..c).map(|j| (0..l.n).map(|n| v[n * c + j]).sum()).collect() };
        (fold(s), fold(d))
    } else {
        (vec![0.0; c], vec![0.0; c])
    };
    let gi = if output_mask[0] {
        let count = (l.n * l.s) as f64;
        let mut k1 = Vec::with_capacity(c);
        let mut k2 = Vec::with_capacity(c);
        let mut k3 = Vec::with_capacity(c);
        for j in 0..c {
            let g = w[j] * invstd[j];
            k1.push(g);
            if train {
                let a = -g * invstd[j] * invstd[j] * dot[j] / count;
                k2.push(a);
                k3.push(-g * sum_dy[j] / count - a * mean[j]);
            } else {
                k2.push(0.0);
                k3.push(0.0);
            }
        }
        let rep = |v: &[f64]| -> Vec<T::M> { (0..l.n).flat_map(|_| to_m::<T::M>(v)).collect() };
        let (k1, k2, k3) = (rep(&k1), rep(&k2), rep(&k3));
        let mut out = Out::new(&input.sizes(), input.dtype(), input.device(), format)?;
        // SAFETY: `out` is a fresh output of the input's shape, dtype `T` and format, written
        // in full by `nc_apply`.
        unsafe {
            nc_apply(out.slice::<T>(), xs, Some((dys, &k1)), &k2, &k3, l);
            Some(out.finish())
        }
    } else {
        None
    };
    let gw: Vec<f64> = (0..c).map(|j| dot[j] * invstd[j]).collect();
    Ok((gi, gw, sum_dy))
}

impl BatchNormBackwardCpuCpu for Cpu {
    fn batch_norm_backward_cpu(
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
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let p =
            back_plan(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, output_mask)?;
        let c = p.c as usize;
        let dev = input.device();
        let (mean, invstd) = if train {
            (values(save_mean)?.unwrap_or_default(), values(save_invstd)?.unwrap_or_default())
        } else {
            let var = values(running_var)?.unwrap_or_default();
            (values(running_mean)?.unwrap_or_default(), var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect())
        };
        let w = values(weight)?.unwrap_or_else(|| vec![1.0; c]);
        let (gi, gw, gb) = dispatch_float!(input.dtype(), "batch_norm_backward_cpu", T =>
            backward::<T>(grad_out, input, &mean, &invstd, &w, train, p.format, output_mask)?);
        let gi = match gi {
            Some(g) => g,
            None => undefined(input.dtype(), dev)?,
        };
        let param = |on: bool, v: Vec<f64>| {
            if on {
                tensor_of(v, &[p.c], p.param_dtype, dev)
            } else {
                undefined(p.param_dtype, dev)
            }
        };
        Ok((gi, param(output_mask[1], gw)?, param(output_mask[2], gb)?))
    }
}

// ---------------------------------------------------------------------------------------------
// composite
// ---------------------------------------------------------------------------------------------

/// `batch_norm`: PyTorch's `_batch_norm_impl_index` argument checks, then `native_batch_norm`.
///
/// Like `torch.nn.functional.batch_norm` (not the ATen op, which lets it through), training on
/// a single value per channel is an error: its variance is undefined.
impl BatchNormCompositeImplicit for Composite {
    fn batch_norm(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        training: bool,
        momentum: f64,
        eps: f64,
        _cudnn_enabled: bool,
    ) -> Result<Tensor> {
        if input.numel() == 0 {
            // An empty input gives an empty output that still depends on weight and bias, so
            // the gradient chain is not broken (PyTorch does the same).
            let mut out = ops::deep_clone::call(input, None)?;
            if let Some(w) = weight {
                out = ops::mul::call(&out, &ops::select::call(w, 0, 0)?)?;
            }
            if let Some(b) = bias {
                out = ops::add::call(&out, &ops::select::call(b, 0, 0)?, Scalar::Int(1))?;
            }
            return Ok(out);
        }
        wrap_dim(1, input.dim())?;
        let c = input.sizes()[1];
        match running_mean {
            Some(rm) => check_features("running_mean", c, Some(rm))?,
            None if !training => return Err(Error::runtime("running_mean must be defined in evaluation mode")),
            None => {}
        }
        match running_var {
            Some(rv) => check_features("running_var", c, Some(rv))?,
            None if !training => return Err(Error::runtime("running_var must be defined in evaluation mode")),
            None => {}
        }
        check_features("weight", c, weight)?;
        check_features("bias", c, bias)?;
        if training {
            let sizes = input.sizes();
            let per_channel: i64 = sizes[0] * sizes[2..].iter().product::<i64>();
            if per_channel == 1 {
                return Err(Error::value(format!(
                    "Expected more than 1 value per channel when training, got input size {:?}",
                    &sizes[..]
                )));
            }
        }
        let (y, _, _) =
            ops::native_batch_norm::call(input, weight, bias, running_mean, running_var, training, momentum, eps)?;
        Ok(y)
    }
}

/// `native_batch_norm` for the forms that declare the running statistics written
/// (`Tensor(a!)`): it runs on copies of them, written back in training. The generated wrapper
/// moves the statistics' version counters, so the autograd node under this composite must save
/// tensors that nothing writes afterwards (PyTorch's autograd saves them after the call instead).
#[allow(clippy::too_many_arguments)]
fn batch_norm_updating(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: &Tensor,
    running_var: &Tensor,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let (mean, var) = (ops::deep_clone::call(running_mean, None)?, ops::deep_clone::call(running_var, None)?);
    let out = ops::native_batch_norm::call(input, weight, bias, Some(&mean), Some(&var), training, momentum, eps)?;
    if training {
        ops::copy_::call(running_mean, &mean, false)?;
        ops::copy_::call(running_var, &var, false)?;
    }
    Ok(out)
}

/// PyTorch's reserve buffer of `_batch_norm_with_update`/`_batch_norm_no_update`: cuDNN's
/// workspace, empty (uint8) everywhere else.
fn empty_reserve(input: &Tensor) -> Result<Tensor> {
    Tensor::empty(&[0], DType::U8, input.device(), MemoryFormat::Contiguous)
}

/// `_native_batch_norm_legit`: `native_batch_norm` with running statistics it must be given.
impl NativeBatchNormLegitCompositeImplicit for Composite {
    fn native_batch_norm_legit(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: &Tensor,
        running_var: &Tensor,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        batch_norm_updating(input, weight, bias, running_mean, running_var, training, momentum, eps)
    }
}

/// `_native_batch_norm_legit.no_stats`: batch statistics only.
impl NativeBatchNormLegitNoStatsCompositeImplicit for Composite {
    fn native_batch_norm_legit_no_stats(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        ops::native_batch_norm::call(input, weight, bias, None, None, training, momentum, eps)
    }
}

/// `_native_batch_norm_legit_no_training`: evaluation with the running statistics.
impl NativeBatchNormLegitNoTrainingCompositeImplicit for Composite {
    fn native_batch_norm_legit_no_training(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: &Tensor,
        running_var: &Tensor,
        momentum: f64,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        ops::native_batch_norm::call(input, weight, bias, Some(running_mean), Some(running_var), false, momentum, eps)
    }
}

/// `_batch_norm_with_update`: training, updating the running statistics.
impl BatchNormWithUpdateCompositeImplicit for Composite {
    fn batch_norm_with_update(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: &Tensor,
        running_var: &Tensor,
        momentum: f64,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
        let (y, mean, invstd) =
            batch_norm_updating(input, weight, bias, running_mean, running_var, true, momentum, eps)?;
        Ok((y, mean, invstd, empty_reserve(input)?))
    }
}

/// `_batch_norm_no_update`: evaluation with the running statistics.
impl BatchNormNoUpdateCompositeImplicit for Composite {
    fn batch_norm_no_update(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        momentum: f64,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
        let (y, mean, invstd) =
            ops::native_batch_norm::call(input, weight, bias, running_mean, running_var, false, momentum, eps)?;
        Ok((y, mean, invstd, empty_reserve(input)?))
    }
}
