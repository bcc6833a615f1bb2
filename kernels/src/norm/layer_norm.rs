//! Layer normalization: `native_layer_norm`, `native_layer_norm_backward` and the composite
//! `layer_norm`.
//!
//! The input is made contiguous and seen as `M` rows of `D` elements (`D` the product of
//! `normalized_shape`); each row is normalized by its own mean and `rstd = 1/√(var + eps)`
//! (biased variance, two passes), then scaled by `weight` and shifted by `bias` elementwise.
//! `mean` and `rstd` are returned with the input's leading dims and a 1 for each normalized dim.
//! Rows are processed in parallel chunks; the backward pass also sums the weight and bias
//! gradients over rows per chunk and adds the chunks in order.

use super::{
    check_floating, dispatch_float, elems, lanes_sum, param_dtype, tensor_of, undefined, values, Float, NormElem, Out,
    GRAIN,
};
use crate::generated::decls::{
    LayerNormBackwardCpuCpu, LayerNormBackwardMetaMeta, LayerNormCompositeImplicit, LayerNormCpuCpu, LayerNormMetaMeta,
};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::{ops, DType, Error, MemoryFormat, Result, Tensor};
use std::mem::MaybeUninit;

/// PyTorch's `_check_layer_norm_inputs`: the rows (`M`) and row length (`D`).
pub(super) fn check_inputs(
    input: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
) -> Result<(usize, usize)> {
    if normalized_shape.is_empty() {
        return Err(Error::runtime(format!(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = {normalized_shape:?}"
        )));
    }
    for (name, t) in [("weight", weight), ("bias", bias)] {
        if let Some(t) = t {
            if t.sizes()[..] != *normalized_shape {
                return Err(Error::runtime(format!(
                    "Expected {name} to be of same shape as normalized_shape, but got {name} of shape {:?} and normalized_shape = {normalized_shape:?}",
                    &t.sizes()[..]
                )));
            }
        }
    }
    let sizes = input.sizes();
    let k = normalized_shape.len();
    if sizes.len() < k || sizes[sizes.len() - k..] != *normalized_shape {
        let tail: String = normalized_shape.iter().map(|s| format!(", {s}")).collect();
        return Err(Error::runtime(format!(
            "Given normalized_shape={normalized_shape:?}, expected input with shape [*{tail}], but got input of size{:?}",
            &sizes[..]
        )));
    }
    let axis = sizes.len() - k;
    let m: i64 = sizes[..axis].iter().product();
    let d: i64 = sizes[axis..].iter().product();
    Ok((m as usize, d as usize))
}

/// The shape of `mean` and `rstd`: the leading dims, then 1 for each normalized dim.
pub(super) fn stat_shape(input: &Tensor, k: usize) -> Vec<i64> {
    let sizes = input.sizes();
    let axis = sizes.len() - k;
    sizes[..axis].iter().copied().chain(std::iter::repeat_n(1, k)).collect()
}

/// The forward pass's checks, in PyTorch's order: mixed dtypes, shapes, then the dtype.
pub(super) fn plan(
    input: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
) -> Result<(usize, usize, DType)> {
    let stat_dtype = param_dtype(input, &[weight, bias])?;
    let (m, d) = check_inputs(input, normalized_shape, weight, bias)?;
    check_floating("LayerNormKernelImpl", input.dtype())?;
    Ok((m, d, stat_dtype))
}

impl LayerNormMetaMeta for Meta {
    fn layer_norm_meta(
        input: &Tensor,
        normalized_shape: &[i64],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        _eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let (_, _, stat_dtype) = plan(input, normalized_shape, weight, bias)?;
        let dev = input.device();
        let shape = stat_shape(input, normalized_shape.len());
        Ok((
            Tensor::empty(&input.sizes(), input.dtype(), dev, MemoryFormat::Contiguous)?,
            Tensor::empty(&shape, stat_dtype, dev, MemoryFormat::Contiguous)?,
            Tensor::empty(&shape, stat_dtype, dev, MemoryFormat::Contiguous)?,
        ))
    }
}

/// Rows per parallel task.
fn rows_per_task(d: usize) -> usize {
    (GRAIN / d.max(1)).max(1)
}

/// The address of the per-row statistics, shared by the tasks of [`forward`].
#[derive(Clone, Copy)]
struct StatsPtr(*mut (f64, f64));
// SAFETY: each task writes its own rows only.
unsafe impl Send for StatsPtr {}
// SAFETY: as above.
unsafe impl Sync for StatsPtr {}
impl StatsPtr {
    fn get(self) -> *mut (f64, f64) {
        self.0
    }
}

/// Normalizes every row of `x` (`m` rows of `d`) into `out`, returning each row's mean and rstd.
fn forward<T: NormElem>(
    x: &[T],
    out: &mut [MaybeUninit<T>],
    m: usize,
    d: usize,
    w: Option<&[T::M]>,
    b: Option<&[T::M]>,
    eps: f64,
) -> Vec<(f64, f64)> {
    let mut stats = vec![(0.0, 0.0); m];
    let per = rows_per_task(d);
    type Task<'a, T> = (usize, (&'a mut [MaybeUninit<T>], &'a mut [(f64, f64)]));
    let run = |(t, (chunk, st)): Task<'_, T>| {
        for (k, (row, s)) in chunk.chunks_mut(d).zip(st.iter_mut()).enumerate() {
            let r = t * per + k;
            let xs = &x[r * d..(r + 1) * d];
            let mean = lanes_sum(d, |j| xs[j].m()) / d as f64;
            let mm = T::M::of(mean);
            let var = lanes_sum(d, |j| {
                let v = xs[j].m() - mm;
                v * v
            }) / d as f64;
            let rstd = 1.0 / (var + eps).sqrt();
            *s = (mean, rstd);
            // `(x - mean) · rstd`, not `x · rstd - mean · rstd`: a constant row gives exactly 0.
            let a = T::M::of(rstd);
            match (w, b) {
                (None, None) => {
                    for (o, &v) in row.iter_mut().zip(xs) {
                        o.write(T::from_m((v.m() - mm) * a));
                    }
                }
                (Some(w), None) => {
                    for ((o, &v), &w) in row.iter_mut().zip(xs).zip(w) {
                        o.write(T::from_m(((v.m() - mm) * a) * w));
                    }
                }
                (None, Some(b)) => {
                    for ((o, &v), &b) in row.iter_mut().zip(xs).zip(b) {
                        o.write(T::from_m((v.m() - mm) * a + b));
                    }
                }
                (Some(w), Some(b)) => {
                    for (((o, &v), &w), &b) in row.iter_mut().zip(xs).zip(w).zip(b) {
                        o.write(T::from_m((v.m() - mm) * a * w + b));
                    }
                }
            }
        }
    };
    if m * d >= GRAIN {
        // Task `t` writes rows `t * per..` of `out` and the same rows of `stats`.
        let stats_at = StatsPtr(stats.as_mut_ptr());
        let rows = stats.len();
        oxten_runtime::parallel::chunks_mut(out, per * d, |t, o| {
            let lo = t * per;
            // SAFETY: tasks own disjoint row ranges of `stats` (which outlives this loop).
            let s = unsafe { std::slice::from_raw_parts_mut(stats_at.get().add(lo), per.min(rows - lo)) };
            run((t, (o, s)));
        });
    } else {
        out.chunks_mut(per * d).zip(stats.chunks_mut(per)).enumerate().for_each(run);
    }
    stats
}

/// Values of an optional parameter in the math type.
fn param_m<M: Float>(t: Option<&Tensor>) -> Result<Option<Vec<M>>> {
    Ok(values(t)?.map(|v| v.iter().map(|&x| M::of(x)).collect()))
}

impl LayerNormCpuCpu for Cpu {
    fn layer_norm_cpu(
        input: &Tensor,
        normalized_shape: &[i64],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let (m, d, stat_dtype) = plan(input, normalized_shape, weight, bias)?;
        let dev = input.device();
        let x = ops::contiguous::call(input, MemoryFormat::Contiguous)?;
        let mut out = Out::new(&input.sizes(), input.dtype(), dev, MemoryFormat::Contiguous)?;
        let stats = if d == 0 {
            // No elements to average: mean 0 and an undefined rstd, as PyTorch gives.
            vec![(0.0, f64::NAN); m]
        } else if m == 0 {
            Vec::new()
        } else {
            dispatch_float!(input.dtype(), "LayerNormKernelImpl", T => {
                let w = param_m::<<T as NormElem>::M>(weight)?;
                let b = param_m::<<T as NormElem>::M>(bias)?;
                // SAFETY: `x` is contiguous with elements of type `T`; `out` is a fresh
                // contiguous output of the same shape, written in full by `forward`.
                unsafe { forward::<T>(elems::<T>(&x), out.slice::<T>(), m, d, w.as_deref(), b.as_deref(), eps) }
            })
        };
        // SAFETY: every element was written above (none when m or d is 0).
        let y = unsafe { out.finish() };
        let shape = stat_shape(input, normalized_shape.len());
        let (mean, rstd): (Vec<f64>, Vec<f64>) = stats.into_iter().unzip();
        Ok((y, tensor_of(mean, &shape, stat_dtype, dev)?, tensor_of(rstd, &shape, stat_dtype, dev)?))
    }
}

// ---------------------------------------------------------------------------------------------
// backward
// ---------------------------------------------------------------------------------------------

/// The dtype of the weight and bias gradients: the parameters', else the input's.
pub(super) fn grad_param_dtype(input: &Tensor, weight: Option<&Tensor>, bias: Option<&Tensor>) -> DType {
    weight.or(bias).map_or(input.dtype(), Tensor::dtype)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn back_plan(
    grad_out: &Tensor,
    input: &Tensor,
    normalized_shape: &[i64],
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    output_mask: &[bool],
) -> Result<(usize, usize)> {
    if output_mask.len() != 3 {
        return Err(Error::value(format!("output_mask must have 3 elements, got {}", output_mask.len())));
    }
    let (m, d) = check_inputs(input, normalized_shape, weight, bias)?;
    check_floating("LayerNormBackwardKernelImpl", input.dtype())?;
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
        if t.numel() as usize != m {
            return Err(Error::shape(format!("{name} must have {m} elements (one per row), got {}", t.numel())));
        }
    }
    Ok((m, d))
}

impl LayerNormBackwardMetaMeta for Meta {
    fn layer_norm_backward_meta(
        grad_out: &Tensor,
        input: &Tensor,
        normalized_shape: &[i64],
        mean: &Tensor,
        rstd: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        output_mask: &[bool],
    ) -> Result<(Tensor, Tensor, Tensor)> {
        back_plan(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)?;
        let dev = input.device();
        let pd = grad_param_dtype(input, weight, bias);
        let make = |on: bool, sizes: &[i64], dtype: DType| {
            if on {
                Tensor::empty(sizes, dtype, dev, MemoryFormat::Contiguous)
            } else {
                undefined(dtype, dev)
            }
        };
        Ok((
            make(output_mask[0], &input.sizes(), input.dtype())?,
            make(output_mask[1], normalized_shape, pd)?,
            make(output_mask[2], normalized_shape, pd)?,
        ))
    }
}

/// One task's share of the weight and bias gradients.
struct Partial {
    dw: Vec<f64>,
    db: Vec<f64>,
}

/// `dx` for every row (when `out` is given) and the weight/bias gradients summed over rows.
#[allow(clippy::too_many_arguments)]
fn backward<T: NormElem>(
    dy: &[T],
    x: &[T],
    out: Option<&mut [MaybeUninit<T>]>,
    stats: &[(f64, f64)],
    m: usize,
    d: usize,
    w: &[T::M],
    want_params: bool,
) -> (Vec<f64>, Vec<f64>) {
    let per = rows_per_task(d);
    let tasks = m.div_ceil(per);
    let task = |t: usize, dx: Option<&mut [MaybeUninit<T>]>| -> Partial {
        let r0 = t * per;
        let r1 = (r0 + per).min(m);
        let mut p = Partial { dw: vec![], db: vec![] };
        if want_params {
            p.dw = vec![0.0; d];
            p.db = vec![0.0; d];
            let (mut pw, mut pb) = (vec![T::M::ZERO; d], vec![T::M::ZERO; d]);
            let mut r = r0;
            while r < r1 {
                let end = (r + 32).min(r1);
                pw.iter_mut().chain(pb.iter_mut()).for_each(|v| *v = T::M::ZERO);
                for row in r..end {
                    let (mean, rstd) = stats[row];
                    let (mm, a) = (T::M::of(mean), T::M::of(rstd));
                    let (ds, xs) = (&dy[row * d..(row + 1) * d], &x[row * d..(row + 1) * d]);
                    for (((w_, b_), &g), &v) in pw.iter_mut().zip(pb.iter_mut()).zip(ds).zip(xs) {
                        let g = g.m();
                        *w_ += g * ((v.m() - mm) * a);
                        *b_ += g;
                    }
                }
                for (o, v) in p.dw.iter_mut().zip(&pw).chain(p.db.iter_mut().zip(&pb)) {
                    *o += v.f64();
                }
                r = end;
            }
        }
        if let Some(dx) = dx {
            for (k, row_out) in dx.chunks_mut(d).enumerate() {
                let row = r0 + k;
                let (mean, rstd) = stats[row];
                let mm = T::M::of(mean);
                let (ds, xs) = (&dy[row * d..(row + 1) * d], &x[row * d..(row + 1) * d]);
                let a = lanes_sum(d, |j| w[j] * ds[j].m());
                let b = lanes_sum(d, |j| w[j] * ds[j].m() * (xs[j].m() - mm));
                let c2 = -rstd * rstd * rstd * b / d as f64;
                let c3 = -c2 * mean - rstd * a / d as f64;
                let (k1, k2, k3) = (T::M::of(rstd), T::M::of(c2), T::M::of(c3));
                for (((o, &g), &v), &w) in row_out.iter_mut().zip(ds).zip(xs).zip(w) {
                    o.write(T::from_m(k1 * w * g.m() + k2 * v.m() + k3));
                }
            }
        }
        p
    };
    let parallel = m * d >= GRAIN;
    let parts: Vec<Partial> = match out {
        Some(out) if parallel => {
            let slots: Vec<std::sync::Mutex<Option<Partial>>> = (0..tasks).map(|_| Default::default()).collect();
            oxten_runtime::parallel::chunks_mut(out, per * d, |t, c| {
                *slots[t].lock().unwrap() = Some(task(t, Some(c)))
            });
            slots.into_iter().map(|s| s.into_inner().unwrap().expect("every task ran")).collect()
        }
        Some(out) => out.chunks_mut(per * d).enumerate().map(|(t, c)| task(t, Some(c))).collect(),
        None if parallel => oxten_runtime::parallel::map(tasks, |t| task(t, None)),
        None => (0..tasks).map(|t| task(t, None)).collect(),
    };
    let (mut dw, mut db) = (vec![0.0; d], vec![0.0; d]);
    if want_params {
        for p in &parts {
            dw.iter_mut().zip(&p.dw).for_each(|(o, v)| *o += v);
            db.iter_mut().zip(&p.db).for_each(|(o, v)| *o += v);
        }
    }
    (dw, db)
}

impl LayerNormBackwardCpuCpu for Cpu {
    fn layer_norm_backward_cpu(
        grad_out: &Tensor,
        input: &Tensor,
        normalized_shape: &[i64],
        mean: &Tensor,
        rstd: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        output_mask: &[bool],
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let (m, d) = back_plan(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)?;
        let dev = input.device();
        let pd = grad_param_dtype(input, weight, bias);
        let x = ops::contiguous::call(input, MemoryFormat::Contiguous)?;
        let dy = ops::contiguous::call(grad_out, MemoryFormat::Contiguous)?;
        let stats: Vec<(f64, f64)> = mean.to_f64_vec()?.into_iter().zip(rstd.to_f64_vec()?).collect();
        let mut out = if output_mask[0] {
            Some(Out::new(&input.sizes(), input.dtype(), dev, MemoryFormat::Contiguous)?)
        } else {
            None
        };
        let want_params = output_mask[1] || output_mask[2];
        let (dw, db) = if m * d == 0 {
            (vec![0.0; d], vec![0.0; d])
        } else {
            dispatch_float!(input.dtype(), "LayerNormBackwardKernelImpl", T => {
                let w: Vec<<T as NormElem>::M> = match values(weight)? {
                    Some(v) => v.iter().map(|&x| <T as NormElem>::M::of(x)).collect(),
                    None => vec![<T as NormElem>::M::of(1.0); d],
                };
                // SAFETY: `x` and `dy` are contiguous with elements of type `T`; `out` is a
                // fresh contiguous output of the input's shape, written in full by `backward`.
                unsafe {
                    let slice = out.as_mut().map(|o| o.slice::<T>());
                    backward::<T>(elems::<T>(&dy), elems::<T>(&x), slice, &stats, m, d, &w, want_params)
                }
            })
        };
        let gi = match out {
            // SAFETY: written in full above (nothing to write when the input is empty).
            Some(o) => unsafe { o.finish() },
            None => undefined(input.dtype(), dev)?,
        };
        let param = |on: bool, v: Vec<f64>| {
            if on {
                tensor_of(v, normalized_shape, pd, dev)
            } else {
                undefined(pd, dev)
            }
        };
        Ok((gi, param(output_mask[1], dw)?, param(output_mask[2], db)?))
    }
}

// ---------------------------------------------------------------------------------------------
// composite
// ---------------------------------------------------------------------------------------------

/// `layer_norm`: `native_layer_norm`'s first output.
impl LayerNormCompositeImplicit for Composite {
    fn layer_norm(
        input: &Tensor,
        normalized_shape: &[i64],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
        _cudnn_enable: bool,
    ) -> Result<Tensor> {
        Ok(ops::native_layer_norm::call(input, normalized_shape, weight, bias, eps)?.0)
    }
}
