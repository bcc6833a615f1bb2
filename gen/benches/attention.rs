//! Attention against PyTorch (`scripts/bench_attention_pytorch.py` prints the same case names
//! with PyTorch's medians): `scaled_dot_product_attention` forward, and forward + backward, at
//! (B=8, H=8, L=512, D=64), causal, in f32 and bf16.
//!
//! Run: `cargo bench -p oxten --bench attention`, then `python3 scripts/bench_attention_pytorch.py`.

use criterion::{criterion_group, criterion_main, Criterion};
use oxten::autograd::{grad_with, GradOpts};
use oxten::options::ScaledDotProductAttentionOpts;
use oxten::{DType, Tensor};
use std::hint::black_box;

/// A deterministic fill in [-1, 1), the same as the PyTorch script's.
fn rand_tensor(shape: &[i64], dtype: DType, salt: i64) -> Tensor {
    let n: i64 = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| (((i + salt) * 7919 % 1000) as f32) / 500.0 - 1.0).collect();
    Tensor::from_vec(v, shape).unwrap().to_dtype(dtype)
}

fn sdpa(c: &mut Criterion) {
    let mut g = c.benchmark_group("attention");
    g.sample_size(10);
    let shape = [8i64, 8, 512, 64];
    let causal = || ScaledDotProductAttentionOpts { is_causal: true, ..Default::default() };
    for dtype in [DType::F32, DType::BF16] {
        let (q, k, v) = (rand_tensor(&shape, dtype, 0), rand_tensor(&shape, dtype, 1), rand_tensor(&shape, dtype, 2));
        g.bench_function(format!("sdpa_causal_forward_{}", dtype.name()), |b| {
            b.iter(|| black_box(oxten::scaled_dot_product_attention_with(&q, &k, &v, causal())))
        });
        let (q, k, v) = (q.requires_grad_(true), k.requires_grad_(true), v.requires_grad_(true));
        let go = rand_tensor(&shape, dtype, 3);
        g.bench_function(format!("sdpa_causal_forward_backward_{}", dtype.name()), |b| {
            b.iter(|| {
                let out = oxten::scaled_dot_product_attention_with(&q, &k, &v, causal());
                let opts = GradOpts { grad_outputs: vec![Some(go.clone())], ..Default::default() };
                black_box(grad_with(&[&out], &[&q, &k, &v], opts).unwrap())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, sdpa);
criterion_main!(benches);
