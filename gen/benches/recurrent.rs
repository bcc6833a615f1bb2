//! Recurrent layers and scans against PyTorch (`scripts/bench_recurrent_pytorch.py` prints the
//! same case names with PyTorch's medians): a one-layer LSTM and GRU (sequence 32, batch 16,
//! 64 → 128 features) forward, the LSTM's forward and backward, the same at the size
//! (sequence 128, batch 32, 256 → 256), and `cumsum`/`cumprod`/`logcumsumexp` over the rows of a
//! 1024 × 1024 f32 matrix.
//!
//! Run: `cargo bench -p oxten --bench recurrent`, then `python3 scripts/bench_recurrent_pytorch.py`.

use criterion::{criterion_group, criterion_main, Criterion};
use oxten::nn::{Module, GRU, LSTM};
use oxten::Tensor;
use std::hint::black_box;

/// Multiplicative hashing of the index into [-1, 1): the same values as the PyTorch script's.
fn hashed(shape: &[i64]) -> Tensor {
    let n: i64 = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((i as u64 * 2_654_435_761) % (1 << 32)) as f32 / 2_147_483_648.0 - 1.0).collect();
    Tensor::from_vec(v, shape).unwrap()
}

fn recurrent(c: &mut Criterion) {
    let mut g = c.benchmark_group("recurrent");
    g.sample_size(20);
    oxten::manual_seed(0);
    let x = hashed(&[32, 16, 64]);
    let lstm = LSTM::new(64, 128);
    let gru = GRU::new(64, 128);
    g.bench_function("lstm_forward_32x16x64_h128", |b| {
        b.iter(|| oxten::autograd::no_grad(|| black_box(lstm.forward(&x).unwrap())))
    });
    g.bench_function("gru_forward_32x16x64_h128", |b| {
        b.iter(|| oxten::autograd::no_grad(|| black_box(gru.forward(&x).unwrap())))
    });
    let xg = x.detach().requires_grad_(true);
    g.bench_function("lstm_forward_backward_32x16x64_h128", |b| {
        b.iter(|| {
            let y = lstm.forward(&xg).unwrap();
            y.sum().backward();
            for p in lstm.parameters() {
                p.set_grad(None);
            }
        })
    });
    let big_x = hashed(&[128, 32, 256]).requires_grad_(true);
    let big = LSTM::new(256, 256);
    g.sample_size(10);
    g.bench_function("lstm_forward_128x32x256_h256", |b| {
        b.iter(|| oxten::autograd::no_grad(|| black_box(big.forward(&big_x).unwrap())))
    });
    // One step of that LSTM, in its two parts: the hidden product and the fused gates.
    let (h, w_hh, b_hh) = (hashed(&[32, 256]), hashed(&[1024, 256]), hashed(&[1024]));
    g.bench_function("lstm_step_hidden_product_32x256x1024", |b| {
        b.iter(|| black_box(oxten::ops::linear::call(&h, &w_hh, Some(&b_hh)).unwrap()))
    });
    let (gates, cx, b_ih) = (hashed(&[32, 1024]), hashed(&[32, 256]), hashed(&[1024]));
    g.bench_function("lstm_step_fused_cell_32x1024", |b| {
        b.iter(|| {
            black_box(oxten::ops::_thnn_fused_lstm_cell::call(&gates, &gates, &cx, Some(&b_ih), Some(&b_hh)).unwrap())
        })
    });
    g.bench_function("lstm_forward_backward_128x32x256_h256", |b| {
        b.iter(|| {
            let y = big.forward(&big_x).unwrap();
            y.sum().backward();
            big_x.set_grad(None);
            for p in big.parameters() {
                p.set_grad(None);
            }
        })
    });
    g.sample_size(20);
    let rows = hashed(&[1024, 1024]);
    let small = rows.mul_scalar(0.001).add_scalar(1.0);
    g.bench_function("cumsum_1024x1024_float32", |b| b.iter(|| black_box(rows.cumsum(1))));
    g.bench_function("cumprod_1024x1024_float32", |b| b.iter(|| black_box(small.cumprod(1))));
    g.bench_function("logcumsumexp_1024x1024_float32", |b| b.iter(|| black_box(rows.logcumsumexp(1))));
    g.finish();
}

criterion_group!(benches, recurrent);
criterion_main!(benches);
