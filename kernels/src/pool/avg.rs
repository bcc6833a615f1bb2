//! `avg_pool2d` and its backward.
//!
//! Each output is the sum of its window divided by `divisor_override`, else by the window's
//! size counted with the padding (`count_include_pad`) or without it; a window entirely in the
//! padding gives 0. Sums run in the accumulation type in PyTorch's order (rows, then columns).

use super::{
    check_dim_size, check_same_dtype, dense_in, input_dims, not_implemented, parallel_ranges, pool2d_shape_check,
    pool_dispatch, pooling_output_shape, ptr, run, set_output_in, with_dense_output, Dims, Kernel, PoolElem, Window,
};
use crate::generated::decls::{
    AvgPool2dBackwardGradInputMetaFn, AvgPool2dBackwardOutCpuCpu, AvgPool2dOutCpuCpu, AvgPool2dOutMetaFn,
};
use crate::iter::StructuredOutputs;
use crate::{Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{DType, Error, MemoryFormat, Result, Tensor};

/// The checked geometry of an average pooling.
struct Setup {
    win: Window,
    dims: Dims,
    format: MemoryFormat,
    out_sizes: Vec<i64>,
    count_include_pad: bool,
    divisor_override: Option<i64>,
}

/// The checks and sizes of `avg_pool2d`'s meta function (`backward` adds the gradient's).
#[allow(clippy::too_many_arguments)]
fn setup(
    input: &Tensor,
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<Setup> {
    let win = Window::parse("avg_pool2d", kernel, stride, padding, None)?;
    if divisor_override == Some(0) {
        return Err(Error::value("divisor must be not zero"));
    }
    let (n, c, h, w) = input_dims(input)?;
    let oh = pooling_output_shape(h, win.kh, win.ph, win.sh, 1, ceil_mode)?;
    let ow = pooling_output_shape(w, win.kw, win.pw, win.sw, 1, ceil_mode)?;
    let format = input.suggest_memory_format();
    pool2d_shape_check(input, &win, c, h, w, oh, ow, format)?;
    let (out_sizes, format) =
        if input.dim() == 3 { (vec![c, oh, ow], MemoryFormat::Contiguous) } else { (vec![n, c, oh, ow], format) };
    let u = |v: i64| v as usize;
    Ok(Setup {
        win,
        dims: Dims { n: u(n), c: u(c), h: u(h), w: u(w), oh: u(oh), ow: u(ow) },
        format,
        out_sizes,
        count_include_pad,
        divisor_override,
    })
}

/// One output's window along one dimension: the clamped `[start, end)` and the size the
/// window has counting the padding.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    padded: i64,
}

fn spans(out: usize, k: i64, s: i64, p: i64, size: usize) -> Vec<Span> {
    (0..out)
        .map(|o| {
            let start = o as i64 * s - p;
            let end = (start + k).min(size as i64 + p);
            let padded = end - start;
            let (a, b) = (start.max(0), end.min(size as i64));
            Span { start: a as usize, end: b.max(a) as usize, padded }
        })
        .collect()
}

impl Setup {
    /// The divisor of a window, `None` when the window lies entirely in the padding.
    #[inline(always)]
    fn divisor(&self, r: Span, c: Span) -> Option<i64> {
        if r.start >= r.end || c.start >= c.end {
            return None;
        }
        Some(match self.divisor_override {
            Some(d) => d,
            None if self.count_include_pad => r.padded * c.padded,
            None => ((r.end - r.start) * (c.end - c.start)) as i64,
        })
    }
}

impl AvgPool2dOutMetaFn for Meta {
    fn avg_pool2d_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Option<i64>,
    ) -> Result<()> {
        let s = setup(self_, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)?;
        set_output_in(outs, 0, &s.out_sizes, s.format, self_.dtype(), self_.device())
    }
}

// ---------------------------------------------------------------------------------------------
// forward
// ---------------------------------------------------------------------------------------------

struct AvgPlanes<'a, E: PoolElem> {
    x: *const E,
    y: *mut E,
    planes: std::ops::Range<usize>,
    s: &'a Setup,
    rows: &'a [Span],
    cols: &'a [Span],
}

impl<E: PoolElem> Kernel for AvgPlanes<'_, E> {
    #[inline(always)]
    unsafe fn run(self) {
        let d = self.s.dims;
        for plane in self.planes {
            // SAFETY: the caller hands each worker its own planes of dense y.
            let (x, y) = unsafe {
                (
                    std::slice::from_raw_parts(self.x.add(plane * d.h * d.w), d.h * d.w),
                    std::slice::from_raw_parts_mut(self.y.add(plane * d.oh * d.ow), d.oh * d.ow),
                )
            };
            for (oh, &r) in self.rows.iter().enumerate() {
                for (ow, &c) in self.cols.iter().enumerate() {
                    y[oh * d.ow + ow] = match self.s.divisor(r, c) {
                        None => E::from_acc(E::ZERO),
                        Some(div) => {
                            let mut sum = E::ZERO;
                            for ih in r.start..r.end {
                                for v in &x[ih * d.w + c.start..ih * d.w + c.end] {
                                    sum = E::add(sum, v.acc());
                                }
                            }
                            E::from_acc(E::div(sum, div))
                        }
                    };
                }
            }
        }
    }
}

struct AvgRowNhwc<'a, E: PoolElem> {
    x: &'a [E],
    y: &'a mut [E],
    acc: &'a mut [E::Acc],
    row: Span,
    cols: &'a [Span],
    s: &'a Setup,
}

impl<E: PoolElem> Kernel for AvgRowNhwc<'_, E> {
    #[inline(always)]
    unsafe fn run(self) {
        let d = self.s.dims;
        let c = d.c;
        let r = self.row;
        for (ow, &cs) in self.cols.iter().enumerate() {
            let y = &mut self.y[ow * c..(ow + 1) * c];
            let Some(div) = self.s.divisor(r, cs) else {
                y.fill(E::from_acc(E::ZERO));
                continue;
            };
            self.acc.fill(E::ZERO);
            for ih in r.start..r.end {
                for iw in cs.start..cs.end {
                    let at = ih * d.w + iw;
                    for (a, v) in self.acc.iter_mut().zip(&self.x[at * c..(at + 1) * c]) {
                        *a = E::add(*a, v.acc());
                    }
                }
            }
            for (o, a) in y.iter_mut().zip(self.acc.iter()) {
                *o = E::from_acc(E::div(*a, div));
            }
        }
    }
}

fn avg_forward<E: PoolElem>(x: &Tensor, y: &Tensor, s: &Setup) -> Result<()> {
    let d = s.dims;
    let rows = spans(d.oh, s.win.kh, s.win.sh, s.win.ph, d.h);
    let cols = spans(d.ow, s.win.kw, s.win.sw, s.win.pw, d.w);
    let (xp, yp) = (ptr::<E>(x), ptr::<E>(y));
    if s.format == MemoryFormat::ChannelsLast {
        let (in_img, out_row) = (d.h * d.w * d.c, d.ow * d.c);
        parallel_ranges(d.n * d.oh, 1, |range| {
            let mut acc = vec![E::ZERO; d.c];
            for r in range {
                let (n, oh) = (r / d.oh, r % d.oh);
                // SAFETY: row r of y belongs to this worker alone; x is only read.
                let k = unsafe {
                    AvgRowNhwc::<E> {
                        x: std::slice::from_raw_parts(xp.get().add(n * in_img), in_img),
                        y: std::slice::from_raw_parts_mut(yp.get().add(r * out_row), out_row),
                        acc: &mut acc,
                        row: rows[oh],
                        cols: &cols,
                        s,
                    }
                };
                // SAFETY: the kernel only uses the slices it holds.
                unsafe { run(k) };
            }
        });
    } else {
        parallel_ranges(d.n * d.c, 1, |planes| {
            let k = AvgPlanes::<E> { x: xp.get(), y: yp.get(), planes, s, rows: &rows, cols: &cols };
            // SAFETY: the planes of this range belong to this worker alone.
            unsafe { run(k) };
        });
    }
    Ok(())
}

impl AvgPool2dOutCpuCpu for Cpu {
    fn avg_pool2d_out_cpu(
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Option<i64>,
        out: &Tensor,
    ) -> Result<()> {
        let s = setup(self_, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)?;
        if self_.dtype() == DType::Bool {
            return Err(not_implemented("avg_pool2d", DType::Bool));
        }
        if out.numel() == 0 {
            return Ok(());
        }
        let x = dense_in(self_, s.format)?;
        with_dense_output(out, s.format, |y| pool_dispatch!(x.dtype(), "avg_pool2d", avg_forward(&x, y, &s)))
    }
}

// ---------------------------------------------------------------------------------------------
// backward
// ---------------------------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
fn backward_setup(
    grad_output: &Tensor,
    input: &Tensor,
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<Setup> {
    let mut s = setup(input, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)?;
    check_same_dtype(input, grad_output, "grad_output")?;
    let ndim = input.dim();
    let d = s.dims;
    check_dim_size(grad_output, ndim, ndim - 3, d.c as i64)?;
    check_dim_size(grad_output, ndim, ndim - 2, d.oh as i64)?;
    check_dim_size(grad_output, ndim, ndim - 1, d.ow as i64)?;
    // The gradient has the input's sizes, in the input's memory format.
    s.format = input.suggest_memory_format();
    Ok(s)
}

impl AvgPool2dBackwardGradInputMetaFn for Meta {
    fn avg_pool2d_backward_grad_input(
        outs: &mut StructuredOutputs,
        grad_output: &Tensor,
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Option<i64>,
    ) -> Result<()> {
        let s = backward_setup(
            grad_output,
            self_,
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        )?;
        set_output_in(outs, 0, &self_.sizes(), s.format, self_.dtype(), self_.device())
    }
}

/// Adds each output gradient divided by its window's divisor to the window, accumulating a plane
/// (channels-first) or an image (channels-last) at a time in `E::Acc`.
fn avg_backward<E: PoolElem>(go: &Tensor, gi: &Tensor, s: &Setup) -> Result<()> {
    let d = s.dims;
    let rows = spans(d.oh, s.win.kh, s.win.sh, s.win.ph, d.h);
    let cols = spans(d.ow, s.win.kw, s.win.sw, s.win.pw, d.w);
    let (gop, gip) = (ptr::<E>(go), ptr::<E>(gi));
    let channels_last = s.format == MemoryFormat::ChannelsLast;
    let (units, ch) = if channels_last { (d.n, d.c) } else { (d.n * d.c, 1) };
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
            for (oh, &r) in rows.iter().enumerate() {
                for (ow, &c) in cols.iter().enumerate() {
                    let Some(div) = s.divisor(r, c) else { continue };
                    let g = &go[(oh * d.ow + ow) * ch..(oh * d.ow + ow + 1) * ch];
                    for (dv, v) in delta.iter_mut().zip(g) {
                        *dv = E::div(v.acc(), div);
                    }
                    for ih in r.start..r.end {
                        for iw in c.start..c.end {
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

impl AvgPool2dBackwardOutCpuCpu for Cpu {
    fn avg_pool2d_backward_out_cpu(
        grad_output: &Tensor,
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Option<i64>,
        grad_input: &Tensor,
    ) -> Result<()> {
        let s = backward_setup(
            grad_output,
            self_,
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        )?;
        if grad_input.numel() == 0 {
            return Ok(());
        }
        let go = dense_in(grad_output, s.format)?;
        with_dense_output(grad_input, s.format, |gi| {
            pool_dispatch!(go.dtype(), "avg_pool2d_backward_out_frame", avg_backward(&go, gi, &s))
        })
    }
}
