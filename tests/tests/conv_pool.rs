//! Replays tests/golden/conv.txt — PyTorch's outputs (values, dtype, shape, strides) and error
//! messages for convolution and pooling, recorded by scripts/golden_conv.py — through oxten,
//! and checks a few properties golden files cannot show (meta tensors, out= variants, autograd
//! through the composites).

use oxten::options::*;
use oxten::{DType, MemoryFormat, Result, Tensor};
use oxten_tests::golden::{replay_with, Case, ReplayOpts};

const GOLDEN: &str = include_str!("../golden/conv.txt");

/// Convolutions sum hundreds of products, in a different order than oneDNN: looser than the
/// elementwise defaults.
fn tolerance(d: DType) -> (f64, f64) {
    match d {
        DType::F64 => (1e-10, 1e-10),
        DType::F32 => (2e-5, 2e-5),
        DType::F16 => (4e-3, 4e-3),
        DType::BF16 => (1.6e-2, 3e-2),
        _ => (0.0, 0.0),
    }
}

fn cl(t: &Tensor) -> Tensor {
    t.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast })
}

fn run(c: &Case) -> Result<Vec<Tensor>> {
    let t = |i: usize| c.t(i);
    let ints = |k: &str| c.ints(k).unwrap_or_else(|| panic!("line {}: no attribute {k}", c.line));
    let int = |k: &str| c.int(k).unwrap_or_else(|| panic!("line {}: no attribute {k}", c.line));
    let bias = if c.flag("bias") { Some(t(2)) } else { None };
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    // A `self` recorded by value (contiguous) is put back in the layout the case names.
    let laid_out = |x: &Tensor| if c.attr("layout") == Some("cl") { cl(x) } else { x.clone() };
    match c.op.as_str() {
        "conv2d" => {
            let (s, p, d) = (ints("stride"), ints("padding"), ints("dilation"));
            let opts = Conv2dOpts { dilation: &d, groups: int("groups") };
            one(oxten::try_conv2d_with(t(0), t(1), bias, &s, &p, opts))
        }
        "conv1d" => {
            let (s, p, d) = (ints("stride"), ints("padding"), ints("dilation"));
            let opts = Conv1dOpts { bias, stride: &s, padding: &p, dilation: &d, groups: int("groups") };
            one(oxten::try_conv1d_with(t(0), t(1), opts))
        }
        "conv2d_padding" => {
            let (s, d) = (ints("stride"), ints("dilation"));
            let padding = c.attr("padding").unwrap();
            let opts = Conv2dPaddingOpts { dilation: &d, groups: int("groups") };
            one(oxten::try_conv2d_padding_with(t(0), t(1), bias, &s, padding, opts))
        }
        "conv1d_padding" => {
            let (s, d) = (ints("stride"), ints("dilation"));
            let padding = c.attr("padding").unwrap();
            let opts = Conv1dPaddingOpts { bias, stride: &s, padding, dilation: &d, groups: int("groups") };
            one(oxten::try_conv1d_padding_with(t(0), t(1), opts))
        }
        "conv_transpose2d" => {
            let (s, p, op, d) = (ints("stride"), ints("padding"), ints("output_padding"), ints("dilation"));
            let opts = ConvTranspose2dInputOpts {
                bias,
                stride: &s,
                padding: &p,
                output_padding: &op,
                groups: int("groups"),
                dilation: &d,
            };
            one(oxten::try_conv_transpose2d_input_with(t(0), t(1), opts))
        }
        "convolution" => one(oxten::try_convolution(
            t(0),
            t(1),
            None,
            &ints("stride"),
            &ints("padding"),
            &ints("dilation"),
            c.flag("transposed"),
            &ints("output_padding"),
            int("groups"),
        )),
        "convolution_backward" => {
            let bias_sizes = ints("bias_sizes");
            let mask: Vec<bool> = ints("mask").iter().map(|&m| m == 1).collect();
            let (gi, gw, gb) = oxten::try_convolution_backward(
                t(0),
                t(1),
                t(2),
                if bias_sizes.is_empty() { None } else { Some(&bias_sizes) },
                &ints("stride"),
                &ints("padding"),
                &ints("dilation"),
                c.flag("transposed"),
                &ints("output_padding"),
                int("groups"),
                &mask,
            )?;
            Ok([gi, gw, gb].into_iter().zip(&mask).filter(|(_, &m)| m).map(|(g, _)| g).collect())
        }
        "max_pool2d_with_indices" => {
            let (s, p, d) = (ints("stride"), ints("padding"), ints("dilation"));
            let opts =
                MaxPool2dWithIndicesOpts { stride: &s, padding: &p, dilation: &d, ceil_mode: c.flag("ceil_mode") };
            let (v, i) = oxten::try_max_pool2d_with_indices_with(t(0), &ints("kernel"), opts)?;
            Ok(vec![v, i])
        }
        "max_pool2d" => {
            let (s, p, d) = (ints("stride"), ints("padding"), ints("dilation"));
            let opts = MaxPool2dOpts { stride: &s, padding: &p, dilation: &d, ceil_mode: c.flag("ceil_mode") };
            one(oxten::try_max_pool2d_with(t(0), &ints("kernel"), opts))
        }
        "max_pool2d_with_indices_backward" => one(oxten::try_max_pool2d_with_indices_backward(
            t(0),
            &laid_out(t(1)),
            &ints("kernel"),
            &ints("stride"),
            &ints("padding"),
            &ints("dilation"),
            c.flag("ceil_mode"),
            t(2),
        )),
        "avg_pool2d" => {
            let (s, p) = (ints("stride"), ints("padding"));
            let opts = AvgPool2dOpts {
                stride: &s,
                padding: &p,
                ceil_mode: c.flag("ceil_mode"),
                count_include_pad: c.flag("count_include_pad"),
                divisor_override: c.int("divisor_override"),
            };
            one(oxten::try_avg_pool2d_with(t(0), &ints("kernel"), opts))
        }
        "avg_pool2d_backward" => one(oxten::try_avg_pool2d_backward(
            t(0),
            &laid_out(t(1)),
            &ints("kernel"),
            &ints("stride"),
            &ints("padding"),
            c.flag("ceil_mode"),
            c.flag("count_include_pad"),
            c.int("divisor_override"),
        )),
        "adaptive_avg_pool2d" => one(oxten::try_adaptive_avg_pool2d(t(0), &ints("output_size"))),
        "_adaptive_avg_pool2d" => one(oxten::try__adaptive_avg_pool2d(t(0), &ints("output_size"))),
        "_adaptive_avg_pool2d_backward" => one(oxten::try__adaptive_avg_pool2d_backward(t(0), &laid_out(t(1)))),
        other => panic!("line {}: unknown op {other}", c.line),
    }
}

#[test]
fn golden_conv_pool() {
    replay_with(GOLDEN, ReplayOpts { min_cases: 250, strides: true, tolerance }, run);
}

fn meta(sizes: &[i64]) -> Tensor {
    oxten::empty_with(sizes, EmptyOpts { device: Some(oxten::Device::Meta), ..Default::default() })
}

#[test]
fn meta_tensors_get_shapes_and_strides() {
    let x = cl(&meta(&[2, 4, 9, 9]));
    let w = meta(&[6, 2, 3, 3]);
    let opts = Conv2dOpts { groups: 2, ..Default::default() };
    let y = oxten::conv2d_with(&x, &w, None, &[2], &[1], opts);
    assert!(y.is_meta());
    assert_eq!(&y.sizes()[..], &[2, 6, 5, 5]);
    assert_eq!(&y.strides()[..], &[150, 1, 30, 6]);
    let (v, i) = oxten::max_pool2d_with_indices(&x, &[3]);
    assert_eq!((&v.sizes()[..], &i.sizes()[..]), (&[2, 4, 3, 3][..], &[2, 4, 3, 3][..]));
    assert_eq!(i.dtype(), DType::I64);
    assert!(i.is_meta());
    let a = oxten::avg_pool2d(&meta(&[3, 9, 9]), &[2]);
    assert_eq!(&a.sizes()[..], &[3, 4, 4]);
    let ad = oxten::_adaptive_avg_pool2d(&x, &[4, 2]);
    assert_eq!(&ad.strides()[..], &[32, 1, 8, 4]);
    let (gi, gw, gb) = oxten::convolution_backward(
        &meta(&[2, 6, 5, 5]),
        &x,
        &w,
        Some(&[6]),
        &[2],
        &[1],
        &[1],
        false,
        &[0],
        2,
        &[true, true, true],
    );
    assert_eq!((&gi.sizes()[..], &gw.sizes()[..], &gb.sizes()[..]), (&[2, 4, 9, 9][..], &[6, 2, 3, 3][..], &[6][..]));
    assert!(gi.is_meta() && gw.is_meta() && gb.is_meta());
}

#[test]
fn out_variants_write_into_given_tensors() {
    let x = Tensor::from_vec((0..32).map(|v| v as f32).collect::<Vec<_>>(), &[1, 2, 4, 4]).unwrap();
    let out = Tensor::from_vec(vec![0f32; 8], &[1, 2, 2, 2]).unwrap();
    let idx = Tensor::from_vec(vec![0i64; 8], &[1, 2, 2, 2]).unwrap();
    oxten::max_pool2d_with_indices_out(&x, &[2], &out, &idx);
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![5., 7., 13., 15., 21., 23., 29., 31.]);
    assert_eq!(idx.to_vec::<i64>().unwrap(), vec![5, 7, 13, 15, 5, 7, 13, 15]);
    // A transposed (non-dense) out= tensor is filled through a temporary.
    let base = Tensor::from_vec(vec![0f32; 8], &[1, 2, 2, 2]).unwrap();
    let out_t = base.transpose(2, 3);
    oxten::avg_pool2d_out(&x, &[2], &out_t);
    assert_eq!(out_t.to_vec::<f32>().unwrap(), vec![2.5, 4.5, 10.5, 12.5, 18.5, 20.5, 26.5, 28.5]);
    // Wrong dtype for out=.
    let bad = Tensor::from_vec(vec![0f64; 8], &[1, 2, 2, 2]).unwrap();
    assert!(oxten::try_avg_pool2d_out(&x, &[2], &bad).is_err());
}

#[test]
fn gradients_flow_through_the_composites() {
    // conv2d -> relu -> max_pool2d -> adaptive_avg_pool2d -> sum, channels_last: every gradient
    // keeps its leaf's layout.
    let x = cl(&Tensor::from_vec(
        (0..2 * 3 * 6 * 6).map(|v| (v % 7) as f32 * 0.1 - 0.3).collect::<Vec<_>>(),
        &[2, 3, 6, 6],
    )
    .unwrap())
    .requires_grad_(true);
    let w = Tensor::from_vec((0..4 * 3 * 9).map(|v| (v % 5) as f32 * 0.05 - 0.1).collect::<Vec<_>>(), &[4, 3, 3, 3])
        .unwrap()
        .requires_grad_(true);
    let b = Tensor::from_vec(vec![0.1f32, -0.2, 0.3, 0.0], &[4]).unwrap().requires_grad_(true);
    let y = oxten::conv2d(&x, &w, Some(&b), &[1, 1], &[1]);
    assert!(y.is_contiguous_as(MemoryFormat::ChannelsLast));
    let p = oxten::max_pool2d(&y.relu(), &[2]);
    let s = oxten::adaptive_avg_pool2d(&p, &[1, 1]).sum();
    s.backward();
    let (gx, gw, gb) = (x.grad().unwrap(), w.grad().unwrap(), b.grad().unwrap());
    assert!(gx.is_contiguous_as(MemoryFormat::ChannelsLast));
    assert_eq!(&gw.sizes()[..], &[4, 3, 3, 3]);
    assert_eq!(&gb.sizes()[..], &[4]);
    assert!(gx.to_vec::<f32>().unwrap().iter().all(|v| v.is_finite()));
}

/// The channels_last max-pool kernel (vectorized along channels) against the NCHW kernel, which
/// shares no code with it: the same values (NaN where NaN, bit for bit) and indices, for channel
/// counts around a vector's width, NaNs and `-inf` at scattered places, and windows with stride,
/// padding and dilation.
#[test]
fn channels_last_max_pool_matches_nchw() {
    for c in [1i64, 15, 16, 17, 37] {
        let (n, h, w) = (2i64, 7i64, 6i64);
        let len = (n * c * h * w) as usize;
        let vals: Vec<f32> = (0..len)
            .map(|i| match i % 23 {
                5 => f32::NAN,
                11 => f32::NEG_INFINITY,
                _ => ((i * 7919) % 101) as f32 / 10.0 - 5.0,
            })
            .collect();
        let x = Tensor::from_vec(vals, &[n, c, h, w]).unwrap();
        let xc = cl(&x);
        for (k, s, p, d, ceil) in [(2, 2, 0, 1, false), (3, 2, 1, 1, true), (3, 1, 1, 2, false), (2, 1, 0, 1, false)] {
            let (ks, ss, ps, ds) = ([k, k], [s, s], [p, p], [d, d]);
            let opts = || MaxPool2dWithIndicesOpts { stride: &ss, padding: &ps, dilation: &ds, ceil_mode: ceil };
            let (v0, i0) = oxten::max_pool2d_with_indices_with(&x, &ks, opts());
            let (v1, i1) = oxten::max_pool2d_with_indices_with(&xc, &ks, opts());
            assert!(v1.is_contiguous_as(MemoryFormat::ChannelsLast), "c={c} k={k}: output not channels_last");
            let bits =
                |t: &Tensor| t.contiguous().to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&v0), bits(&v1), "values, c={c} k={k} s={s} p={p} d={d}");
            assert_eq!(
                i0.contiguous().to_vec::<i64>().unwrap(),
                i1.contiguous().to_vec::<i64>().unwrap(),
                "indices, c={c} k={k} s={s} p={p} d={d}"
            );
        }
    }
}

/// bf16 convolutions accumulate in f32 and round once (the native `vdpbf16ps` path where the CPU
/// has AVX-512 BF16, the widened one elsewhere): the result equals the f32 convolution of the
/// same bf16 values, bias included, rounded to bf16, up to the f32 summation order. Covers both
/// layouts, groups, the 1x1 kernels that skip im2col, padding and stride.
#[test]
fn bf16_convolution_rounds_the_f32_result_once() {
    let fill = |shape: &[i64], salt: usize| {
        let n: i64 = shape.iter().product();
        let v: Vec<f32> = (0..n as usize).map(|i| ((i * 7919 + salt * 104729) % 2001) as f32 / 1000.0 - 1.0).collect();
        Tensor::from_vec(v, shape).unwrap().to_dtype(DType::BF16)
    };
    // (n, c, h, w, o, k, stride, padding, groups, bias)
    let cases = [
        (2i64, 16i64, 9i64, 8i64, 32i64, 3i64, 1i64, 1i64, 1i64, true),
        (1, 8, 7, 7, 12, 1, 1, 0, 1, true),
        (2, 12, 6, 5, 9, 3, 2, 1, 3, false),
        (1, 64, 10, 10, 64, 3, 1, 1, 1, true),
        (3, 5, 4, 4, 7, 2, 1, 0, 1, false),
    ];
    for (n, c, h, w, o, k, s, p, groups, with_bias) in cases {
        let x = fill(&[n, c, h, w], 1);
        let wt = fill(&[o, c / groups, k, k], 2);
        let b = with_bias.then(|| fill(&[o], 3));
        let opts = Conv2dOpts { dilation: &[1, 1], groups };
        let f32s = |t: &Tensor| t.to_dtype(DType::F32);
        let want = oxten::conv2d_with(&f32s(&x), &f32s(&wt), b.as_ref().map(f32s).as_ref(), &[s, s], &[p, p], opts)
            .to_dtype(DType::BF16);
        for channels_last in [false, true] {
            let xin = if channels_last { cl(&x) } else { x.clone() };
            let opts = Conv2dOpts { dilation: &[1, 1], groups };
            let got = oxten::conv2d_with(&xin, &wt, b.as_ref(), &[s, s], &[p, p], opts);
            assert_eq!(got.dtype(), DType::BF16);
            let (g, e) =
                (f32s(&got).contiguous().to_vec::<f32>().unwrap(), f32s(&want).contiguous().to_vec::<f32>().unwrap());
            let differ = g.iter().zip(&e).filter(|(a, b)| a != b).count();
            for (a, b) in g.iter().zip(&e) {
                // Another summation order may round the other way: one bf16 step at most.
                assert!((a - b).abs() <= b.abs() / 128.0 + 1e-6, "{a} vs {b} (c={c} k={k} cl={channels_last})");
            }
            assert!(differ * 50 <= g.len(), "{differ} of {} values differ (c={c} k={k} cl={channels_last})", g.len());
        }
    }
}
