//! Formula helpers of the convolution and pooling family.
//!
//! Convolution's gradients come from `convolution_backward`, and that operator is differentiable
//! again in terms of `convolution` and `convolution_backward` themselves (both linear in each
//! argument: the input gradient is the adjoint of the convolution in its input, the weight
//! gradient its adjoint in the weight), so gradients of any order are available. Max pooling's
//! double backward gathers the gradient at the pooling indices, through a custom function whose
//! backward is the pooling backward (a scatter), so that it too is differentiable again.

use oxten_runtime::autograd::{apply_function, Function, FunctionCtx};
use oxten_runtime::{ops, DType, Error, Result, Tensor};

/// The gradients of `convolution`'s input, weight and bias that `mask` asks for.
#[allow(clippy::too_many_arguments)]
pub fn convolution_backward_grads(
    grad: &Tensor,
    input: &Tensor,
    weight: &Tensor,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
    mask: [bool; 3],
) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
    let bias_sizes = [grad.sizes()[1]];
    let (gi, gw, gb) = ops::convolution_backward::call(
        grad,
        input,
        weight,
        mask[2].then_some(&bias_sizes[..]),
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        &mask,
    )?;
    Ok((mask[0].then_some(gi), mask[1].then_some(gw), mask[2].then_some(gb)))
}

/// The gradients of `convolution_backward`'s `grad_output`, `input` and `weight` (`mask`), given
/// the gradients `grads` of its three outputs (`output_mask` says which it computed).
///
/// With `gI = Aᵀ(gO; W)`, `gW = Bᵀ(gO; I)` and `gb = Σ gO` (`A`, `B` the convolution as a linear
/// map of its input and of its weight) and incoming `ggI`, `ggW`, `ggb`:
/// - d/d gO = `conv(ggI, W) + conv(I, ggW) + ggb` (broadcast over the output),
/// - d/d W = the weight gradient of `conv(ggI, W)` for the output gradient `gO`,
/// - d/d I = the input gradient of `conv(I, ggW)` for the output gradient `gO`.
#[allow(clippy::too_many_arguments)]
pub fn convolution_double_backward(
    grads: &[Tensor],
    grad_output: &Tensor,
    input: &Tensor,
    weight: &Tensor,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
    output_mask: &[bool],
    mask: [bool; 3],
) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
    let given = |i: usize| output_mask.get(i).copied().unwrap_or(false).then(|| &grads[i]);
    let (ggi, ggw, ggb) = (given(0), given(1), given(2));
    let conv = |x: &Tensor, w: &Tensor| {
        ops::convolution::call(x, w, None, stride, padding, dilation, transposed, output_padding, groups)
    };
    let conv_backward = |x: &Tensor, w: &Tensor, m: [bool; 3]| {
        ops::convolution_backward::call(
            grad_output,
            x,
            w,
            None,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            &m,
        )
    };
    let g_grad_output = if mask[0] {
        let mut acc: Option<Tensor> = None;
        let mut add = |t: Tensor| -> Result<()> {
            acc = Some(match acc.take() {
                Some(a) => ops::add::call(&a, &t, 1.into())?,
                None => t,
            });
            Ok(())
        };
        if let Some(ggi) = ggi {
            add(conv(ggi, weight)?)?;
        }
        if let Some(ggw) = ggw {
            add(conv(input, ggw)?)?;
        }
        if let Some(ggb) = ggb {
            let mut shape = vec![1i64; grad_output.dim()];
            shape[1] = grad_output.sizes()[1];
            let b = ops::view::call(ggb, &shape)?;
            add(ops::expand::call(&b, &grad_output.sizes(), false)?)?;
        }
        Some(match acc {
            Some(a) => a,
            None => super::zeros_like(grad_output)?,
        })
    } else {
        None
    };
    let g_input = if mask[1] {
        Some(match ggw {
            Some(ggw) => conv_backward(input, ggw, [true, false, false])?.0,
            None => super::zeros_like(input)?,
        })
    } else {
        None
    };
    let g_weight = if mask[2] {
        Some(match ggi {
            Some(ggi) => conv_backward(ggi, weight, [false, true, false])?.1,
            None => super::zeros_like(weight)?,
        })
    } else {
        None
    };
    Ok((g_grad_output, g_input, g_weight))
}

/// The pooling arguments a max pooling double backward needs to scatter back.
#[derive(Clone)]
struct MaxPoolArgs {
    kernel_size: Vec<i64>,
    stride: Vec<i64>,
    padding: Vec<i64>,
    dilation: Vec<i64>,
    ceil_mode: bool,
}

/// `grad.flatten(-2).gather(-1, indices.flatten(-2)).view_as(indices)`: the gradient at each
/// pooling output's argmax; its backward is `max_pool2d_with_indices_backward`.
struct MaxPoolGather {
    args: MaxPoolArgs,
    indices: Tensor,
    input: Tensor,
}

impl Function for MaxPoolGather {
    fn name(&self) -> String {
        "MaxPoolDoubleBackward".into()
    }

    fn forward(&self, _ctx: &mut FunctionCtx, x: &[Tensor]) -> Result<Vec<Tensor>> {
        let grad = &x[0];
        let idx = &self.indices;
        let sizes = grad.sizes();
        let nd = sizes.len();
        if nd < 2 {
            return Err(Error::shape("max pooling double backward: expected a tensor of at least 2 dims"));
        }
        let plane = (sizes[nd - 2] * sizes[nd - 1]) as usize;
        let out_plane = (idx.sizes()[nd - 2] * idx.sizes()[nd - 1]) as usize;
        let g = ops::contiguous::call(grad, oxten_runtime::MemoryFormat::Contiguous)?.to_f64_vec()?;
        let i = ops::contiguous::call(idx, oxten_runtime::MemoryFormat::Contiguous)?.to_vec::<i64>()?;
        let mut out = Vec::with_capacity(i.len());
        for (q, &k) in i.iter().enumerate() {
            let p = q / out_plane.max(1);
            if k < 0 || k as usize >= plane {
                return Err(Error::index(format!("max pooling double backward: index {k} out of range")));
            }
            out.push(g[p * plane + k as usize]);
        }
        let t = Tensor::from_vec(out, &idx.sizes())?;
        Ok(vec![super::cast_to(&t, grad.dtype())?])
    }

    fn backward(&self, _ctx: &FunctionCtx, grads: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = &grads[0] else { return Ok(vec![None]) };
        let a = &self.args;
        let gi = ops::max_pool2d_with_indices_backward::call(
            g,
            &self.input,
            &a.kernel_size,
            &a.stride,
            &a.padding,
            &a.dilation,
            a.ceil_mode,
            &self.indices,
        )?;
        Ok(vec![Some(gi)])
    }
}

/// The gradient of `max_pool2d_with_indices_backward`'s `grad_output`: `grad` (shaped like the
/// pooling input) gathered at `indices`.
#[allow(clippy::too_many_arguments)]
pub fn max_pool2d_double_backward(
    grad: &Tensor,
    indices: &Tensor,
    input: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
) -> Result<Tensor> {
    if indices.dtype() != DType::I64 {
        return Err(Error::dtype("max pooling double backward: indices must be int64"));
    }
    let args = MaxPoolArgs {
        kernel_size: kernel_size.to_vec(),
        stride: stride.to_vec(),
        padding: padding.to_vec(),
        dilation: dilation.to_vec(),
        ceil_mode,
    };
    let f = MaxPoolGather { args, indices: indices.detach(), input: input.detach() };
    Ok(apply_function(f, std::slice::from_ref(grad))?.remove(0))
}

/// The gradient of `_adaptive_avg_pool2d_backward`'s `grad_output` (of sizes
/// `grad_output_sizes`): `grad` pooled again to the output size.
pub fn adaptive_avg_pool2d_double_backward(grad: &Tensor, grad_output_sizes: &[i64]) -> Result<Tensor> {
    let n = grad_output_sizes.len();
    ops::_adaptive_avg_pool2d::call(grad, &grad_output_sizes[n - 2..])
}
