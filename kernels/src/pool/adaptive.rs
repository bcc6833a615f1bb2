//! `_adaptive_avg_pool2d` (+ backward) and the composite `adaptive_avg_pool2d`.
//!
//! Output `(oh, ow)` averages input rows `[⌊oh·H/OH⌋, ⌈(oh+1)·H/OH⌉)` and the columns likewise
//! (PyTorch's `start_index` / `end_index`), dividing the sum by the window's height and then by
//! its width. `adaptive_avg_pool2d` to `[1, 1]` is a mean over the plane, as in PyTorch (with
//! channels-last strides for a channels-last input).

use super::{
    dense_in, not_implemented, parallel_ranges, ptr, run, sizes_str, with_dense_output, Dims, Kernel, PoolElem,
};
use crate::generated::decls::{
    AdaptiveAvgPool2dBackwardCpuCpu, AdaptiveAvgPool2dBackwardMetaMeta, AdaptiveAvgPool2dCompositeImplicit,
    AdaptiveAvgPool2dCpuCpu, AdaptiveAvgPool2dMetaMeta,
};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{ops, DType, Error, MemoryFormat, Result, Tensor};

fn start_index(a: usize, b: usize, c: usize) -> usize {
    (a / b) * c + ((a % b) * c) / b
}
fn end_index(a: usize, b: usize, c: usize) -> usize {
    1 + ((a + 1) * c - 1) / b
}

/// `[start, end)` of every output along a dimension of `size` inputs.
fn ranges(out: usize, size: usize) -> Vec<(usize, usize)> {
    (0..out).map(|o| (start_index(o, out, size), end_index(o, out, size))).collect()
}

/// The checks of `adaptive_avg_pool2d_out_cpu_template`; returns the output sizes and format.
fn setup(input: &Tensor, output_size: &[i64]) -> Result<(Vec<i64>, MemoryFormat)> {
    if output_size.len() != 2 {
        return Err(Error::value("adaptive_avg_pool2d: output_size must be 2"));
    }
    let ndim = input.dim();
    if ndim != 3 && ndim != 4 {
        return Err(Error::shape(format!(
            "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {}",
            sizes_str(&input.sizes())
        )));
    }
    for i in [ndim - 2, ndim - 1] {
        if input.sizes()[i] <= 0 {
            return Err(Error::shape(format!(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has \
                 sizes {} with dimension {i} being empty",
                sizes_str(&input.sizes())
            )));
        }
    }
    check_output_size(output_size)?;
    let s = input.sizes();
    Ok(if ndim == 3 {
        (vec![s[0], output_size[0], output_size[1]], MemoryFormat::Contiguous)
    } else {
        (vec![s[0], s[1], output_size[0], output_size[1]], input.suggest_memory_format())
    })
}

fn check_output_size(output_size: &[i64]) -> Result<()> {
    if output_size.iter().any(|&s| s < 0) {
        return Err(Error::value(format!(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {{{}, {}}}",
            output_size[0], output_size[1]
        )));
    }
    Ok(())
}

/// The pooling sizes of a 3-d or 4-d `input` and its output `[.., OH, OW]`.
fn dims(input: &Tensor, oh: i64, ow: i64) -> Dims {
    let s = input.sizes();
    let nd = s.len();
    let n = if nd == 4 { s[0] } else { 1 };
    let u = |v: i64| v as usize;
    Dims { n: u(n), c: u(s[nd - 3]), h: u(s[nd - 2]), w: u(s[nd - 1]), oh: u(oh), ow: u(ow) }
}

/// Channels-first: planes `planes`, each output the mean of its window.
struct AdaptivePlanes<'a, E: PoolElem> {
    x: *const E,
    y: *mut E,
    planes: std::ops::Range<usize>,
    d: Dims,
    rows: &'a [(usize, usize)],
    cols: &'a [(usize, usize)],
}

impl<E: PoolElem> Kernel for AdaptivePlanes<'_, E> {
    #[inline(always)]
    unsafe fn run(self) {
        let d = self.d;
        for plane in self.planes {
            // SAFETY: the caller hands each worker its own planes of dense y.
            let (x, y) = unsafe {
                (
                    std::slice::from_raw_parts(self.x.add(plane * d.h * d.w), d.h * d.w),
                    std::slice::from_raw_parts_mut(self.y.add(plane * d.oh * d.ow), d.oh * d.ow),
                )
            };
            for (oh, &(h0, h1)) in self.rows.iter().enumerate() {
                for (ow, &(w0, w1)) in self.cols.iter().enumerate() {
                    let mut sum = E::ZERO;
                    for ih in h0..h1 {
                        for v in &x[ih * d.w + w0..ih * d.w + w1] {
                            sum = E::add(sum, v.acc());
                        }
                    }
                    y[oh * d.ow + ow] = E::from_acc(E::div(E::div(sum, (h1 - h0) as i64), (w1 - w0) as i64));
                }
            }
        }
    }
}

/// Channels-last: output row `(n, oh)`, all channels at once.
struct AdaptiveRowNhwc<'a, E: PoolElem> {
    x: &'a [E],
    y: &'a mut [E],
    acc: &'a mut [E::Acc],
    row: (usize, usize),
    cols: &'a [(usize, usize)],
    d: Dims,
}

impl<E: PoolElem> Kernel for AdaptiveRowNhwc<'_, E> {
    #[inline(always)]
    unsafe fn run(self) {
        let (d, c) = (self.d, self.d.c);
        let (h0, h1) = self.row;
        for (ow, &(w0, w1)) in self.cols.iter().enumerate() {
            self.acc.fill(E::ZERO);
            for ih in h0..h1 {
                for iw in w0..w1 {
                    let at = ih * d.w + iw;
                    for (a, v) in self.acc.iter_mut().zip(&self.x[at * c..(at + 1) * c]) {
                        *a = E::add(*a, v.acc());
                    }
                }
            }
            let (kh, kw) = ((h1 - h0) as i64, (w1 - w0) as i64);
            for (o, a) in self.y[ow * c..(ow + 1) * c].iter_mut().zip(self.acc.iter()) {
                *o = E::from_acc(E::div(E::div(*a, kh), kw));
            }
        }
    }
}

fn adaptive_forward<E: PoolElem>(x: &Tensor, y: &Tensor, d: Dims, format: MemoryFormat) -> Result<()> {
    let (rows, cols) = (ranges(d.oh, d.h), ranges(d.ow, d.w));
    let (xp, yp) = (ptr::<E>(x), ptr::<E>(y));
    if format == MemoryFormat::ChannelsLast {
        let (in_img, out_row) = (d.h * d.w * d.c, d.ow * d.c);
        parallel_ranges(d.n * d.oh, 1, |range| {
            let mut acc = vec![E::ZERO; d.c];
            for r in range {
                let (n, oh) = (r / d.oh, r % d.oh);
                // SAFETY: row r of y belongs to this worker alone; x is only read.
                let k = unsafe {
                    AdaptiveRowNhwc::<E> {
                        x: std::slice::from_raw_parts(xp.get().add(n * in_img), in_img),
                        y: std::slice::from_raw_parts_mut(yp.get().add(r * out_row), out_row),
                        acc: &mut acc,
                        row: rows[oh],
                        cols: &cols,
                        d,
                    }
                };
                // SAFETY: the kernel only uses the slices it holds.
                unsafe { run(k) };
            }
        });
    } else {
        parallel_ranges(d.n * d.c, 1, |planes| {
            let k = AdaptivePlanes::<E> { x: xp.get(), y: yp.get(), planes, d, rows: &rows, cols: &cols };
            // SAFETY: the planes of this range belong to this worker alone.
            unsafe { run(k) };
        });
    }
    Ok(())
}

/// Runs `$f::<T>(..)` for the floating dtypes; others are not implemented (as in PyTorch).
macro_rules! float_only {
    ($d:expr, $kernel:expr, $f:ident($($arg:expr),*)) => {
        match $d {
            DType::F32 => $f::<f32>($($arg),*),
            DType::F64 => $f::<f64>($($arg),*),
            DType::F16 => $f::<f16>($($arg),*),
            DType::BF16 => $f::<bf16>($($arg),*),
            other => Err(not_implemented($kernel, other)),
        }
    };
}

/// The checked output of `adaptive_avg_pool2d` and its memory format (the Meta kernel's work).
fn adaptive_avg_pool2d_output(input: &Tensor, output_size: &[i64]) -> Result<(Tensor, MemoryFormat)> {
    let (out_sizes, format) = setup(input, output_size)?;
    Ok((Tensor::empty_deferred(&out_sizes, input.dtype(), input.device(), format)?, format))
}

fn adaptive_avg_pool2d_impl(input: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    let (y, format) = adaptive_avg_pool2d_output(input, output_size)?;
    if y.numel() == 0 {
        return Ok(y);
    }
    let d = dims(input, output_size[0], output_size[1]);
    let x = dense_in(input, format)?;
    with_dense_output(&y, format, |y| {
        float_only!(x.dtype(), "adaptive_avg_pool2d", adaptive_forward(&x, y, d, format))
    })?;
    Ok(y)
}

impl AdaptiveAvgPool2dCpuCpu for Cpu {
    fn adaptive_avg_pool2d_cpu(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
        adaptive_avg_pool2d_impl(self_, output_size)
    }
}

impl AdaptiveAvgPool2dMetaMeta for Meta {
    fn adaptive_avg_pool2d_meta(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
        Ok(adaptive_avg_pool2d_output(self_, output_size)?.0)
    }
}

impl AdaptiveAvgPool2dCompositeImplicit for Composite {
    fn adaptive_avg_pool2d(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
        if output_size.len() != 2 {
            return Err(Error::value("adaptive_avg_pool2d: output_size must be 2"));
        }
        check_output_size(output_size)?;
        if output_size == [1, 1] {
            // A mean over the plane (cheaper than the pooling kernel).
            let out = ops::mean_dim::call(self_, Some(&[-1, -2]), true, None)?;
            if self_.suggest_memory_format() == MemoryFormat::ChannelsLast {
                let (n, c) = (self_.sizes()[0], self_.sizes()[1]);
                return ops::as_strided::call(&out, &[n, c, 1, 1], &[c, 1, c, c], None);
            }
            return Ok(out);
        }
        ops::_adaptive_avg_pool2d::call(self_, output_size)
    }
}

// ---------------------------------------------------------------------------------------------
// backward
// ---------------------------------------------------------------------------------------------

fn backward_setup(grad_output: &Tensor, input: &Tensor) -> Result<MemoryFormat> {
    let ndim = grad_output.dim();
    for i in 1..ndim {
        if grad_output.sizes()[i] <= 0 {
            return Err(Error::shape(format!(
                "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for non-batch dimensions, \
                 but grad_output has sizes {} with dimension {i} being empty",
                sizes_str(&grad_output.sizes())
            )));
        }
    }
    if ndim != 3 && ndim != 4 {
        return Err(Error::shape(format!(
            "adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got {}",
            sizes_str(&input.sizes())
        )));
    }
    super::check_same_dtype(input, grad_output, "grad_output")?;
    if input.dim() != ndim || input.sizes()[..ndim - 2] != grad_output.sizes()[..ndim - 2] {
        return Err(Error::shape(format!(
            "adaptive_avg_pool2d_backward(): grad_output of size {} does not match an input of size {}",
            sizes_str(&grad_output.sizes()),
            sizes_str(&input.sizes())
        )));
    }
    Ok(input.suggest_memory_format())
}

/// Adds `grad / kh / kw` of every output to its window, a plane (channels-first) or an image
/// (channels-last) at a time, in `E::Acc`.
fn adaptive_backward<E: PoolElem>(go: &Tensor, gi: &Tensor, d: Dims, format: MemoryFormat) -> Result<()> {
    let (rows, cols) = (ranges(d.oh, d.h), ranges(d.ow, d.w));
    let (gop, gip) = (ptr::<E>(go), ptr::<E>(gi));
    let ch = if format == MemoryFormat::ChannelsLast { d.c } else { 1 };
    let units = if ch == 1 { d.n * d.c } else { d.n };
    let (in_len, out_len) = (d.h * d.w * ch, d.oh * d.ow * ch);
    parallel_ranges(units, 1, |range| {
        let mut acc = vec![E::ZERO; in_len];
        let mut delta = vec![E::ZERO; ch];
        for u in range {
            // SAFETY: unit u's part of gi belongs to this worker; go is only read.
            let (go, gi) = unsafe {
                (
                    std::slice::from_raw_parts(gop.get().add(u * out_len), out_len),
                    std::slice::from_raw_parts_mut(gip.get().add(u * in_len), in_len),
                )
            };
            acc.fill(E::ZERO);
            for (oh, &(h0, h1)) in rows.iter().enumerate() {
                for (ow, &(w0, w1)) in cols.iter().enumerate() {
                    let g = &go[(oh * d.ow + ow) * ch..(oh * d.ow + ow + 1) * ch];
                    for (dv, v) in delta.iter_mut().zip(g) {
                        *dv = E::div(E::div(v.acc(), (h1 - h0) as i64), (w1 - w0) as i64);
                    }
                    for ih in h0..h1 {
                        for iw in w0..w1 {
                            let at = (ih * d.w + iw) * ch;
                            for (a, dv) in acc[at..at + ch].iter_mut().zip(&delta) {
                                *a = E::add(*a, *dv);
                            }
                        }
                    }
                }
            }
            for (o, a) in gi.iter_mut().zip(&acc) {
                *o = E::from_acc(*a);
            }
        }
    });
    Ok(())
}

/// The checked input gradient of `adaptive_avg_pool2d` and its memory format (the Meta
/// kernel's work).
fn adaptive_backward_output(grad_output: &Tensor, input: &Tensor) -> Result<(Tensor, MemoryFormat)> {
    let format = backward_setup(grad_output, input)?;
    Ok((Tensor::empty(&input.sizes(), input.dtype(), input.device(), format)?, format))
}

fn adaptive_backward_impl(grad_output: &Tensor, input: &Tensor) -> Result<Tensor> {
    let (gi, format) = adaptive_backward_output(grad_output, input)?;
    if gi.numel() == 0 {
        return Ok(gi);
    }
    let nd = grad_output.dim();
    let d = dims(input, grad_output.sizes()[nd - 2], grad_output.sizes()[nd - 1]);
    let go = dense_in(grad_output, format)?;
    float_only!(go.dtype(), "adaptive_avg_pool2d_backward_cpu", adaptive_backward(&go, &gi, d, format))?;
    Ok(gi)
}

impl AdaptiveAvgPool2dBackwardCpuCpu for Cpu {
    fn adaptive_avg_pool2d_backward_cpu(grad_output: &Tensor, self_: &Tensor) -> Result<Tensor> {
        adaptive_backward_impl(grad_output, self_)
    }
}

impl AdaptiveAvgPool2dBackwardMetaMeta for Meta {
    fn adaptive_avg_pool2d_backward_meta(grad_output: &Tensor, self_: &Tensor) -> Result<Tensor> {
        Ok(adaptive_backward_output(grad_output, self_)?.0)
    }
}
