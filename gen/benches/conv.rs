//! Convolution and max pooling on a ResNet-sized activation (32x64x56x56), channels-first and
//! channels-last. `scripts/bench_conv_pytorch.py` times the same cases in PyTorch;
//! `python3 scripts/bench_table.py target/bench-conv-oxten.txt target/bench-conv-torch.txt`
//! (after both) prints the comparison.

use criterion::{criterion_group, criterion_main, Criterion};
use oxten::options::ContiguousOpts;
use oxten::{DType, MemoryFormat, Tensor};
use std::hint::black_box;
use std::time::Duration;

/// A cheap deterministic fill in `[-scale, scale)`.
fn filled(sizes: &[i64], scale: f32) -> Tensor {
    let n: i64 = sizes.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1000) as f32 / 500.0 - 1.0) * scale).collect();
    Tensor::from_vec(v, sizes).unwrap()
}

fn cl(t: &Tensor) -> Tensor {
    t.contiguous_with(ContiguousOpts { memory_format: MemoryFormat::ChannelsLast })
}

fn conv(c: &mut Criterion) {
    let mut g = c.benchmark_group("conv");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    let x = filled(&[32, 64, 56, 56], 1.0);
    let w = filled(&[64, 64, 3, 3], 0.05);
    let b = filled(&[64], 0.1);
    let run = |x: &Tensor, w: &Tensor, b: &Tensor| oxten::conv2d(x, w, Some(b), &[1, 1], &[1]);
    g.bench_function("conv2d_f32_nchw", |bench| bench.iter(|| black_box(run(&x, &w, &b))));
    let (xc, wc) = (cl(&x), cl(&w));
    g.bench_function("conv2d_f32_nhwc", |bench| bench.iter(|| black_box(run(&xc, &wc, &b))));
    let (xb, wb, bb) = (xc.to_dtype(DType::BF16), wc.to_dtype(DType::BF16), b.to_dtype(DType::BF16));
    assert!(xb.is_contiguous_as(MemoryFormat::ChannelsLast) && wb.is_contiguous_as(MemoryFormat::ChannelsLast));
    g.bench_function("conv2d_bf16_nhwc", |bench| bench.iter(|| black_box(run(&xb, &wb, &bb))));
    let (xn, wn) = (x.to_dtype(DType::BF16), w.to_dtype(DType::BF16));
    g.bench_function("conv2d_bf16_nchw", |bench| bench.iter(|| black_box(run(&xn, &wn, &bb))));
    g.bench_function("max_pool2d_f32_nchw", |bench| bench.iter(|| black_box(oxten::max_pool2d(&x, &[2]))));
    g.bench_function("max_pool2d_f32_nhwc", |bench| bench.iter(|| black_box(oxten::max_pool2d(&xc, &[2]))));
    g.finish();
}

criterion_group!(benches, conv);
criterion_main!(benches);
