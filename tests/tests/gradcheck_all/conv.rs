//! Cases for the convolution and pooling entries.

use super::{case, Case, Rng};
use oxten::options::*;
use oxten::{MemoryFormat, Result, Tensor};

/// A channels-last leaf (a copy of `t` laid out NHWC).
fn cl(t: Tensor) -> Tensor {
    t.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast }).detach().requires_grad_(true)
}

/// `convolution(x, w, b, ...)` with the usual argument order.
#[allow(clippy::too_many_arguments)]
fn conv(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
) -> Result<Tensor> {
    oxten::try_convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups)
}

/// `convolution_backward` with every output requested, as a case's outputs.
#[allow(clippy::too_many_arguments)]
fn conv_backward(
    x: &[Tensor],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
) -> Result<Vec<Tensor>> {
    let bias = [x[0].sizes()[1]];
    let (gi, gw, gb) = oxten::try_convolution_backward(
        &x[0],
        &x[1],
        &x[2],
        Some(&bias),
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        &[true, true, true],
    )?;
    Ok(vec![gi, gw, gb])
}

fn max_pool(x: &Tensor, k: &[i64], s: &[i64], p: &[i64], d: &[i64], ceil: bool) -> Result<(Tensor, Tensor)> {
    oxten::try_max_pool2d_with_indices_with(
        x,
        k,
        MaxPool2dWithIndicesOpts { stride: s, padding: p, dilation: d, ceil_mode: ceil },
    )
}

fn avg_opts<'a>(s: &'a [i64], p: &'a [i64], ceil: bool, cip: bool, div: Option<i64>) -> AvgPool2dOpts<'a> {
    AvgPool2dOpts { stride: s, padding: p, ceil_mode: ceil, count_include_pad: cip, divisor_override: div }
}

pub(crate) fn cases(r: &Rng) -> Vec<Case> {
    vec![
        // ---- convolution ----
        case("convolution", "bias, padding", vec![r.any(&[2, 2, 4, 4]), r.any(&[3, 2, 3, 3]), r.any(&[3])], |x| {
            conv(&x[0], &x[1], Some(&x[2]), &[1], &[1], &[1], false, &[0], 1)
        }),
        case("convolution", "stride, dilation, groups", vec![r.any(&[1, 4, 6, 5]), r.any(&[4, 2, 2, 2])], |x| {
            conv(&x[0], &x[1], None, &[2, 1], &[1, 0], &[2, 1], false, &[0], 2)
        }),
        case(
            "convolution",
            "channels_last input, 1x1 kernel",
            vec![cl(r.any(&[2, 3, 3, 3])), r.any(&[2, 3, 1, 1]), r.any(&[2])],
            |x| conv(&x[0], &x[1], Some(&x[2]), &[1], &[0], &[1], false, &[0], 1),
        ),
        case("convolution", "channels_last weight", vec![r.any(&[1, 2, 4, 3]), cl(r.any(&[2, 2, 2, 2]))], |x| {
            conv(&x[0], &x[1], None, &[1], &[1], &[1], false, &[0], 1)
        }),
        case(
            "convolution",
            "transposed, output_padding, groups",
            vec![r.any(&[1, 4, 3, 2]), r.any(&[4, 1, 3, 2]), r.any(&[2])],
            |x| conv(&x[0], &x[1], Some(&x[2]), &[2], &[1], &[1], true, &[1, 0], 2),
        ),
        case("convolution", "1-d", vec![r.any(&[2, 2, 6]), r.any(&[3, 2, 3]), r.any(&[3])], |x| {
            conv(&x[0], &x[1], Some(&x[2]), &[2], &[1], &[1], false, &[0], 1)
        }),
        case("convolution", "conv2d, unbatched, padding='same'", vec![r.any(&[2, 4, 4]), r.any(&[2, 2, 2, 3])], |x| {
            oxten::try_conv2d_padding(&x[0], &x[1], None, &[1, 1], "same")
        }),
        // ---- convolution_backward (double backward of convolution) ----
        Case {
            op: "convolution_backward",
            what: "all outputs",
            inputs: vec![r.any(&[1, 2, 4, 4]), r.any(&[1, 2, 3, 3]), r.any(&[2, 2, 2, 2])],
            f: Box::new(|x| conv_backward(x, &[1], &[1], &[1], false, &[0], 1)),
            gradgrad: true,
            eps: 1e-6,
        },
        Case {
            op: "convolution_backward",
            what: "transposed, groups",
            inputs: vec![r.any(&[1, 2, 5, 5]), r.any(&[1, 2, 2, 2]), r.any(&[2, 1, 2, 2])],
            f: Box::new(|x| conv_backward(x, &[2], &[0], &[1], true, &[1], 2)),
            gradgrad: true,
            eps: 1e-6,
        },
        // ---- max pooling ----
        case("max_pool2d_with_indices", "kernel 2", vec![r.distinct(&[2, 2, 4, 4])], |x| {
            Ok(max_pool(&x[0], &[2], &[], &[0], &[1], false)?.0)
        }),
        case("max_pool2d_with_indices", "padding, dilation, ceil_mode", vec![r.distinct(&[1, 2, 5, 6])], |x| {
            Ok(max_pool(&x[0], &[3, 2], &[2, 1], &[1, 1], &[1, 2], true)?.0)
        }),
        case("max_pool2d_with_indices", "channels_last", vec![cl(r.distinct(&[2, 3, 4, 4]))], |x| {
            Ok(max_pool(&x[0], &[2], &[1], &[0], &[1], false)?.0)
        }),
        case("max_pool2d_with_indices", "unbatched, via max_pool2d", vec![r.distinct(&[2, 4, 5])], |x| {
            oxten::try_max_pool2d_with(&x[0], &[2, 3], MaxPool2dOpts { stride: &[1, 2], ..Default::default() })
        }),
        case("max_pool2d_with_indices_backward", "", vec![r.any(&[2, 2, 2, 2]), r.distinct(&[2, 2, 4, 4])], |x| {
            let (_, idx) = max_pool(&x[1].detach(), &[2], &[], &[0], &[1], false)?;
            oxten::try_max_pool2d_with_indices_backward(&x[0], &x[1], &[2], &[2], &[0], &[1], false, &idx)
        }),
        case(
            "max_pool2d_with_indices_backward",
            "overlapping windows, channels_last",
            vec![cl(r.any(&[1, 3, 3, 3])), cl(r.distinct(&[1, 3, 4, 4]))],
            |x| {
                let (_, idx) = max_pool(&x[1].detach(), &[2], &[1], &[0], &[1], false)?;
                oxten::try_max_pool2d_with_indices_backward(&x[0], &x[1], &[2], &[1], &[0], &[1], false, &idx)
            },
        ),
        // ---- average pooling ----
        case("avg_pool2d", "kernel 2", vec![r.any(&[2, 2, 4, 4])], |x| oxten::try_avg_pool2d(&x[0], &[2])),
        case("avg_pool2d", "padding, ceil_mode, count_include_pad=False", vec![r.any(&[1, 2, 5, 6])], |x| {
            oxten::try_avg_pool2d_with(&x[0], &[3, 2], avg_opts(&[2, 1], &[1, 1], true, false, None))
        }),
        case("avg_pool2d", "divisor_override, channels_last", vec![cl(r.any(&[2, 3, 4, 4]))], |x| {
            oxten::try_avg_pool2d_with(&x[0], &[2], avg_opts(&[1], &[1], false, true, Some(3)))
        }),
        case("avg_pool2d", "unbatched", vec![r.any(&[2, 4, 5])], |x| {
            oxten::try_avg_pool2d_with(&x[0], &[2, 3], avg_opts(&[1, 2], &[0], false, true, None))
        }),
        case("avg_pool2d_backward", "", vec![r.any(&[1, 2, 3, 3]), r.any(&[1, 2, 5, 6])], |x| {
            oxten::try_avg_pool2d_backward(&x[0], &x[1], &[3, 2], &[2, 2], &[1, 0], false, false, None)
        }),
        case("avg_pool2d_backward", "channels_last", vec![cl(r.any(&[1, 3, 3, 3])), cl(r.any(&[1, 3, 4, 4]))], |x| {
            oxten::try_avg_pool2d_backward(&x[0], &x[1], &[2], &[1], &[0], false, true, Some(3))
        }),
        // ---- adaptive average pooling ----
        case("_adaptive_avg_pool2d", "downsample", vec![r.any(&[2, 2, 5, 7])], |x| {
            oxten::try__adaptive_avg_pool2d(&x[0], &[2, 3])
        }),
        case("_adaptive_avg_pool2d", "upsample, channels_last", vec![cl(r.any(&[1, 3, 2, 3]))], |x| {
            oxten::try__adaptive_avg_pool2d(&x[0], &[3, 4])
        }),
        case("_adaptive_avg_pool2d", "adaptive_avg_pool2d, unbatched", vec![r.any(&[2, 4, 5])], |x| {
            oxten::try_adaptive_avg_pool2d(&x[0], &[3, 2])
        }),
        case("_adaptive_avg_pool2d_backward", "", vec![r.any(&[1, 2, 2, 3]), r.any(&[1, 2, 5, 7])], |x| {
            oxten::try__adaptive_avg_pool2d_backward(&x[0], &x[1])
        }),
        case(
            "_adaptive_avg_pool2d_backward",
            "channels_last",
            vec![cl(r.any(&[1, 3, 3, 2])), cl(r.any(&[1, 3, 4, 4]))],
            |x| oxten::try__adaptive_avg_pool2d_backward(&x[0], &x[1]),
        ),
    ]
}
