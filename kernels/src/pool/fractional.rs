//! `fractional_max_pool2d`/`3d` (+ backward): max pooling over windows of a fixed size whose
//! starts are spread pseudo-randomly (Graham's fractional max-pooling), one set of starts per
//! plane drawn from `random_samples` (`[N, C, 2 or 3]`, in the input's dtype).
//!
//! Along a dimension of `input` positions, `output` windows of `pool` positions start at
//! `⌊(i + u)·α⌋ - ⌊u·α⌋` for `i < output - 1` and at `input - pool` for the last, where
//! `α = (input - pool) / (output - 1)` and `u` is the plane's sample for that dimension. The
//! arithmetic is done in the input's dtype, rounding after every operation as PyTorch's kernel
//! does (so bf16 and f16 inputs get PyTorch's starts too). The samples are ordered (W, H) for the
//! 2-D pool and (T, H, W) for the 3-D one, as PyTorch reads them.
//!
//! Each window's arg-max is found on the host with the 3-D and adaptive max pools' rule (the
//! first largest, or the last NaN) and the values are `gather`ed, so autograd, and every
//! backend, come from `gather`; the backward operators add each output's gradient at its index.

use super::sizes_str;
use super::three_d::{argmax_planes, gather_windows, Window, Windows};
use crate::generated::decls::{
    FractionalMaxPool2dBackwardCompositeImplicit, FractionalMaxPool2dCompositeImplicit,
    FractionalMaxPool3dBackwardCompositeImplicit, FractionalMaxPool3dCompositeImplicit,
};
use crate::support::not_implemented;
use crate::Composite;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::error::try_vec_with_capacity;
use oxten_runtime::{ops, DType, Device, Error, Result, Tensor};

/// One of the two operators: its spatial rank and the names PyTorch's messages use.
struct Pool {
    spatial: usize,
    /// The operator, as the argument checks name it.
    name: &'static str,
    /// The prefix of the input checks (`fractional_max_pool3d_out` for the 3-D pool).
    input_checks: &'static str,
    /// What the list arguments' length message says they must be.
    list: &'static str,
    /// The dimensions' names in the "too large" messages, outermost first.
    dims: &'static [&'static str],
    /// Which sample each dimension (outermost first) reads.
    sample_of_dim: &'static [usize],
}

const POOL2D: Pool = Pool {
    spatial: 2,
    name: "fractional_max_pool2d",
    input_checks: "fractional_max_pool2d",
    list: "a single Int or tuple of Ints",
    dims: &["height", "width"],
    sample_of_dim: &[1, 0],
};

const POOL3D: Pool = Pool {
    spatial: 3,
    name: "fractional_max_pool3d",
    input_checks: "fractional_max_pool3d_out",
    list: "a single Int or tuple of three Ints",
    dims: &["time", "height", "width"],
    sample_of_dim: &[0, 1, 2],
};

/// Rounds an `f64` computed from values of `dtype` to `dtype`, as C++ rounds each operation of
/// `scalar_t`s (the reduced floats compute in `float` and round back).
fn round_to(dtype: DType) -> fn(f64) -> f64 {
    match dtype {
        DType::F32 => |v| v as f32 as f64,
        DType::BF16 => |v| bf16::from_f32(v as f32).to_f64(),
        DType::F16 => |v| f16::from_f32(v as f32).to_f64(),
        _ => |v| v,
    }
}

/// The window starts along one dimension (PyTorch's `generate_intervals`).
fn starts(sample: f64, input: i64, output: i64, pool: i64, r: fn(f64) -> f64) -> Result<Vec<usize>> {
    let mut seq = try_vec_with_capacity(output as usize)?;
    if output > 1 {
        let alpha = r(r((input - pool) as f64) / r((output - 1) as f64));
        let base = r(sample * alpha) as i32 as i64;
        for i in 0..output - 1 {
            let at = r(r(r(i as f64) + sample) * alpha) as i32 as i64;
            // Samples outside [0, 1) (PyTorch draws them in it) must not move a window out.
            seq.push((at - base).clamp(0, input - pool) as usize);
        }
    }
    if output > 0 {
        seq.push((input - pool) as usize);
    }
    Ok(seq)
}

/// PyTorch's checks, in its order; returns the output's sizes.
fn check(p: &Pool, input: &Tensor, kernel: &[i64], output: &[i64], samples: &Tensor) -> Result<Vec<i64>> {
    let n = p.spatial;
    if kernel.len() != n {
        return Err(Error::runtime(format!("{}: kernel_size must either be {}", p.name, p.list)));
    }
    if output.len() != n {
        return Err(Error::runtime(format!("{}: output_size must either be {}", p.name, p.list)));
    }
    if kernel.iter().any(|&k| k <= 0) {
        let k: Vec<String> = kernel.iter().map(i64::to_string).collect();
        return Err(Error::runtime(format!(
            "{}(): kernel size should be greater than zero, but got {}",
            p.name,
            k.join("x")
        )));
    }
    let sizes = input.sizes();
    let nd = sizes.len();
    if nd != n + 1 && nd != n + 2 {
        return Err(Error::runtime(format!(
            "{}(): Expected {}D or {}D tensor, but got: {}",
            p.input_checks,
            n + 1,
            n + 2,
            sizes_str(&sizes)
        )));
    }
    if let Some(i) = (1..nd).find(|&i| sizes[i] == 0) {
        return Err(Error::runtime(format!(
            "{}(): Expected input to have non-zero size for non-batch dimensions, but got{} with dimension {i} being \
             empty.",
            p.input_checks,
            sizes_str(&sizes)
        )));
    }
    let ins = &sizes[nd - n..];
    for d in 0..n {
        let fits = output[d].checked_add(kernel[d] - 1).is_some_and(|need| need <= ins[d]);
        if !fits {
            return Err(Error::runtime(format!(
                "{}(): pool {} {} too large relative to input {} {}",
                p.input_checks, p.dims[d], kernel[d], p.dims[d], ins[d]
            )));
        }
    }
    let mut out_sizes = sizes[..nd - n].to_vec();
    out_sizes.extend_from_slice(output);
    if let Some(&o) = output.iter().find(|&&o| o < 0) {
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {o}: {}",
            sizes_str(&out_sizes)
        )));
    }
    if samples.dtype() != input.dtype() {
        return Err(Error::runtime("Expect _random_samples to have the same dtype as input"));
    }
    let ss = samples.sizes();
    if ss.len() != 3 {
        return Err(Error::runtime(format!("Expect _random_samples to have 3 dimensions, got {}", ss.len())));
    }
    let (batch, channels) = if nd == n + 2 { (sizes[0], sizes[1]) } else { (1, sizes[0]) };
    if ss[0] < batch {
        return Err(Error::runtime("Expect _random_samples.size(0) no less then input batch size."));
    }
    if ss[1] != channels {
        return Err(Error::runtime("Expect _random_samples.size(1) equals to input channel size."));
    }
    if ss[2] != n as i64 {
        return Err(Error::runtime(format!("Expect _random_samples.size(2) equals to {n}; got {}.", ss[2])));
    }
    Ok(out_sizes)
}

/// The pooled values and their flat indices (over the pooled dims of each plane).
fn fractional_max(
    p: &Pool,
    input: &Tensor,
    kernel: &[i64],
    output: &[i64],
    samples: &Tensor,
) -> Result<(Tensor, Tensor)> {
    let out_sizes = check(p, input, kernel, output, samples)?;
    let n = p.spatial;
    let dtype = input.dtype();
    if out_sizes.contains(&0) {
        let empty = |dtype| ops::empty::call(&out_sizes, Some(dtype), None, Some(input.device()), None, None);
        return Ok((empty(dtype)?, empty(DType::I64)?));
    }
    if !matches!(dtype, DType::F32 | DType::F64 | DType::BF16 | DType::F16) {
        return Err(not_implemented(&format!("{}_out_frame", p.name), dtype));
    }
    let sizes = input.sizes();
    let planes: usize = sizes[..sizes.len() - n].iter().map(|&s| s as usize).product();
    let mut dims = [1usize; 3];
    for (i, s) in sizes[sizes.len() - n..].iter().enumerate() {
        dims[3 - n + i] = *s as usize;
    }
    let plane_len: usize = dims.iter().product();
    let host = |t: &Tensor| -> Result<Vec<f64>> {
        let t = t.try_to_device(Device::Cpu)?;
        ops::to_dtype::call(&t, DType::F64, false, false, None)?.to_vec::<f64>()
    };
    let data = host(input)?;
    let draws = host(samples)?;
    let r = round_to(dtype);
    let per_plane = output
        .iter()
        .try_fold(1usize, |acc, &o| acc.checked_mul(o as usize))
        .filter(|&k| k.checked_mul(planes).is_some())
        .ok_or_else(|| Error::out_of_memory(u128::MAX, "fractional max pooling indices"))?;
    let one: Windows = vec![Window { first: 0, count: 1, step: 1 }];
    let mut indices = try_vec_with_capacity(planes * per_plane)?;
    for plane in 0..planes {
        // The samples are `[N, C, n]` (N at least the batch): plane `b·C + c` reads row `(b, c)`.
        let row = &draws[plane * n..(plane + 1) * n];
        let mut windows: Vec<Windows> = Vec::with_capacity(n);
        for d in 0..n {
            let input_len = sizes[sizes.len() - n + d];
            let first = starts(row[p.sample_of_dim[d]], input_len, output[d], kernel[d], r)?;
            windows.push(first.into_iter().map(|f| Window { first: f, count: kernel[d] as usize, step: 1 }).collect());
        }
        let win: Vec<&Windows> = (0..3).map(|i| if i < 3 - n { &one } else { &windows[i + n - 3] }).collect();
        let x = &data[plane * plane_len..(plane + 1) * plane_len];
        indices.extend(argmax_planes(x, 1, dims, &win, per_plane, f64::NEG_INFINITY, f64::is_nan)?);
    }
    let indices = Tensor::from_vec(indices, &out_sizes)?.try_to_device(input.device())?;
    Ok((gather_windows(input, &indices, n)?, indices))
}

/// The gradient of either pool: each output's gradient added at its index in a zero input.
fn fractional_max_backward(
    p: &Pool,
    grad: &Tensor,
    input: &Tensor,
    output: &[i64],
    indices: &Tensor,
) -> Result<Tensor> {
    let n = p.spatial;
    let nd = input.dim();
    if output.len() != n || (nd != n + 1 && nd != n + 2) {
        return Err(Error::runtime(format!(
            "{}_backward(): expected an input of {} or {} dims and {n} output sizes",
            p.name,
            n + 1,
            n + 2
        )));
    }
    let mut expected = input.sizes()[..nd - n].to_vec();
    expected.extend_from_slice(output);
    for (what, t) in [("gradOutput", grad), ("indices", indices)] {
        if t.sizes()[..] != expected[..] {
            return Err(Error::runtime(format!(
                "{}_backward(): {what} of shape {} expected, but got {}",
                p.name,
                sizes_str(&expected),
                sizes_str(&t.sizes())
            )));
        }
    }
    let lead = nd - n;
    let flat = |t: &Tensor| {
        let sizes = t.sizes();
        let mut s = sizes[..lead].to_vec();
        s.push(sizes[lead..].iter().product());
        ops::reshape::call(t, &s)
    };
    let zeros = ops::zeros_like::call(&flat(input)?, None, None, None, None, None)?;
    let g = ops::scatter_add::call(&zeros, lead as i64, &flat(indices)?, &flat(grad)?)?;
    ops::reshape::call(&g, &input.sizes())
}

impl FractionalMaxPool2dCompositeImplicit for Composite {
    fn fractional_max_pool2d(
        self_: &Tensor,
        kernel_size: &[i64],
        output_size: &[i64],
        random_samples: &Tensor,
    ) -> Result<(Tensor, Tensor)> {
        fractional_max(&POOL2D, self_, kernel_size, output_size, random_samples)
    }
}

impl FractionalMaxPool3dCompositeImplicit for Composite {
    fn fractional_max_pool3d(
        self_: &Tensor,
        kernel_size: &[i64],
        output_size: &[i64],
        random_samples: &Tensor,
    ) -> Result<(Tensor, Tensor)> {
        fractional_max(&POOL3D, self_, kernel_size, output_size, random_samples)
    }
}

impl FractionalMaxPool2dBackwardCompositeImplicit for Composite {
    fn fractional_max_pool2d_backward(
        grad_output: &Tensor,
        self_: &Tensor,
        _kernel_size: &[i64],
        output_size: &[i64],
        indices: &Tensor,
    ) -> Result<Tensor> {
        fractional_max_backward(&POOL2D, grad_output, self_, output_size, indices)
    }
}

impl FractionalMaxPool3dBackwardCompositeImplicit for Composite {
    fn fractional_max_pool3d_backward(
        grad_output: &Tensor,
        self_: &Tensor,
        _kernel_size: &[i64],
        output_size: &[i64],
        indices: &Tensor,
    ) -> Result<Tensor> {
        fractional_max_backward(&POOL3D, grad_output, self_, output_size, indices)
    }
}
