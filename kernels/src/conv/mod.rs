//! Convolution: `convolution` and `convolution_backward` (CPU and Meta kernels: PyTorch's
//! composite `convolution` picks a backend implementation, and here each backend is one), and
//! the composites `conv1d`, `conv2d`, their `padding='same'|'valid'` overloads and
//! `conv_transpose2d`; the 3-D ones are sums of 2-D ones over the kernel's depth ([`three_d`]).
//!
//! `convolution` checks its arguments as PyTorch's `_convolution` does ([`params`]), views a
//! 1-d convolution as a 2-d one over a height of 1, picks the memory format of the computation
//! (channels-last when the input or the weight suggests it) and runs the kernels of [`compute`]
//! on dense buffers in that format: im2col + `gemm` for f32/f64, the same in f32 for f16/bf16
//! (converted while building the receptive-field blocks and rounded once on output), bf16 blocks
//! on the native bf16 product kernel where the CPU has AVX-512 BF16 ([`bf16_native`], forward
//! only), and a direct loop for integers ([`direct`]). A transposed convolution is the input gradient of the
//! convolution with the same weight, and its gradients are that convolution's forward and weight
//! gradient. The Meta kernels run the same checks and plan ([`plan_forward`],
//! [`plan_backward`]) and return the outputs' sizes and strides without computing.

mod bf16_native;
mod compute;
mod direct;
pub(crate) mod elem;
mod gemm;
mod im2col;
mod params;
mod three_d;

use crate::generated::decls::{
    Conv1dCompositeImplicit, Conv1dPaddingCompositeImplicit, Conv2dCompositeImplicit, Conv2dPaddingCompositeImplicit,
    ConvTranspose1dCompositeImplicit, ConvTranspose2dCompositeImplicit, ConvolutionBackwardCpu,
    ConvolutionBackwardMeta, ConvolutionCpu, ConvolutionMeta,
};
use crate::{Composite, Cpu, Meta};
use elem::{Bf16Block, FloatElem, Overwrite};
use im2col::{Geom, Layout};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{ops, DType, Device, Error, MemoryFormat, Result, Tensor};
pub(crate) use params::list;
use params::{
    backend_format, batchify, check_bias_dtype, check_dtypes, check_shape, output_sizes, unbatch, uses_mkldnn, Params,
};

// ---------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------

/// The elements of a dense tensor of element type `S`, in memory order.
///
/// # Safety
/// `t` must be dense (non-overlapping, no gaps, offset included) and of element type `S`.
unsafe fn dense<S>(t: &Tensor) -> &[S] {
    if t.numel() == 0 {
        return &[];
    }
    // SAFETY: forwarded to the caller; the storage holds `numel` elements from `data_ptr`.
    unsafe { std::slice::from_raw_parts(t.data_ptr().cast::<S>(), t.numel() as usize) }
}

/// The 2-d convolution geometry of `x` `[N, C, H, W]` * `w` `[O, C/groups, kh, kw]` -> `y`
/// `[N, O, OH, OW]`.
fn geom(x: &[i64], w: &[i64], y: &[i64], p: &Params) -> Geom {
    let u = |v: i64| v as usize;
    Geom {
        n: u(x[0]),
        c: u(x[1]),
        h: u(x[2]),
        w: u(x[3]),
        o: u(w[0]),
        oh: u(y[2]),
        ow: u(y[3]),
        kh: u(w[2]),
        kw: u(w[3]),
        sh: u(p.stride[0]),
        sw: u(p.stride[1]),
        ph: u(p.padding[0]),
        pw: u(p.padding[1]),
        dh: u(p.dilation[0]),
        dw: u(p.dilation[1]),
        groups: u(p.groups),
    }
}

fn layout_of(format: MemoryFormat) -> Layout {
    if format == MemoryFormat::ChannelsLast {
        Layout::Nhwc
    } else {
        Layout::Nchw
    }
}

/// `t.unsqueeze(2)` (`view4d`) or `t.squeeze(2)` (`view3d`) for 1-d convolutions.
fn view4d(t: &Tensor) -> Result<Tensor> {
    ops::unsqueeze::call(t, 2)
}
fn view3d(t: &Tensor) -> Result<Tensor> {
    ops::squeeze_dim::call(t, 2)
}

/// A placeholder for a gradient `output_mask` did not ask for (PyTorch returns an undefined
/// tensor there): an empty tensor.
fn not_requested(like: &Tensor) -> Result<Tensor> {
    Tensor::empty(&[0], like.dtype(), like.device(), MemoryFormat::Contiguous)
}

fn unsupported_dim() -> Error {
    Error::value("convolution: only 1-d and 2-d convolutions are supported (3-d is not implemented)")
}

/// The bias converted to the arithmetic type.
fn bias_values<S: FloatElem>(bias: Option<&Tensor>) -> Result<Option<Vec<S::T>>> {
    let Some(b) = bias else { return Ok(None) };
    let b = ops::contiguous::call(b, MemoryFormat::Contiguous)?;
    // SAFETY: `b` is contiguous of dtype S (checked by `check_dtypes`).
    let src = unsafe { dense::<S>(&b) };
    let mut v = vec![<S::T as elem::Real>::ZERO; src.len()];
    S::load(src, &mut v);
    Ok(Some(v))
}

// ---------------------------------------------------------------------------------------------
// convolution
// ---------------------------------------------------------------------------------------------

/// Runs `f::<S>()` for the floating dtype `d`.
macro_rules! float_dispatch {
    ($d:expr, $f:ident($($arg:expr),*)) => {
        match $d {
            DType::F32 => $f::<f32>($($arg),*),
            DType::F64 => $f::<f64>($($arg),*),
            DType::F16 => $f::<f16>($($arg),*),
            DType::BF16 => $f::<bf16>($($arg),*),
            other => Err(Error::dtype(format!("convolution: unexpected dtype {other}"))),
        }
    };
}

/// The forward of a floating convolution on 4-d `x` and `w`: `conv(x, w) + bias`, or the
/// transposed convolution, into a new tensor of `out` sizes in `format`.
fn float_forward<S: FloatElem>(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    p: &Params,
    out: &[i64],
    format: MemoryFormat,
) -> Result<Tensor> {
    let layout = layout_of(format);
    let x = ops::contiguous::call(x, format)?;
    let w = ops::contiguous::call(w, MemoryFormat::Contiguous)?;
    let g = if p.transposed { geom(out, &w.sizes(), &x.sizes(), p) } else { geom(&x.sizes(), &w.sizes(), out, p) };
    if S::DTYPE == DType::BF16 && !p.transposed && g.k() > 0 && crate::linalg::bf16_gemm::native() {
        return bf16_forward(&x, &w, bias, &g, layout, out, format);
    }
    // SAFETY: `w` is contiguous of dtype S.
    let wp = compute::pack_weight::<S>(&g, layout, unsafe { dense::<S>(&w) });
    let bias = bias_values::<S>(bias)?;
    let y = Tensor::empty_deferred(out, x.dtype(), Device::Cpu, format)?;
    // SAFETY: `x` is dense in `format` with the geometry's input (or, transposed, output) sizes,
    // `y` was just allocated dense in `format` with the other sizes and is written whole.
    unsafe {
        let dst = Overwrite::new(&y);
        let src = x.data_ptr().cast::<S>();
        if p.transposed {
            compute::backward_input::<S>(&g, layout, src, &wp, bias.as_deref(), dst.ptr());
        } else {
            compute::forward::<S>(&g, layout, src, &wp, bias.as_deref(), dst.ptr());
        }
        dst.finish();
    }
    Ok(y)
}

/// [`float_forward`] of a bf16 convolution on the native bf16 kernel ([`bf16_native`]); `x` is
/// dense in `format`, `w` contiguous.
fn bf16_forward(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    g: &Geom,
    layout: Layout,
    out: &[i64],
    format: MemoryFormat,
) -> Result<Tensor> {
    // SAFETY: `w` is contiguous bf16 (`Bf16Block` is a transparent bf16).
    let wp = compute::pack_weight::<Bf16Block>(g, layout, unsafe { dense::<Bf16Block>(w) });
    let bias = bias_values::<Bf16Block>(bias)?;
    let y = Tensor::empty_deferred(out, DType::BF16, Device::Cpu, format)?;
    // SAFETY: `x` is dense bf16 in `format` with the geometry's input sizes, `y` was just
    // allocated dense in `format` with its output sizes and is written whole; the caller checked
    // `native`.
    unsafe {
        let dst = Overwrite::new(&y);
        bf16_native::forward(g, layout, x.data_ptr().cast(), &wp, bias.as_deref(), dst.ptr())?;
        dst.finish();
    }
    Ok(y)
}

/// A convolution after the argument checks shared with PyTorch's `_convolution`: its operands
/// viewed as 2-d ones and the memory format of the computation, or the whole output when the
/// input is empty.
enum ForwardPlan {
    Done(Tensor),
    Run { x: Tensor, w: Tensor, p2: Params, out4: Vec<i64>, format: MemoryFormat, dim: usize },
}

/// The checks and the plan every backend's `convolution` shares.
#[allow(clippy::too_many_arguments)]
fn plan_forward(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
) -> Result<ForwardPlan> {
    let p = Params::new(weight.dim(), stride, padding, dilation, transposed, output_padding, groups)?;
    check_shape(input, &weight.sizes(), bias, &p)?;
    let out = output_sizes(&input.sizes(), &weight.sizes(), &p)?;
    let kernel = if transposed { "slow_conv_transpose2d_out_cpu" } else { "slow_conv2d_cpu" };
    check_dtypes(input, weight, bias, kernel)?;
    let dim = weight.dim() - 2;
    if dim > 2 {
        return Err(unsupported_dim());
    }
    // No input: the output is the bias broadcast (PyTorch's `Empty` backend).
    if input.sizes()[0] == 0 || input.sizes()[1] == 0 {
        let y = Tensor::empty(&out, input.dtype(), input.device(), MemoryFormat::Contiguous)?;
        if let (Some(b), false) = (bias, y.numel() == 0) {
            let mut shape = vec![1i64; out.len()];
            shape[1] = out[1];
            let y = ops::expand::call(&ops::view::call(b, &shape)?, &out, false)
                .and_then(|e| ops::contiguous::call(&e, MemoryFormat::Contiguous))?;
            return Ok(ForwardPlan::Done(y));
        }
        return Ok(ForwardPlan::Done(y));
    }
    let (x, w, p2, out4) = if dim == 1 {
        let x = view4d(&ops::contiguous::call(input, MemoryFormat::Contiguous)?)?;
        (x, view4d(weight)?, p.as_2d(), vec![out[0], out[1], 1, out[2]])
    } else {
        (input.clone(), weight.clone(), p.clone(), out.clone())
    };
    let format = backend_format(&x, &w);
    Ok(ForwardPlan::Run { x, w, p2, out4, format, dim })
}

/// A 2-d result of a 1-d convolution viewed back as 1-d.
fn finish_forward(y: Tensor, dim: usize) -> Result<Tensor> {
    if dim == 1 {
        view3d(&y)
    } else {
        Ok(y)
    }
}

impl ConvolutionCpu for Cpu {
    fn convolution(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        transposed: bool,
        output_padding: &[i64],
        groups: i64,
    ) -> Result<Tensor> {
        let (x, w, p2, out4, format, dim) =
            match plan_forward(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)? {
                ForwardPlan::Done(y) => return Ok(y),
                ForwardPlan::Run { x, w, p2, out4, format, dim } => (x, w, p2, out4, format, dim),
            };
        let y = if input.dtype().is_floating_point() {
            float_dispatch!(input.dtype(), float_forward(&x, &w, bias, &p2, &out4, format))?
        } else {
            let g = if transposed {
                geom(&out4, &w.sizes(), &x.sizes(), &p2)
            } else {
                geom(&x.sizes(), &w.sizes(), &out4, &p2)
            };
            direct::convolution_int(&g, &x, &w, bias, transposed, &out4, format)?
        };
        finish_forward(y, dim)
    }
}

impl ConvolutionMeta for Meta {
    fn convolution(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        transposed: bool,
        output_padding: &[i64],
        groups: i64,
    ) -> Result<Tensor> {
        match plan_forward(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)? {
            ForwardPlan::Done(y) => Ok(y),
            ForwardPlan::Run { out4, format, dim, .. } => {
                finish_forward(Tensor::empty(&out4, input.dtype(), Device::Meta, format)?, dim)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// convolution_backward
// ---------------------------------------------------------------------------------------------

/// A new tensor for the gradient of `t`, dense in `format`. With `canonical` (the input
/// gradient, and the weight gradient where PyTorch uses oneDNN) it has `format`'s canonical
/// strides; otherwise `t`'s own strides when `t` already is dense in `format` (they differ from
/// the canonical ones only on size-1 dimensions), as PyTorch's native backends return it.
fn gradient_like(t: &Tensor, format: MemoryFormat, canonical: bool) -> Result<Tensor> {
    if !canonical && t.is_contiguous_as(format) {
        Tensor::empty_strided_deferred(&t.sizes(), &t.strides(), t.dtype(), Device::Cpu)
    } else {
        Tensor::empty_deferred(&t.sizes(), t.dtype(), Device::Cpu, format)
    }
}

/// The input and weight gradients of a floating 2-d convolution (dense 4-d operands).
/// `xin` is the convolution's input and `yout` its output gradient in the regular (not
/// transposed) sense: for a transposed convolution they are its output gradient and its input.
fn float_backward<S: FloatElem>(
    grad_output: &Tensor,
    input: &Tensor,
    weight: &Tensor,
    p: &Params,
    mask: [bool; 2],
    format: MemoryFormat,
    mkldnn: bool,
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let layout = layout_of(format);
    let go = ops::contiguous::call(grad_output, format)?;
    let x = ops::contiguous::call(input, format)?;
    let w = ops::contiguous::call(weight, MemoryFormat::Contiguous)?;
    let (xin, yout) = if p.transposed { (&go, &x) } else { (&x, &go) };
    let g = geom(&xin.sizes(), &w.sizes(), &yout.sizes(), p);
    // SAFETY: `w` is contiguous of dtype S.
    let wp = compute::pack_weight::<S>(&g, layout, unsafe { dense::<S>(&w) });
    let grad_input = if mask[0] {
        let gi = gradient_like(input, format, true)?;
        // SAFETY: operands are dense in `format` with the geometry's sizes; `gi` is fresh and
        // written whole.
        unsafe {
            let dst = Overwrite::new(&gi);
            if p.transposed {
                compute::forward::<S>(&g, layout, xin.data_ptr().cast(), &wp, None, dst.ptr());
            } else {
                compute::backward_input::<S>(&g, layout, yout.data_ptr().cast(), &wp, None, dst.ptr());
            }
            dst.finish();
        }
        Some(gi)
    } else {
        None
    };
    let grad_weight = if mask[1] {
        // SAFETY: as above.
        let packed =
            unsafe { compute::backward_weight::<S>(&g, layout, xin.data_ptr().cast(), yout.data_ptr().cast()) };
        let gw = gradient_like(weight, format, mkldnn)?;
        // SAFETY: `gw` is fresh, dense in `format`, and written whole.
        unsafe {
            let dst = Overwrite::new(&gw);
            let out = std::slice::from_raw_parts_mut(dst.ptr::<S>(), gw.numel() as usize);
            compute::unpack_weight::<S>(&g, layout, &packed, out);
            dst.finish();
        }
        Some(gw)
    } else {
        None
    };
    Ok((grad_input, grad_weight))
}

/// A convolution's backward after the checks every backend shares: the bias gradient (a sum,
/// computed by any backend's `sum`), the operands viewed as 2-d ones and the memory format of
/// the computation.
struct BackwardPlan {
    grad_bias: Tensor,
    x: Tensor,
    go: Tensor,
    w: Tensor,
    p2: Params,
    format: MemoryFormat,
    mkldnn: bool,
    empty: bool,
    mask: [bool; 3],
    dim: usize,
}

#[allow(clippy::too_many_arguments)]
fn plan_backward(
    grad_output: &Tensor,
    input: &Tensor,
    weight: &Tensor,
    bias_sizes: Option<&[i64]>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
    output_mask: &[bool],
) -> Result<BackwardPlan> {
    let p = Params::new(weight.dim(), stride, padding, dilation, transposed, output_padding, groups)?;
    check_shape(input, &weight.sizes(), None, &p)?;
    if input.dim() != grad_output.dim() {
        return Err(Error::shape(format!(
            "Expected input and grad_output to have the same number of dimensions, but got: {} and {}",
            input.dim(),
            grad_output.dim()
        )));
    }
    if !transposed && p.output_padding.iter().any(|&x| x != 0) {
        return Err(Error::value(format!(
            "output_padding is not supported for non-transposed convolutions; got: {}",
            p.output_padding.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")
        )));
    }
    let mask: [bool; 3] = match output_mask {
        [a, b, c] => [*a, *b, *c],
        _ => return Err(Error::value(format!("output_mask must have 3 entries, got {}", output_mask.len()))),
    };
    let out = output_sizes(&input.sizes(), &weight.sizes(), &p)?;
    if grad_output.sizes()[..] != out[..] {
        return Err(Error::shape(format!(
            "Expected grad_output of size {} for this convolution, but got grad_output of size {}",
            list(&out),
            list(&grad_output.sizes())
        )));
    }
    check_dtypes(input, weight, None, "slow_conv2d_backward_cpu")?;
    if grad_output.dtype() != input.dtype() {
        return Err(Error::dtype(format!(
            "expected scalar type {} but found {}",
            crate::iter::scalar_type_name(input.dtype()),
            crate::iter::scalar_type_name(grad_output.dtype())
        )));
    }
    let dim = weight.dim() - 2;
    if dim > 2 {
        return Err(unsupported_dim());
    }
    let grad_bias = if mask[2] {
        let dims: Vec<i64> = std::iter::once(0).chain(2..grad_output.dim() as i64).collect();
        let gb = ops::sum_dim_intlist::call(grad_output, Some(&dims), false, None)?;
        match bias_sizes {
            Some(s) if s != &gb.sizes()[..] => ops::view::call(&gb, s)?,
            _ => gb,
        }
    } else {
        not_requested(input)?
    };
    let (x, go, w, p2) = if dim == 1 {
        let x = view4d(&ops::contiguous::call(input, MemoryFormat::Contiguous)?)?;
        (x, view4d(grad_output)?, view4d(weight)?, p.as_2d())
    } else {
        (input.clone(), grad_output.clone(), weight.clone(), p.clone())
    };
    let format = backend_format(&x, &w);
    let mkldnn = uses_mkldnn(input, weight, &p);
    let empty = input.sizes()[0] == 0 || input.sizes()[1] == 0;
    Ok(BackwardPlan { grad_bias, x, go, w, p2, format, mkldnn, empty, mask, dim })
}

/// The three gradients from a plan and the input and weight gradients a backend made.
fn finish_backward(
    plan: BackwardPlan,
    input: &Tensor,
    gi: Option<Tensor>,
    gw: Option<Tensor>,
) -> Result<(Tensor, Tensor, Tensor)> {
    let finish = |t: Option<Tensor>| -> Result<Tensor> {
        match t {
            Some(t) if plan.dim == 1 => view3d(&t),
            Some(t) => Ok(t),
            None => not_requested(input),
        }
    };
    Ok((finish(gi)?, finish(gw)?, plan.grad_bias))
}

/// Uncomputed input and weight gradients of the requested ones: what an empty input gets on
/// every backend, and what the Meta kernel returns.
fn unwritten_gradients(plan: &BackwardPlan) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let make = |t: &Tensor, f: MemoryFormat| -> Result<Option<Tensor>> {
        Ok(Some(Tensor::empty(&t.sizes(), t.dtype(), t.device(), f)?))
    };
    let f = if plan.empty { MemoryFormat::Contiguous } else { plan.format };
    Ok((if plan.mask[0] { make(&plan.x, f)? } else { None }, if plan.mask[1] { make(&plan.w, f)? } else { None }))
}

impl ConvolutionBackwardCpu for Cpu {
    fn convolution_backward(
        grad_output: &Tensor,
        input: &Tensor,
        weight: &Tensor,
        bias_sizes: Option<&[i64]>,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        transposed: bool,
        output_padding: &[i64],
        groups: i64,
        output_mask: &[bool],
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let plan = plan_backward(
            grad_output,
            input,
            weight,
            bias_sizes,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            output_mask,
        )?;
        let (gi, gw) = if plan.empty {
            unwritten_gradients(&plan)?
        } else if input.dtype().is_floating_point() {
            let BackwardPlan { go, x, w, p2, mask, format, mkldnn, .. } = &plan;
            float_dispatch!(input.dtype(), float_backward(go, x, w, p2, [mask[0], mask[1]], *format, *mkldnn))?
        } else {
            return Err(Error::dtype(format!(
                "\"slow_conv2d_backward_cpu\" not implemented for '{}'",
                crate::iter::scalar_type_name(input.dtype())
            )));
        };
        finish_backward(plan, input, gi, gw)
    }
}

impl ConvolutionBackwardMeta for Meta {
    fn convolution_backward(
        grad_output: &Tensor,
        input: &Tensor,
        weight: &Tensor,
        bias_sizes: Option<&[i64]>,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        transposed: bool,
        output_padding: &[i64],
        groups: i64,
        output_mask: &[bool],
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let plan = plan_backward(
            grad_output,
            input,
            weight,
            bias_sizes,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            output_mask,
        )?;
        let (gi, gw) = unwritten_gradients(&plan)?;
        finish_backward(plan, input, gi, gw)
    }
}

// ---------------------------------------------------------------------------------------------
// composites
// ---------------------------------------------------------------------------------------------

/// `conv1d` / `conv2d`: the bias dtype check, `batchify`, `convolution`, and the batch
/// dimension removed again for an unbatched input.
#[allow(clippy::too_many_arguments)]
fn conv_nd(
    name: &str,
    spatial: usize,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    check_bias_dtype(input, bias)?;
    let (x, batched) = batchify(input, spatial, name)?;
    let y = ops::convolution::call(&x, weight, bias, stride, padding, dilation, false, &vec![0; spatial], groups)?;
    unbatch(y, batched)
}

/// `_convolution_mode`: `padding='valid'` is no padding; `padding='same'` pads so that the
/// output has the input's size (stride 1 only). An odd total padding puts the extra element on
/// the right, which PyTorch does by padding a copy of the input; here the convolution pads the
/// larger amount on both sides and the extra leading outputs are sliced off.
#[allow(clippy::too_many_arguments)]
fn convolution_mode(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &str,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    match padding {
        "valid" => ops::convolution::call(input, weight, bias, stride, &[0], dilation, false, &[0], groups),
        "same" => {
            let k = weight.dim();
            if k <= 2 {
                return Err(Error::value("weight should have at least three dimensions"));
            }
            if groups <= 0 {
                return Err(Error::value("non-positive groups is not supported"));
            }
            let dim = k - 2;
            if k != input.dim() {
                return Err(Error::shape(format!(
                    "Expected {k}-dimensional input for {k}-dimensional weight{}, but got {}-dimensional input of size \
                     {} instead",
                    list(&weight.sizes()),
                    input.dim(),
                    list(&input.sizes())
                )));
            }
            for (v, name) in [(stride, "stride"), (dilation, "dilation")] {
                if v.len() != dim && v.len() != 1 {
                    return Err(Error::value(format!("{name} cannot broadcast to {dim} dimensions")));
                }
            }
            if stride.iter().any(|&s| s != 1) {
                return Err(Error::value("padding='same' is not supported for strided convolutions"));
            }
            let at = |v: &[i64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
            let (mut left, mut right) = (Vec::new(), Vec::new());
            for i in 0..dim {
                let total = at(dilation, i) * (weight.sizes()[i + 2] - 1);
                left.push(total / 2);
                right.push(total - total / 2);
            }
            let zeros = vec![0; dim];
            let full = ops::convolution::call(input, weight, bias, stride, &right, dilation, false, &zeros, groups)?;
            if left == right {
                return Ok(full);
            }
            let mut y = full.clone();
            for i in 0..dim {
                let extra = right[i] - left[i];
                if extra > 0 {
                    let d = (i + 2) as i64;
                    y = ops::slice::call(&y, d, Some(extra), Some(extra + input.sizes()[i + 2]), 1)?;
                }
            }
            // A fresh tensor, as PyTorch's (which convolves a padded copy of the input).
            ops::contiguous::call(&y, full.suggest_memory_format())
        }
        other => Err(Error::value(format!("Invalid padding string: '{other}'"))),
    }
}

impl Conv1dCompositeImplicit for Composite {
    fn conv1d(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        groups: i64,
    ) -> Result<Tensor> {
        conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)
    }
}

impl Conv2dCompositeImplicit for Composite {
    fn conv2d(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        groups: i64,
    ) -> Result<Tensor> {
        conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)
    }
}

/// `conv1d.padding` / `conv2d.padding`.
#[allow(clippy::too_many_arguments)]
fn conv_padding_nd(
    name: &str,
    spatial: usize,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &str,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    let (x, batched) = batchify(input, spatial, name)?;
    let y = convolution_mode(&x, weight, bias, stride, padding, dilation, groups)?;
    unbatch(y, batched)
}

impl Conv1dPaddingCompositeImplicit for Composite {
    fn conv1d_padding(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &str,
        dilation: &[i64],
        groups: i64,
    ) -> Result<Tensor> {
        conv_padding_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)
    }
}

impl Conv2dPaddingCompositeImplicit for Composite {
    fn conv2d_padding(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &str,
        dilation: &[i64],
        groups: i64,
    ) -> Result<Tensor> {
        conv_padding_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)
    }
}

/// `conv_transpose1d`/`conv_transpose2d`: `convolution(transposed=true)` on a batch (an unbatched
/// input gets a batch of one), which checks the weight and parameters.
#[allow(clippy::too_many_arguments)]
fn conv_transpose_nd(
    name: &str,
    spatial: usize,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    let (x, batched) = batchify(input, spatial, name)?;
    let y = ops::convolution::call(&x, weight, bias, stride, padding, dilation, true, output_padding, groups)?;
    unbatch(y, batched)
}

impl ConvTranspose1dCompositeImplicit for Composite {
    fn conv_transpose1d(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        output_padding: &[i64],
        groups: i64,
        dilation: &[i64],
    ) -> Result<Tensor> {
        conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation)
    }
}

impl ConvTranspose2dCompositeImplicit for Composite {
    fn conv_transpose2d(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        output_padding: &[i64],
        groups: i64,
        dilation: &[i64],
    ) -> Result<Tensor> {
        conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation)
    }
}
