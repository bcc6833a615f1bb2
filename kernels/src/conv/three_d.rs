//! `conv3d`, `conv3d.padding` and `conv_transpose3d` as sums of 2-D convolutions over the
//! kernel's depth, with PyTorch's checks and messages for the depth (the 2-D operators check
//! height and width).
//!
//! Output depth `o` of a convolution reads input depths `o·stride + kd·dilation - pad`; so for
//! each kernel depth `kd` the strided depth slices of the padded input, stacked into the batch,
//! go through `conv2d` with the weight's slice `kd`, and the results add up. A transposed
//! convolution sends input depth `i` to output depth `i·stride + kd·dilation - pad`: each
//! `conv_transpose2d` result is scattered `stride` apart from `kd·dilation` into the uncropped
//! output, which is then cropped by the padding. CompositeImplicitAutograd: the gradients are
//! those of the 2-D operators.

use super::params::{batchify, check_dtypes, list, unbatch};
use crate::generated::decls::{
    Conv3dCompositeImplicit, Conv3dPaddingCompositeImplicit, ConvTranspose3dCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// One value per spatial dimension from a list of one or three (PyTorch's `expand_param_if_needed`).
fn three(v: &[i64], name: &str) -> Result<[i64; 3]> {
    match v {
        [x] => Ok([*x; 3]),
        [a, b, c] => Ok([*a, *b, *c]),
        _ => Err(Error::runtime(format!(
            "expected {name} to be a single integer value or a list of 3 values to match the convolution dimensions, \
             but got {name}={}",
            list(v)
        ))),
    }
}

/// The checks both directions share: the weight's rank, positive groups, strides and dilations,
/// non-negative padding, and the bias's shape.
#[allow(clippy::too_many_arguments)]
fn check_common(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    out_channels: i64,
    stride: [i64; 3],
    padding: [i64; 3],
    dilation: [i64; 3],
    groups: i64,
) -> Result<()> {
    if weight.dim() != x.dim() {
        return Err(Error::runtime(format!(
            "Expected {k}-dimensional input for {k}-dimensional weight {}, but got {}-dimensional input of size {} \
             instead",
            list(&weight.sizes()),
            x.dim(),
            list(&x.sizes()),
            k = weight.dim()
        )));
    }
    check_dtypes(x, weight, bias, "conv")?;
    if groups <= 0 {
        return Err(Error::runtime("non-positive groups is not supported"));
    }
    if stride.iter().any(|&s| s <= 0) {
        return Err(Error::runtime("non-positive stride is not supported"));
    }
    if padding.iter().any(|&p| p < 0) {
        return Err(Error::runtime("negative padding is not supported"));
    }
    if dilation.iter().any(|&d| d <= 0) {
        return Err(Error::runtime("dilation should be greater than zero"));
    }
    if let Some(b) = bias {
        if b.dim() != 1 || b.sizes()[0] != out_channels {
            return Err(Error::runtime(format!(
                "Given weight of size {}, expected bias to be 1-dimensional with {out_channels} elements, but got bias \
                 of size {} instead",
                list(&weight.sizes()),
                list(&b.sizes())
            )));
        }
    }
    Ok(())
}

/// f16/bf16 convolutions run in f32 and are rounded once, so that the per-depth partial sums
/// are not each rounded to the low precision.
fn widened(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    run: impl FnOnce(&Tensor, &Tensor, Option<&Tensor>) -> Result<Tensor>,
) -> Result<Tensor> {
    let dtype = x.dtype();
    if !matches!(dtype, DType::F16 | DType::BF16) || weight.dtype() != dtype || bias.is_some_and(|b| b.dtype() != dtype)
    {
        return run(x, weight, bias);
    }
    let f32 = |t: &Tensor| ops::to_dtype::call(t, DType::F32, false, false, None);
    let b = bias.map(f32).transpose()?;
    let y = run(&f32(x)?, &f32(weight)?, b.as_ref())?;
    ops::to_dtype::call(&y, dtype, false, false, None)
}

/// Adds the bias along dim 1 of a 5-D result.
fn add_bias(y: Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    match bias {
        Some(b) => ops::add::call(&y, &ops::reshape::call(b, &[1, -1, 1, 1, 1])?, Scalar::Int(1)),
        None => Ok(y),
    }
}

/// Swaps dims 1 and 2 of a 5-D tensor (channels and depth) and makes it contiguous.
fn swap_channels_depth(t: &Tensor) -> Result<Tensor> {
    ops::contiguous::call(&ops::permute::call(t, &[0, 2, 1, 3, 4])?, oxten_runtime::MemoryFormat::Contiguous)
}

/// `conv3d` on a batch.
#[allow(clippy::too_many_arguments)]
fn conv3d_batched(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: [i64; 3],
    padding: [i64; 3],
    dilation: [i64; 3],
    groups: i64,
) -> Result<Tensor> {
    let out_channels = weight.sizes().first().copied().unwrap_or(0);
    check_common(x, weight, bias, out_channels, stride, padding, dilation, groups)?;
    let (xs, ws) = (x.sizes(), weight.sizes());
    if xs[1] != ws[1] * groups {
        return Err(Error::runtime(format!(
            "Given groups={groups}, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
            list(&ws),
            list(&xs),
            ws[1] * groups,
            xs[1]
        )));
    }
    // PyTorch's "kernel size can't be greater than actual input size" over the three dims.
    // In i128: huge paddings or dilations give an error, not a wrapped size.
    let padded: Vec<i128> = (0..3).map(|i| xs[i + 2] as i128 + 2 * padding[i] as i128).collect();
    let kernel: Vec<i128> = (0..3).map(|i| dilation[i] as i128 * (ws[i + 2] as i128 - 1) + 1).collect();
    if (0..3).any(|i| padded[i] < kernel[i]) {
        return Err(Error::runtime(format!(
            "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than \
             actual input size",
            padded.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" x "),
            kernel.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" x ")
        )));
    }
    let (n, kd_len) = (xs[0], ws[2]);
    let out_depth = i64::try_from((padded[0] - kernel[0]) / stride[0] as i128 + 1)
        .map_err(|_| Error::runtime("conv3d: the output depth does not fit in int64"))?;
    let xp = if padding[0] > 0 {
        ops::constant_pad_nd::call(x, &[0, 0, 0, 0, padding[0], padding[0]], Scalar::Int(0))?
    } else {
        x.clone()
    };
    let mut acc: Option<Tensor> = None;
    for kd in 0..kd_len {
        let start = kd * dilation[0];
        let slices = ops::slice::call(&xp, 2, Some(start), Some(start + (out_depth - 1) * stride[0] + 1), stride[0])?;
        let slices =
            ops::reshape::call(&ops::permute::call(&slices, &[0, 2, 1, 3, 4])?, &[n * out_depth, xs[1], xs[3], xs[4]])?;
        let y = ops::conv2d::call(
            &slices,
            &ops::select::call(weight, 2, kd)?,
            None,
            &stride[1..],
            &padding[1..],
            &dilation[1..],
            groups,
        )?;
        acc = Some(match acc {
            Some(a) => ops::add::call(&a, &y, Scalar::Int(1))?,
            None => y,
        });
    }
    let acc = acc.ok_or_else(|| Error::runtime("conv3d: the weight has an empty kernel depth"))?;
    let s = acc.sizes();
    let y = ops::reshape::call(&acc, &[n, out_depth, s[1], s[2], s[3]])?;
    add_bias(swap_channels_depth(&y)?, bias)
}

impl Conv3dCompositeImplicit for Composite {
    fn conv3d(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        groups: i64,
    ) -> Result<Tensor> {
        let (x, batched) = batchify(input, 3, "conv3d")?;
        let (s, p, d) = (three(stride, "stride")?, three(padding, "padding")?, three(dilation, "dilation")?);
        let y = widened(&x, weight, bias, |x, w, b| conv3d_batched(x, w, b, s, p, d, groups))?;
        unbatch(y, batched)
    }
}

impl Conv3dPaddingCompositeImplicit for Composite {
    fn conv3d_padding(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &str,
        dilation: &[i64],
        groups: i64,
    ) -> Result<Tensor> {
        let (x, batched) = batchify(input, 3, "conv3d")?;
        let (s, d) = (three(stride, "stride")?, three(dilation, "dilation")?);
        let y = match padding {
            "valid" => widened(&x, weight, bias, |x, w, b| conv3d_batched(x, w, b, s, [0; 3], d, groups))?,
            "same" => {
                if weight.dim() != 5 {
                    return Err(Error::runtime(format!(
                        "Expected 5-dimensional input for {k}-dimensional weight {}, but got 5-dimensional input of size \
                         {} instead",
                        list(&weight.sizes()),
                        list(&x.sizes()),
                        k = weight.dim()
                    )));
                }
                if s.iter().any(|&v| v != 1) {
                    return Err(Error::value("padding='same' is not supported for strided convolutions"));
                }
                // An odd total padding puts the extra element on the right, as PyTorch (which
                // pads a copy of the input by the difference).
                let total: Vec<i64> = (0..3).map(|i| d[i] * (weight.sizes()[i + 2] - 1)).collect();
                let left = [total[0] / 2, total[1] / 2, total[2] / 2];
                let extra: Vec<i64> = (0..3).map(|i| total[i] - 2 * left[i]).collect();
                let x = if extra.iter().any(|&e| e > 0) {
                    ops::constant_pad_nd::call(&x, &[0, extra[2], 0, extra[1], 0, extra[0]], Scalar::Int(0))?
                } else {
                    x
                };
                widened(&x, weight, bias, |x, w, b| conv3d_batched(x, w, b, s, left, d, groups))?
            }
            other => return Err(Error::value(format!("Invalid padding string: '{other}'"))),
        };
        unbatch(y, batched)
    }
}

impl ConvTranspose3dCompositeImplicit for Composite {
    fn conv_transpose3d(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        output_padding: &[i64],
        groups: i64,
        dilation: &[i64],
    ) -> Result<Tensor> {
        let (x, batched) = batchify(input, 3, "conv_transpose3d")?;
        let (s, p, d) = (three(stride, "stride")?, three(padding, "padding")?, three(dilation, "dilation")?);
        let op = three(output_padding, "output_padding")?;
        let y = widened(&x, weight, bias, |x, w, b| conv_transpose3d_batched(x, w, b, s, p, op, groups, d))?;
        unbatch(y, batched)
    }
}

/// `conv_transpose3d` on a batch.
#[allow(clippy::too_many_arguments)]
fn conv_transpose3d_batched(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    s: [i64; 3],
    p: [i64; 3],
    op: [i64; 3],
    groups: i64,
    d: [i64; 3],
) -> Result<Tensor> {
    let ws = weight.sizes();
    let out_channels = if ws.len() > 1 { ws[1] * groups } else { 0 };
    check_common(x, weight, bias, out_channels, s, p, d, groups)?;
    let xs = x.sizes();
    if xs[1] != ws[0] {
        return Err(Error::runtime(format!(
            "Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
            list(&ws),
            list(&xs),
            ws[0],
            xs[1]
        )));
    }
    if (0..3).any(|i| op[i] >= s[i] && op[i] >= d[i]) {
        return Err(Error::runtime(format!(
            "output padding must be smaller than either stride or dilation, but got output_padding_depth: {} \
                 output_padding_height: {} output_padding_width: {} stride_depth: {} stride_height: {} stride_width: \
                 {} dilation_depth: {} dilation_height: {} dilation_width: {}",
            op[0], op[1], op[2], s[0], s[1], s[2], d[0], d[1], d[2]
        )));
    }
    let (n, depth, kd_len) = (xs[0], xs[2], ws[2]);
    // The uncropped depth, and the cropped one PyTorch returns.
    let full = (depth as i128 - 1) * s[0] as i128 + d[0] as i128 * (kd_len as i128 - 1) + 1 + op[0] as i128;
    let too_big = || Error::runtime("conv_transpose3d: the output depth does not fit in int64");
    let out_depth = i64::try_from(full - 2 * p[0] as i128).map_err(|_| too_big())?;
    let full = i64::try_from(full).map_err(|_| too_big())?;
    if out_depth < 1 {
        return Err(Error::runtime(format!(
            "Given input size per channel: ({depth} x {} x {}). Calculated output size per channel: ({out_depth} x \
                 ...). Output size is too small",
            xs[3], xs[4]
        )));
    }
    let slices = ops::reshape::call(&ops::permute::call(x, &[0, 2, 1, 3, 4])?, &[n * depth, xs[1], xs[3], xs[4]])?;
    let mut acc: Option<Tensor> = None;
    for kd in 0..kd_len {
        let y = ops::conv_transpose2d_input::call(
            &slices,
            &ops::select::call(weight, 2, kd)?,
            None,
            &s[1..],
            &p[1..],
            &op[1..],
            groups,
            &d[1..],
        )?;
        let ys = y.sizes();
        let y = ops::reshape::call(&y, &[n, depth, ys[1], ys[2], ys[3]])?;
        let a = match acc {
            Some(a) => a,
            None => ops::new_zeros::call(&y, &[n, full, ys[1], ys[2], ys[3]], None, None, None, None)?,
        };
        let start = kd * d[0];
        let end = start + (depth - 1) * s[0] + 1;
        let zeros = ops::zeros_like::call(&a, None, None, None, None, None)?;
        let placed = ops::slice_scatter::call(&zeros, &y, 1, Some(start), Some(end), s[0])?;
        acc = Some(ops::add::call(&a, &placed, Scalar::Int(1))?);
    }
    let acc = acc.ok_or_else(|| Error::runtime("conv_transpose3d: the weight has an empty kernel depth"))?;
    let cropped = ops::slice::call(&acc, 1, Some(p[0]), Some(p[0] + out_depth), 1)?;
    add_bias(swap_channels_depth(&cropped)?, bias)
}
