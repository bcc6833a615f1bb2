//! Transformer training pieces against PyTorch (`scripts/bench_transformer_pytorch.py` prints
//! the same case names with PyTorch's medians):
//!
//! - `TransformerEncoderLayer` forward + backward at batch 32, sequence 128, width 256 (8 heads,
//!   feed-forward 1024, no dropout, batch-first), f32;
//! - one AdamW step over the GPT example's parameters (4 layers, width 128, 97 characters:
//!   822,144 values in 52 tensors), single-tensor formula and fused kernel.
//!
//! Run: `cargo bench -p oxten --bench transformer`, then
//! `python3 scripts/bench_transformer_pytorch.py`.

use criterion::{criterion_group, criterion_main, Criterion};
use oxten::autograd::{grad_with, GradOpts};
use oxten::nn::{Module, TransformerConfig, TransformerEncoderLayer};
use oxten::optim::{AdamOpts, AdamW, Optimizer};
use oxten::Tensor;
use std::hint::black_box;

/// A deterministic fill in [-1, 1), the same as the PyTorch script's.
fn fill(shape: &[i64], salt: i64) -> Tensor {
    let n: i64 = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| (((i + salt) * 7919 % 1000) as f32) / 500.0 - 1.0).collect();
    Tensor::from_vec(v, shape).unwrap()
}

/// The GPT example's parameter shapes.
fn gpt_shapes() -> Vec<Vec<i64>> {
    let (v, c, t) = (97, 128, 128);
    let mut s = vec![vec![v, c], vec![t, c]];
    for _ in 0..4 {
        s.extend([vec![c], vec![c], vec![3 * c, c], vec![3 * c], vec![c, c], vec![c]]);
        s.extend([vec![4 * c, c], vec![4 * c], vec![c, 4 * c], vec![c], vec![c], vec![c]]);
    }
    s.extend([vec![c], vec![c]]);
    s
}

fn encoder_layer(c: &mut Criterion) {
    let mut g = c.benchmark_group("transformer");
    g.sample_size(10);
    oxten::manual_seed(0);
    let config =
        TransformerConfig { dim_feedforward: 1024, dropout: 0.0, batch_first: true, ..TransformerConfig::new(256, 8) };
    let layer = TransformerEncoderLayer::from_config(config);
    let x = fill(&[32, 128, 256], 0).requires_grad_(true);
    let go = fill(&[32, 128, 256], 1);
    let params = layer.parameters();
    g.bench_function("encoder_layer_forward_backward_float32", |b| {
        b.iter(|| {
            let y = layer.forward(&x).unwrap();
            let mut inputs: Vec<&Tensor> = params.iter().collect();
            inputs.push(&x);
            let opts = GradOpts { grad_outputs: vec![Some(go.clone())], ..Default::default() };
            black_box(grad_with(&[&y], &inputs, opts).unwrap())
        })
    });
    for (name, fused, foreach) in [
        ("adamw_step_gpt_params_single_tensor", false, false),
        ("adamw_step_gpt_params_foreach", false, true),
        ("adamw_step_gpt_params_fused", true, false),
    ] {
        let params: Vec<Tensor> =
            gpt_shapes().iter().enumerate().map(|(i, s)| fill(s, i as i64).requires_grad_(true)).collect();
        for (i, p) in params.iter().enumerate() {
            p.set_grad(Some(fill(&p.sizes(), 100 + i as i64)));
        }
        let mut opt = AdamW::new(params, AdamOpts { lr: 1e-3, fused, foreach, ..AdamOpts::adamw() }).unwrap();
        g.bench_function(name, |b| b.iter(|| opt.step().unwrap()));
    }
    g.finish();
}

criterion_group!(benches, encoder_layer);
criterion_main!(benches);
