//! Group normalization: `native_group_norm`, `native_group_norm_backward` and the composite
//! `group_norm`.
//!
//! The input is `[N, C, *]` (`HxW` elements per channel) with its `C` channels in `group`
//! groups of `C/group`; each (sample, group) is normalized by its own mean and
//! `rstd = 1/√(var + eps)` (biased variance, two passes), then each channel is scaled by
//! `weight[c]` and shifted by `bias[c]`. `mean` and `rstd` are `[N, group]`.
//!
//! Per-(n, c) sums are the building block ([`nc_reduce`]): group statistics add the sums of
//! their channels, and both passes end in one sweep with per-(n, c) coefficients
//! ([`nc_apply`]), in the input's memory format (channels_last stays channels_last).

use super::{
    check_floating, dispatch_float, elems, nc_apply, nc_reduce, param_dtype, tensor_of, to_m, undefined, values, Ncs,
    NormElem, Out, Stat,
};
use crate::generated::decls::{
    GroupNormCompositeImplicit, NativeGroupNormBackwardCpu, NativeGroupNormBackwardMetaMeta, NativeGroupNormCpu,
    NativeGroupNormMetaMeta,
};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::{ops, DType, Error, MemoryFormat, Result, Tensor};

/// PyTorch's `check_group_norm_inputs`, preceded by the kernel's checks on `C` and `HxW`.
fn check_inputs(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    c: i64,
    hxw: i64,
    group: i64,
) -> Result<()> {
    if c <= 0 {
        return Err(Error::runtime(format!("Expected number of channels to be greater than 0, got {c}")));
    }
    if hxw <= 0 {
        return Err(Error::runtime(format!("Expected HxW to be greater than 0, got {hxw}")));
    }
    if group <= 0 {
        return Err(Error::runtime(format!("Expected num groups to be greater than 0, got {group}")));
    }
    let shape = input.sizes();
    if c % group != 0 {
        return Err(Error::runtime(format!(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape {:?} and num_groups={group}",
            &shape[..]
        )));
    }
    for (name, t) in [("weight", weight), ("bias", bias)] {
        if let Some(t) = t {
            if t.dim() != 1 || t.numel() != c {
                return Err(Error::runtime(format!(
                    "Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of shape {:?} and input of shape {:?}",
                    &t.sizes()[..],
                    &shape[..]
                )));
            }
        }
    }
    Ok(())
}

/// `X.numel() == N * C * HxW`, checked by PyTorch's kernel.
fn check_numel(input: &Tensor, n: i64, c: i64, hxw: i64) -> Result<()> {
    if n.checked_mul(c).and_then(|nc| nc.checked_mul(hxw)) != Some(input.numel()) {
        return Err(Error::runtime(format!(
            "Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.) (X of shape {:?}, N={n}, C={c}, HxW={hxw})",
            &input.sizes()[..]
        )));
    }
    Ok(())
}

/// The layout an input is processed in: channels_last when its strides say so and its first
/// two dims are `N` and `C`, else contiguous.
fn format_of(input: &Tensor, n: i64, c: i64) -> MemoryFormat {
    let sizes = input.sizes();
    if input.is_contiguous() || sizes.len() < 4 || sizes[0] != n || sizes[1] != c {
        return MemoryFormat::Contiguous;
    }
    input.suggest_memory_format()
}

/// `x` dense in `format`, seen as `[N, C, HxW]`.
fn dense_nc(x: &Tensor, format: MemoryFormat, n: i64, c: i64, hxw: i64) -> Result<(Tensor, Ncs)> {
    let x = if x.is_contiguous_as(format) { x.clone() } else { ops::contiguous::call(x, format)? };
    let l = Ncs { n: n as usize, c: c as usize, s: hxw as usize, last: format != MemoryFormat::Contiguous || hxw == 1 };
    Ok((x, l))
}

/// Per-(n, c) values summed per (n, g).
fn per_group(v: &[f64], l: Ncs, g: usize) -> Vec<f64> {
    let d = l.c / g;
    (0..l.n * g).map(|i| v[i * d..(i + 1) * d].iter().sum()).collect()
}

/// Per-(n, g) values repeated for each channel of the group, in the math type.
fn per_channel<M: super::Float>(v: &[f64], l: Ncs, g: usize) -> Vec<M> {
    let d = l.c / g;
    (0..l.n * l.c).map(|i| M::of(v[i / d])).collect()
}

#[allow(clippy::too_many_arguments)]
fn plan(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
) -> Result<DType> {
    check_inputs(input, weight, bias, c, hxw, group)?;
    let stat_dtype = param_dtype(input, &[weight, bias])?;
    check_floating("GroupNormKernelImpl", input.dtype())?;
    check_numel(input, n, c, hxw)?;
    Ok(stat_dtype)
}

impl NativeGroupNormMetaMeta for Meta {
    fn native_group_norm_meta(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        n: i64,
        c: i64,
        hxw: i64,
        group: i64,
        _eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let stat_dtype = plan(input, weight, bias, n, c, hxw, group)?;
        let dev = input.device();
        Ok((
            Tensor::empty(&input.sizes(), input.dtype(), dev, format_of(input, n, c))?,
            Tensor::empty(&[n, group], stat_dtype, dev, MemoryFormat::Contiguous)?,
            Tensor::empty(&[n, group], stat_dtype, dev, MemoryFormat::Contiguous)?,
        ))
    }
}

/// Group statistics (mean, rstd per (n, g)) and the normalized output.
fn forward<T: NormElem>(
    x: &Tensor,
    l: Ncs,
    format: MemoryFormat,
    g: usize,
    w: Option<&[f64]>,
    b: Option<&[f64]>,
    eps: f64,
) -> Result<(Tensor, Vec<f64>, Vec<f64>)> {
    let mut out = Out::new(&x.sizes(), x.dtype(), x.device(), format)?;
    // SAFETY: `x` is dense in `format` with elements of type `T`.
    let xs = unsafe { elems::<T>(x) };
    let count = (l.c / g * l.s) as f64;
    let mean: Vec<f64> = per_group(&nc_reduce(xs, l, Stat::Sum), l, g).iter().map(|s| s / count).collect();
    let centers = per_channel::<T::M>(&mean, l, g);
    let var: Vec<f64> = per_group(&nc_reduce(xs, l, Stat::SqDev(&centers)), l, g).iter().map(|s| s / count).collect();
    let rstd: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
    let d = l.c / g;
    let mut k2 = Vec::with_capacity(l.n * l.c);
    let mut k3 = Vec::with_capacity(l.n * l.c);
    for i in 0..l.n * l.c {
        let (ng, ch) = (i / d, i % l.c);
        let scale = rstd[ng] * w.map_or(1.0, |w| w[ch]);
        k2.push(scale);
        k3.push(b.map_or(0.0, |b| b[ch]) - mean[ng] * scale);
    }
    // SAFETY: `out` is a fresh output of `x`'s shape, dtype `T` and format, written in full.
    unsafe {
        nc_apply(out.slice::<T>(), xs, None, &to_m::<T::M>(&k2), &to_m::<T::M>(&k3), l);
        Ok((out.finish(), mean, rstd))
    }
}

impl NativeGroupNormCpu for Cpu {
    fn native_group_norm(
        input: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        n: i64,
        c: i64,
        hxw: i64,
        group: i64,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let stat_dtype = plan(input, weight, bias, n, c, hxw, group)?;
        let dev = input.device();
        let format = format_of(input, n, c);
        let (x, l) = dense_nc(input, format, n, c, hxw)?;
        let (w, b) = (values(weight)?, values(bias)?);
        let g = group as usize;
        let (y, mean, rstd) = dispatch_float!(input.dtype(), "GroupNormKernelImpl", T =>
            forward::<T>(&x, l, format, g, w.as_deref(), b.as_deref(), eps)?);
        Ok((y, tensor_of(mean, &[n, group], stat_dtype, dev)?, tensor_of(rstd, &[n, group], stat_dtype, dev)?))
    }
}

// ---------------------------------------------------------------------------------------------
// backward
// ---------------------------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
fn back_plan(
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
) -> Result<DType> {
    if output_mask.len() != 3 {
        return Err(Error::value(format!("output_mask must have 3 elements, got {}", output_mask.len())));
    }
    check_inputs(input, weight, None, c, hxw, group)?;
    check_floating("GroupNormBackwardKernelImpl", input.dtype())?;
    check_numel(input, n, c, hxw)?;
    if grad_out.sizes() != input.sizes() || grad_out.dtype() != input.dtype() {
        return Err(Error::shape(format!(
            "grad_out ({} {:?}) must have the dtype and shape of input ({} {:?})",
            grad_out.dtype(),
            &grad_out.sizes()[..],
            input.dtype(),
            &input.sizes()[..]
        )));
    }
    for (name, t) in [("mean", mean), ("rstd", rstd)] {
        if Some(t.numel()) != n.checked_mul(group) {
            return Err(Error::shape(format!(
                "{name} must have N * group = {} elements, got {}",
                n as i128 * group as i128,
                t.numel()
            )));
        }
    }
    Ok(weight.map_or(input.dtype(), Tensor::dtype))
}

impl NativeGroupNormBackwardMetaMeta for Meta {
    fn native_group_norm_backward_meta(
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
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let pd = back_plan(grad_out, input, mean, rstd, weight, n, c, hxw, group, output_mask)?;
        let dev = input.device();
        let gi = if output_mask[0] {
            Tensor::empty(&input.sizes(), input.dtype(), dev, format_of(input, n, c))?
        } else {
            undefined(input.dtype(), dev)?
        };
        let param =
            |on: bool| if on { Tensor::empty(&[c], pd, dev, MemoryFormat::Contiguous) } else { undefined(pd, dev) };
        Ok((gi, param(output_mask[1])?, param(output_mask[2])?))
    }
}

/// The gradients for one element type: `dx` (when asked), then the per-channel weight and bias
/// gradients.
#[allow(clippy::too_many_arguments)]
fn backward<T: NormElem>(
    dy: &Tensor,
    x: &Tensor,
    l: Ncs,
    format: MemoryFormat,
    g: usize,
    mean: &[f64],
    rstd: &[f64],
    w: Option<&[f64]>,
    want_input: bool,
) -> Result<(Option<Tensor>, Vec<f64>, Vec<f64>)> {
    // SAFETY: both are dense in `format` with elements of type `T`.
    let (dys, xs) = unsafe { (elems::<T>(dy), elems::<T>(x)) };
    let centers = per_channel::<T::M>(mean, l, g);
    let sums = nc_reduce(xs, l, Stat::Grad(dys, &centers));
    let nc = l.n * l.c;
    let (sum_dy, dot) = sums.split_at(nc);
    let d = l.c / g;
    let weight = |ch: usize| w.map_or(1.0, |w| w[ch]);
    // `C` is only tied to the input's size when N > 0: allocate per-channel sums fallibly.
    let zeros = |n: usize| -> Result<Vec<f64>> {
        let mut v = oxten_runtime::error::try_vec_with_capacity(n)?;
        v.resize(n, 0.0);
        Ok(v)
    };
    let mut dgamma = zeros(l.c)?;
    let mut dbeta = zeros(l.c)?;
    for i in 0..nc {
        let ch = i % l.c;
        dgamma[ch] += rstd[i / d] * dot[i];
        dbeta[ch] += sum_dy[i];
    }
    if !want_input {
        return Ok((None, dgamma, dbeta));
    }
    let count = (d * l.s) as f64;
    let mut k1 = Vec::with_capacity(nc);
    let mut k2 = Vec::with_capacity(nc);
    let mut k3 = Vec::with_capacity(nc);
    for ng in 0..l.n * g {
        let (mut a, mut b) = (0.0, 0.0);
        for i in ng * d..(ng + 1) * d {
            a += weight(i % l.c) * sum_dy[i];
            b += weight(i % l.c) * dot[i];
        }
        let r = rstd[ng];
        let c2 = -r * r * r * b / count;
        let c3 = -c2 * mean[ng] - r * a / count;
        for i in ng * d..(ng + 1) * d {
            k1.push(r * weight(i % l.c));
            k2.push(c2);
            k3.push(c3);
        }
    }
    let mut out = Out::new(&x.sizes(), x.dtype(), x.device(), format)?;
    // SAFETY: `out` is a fresh output of `x`'s shape, dtype `T` and format, written in full.
    unsafe {
        let k1 = to_m::<T::M>(&k1);
        nc_apply(out.slice::<T>(), xs, Some((dys, &k1)), &to_m::<T::M>(&k2), &to_m::<T::M>(&k3), l);
        Ok((Some(out.finish()), dgamma, dbeta))
    }
}

impl NativeGroupNormBackwardCpu for Cpu {
    fn native_group_norm_backward(
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
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let pd = back_plan(grad_out, input, mean, rstd, weight, n, c, hxw, group, output_mask)?;
        let dev = input.device();
        let format = format_of(input, n, c);
        let (x, l) = dense_nc(input, format, n, c, hxw)?;
        let (dy, _) = dense_nc(grad_out, format, n, c, hxw)?;
        let (m, r) = (mean.to_f64_vec()?, rstd.to_f64_vec()?);
        let w = values(weight)?;
        let (gi, dgamma, dbeta) = dispatch_float!(input.dtype(), "GroupNormBackwardKernelImpl", T =>
            backward::<T>(&dy, &x, l, format, group as usize, &m, &r, w.as_deref(), output_mask[0])?);
        let gi = match gi {
            Some(g) => g,
            None => undefined(input.dtype(), dev)?,
        };
        let param = |on: bool, v: Vec<f64>| if on { tensor_of(v, &[c], pd, dev) } else { undefined(pd, dev) };
        Ok((gi, param(output_mask[1], dgamma)?, param(output_mask[2], dbeta)?))
    }
}

// ---------------------------------------------------------------------------------------------
// composite
// ---------------------------------------------------------------------------------------------

/// `group_norm`: `torch.nn.functional.group_norm`'s checks (at least two dims, more than one
/// value per group), then `native_group_norm` on the input made dense in its suggested memory
/// format.
impl GroupNormCompositeImplicit for Composite {
    fn group_norm(
        input: &Tensor,
        num_groups: i64,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
        _cudnn_enabled: bool,
    ) -> Result<Tensor> {
        if input.dim() < 2 {
            return Err(Error::runtime(format!(
                "Expected at least 2 dimensions for input tensor but received {}",
                input.dim()
            )));
        }
        let sizes = input.sizes();
        let (n, c) = (sizes[0], sizes[1]);
        let hxw: i64 = sizes[2..].iter().product();
        check_inputs(input, weight, bias, c, hxw, num_groups)?;
        if n * (c / num_groups) * hxw == 1 {
            let mut shape = vec![n * c / num_groups, num_groups];
            shape.extend_from_slice(&sizes[2..]);
            return Err(Error::value(format!(
                "Expected more than 1 value per channel when training, got input size {shape:?}"
            )));
        }
        let format = format_of(input, n, c);
        let x = if input.is_contiguous_as(format) { input.clone() } else { ops::contiguous::call(input, format)? };
        Ok(ops::native_group_norm::call(&x, weight, bias, n, c, hxw, num_groups, eps)?.0)
    }
}
