//! `max_pool2d_with_indices` and its backward, and the composite `max_pool2d`.
//!
//! Each output is the largest element of its window (NaN wins, and a later NaN wins over an
//! earlier one, as in PyTorch) and its index is the flat position `h * W + w` of that element in
//! its input plane; an all `-inf` window gives `-inf` at the window's first position. The
//! backward adds each output gradient at its index.

use super::{
    check_dim_size, check_format_dims, check_same_dtype, dense_in, input_dims, not_implemented, parallel_ranges,
    pool2d_shape_check, pool_dispatch, pooling_output_shape, ptr, run, set_output_in, with_dense_output, Dims, Kernel,
    PoolElem, Window,
};
use crate::conv::elem::SharedPtr;
use crate::generated::decls::{
    MaxPool2dCompositeImplicit, MaxPool2dWithIndicesBackwardGradInputMetaFn, MaxPool2dWithIndicesBackwardOutCpuCpu,
    MaxPool2dWithIndicesOutCpuCpu, MaxPool2dWithIndicesOutMetaFn,
};
use crate::iter::StructuredOutputs;
use crate::{Composite, Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{ops, DType, Error, MemoryFormat, Result, Tensor};
use std::sync::atomic::{AtomicBool, Ordering};

/// The checked geometry of a max pooling: window, sizes, memory format and output sizes.
struct Setup {
    win: Window,
    dims: Dims,
    format: MemoryFormat,
    out_sizes: Vec<i64>,
}

/// The checks and sizes of `max_pool2d_with_indices`'s meta function.
fn setup(
    input: &Tensor,
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
) -> Result<Setup> {
    let win = Window::parse("max_pool2d", kernel, stride, padding, Some(dilation))?;
    let format = check_format_dims(input)?;
    let (n, c, h, w) = input_dims(input)?;
    let oh = pooling_output_shape(h, win.kh, win.ph, win.sh, win.dh, ceil_mode)?;
    let ow = pooling_output_shape(w, win.kw, win.pw, win.sw, win.dw, ceil_mode)?;
    pool2d_shape_check(input, &win, c, h, w, oh, ow, format)?;
    let out_sizes = if input.dim() == 3 { vec![c, oh, ow] } else { vec![n, c, oh, ow] };
    let u = |v: i64| v as usize;
    Ok(Setup { win, dims: Dims { n: u(n), c: u(c), h: u(h), w: u(w), oh: u(oh), ow: u(ow) }, format, out_sizes })
}

/// The window of output `o` along one dimension: `[start, end)` with the start moved past the
/// padding by whole dilation steps (PyTorch's `ih0`/`ih1`).
fn window(o: usize, k: i64, s: i64, p: i64, d: i64, size: usize) -> (usize, usize) {
    let mut start = o as i64 * s - p;
    let end = (start + (k - 1) * d + 1).min(size as i64);
    while start < 0 {
        start += d;
    }
    (start as usize, end.max(start) as usize)
}

fn row_windows(s: &Setup) -> Vec<(usize, usize)> {
    (0..s.dims.oh).map(|o| window(o, s.win.kh, s.win.sh, s.win.ph, s.win.dh, s.dims.h)).collect()
}
fn col_windows(s: &Setup) -> Vec<(usize, usize)> {
    (0..s.dims.ow).map(|o| window(o, s.win.kw, s.win.sw, s.win.pw, s.win.dw, s.dims.w)).collect()
}

impl MaxPool2dWithIndicesOutMetaFn for Meta {
    fn max_pool2d_with_indices_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<()> {
        let s = setup(self_, kernel_size, stride, padding, dilation, ceil_mode)?;
        set_output_in(outs, 0, &s.out_sizes, s.format, self_.dtype(), self_.device())?;
        set_output_in(outs, 1, &s.out_sizes, s.format, DType::I64, self_.device())
    }
}

// ---------------------------------------------------------------------------------------------
// forward kernels
// ---------------------------------------------------------------------------------------------

/// Channels-first: output planes `planes` (each `H x W` in, `OH x OW` out).
struct MaxPlanes<'a, E: PoolElem> {
    x: *const E,
    y: *mut E,
    ix: *mut i64,
    planes: std::ops::Range<usize>,
    s: &'a Setup,
    rows: &'a [(usize, usize)],
    cols: &'a [(usize, usize)],
}

impl<E: PoolElem> Kernel for MaxPlanes<'_, E> {
    #[inline(always)]
    unsafe fn run(self) {
        let d = self.s.dims;
        let (dh, dw) = (self.s.win.dh as usize, self.s.win.dw as usize);
        for plane in self.planes {
            // SAFETY: the caller hands each worker its own planes of dense y and ix.
            let (x, y, ix) = unsafe {
                (
                    std::slice::from_raw_parts(self.x.add(plane * d.h * d.w), d.h * d.w),
                    std::slice::from_raw_parts_mut(self.y.add(plane * d.oh * d.ow), d.oh * d.ow),
                    std::slice::from_raw_parts_mut(self.ix.add(plane * d.oh * d.ow), d.oh * d.ow),
                )
            };
            for (oh, &(h0, h1)) in self.rows.iter().enumerate() {
                for (ow, &(w0, w1)) in self.cols.iter().enumerate() {
                    let mut m = E::LOWEST;
                    let mut mi = h0 * d.w + w0;
                    for ih in (h0..h1).step_by(dh) {
                        for iw in (w0..w1).step_by(dw) {
                            let v = x[ih * d.w + iw].acc();
                            if v > m || E::is_nan(v) {
                                m = v;
                                mi = ih * d.w + iw;
                            }
                        }
                    }
                    y[oh * d.ow + ow] = E::from_acc(m);
                    ix[oh * d.ow + ow] = mi as i64;
                }
            }
        }
    }
}

/// Channels-last: one output row `(n, oh)`, all channels of every output pixel at once.
struct MaxRowNhwc<'a, E: PoolElem> {
    x: &'a [E],
    y: &'a mut [E],
    ix: &'a mut [i64],
    m: &'a mut [E::Acc],
    row: (usize, usize),
    cols: &'a [(usize, usize)],
    s: &'a Setup,
}

impl<E: PoolElem> Kernel for MaxRowNhwc<'_, E> {
    #[inline(always)]
    unsafe fn run(self) {
        let d = self.s.dims;
        let c = d.c;
        let (dh, dw) = (self.s.win.dh as usize, self.s.win.dw as usize);
        let (h0, h1) = self.row;
        for (ow, &(w0, w1)) in self.cols.iter().enumerate() {
            let y = &mut self.y[ow * c..(ow + 1) * c];
            let ix = &mut self.ix[ow * c..(ow + 1) * c];
            self.m.fill(E::LOWEST);
            ix.fill((h0 * d.w + w0) as i64);
            for ih in (h0..h1).step_by(dh) {
                for iw in (w0..w1).step_by(dw) {
                    let at = ih * d.w + iw;
                    let src = &self.x[at * c..(at + 1) * c];
                    let index = at as i64;
                    for ((m, i), v) in self.m.iter_mut().zip(ix.iter_mut()).zip(src) {
                        let v = v.acc();
                        let take = v > *m || E::is_nan(v);
                        *m = if take { v } else { *m };
                        *i = if take { index } else { *i };
                    }
                }
            }
            for (o, m) in y.iter_mut().zip(self.m.iter()) {
                *o = E::from_acc(*m);
            }
        }
    }
}

/// Max pooling of dense `x` into dense `y` and `ix` (all in `s.format`).
fn max_forward<E: PoolElem>(x: &Tensor, y: &Tensor, ix: &Tensor, s: &Setup) -> Result<()> {
    let d = s.dims;
    let (rows, cols) = (row_windows(s), col_windows(s));
    // SAFETY: both kernels below write every element of `y` and `ix` (each output's window is
    // non-empty, and its maximum starts at the lowest value) before anything reads them, and
    // `assume_init` follows; the outputs are not shared with anything else meanwhile.
    let ((y_raw, y_fresh), (i_raw, i_fresh)) = unsafe { (y.data_ptr_for_overwrite(), ix.data_ptr_for_overwrite()) };
    let (xp, yp, ip) = (ptr::<E>(x), SharedPtr::new(y_raw.cast::<E>()), SharedPtr::new(i_raw.cast::<i64>()));
    if s.format == MemoryFormat::ChannelsLast {
        let (in_img, out_row) = (d.h * d.w * d.c, d.ow * d.c);
        parallel_ranges(d.n * d.oh, 1, |range| {
            let mut m = vec![E::LOWEST; d.c];
            for r in range {
                let (n, oh) = (r / d.oh, r % d.oh);
                // SAFETY: row r of y and ix belongs to this worker alone; x is only read.
                let k = unsafe {
                    MaxRowNhwc::<E> {
                        x: std::slice::from_raw_parts(xp.get().add(n * in_img), in_img),
                        y: std::slice::from_raw_parts_mut(yp.get().add(r * out_row), out_row),
                        ix: std::slice::from_raw_parts_mut(ip.get().add(r * out_row), out_row),
                        m: &mut m,
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
            let k = MaxPlanes::<E> { x: xp.get(), y: yp.get(), ix: ip.get(), planes, s, rows: &rows, cols: &cols };
            // SAFETY: the planes of this range belong to this worker alone.
            unsafe { run(k) };
        });
    }
    // SAFETY: every element was written above.
    unsafe {
        if y_fresh {
            y.storage().assume_init();
        }
        if i_fresh {
            ix.storage().assume_init();
        }
    }
    Ok(())
}

impl MaxPool2dWithIndicesOutCpuCpu for Cpu {
    fn max_pool2d_with_indices_out_cpu(
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
        out: &Tensor,
        indices: &Tensor,
    ) -> Result<()> {
        let s = setup(self_, kernel_size, stride, padding, dilation, ceil_mode)?;
        if self_.dtype() == DType::Bool {
            return Err(not_implemented("max_pool2d", DType::Bool));
        }
        if out.numel() == 0 {
            return Ok(());
        }
        let x = dense_in(self_, s.format)?;
        with_dense_output(out, s.format, |y| {
            with_dense_output(indices, s.format, |ix| {
                pool_dispatch!(x.dtype(), "max_pool2d", max_forward(&x, y, ix, &s))
            })
        })
    }
}

impl MaxPool2dCompositeImplicit for Composite {
    fn max_pool2d(
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<Tensor> {
        Ok(ops::max_pool2d_with_indices::call(self_, kernel_size, stride, padding, dilation, ceil_mode)?.0)
    }
}

// ---------------------------------------------------------------------------------------------
// backward
// ---------------------------------------------------------------------------------------------

/// The checks of `max_pool2d_with_indices_backward`'s meta function.
#[allow(clippy::too_many_arguments)]
fn backward_setup(
    grad_output: &Tensor,
    input: &Tensor,
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
    indices: &Tensor,
) -> Result<Setup> {
    Window::parse("max_pool2d", kernel, stride, padding, Some(dilation))?;
    check_same_dtype(input, grad_output, "gradOutput")?;
    let s = setup(input, kernel, stride, padding, dilation, ceil_mode)?;
    let ndim = input.dim();
    let d = s.dims;
    for t in [grad_output, indices] {
        check_dim_size(t, ndim, ndim - 3, d.c as i64)?;
        check_dim_size(t, ndim, ndim - 2, d.oh as i64)?;
        check_dim_size(t, ndim, ndim - 1, d.ow as i64)?;
    }
    if indices.dtype() != DType::I64 {
        return Err(Error::dtype(format!(
            "max_pool2d_with_indices_backward: expected indices of dtype int64, got {}",
            indices.dtype()
        )));
    }
    Ok(s)
}

impl MaxPool2dWithIndicesBackwardGradInputMetaFn for Meta {
    fn max_pool2d_with_indices_backward_grad_input(
        outs: &mut StructuredOutputs,
        grad_output: &Tensor,
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
        indices: &Tensor,
    ) -> Result<()> {
        let s = backward_setup(grad_output, self_, kernel_size, stride, padding, dilation, ceil_mode, indices)?;
        set_output_in(outs, 0, &self_.sizes(), s.format, self_.dtype(), self_.device())
    }
}

/// `gi[index] += go` over dense buffers, accumulated in `E::Acc` per plane (channels-first) or
/// per image (channels-last).
fn max_backward<E: PoolElem>(go: &Tensor, ix: &Tensor, gi: &Tensor, s: &Setup) -> Result<()> {
    let d = s.dims;
    let (gop, ipp, gip) = (ptr::<E>(go), ptr::<i64>(ix), ptr::<E>(gi));
    let (plane_in, plane_out) = (d.h * d.w, d.oh * d.ow);
    let bad = AtomicBool::new(false);
    let channels_last = s.format == MemoryFormat::ChannelsLast;
    // Channels-last scatters within an image (all channels); channels-first within a plane.
    let (units, in_len, out_len) =
        if channels_last { (d.n, plane_in * d.c, plane_out * d.c) } else { (d.n * d.c, plane_in, plane_out) };
    parallel_ranges(units, 1, |range| {
        let mut acc = vec![E::ZERO; in_len];
        for u in range {
            // SAFETY: unit u's part of gi belongs to this worker; go and ix are only read.
            let (go, ix, gi) = unsafe {
                (
                    std::slice::from_raw_parts(gop.get().add(u * out_len), out_len),
                    std::slice::from_raw_parts(ipp.get().add(u * out_len), out_len),
                    std::slice::from_raw_parts_mut(gip.get().add(u * in_len), in_len),
                )
            };
            acc.fill(E::ZERO);
            for (q, (&g, &i)) in go.iter().zip(ix).enumerate() {
                let c = if channels_last { q % d.c } else { 0 };
                if i < 0 || i as usize >= plane_in {
                    bad.store(true, Ordering::Relaxed);
                    continue;
                }
                let at = if channels_last { i as usize * d.c + c } else { i as usize };
                acc[at] = E::add(acc[at], g.acc());
            }
            for (o, a) in gi.iter_mut().zip(&acc) {
                *o = E::from_acc(*a);
            }
        }
    });
    if bad.load(Ordering::Relaxed) {
        return Err(Error::index(format!(
            "max_pool2d_with_indices_backward: an index is out of range for input planes of {} elements",
            plane_in
        )));
    }
    Ok(())
}

impl MaxPool2dWithIndicesBackwardOutCpuCpu for Cpu {
    fn max_pool2d_with_indices_backward_out_cpu(
        grad_output: &Tensor,
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
        indices: &Tensor,
        grad_input: &Tensor,
    ) -> Result<()> {
        let s = backward_setup(grad_output, self_, kernel_size, stride, padding, dilation, ceil_mode, indices)?;
        if grad_input.numel() == 0 {
            return Ok(());
        }
        let go = dense_in(grad_output, s.format)?;
        let ix = dense_in(indices, s.format)?;
        with_dense_output(grad_input, s.format, |gi| {
            pool_dispatch!(go.dtype(), "max_pool2d_with_indices_backward", max_backward(&go, &ix, gi, &s))
        })
    }
}
