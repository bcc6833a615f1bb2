//! 3-D and adaptive max pooling, composed of other operators with PyTorch's checks and results:
//!
//! - `max_pool3d` (+ `_with_indices`) and `adaptive_max_pool1d/2d/3d` find each window's
//!   largest element on the host ([`window_argmax`]: the first largest, or the last NaN, as
//!   PyTorch's kernels) and `gather` the values, so the indices are PyTorch's and the gradient is
//!   `gather`'s (each output's gradient added at its index, as PyTorch's backward does);
//! - `avg_pool3d` and `adaptive_avg_pool3d` are separable: 2-D pooling over (H, W) of every
//!   depth slice, then 2-D pooling over (D, 1) of the result. `avg_pool3d` sums in both stages
//!   and divides once by PyTorch's per-window divisor (a product over the dimensions), so integer
//!   inputs truncate as PyTorch's.

use super::{pooling_output_shape, sizes_str};
use crate::generated::decls::{
    AdaptiveAvgPool3dCompositeImplicit, AdaptiveMaxPool1dCompositeImplicit, AdaptiveMaxPool2dCompositeImplicit,
    AdaptiveMaxPool3dCompositeImplicit, AvgPool3dCompositeImplicit, MaxPool3dCompositeImplicit,
    MaxPool3dWithIndicesCompositeImplicit,
};
use crate::support::not_implemented;
use crate::Composite;
use oxten_runtime::error::try_vec_with_capacity;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// The input positions one output's window reads along one dimension (clipped to the input):
/// `count` positions from `first`, `step` apart.
#[derive(Clone, Copy)]
pub(super) struct Window {
    pub(super) first: usize,
    pub(super) count: usize,
    pub(super) step: usize,
}

impl Window {
    fn positions(self) -> impl Iterator<Item = usize> {
        (0..self.count).map(move |j| self.first + j * self.step)
    }
}

/// The windows of every output along one dimension.
pub(super) type Windows = Vec<Window>;

/// Windows of a regular pooling: output `o` reads `o·stride - pad + j·dilation`, `j < kernel`,
/// those inside the input (found by arithmetic: a kernel may be far larger than the input).
fn pooling_windows(input: i64, out: i64, w: &Dim) -> Result<Windows> {
    let mut v = try_vec_with_capacity(out.max(0) as usize)?;
    let (input, k, s, p, d) = (input as i128, w.k as i128, w.s as i128, w.p as i128, w.d as i128);
    for o in 0..out as i128 {
        let start = o * s - p;
        // The first j with start + j·d >= 0, and one past the last with start + j·d < input.
        let lo = if start >= 0 { 0 } else { (-start + d - 1) / d };
        let hi = if start >= input { 0 } else { ((input - 1 - start) / d + 1).min(k) };
        let count = (hi - lo).max(0);
        let first = if count > 0 { start + lo * d } else { start.clamp(0, (input - 1).max(0)) };
        v.push(Window { first: first as usize, count: count as usize, step: d as usize });
    }
    Ok(v)
}

/// Windows of adaptive pooling: output `o` reads `[floor(o·in/out), ceil((o+1)·in/out))`.
fn adaptive_windows(input: i64, out: i64) -> Result<Windows> {
    let mut v = try_vec_with_capacity(out.max(0) as usize)?;
    let (input, out) = (input as i128, out as i128);
    for o in 0..out {
        let start = o * input / out;
        let end = ((o + 1) * input + out - 1) / out;
        v.push(Window { first: start as usize, count: (end - start) as usize, step: 1 });
    }
    Ok(v)
}

/// The number of outputs, `planes · Π windows`, or an error where it cannot be allocated.
fn output_count(planes: usize, windows: &[Windows]) -> Result<usize> {
    windows
        .iter()
        .try_fold(planes, |n, w| n.checked_mul(w.len()))
        .filter(|&n| n.checked_mul(8).is_some())
        .ok_or_else(|| Error::out_of_memory(u128::MAX, "pooling indices"))
}

/// For every plane (the dims before the last `windows.len()`) and every output position, the
/// flat index (over the pooled dims) of the largest element of its window: PyTorch's rule,
/// `val > max || isnan(val)` from `max = lowest` and the window's first position.
fn window_argmax(input: &Tensor, windows: &[Windows]) -> Result<Tensor> {
    let spatial = windows.len();
    let sizes = input.sizes();
    let lead = &sizes[..sizes.len() - spatial];
    let mut dims = [1usize; 3];
    for (i, s) in sizes[sizes.len() - spatial..].iter().enumerate() {
        dims[3 - spatial + i] = *s as usize;
    }
    let one: Windows = vec![Window { first: 0, count: 1, step: 1 }];
    let win: Vec<&Windows> = (0..3).map(|i| if i < 3 - spatial { &one } else { &windows[i + spatial - 3] }).collect();
    let planes: usize = lead.iter().map(|&s| s as usize).product();
    let out_per_plane = output_count(1, windows)?;
    output_count(planes, windows)?;
    let host = input.try_to_device(oxten_runtime::Device::Cpu)?;
    let indices = if input.dtype().is_floating_point() {
        let data = ops::to_dtype::call(&host, DType::F64, false, false, None)?.to_vec::<f64>()?;
        argmax_planes(&data, planes, dims, &win, out_per_plane, f64::NEG_INFINITY, f64::is_nan)?
    } else {
        let data = ops::to_dtype::call(&host, DType::I64, false, false, None)?.to_vec::<i64>()?;
        argmax_planes(&data, planes, dims, &win, out_per_plane, i64::MIN, |_| false)?
    };
    let mut shape = lead.to_vec();
    shape.extend(windows.iter().map(|w| w.len() as i64));
    Tensor::from_vec(indices, &shape)?.try_to_device(input.device())
}

pub(super) fn argmax_planes<T: Copy + PartialOrd>(
    data: &[T],
    planes: usize,
    [d, h, w]: [usize; 3],
    win: &[&Windows],
    out_per_plane: usize,
    lowest: T,
    is_nan: impl Fn(T) -> bool,
) -> Result<Vec<i64>> {
    let plane = d * h * w;
    let mut out = try_vec_with_capacity(planes * out_per_plane)?;
    for p in 0..planes {
        let x = &data[p * plane..(p + 1) * plane];
        for &wd in win[0] {
            for &wh in win[1] {
                for &ww in win[2] {
                    let (mut best, mut at) = (lowest, (wd.first * h + wh.first) * w + ww.first);
                    for i in wd.positions() {
                        for j in wh.positions() {
                            for k in ww.positions() {
                                let pos = (i * h + j) * w + k;
                                let v = x[pos];
                                if v > best || is_nan(v) {
                                    best = v;
                                    at = pos;
                                }
                            }
                        }
                    }
                    out.push(at as i64);
                }
            }
        }
    }
    Ok(out)
}

/// The values at `indices` (flat over the last `spatial` dims of `input`), shaped like them.
pub(super) fn gather_windows(input: &Tensor, indices: &Tensor, spatial: usize) -> Result<Tensor> {
    let lead = input.dim() - spatial;
    let flat = |t: &Tensor| {
        let sizes = t.sizes();
        let mut s = sizes[..lead].to_vec();
        s.push(sizes[lead..].iter().product());
        ops::reshape::call(t, &s)
    };
    let values = ops::gather::call(&flat(input)?, lead as i64, &flat(indices)?, false)?;
    ops::reshape::call(&values, &indices.sizes())
}

/// Kernel, stride, padding and dilation along one dimension.
#[derive(Clone, Copy)]
struct Dim {
    k: i64,
    s: i64,
    p: i64,
    d: i64,
}

/// The three dimensions' windows from PyTorch's 3-D list arguments (one value or three; an
/// empty stride is the kernel), with the messages of `max_pool3d` or `avg_pool3d`.
fn parse3(op: &str, kernel: &[i64], stride: &[i64], padding: &[i64], dilation: Option<&[i64]>) -> Result<[Dim; 3]> {
    let (must, omitted) = if op == "avg_pool3d" {
        ("must be", "must be omitted,")
    } else {
        ("must either be", "must either be omitted,")
    };
    let three = |v: &[i64], name: &str, what: &str| -> Result<[i64; 3]> {
        match v {
            [x] => Ok([*x; 3]),
            [a, b, c] => Ok([*a, *b, *c]),
            _ => Err(Error::runtime(format!("{op}: {name} {what} a single int, or a tuple of three ints"))),
        }
    };
    let k = three(kernel, "kernel_size", must)?;
    let s = if stride.is_empty() { k } else { three(stride, "stride", omitted)? };
    let p = three(padding, "padding", must)?;
    let d = match dilation {
        Some(v) => three(v, "dilation", "must be either")?,
        None => [1; 3],
    };
    Ok([0, 1, 2].map(|i| Dim { k: k[i], s: s[i], p: p[i], d: d[i] }))
}

/// `nslices, itime, iheight, iwidth` of a 4-D (unbatched) or 5-D input.
fn input_dims3(input: &Tensor) -> Result<[i64; 4]> {
    let s = input.sizes();
    match s.len() {
        4 | 5 => Ok([s[s.len() - 4], s[s.len() - 3], s[s.len() - 2], s[s.len() - 1]]),
        _ => Err(Error::runtime("non-empty 4D or 5D (batch mode) tensor expected for input")),
    }
}

/// PyTorch's `pool3d_shape_check` after the output sizes: positive windows, a non-empty input,
/// padding at most half the kernel and a non-empty output.
fn shape_check3(op: &str, input: &Tensor, w: &[Dim; 3], out: [i64; 3], check_input_size: bool) -> Result<()> {
    let [t, h, ww] = w;
    if w.iter().any(|x| x.k <= 0) {
        return Err(Error::runtime(format!(
            "kernel size should be greater than zero, but got kT: {} kH: {} kW: {}",
            t.k, h.k, ww.k
        )));
    }
    if w.iter().any(|x| x.s <= 0) {
        return Err(Error::runtime(format!(
            "stride should be greater than zero, but got dT: {} dH: {} dW: {}",
            t.s, h.s, ww.s
        )));
    }
    if w.iter().any(|x| x.d <= 0) {
        return Err(Error::runtime(format!(
            "dilation should be greater than zero, but got dilationT: {} dilationH: {} dilationW: {}",
            t.d, h.d, ww.d
        )));
    }
    let sizes = input.sizes();
    // An unbatched input's first dimension (its channels) must be non-empty too.
    let first = if sizes.len() == 5 { 1 } else { 0 };
    if let Some(i) = (first..sizes.len()).find(|&i| sizes[i] == 0) {
        return Err(Error::runtime(format!(
            "{op}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {} with \
             dimension {i} being empty",
            sizes_str(&sizes)
        )));
    }
    let [c, it, ih, iw] = input_dims3(input)?;
    if check_input_size && (it < t.k || ih < h.k || iw < ww.k) {
        return Err(Error::runtime(format!(
            "input image (T: {it} H: {ih} W: {iw}) smaller than kernel size (kT: {} kH: {} kW: {})",
            t.k, h.k, ww.k
        )));
    }
    if t.k / 2 < t.p || ww.k / 2 < ww.p || h.k / 2 < h.p {
        return Err(Error::runtime(format!(
            "pad should be smaller than or equal to half of kernel size, but got kT: {} kW: {} kH: {} padT: {} padW: {} \
             padH: {}",
            t.k, ww.k, h.k, t.p, ww.p, h.p
        )));
    }
    if out.iter().any(|&o| o < 1) {
        return Err(Error::runtime(format!(
            "Given input size: ({c}x{it}x{ih}x{iw}). Calculated output size: ({c}x{}x{}x{}). Output size is too small",
            out[0], out[1], out[2]
        )));
    }
    Ok(())
}

/// The output sizes of a 3-D pooling, each by `pooling_output_shape`.
fn output_sizes3(input: &Tensor, w: &[Dim; 3], ceil: bool) -> Result<[i64; 3]> {
    let [_, it, ih, iw] = input_dims3(input)?;
    let ins = [it, ih, iw];
    let mut out = [0; 3];
    for i in 0..3 {
        out[i] = pooling_output_shape(ins[i], w[i].k, w[i].p, w[i].s, w[i].d, ceil)?;
    }
    Ok(out)
}

/// `input`'s sizes with the last `spatial` replaced by `out`.
fn with_spatial(input: &Tensor, out: &[i64]) -> Vec<i64> {
    let s = input.sizes();
    let mut v = s[..s.len() - out.len()].to_vec();
    v.extend_from_slice(out);
    v
}

impl MaxPool3dWithIndicesCompositeImplicit for Composite {
    fn max_pool3d_with_indices(
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<(Tensor, Tensor)> {
        let w = parse3("max_pool3d", kernel_size, stride, padding, Some(dilation))?;
        input_dims3(self_)?;
        let out = output_sizes3(self_, &w, ceil_mode)?;
        shape_check3("max_pool3d_with_indices_out_cpu_template", self_, &w, out, false)?;
        if matches!(self_.dtype(), DType::Bool) {
            return Err(not_implemented("max_pool3d_with_indices_cpu", self_.dtype()));
        }
        let [_, it, ih, iw] = input_dims3(self_)?;
        let ins = [it, ih, iw];
        let windows = (0..3).map(|i| pooling_windows(ins[i], out[i], &w[i])).collect::<Result<Vec<_>>>()?;
        let indices = window_argmax(self_, &windows)?;
        Ok((gather_windows(self_, &indices, 3)?, indices))
    }
}

impl MaxPool3dCompositeImplicit for Composite {
    fn max_pool3d(
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<Tensor> {
        Ok(ops::max_pool3d_with_indices::call(self_, kernel_size, stride, padding, dilation, ceil_mode)?.0)
    }
}

/// `adaptive_max_pool2d`/`3d`: PyTorch's checks, then the windows' arg-max and values.
fn adaptive_max(op: &str, spatial: usize, self_: &Tensor, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
    let nd = self_.dim();
    if nd != spatial + 1 && nd != spatial + 2 {
        return Err(Error::runtime(format!(
            "{op}(): Expected {}D or {}D tensor, but got: {}",
            spatial + 1,
            spatial + 2,
            sizes_str(&self_.sizes())
        )));
    }
    let sizes = self_.sizes();
    if let Some(i) = (1..nd).find(|&i| sizes[i] == 0) {
        return Err(Error::runtime(format!(
            "{op}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {} with \
             dimension {i} being empty",
            sizes_str(&sizes)
        )));
    }
    if output_size.len() != spatial {
        return Err(Error::runtime(format!("{op}(): internal error: output_size.size() must be {spatial}")));
    }
    if let Some(&o) = output_size.iter().find(|&&o| o < 0) {
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {o}: {}",
            sizes_str(&with_spatial(self_, output_size))
        )));
    }
    if !self_.dtype().is_floating_point() {
        return Err(not_implemented(op, self_.dtype()));
    }
    let ins = &sizes[nd - spatial..];
    let windows = (0..spatial).map(|i| adaptive_windows(ins[i], output_size[i])).collect::<Result<Vec<_>>>()?;
    let indices = window_argmax(self_, &windows)?;
    Ok((gather_windows(self_, &indices, spatial)?, indices))
}

impl AdaptiveMaxPool2dCompositeImplicit for Composite {
    fn adaptive_max_pool2d(self_: &Tensor, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
        adaptive_max("adaptive_max_pool2d", 2, self_, output_size)
    }
}

impl AdaptiveMaxPool3dCompositeImplicit for Composite {
    fn adaptive_max_pool3d(self_: &Tensor, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
        adaptive_max("adaptive_max_pool3d", 3, self_, output_size)
    }
}

impl AdaptiveMaxPool1dCompositeImplicit for Composite {
    fn adaptive_max_pool1d(self_: &Tensor, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
        if !matches!(self_.dim(), 2 | 3) {
            return Err(Error::runtime(format!(
                "Expected 2 to 3 dimensions, but got {}-dimensional tensor for argument #1 'self' (while checking \
                 arguments for adaptive_max_pool1d)",
                self_.dim()
            )));
        }
        let o = match output_size {
            [o] => *o,
            _ => {
                return Err(Error::runtime(format!(
                    "adaptive_max_pool1d() argument 'output_size' should contain one int (got {})",
                    output_size.len()
                )))
            }
        };
        let (values, indices) = ops::adaptive_max_pool2d::call(&self_.try_unsqueeze(-2)?, &[1, o])?;
        Ok((values.try_squeeze_dim(-2)?, indices.try_squeeze_dim(-2)?))
    }
}

/// The divisor of each output along one dimension: the window clipped to the padded input
/// (`count_include_pad`) or to the input.
fn avg_divisors(input: i64, out: i64, w: &Dim, count_include_pad: bool) -> Vec<f64> {
    (0..out)
        .map(|o| {
            let start = o * w.s - w.p;
            let end = (start + w.k).min(input + w.p);
            if count_include_pad {
                (end - start) as f64
            } else {
                (end.min(input) - start.max(0)) as f64
            }
        })
        .collect()
}

impl AvgPool3dCompositeImplicit for Composite {
    fn avg_pool3d(
        self_: &Tensor,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Option<i64>,
    ) -> Result<Tensor> {
        let w = parse3("avg_pool3d", kernel_size, stride, padding, None)?;
        let [c, it, ih, iw] = input_dims3(self_)?;
        let out = output_sizes3(self_, &w, ceil_mode)?;
        shape_check3("avg_pool3d", self_, &w, out, true)?;
        if divisor_override == Some(0) {
            return Err(Error::runtime("divisor must be not zero"));
        }
        let dtype = self_.dtype();
        if !matches!(dtype, DType::F32 | DType::F64 | DType::I64) {
            return Err(not_implemented("avg_pool3d_out_frame", dtype));
        }
        let n = if self_.dim() == 5 { self_.sizes()[0] } else { 1 };
        let [t, h, ww] = w;
        // Sums over (H, W) of every depth slice, then over D: divisor 1 in both stages.
        let slices = ops::reshape::call(self_, &[n, c * it, ih, iw])?;
        let s1 = ops::avg_pool2d::call(&slices, &[h.k, ww.k], &[h.s, ww.s], &[h.p, ww.p], ceil_mode, true, Some(1))?;
        let depth = ops::reshape::call(&s1, &[n * c, 1, it, out[1] * out[2]])?;
        let sums = ops::avg_pool2d::call(&depth, &[t.k, 1], &[t.s, 1], &[t.p, 0], ceil_mode, true, Some(1))?;
        let sums = ops::reshape::call(&sums, &with_spatial(self_, &out))?;
        let divisor = match divisor_override {
            Some(d) => ops::full_like::call(&sums, Scalar::Int(d), None, None, None, None, None)?,
            None => {
                let ins = [it, ih, iw];
                let per: Vec<Vec<f64>> =
                    (0..3).map(|i| avg_divisors(ins[i], out[i], &w[i], count_include_pad)).collect();
                let mut all = try_vec_with_capacity(per[0].len() * per[1].len() * per[2].len())?;
                for a in &per[0] {
                    for b in &per[1] {
                        for e in &per[2] {
                            all.push(a * b * e);
                        }
                    }
                }
                let d = Tensor::from_vec(all, &out)?.try_to_device(self_.device())?;
                ops::to_dtype::call(&d, dtype, false, false, None)?
            }
        };
        if dtype == DType::I64 {
            ops::div_tensor_mode::call(&sums, &divisor, Some("trunc"))
        } else {
            ops::div::call(&sums, &divisor)
        }
    }
}

impl AdaptiveAvgPool3dCompositeImplicit for Composite {
    fn adaptive_avg_pool3d(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
        if output_size.len() != 3 {
            return Err(Error::runtime("adaptive_avg_pool3d: output_size must be 3"));
        }
        let nd = self_.dim();
        if nd != 4 && nd != 5 {
            return Err(Error::runtime(format!(
                "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {}",
                sizes_str(&self_.sizes())
            )));
        }
        let sizes = self_.sizes();
        if let Some(i) = (1..nd).find(|&i| sizes[i] == 0) {
            return Err(Error::runtime(format!(
                "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch dimensions, but input has \
                 sizes {} with dimension {i} being empty",
                sizes_str(&sizes)
            )));
        }
        if let Some(&o) = output_size.iter().find(|&&o| o < 0) {
            return Err(Error::runtime(format!(
                "Trying to create tensor with negative dimension {o}: {}",
                sizes_str(&with_spatial(self_, output_size))
            )));
        }
        if !self_.dtype().is_floating_point() {
            return Err(not_implemented("adaptive_avg_pool3d_cpu", self_.dtype()));
        }
        let s = self_.sizes();
        let (d, h, w) = (s[nd - 3], s[nd - 2], s[nd - 1]);
        let planes: i64 = s[..nd - 3].iter().product();
        let [od, oh, ow] = [output_size[0], output_size[1], output_size[2]];
        // (H, W) of every depth slice, then D (each of the oh·ow columns is its own window).
        let x = ops::reshape::call(self_, &[planes, d, h, w])?;
        let hw = ops::adaptive_avg_pool2d::call(&x, &[oh, ow])?;
        let cols = ops::reshape::call(&hw, &[planes, d, oh * ow])?;
        let y = ops::adaptive_avg_pool2d::call(&cols, &[od, oh * ow])?;
        ops::reshape::call(&y, &with_spatial(self_, output_size))
    }
}
