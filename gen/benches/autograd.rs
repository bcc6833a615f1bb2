//! Autograd (issue 3): a small MLP's training step, and the engine's cost per node.
//! `scripts/bench_autograd.sh` runs this and the same cases in PyTorch
//! (`scripts/bench_autograd_pytorch.py`) and prints the table for BENCHMARKS.md.
//!
//! - `autograd/mlp_784_256_10_b64_fwd_bwd`: `sum(relu(x @ w1.t() + b1) @ w2.t() + b2)` for a
//!   batch of 64 f32 rows, then `backward()` into the four parameters, whose `.grad` is cleared
//!   (`set_grad(None)`) before each step, as `optimizer.zero_grad()` does.
//! - `autograd/mlp_784_256_10_b64_fwd`: the same forward pass alone (recording the graph).
//! - `autograd/mlp_784_256_10_b64_jvp` / `_hvp`: `oxten::func::jvp` / `hvp` of that loss (with a
//!   `tanh` before the sum, so the Hessian is not zero) along a direction of `w1`, against
//!   `torch.func.jvp` and `jvp(grad(...))`.
//! - `autograd/chain_1000_backward`: `backward()` through a chain of 1000 alternating
//!   `mul_scalar` / `add` nodes on a 1-element tensor (the graph is built outside the timing);
//!   divided by 1000 it is the engine's overhead per node.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion};
use oxten::{DType, Tensor};
use std::hint::black_box;
use std::time::Duration;

/// A deterministic fill in `[-scale, scale)`.
fn filled(sizes: &[i64], scale: f32) -> Tensor {
    let n: i64 = sizes.iter().product();
    let v: Vec<f32> = (0..n).map(|i| (((i * 7919) % 1000) as f32 / 500.0 - 1.0) * scale).collect();
    Tensor::from_vec(v, sizes).unwrap()
}

fn param(sizes: &[i64], scale: f32) -> Tensor {
    filled(sizes, scale).requires_grad_(true)
}

struct Mlp {
    w1: Tensor,
    b1: Tensor,
    w2: Tensor,
    b2: Tensor,
}

impl Mlp {
    fn new() -> Self {
        Mlp { w1: param(&[256, 784], 0.05), b1: param(&[256], 0.1), w2: param(&[10, 256], 0.1), b2: param(&[10], 0.1) }
    }
    fn params(&self) -> [&Tensor; 4] {
        [&self.w1, &self.b1, &self.w2, &self.b2]
    }
    fn loss(&self, x: &Tensor) -> Tensor {
        let h = x.mm(&self.w1.t()).add(&self.b1).relu();
        h.mm(&self.w2.t()).add(&self.b2).sum()
    }
}

fn mlp(g: &mut BenchmarkGroup<'_, WallTime>) {
    let net = Mlp::new();
    let x = filled(&[64, 784], 1.0);
    assert_eq!(x.dtype(), DType::F32);
    g.bench_function("mlp_784_256_10_b64_fwd_bwd", |b| {
        b.iter(|| {
            for p in net.params() {
                p.set_grad(None);
            }
            let loss = net.loss(&x);
            loss.backward();
            black_box(loss)
        })
    });
    g.bench_function("mlp_784_256_10_b64_fwd", |b| b.iter(|| black_box(net.loss(&x))));
    // Forward mode: the JVP of the loss along a direction of `w1` (plain tensors, nothing
    // requires grad), and the Hessian-vector product by forward-over-reverse.
    let ps: Vec<Tensor> = net.params().iter().map(|p| p.detach()).collect();
    let loss_of_w1 = |w: &[Tensor]| -> oxten::Result<Tensor> {
        let h = x.try_mm(&w[0].try_t()?)?.try_add(&ps[1])?.try_relu()?;
        h.try_mm(&ps[2].try_t()?)?.try_add(&ps[3])?.try_tanh()?.try_sum()
    };
    let v = filled(&[256, 784], 0.01);
    g.bench_function("mlp_784_256_10_b64_jvp", |b| {
        b.iter(|| {
            black_box(oxten::func::jvp(loss_of_w1, std::slice::from_ref(&ps[0]), std::slice::from_ref(&v)).unwrap())
        })
    });
    g.bench_function("mlp_784_256_10_b64_hvp", |b| {
        b.iter(|| {
            black_box(oxten::func::hvp(loss_of_w1, std::slice::from_ref(&ps[0]), std::slice::from_ref(&v)).unwrap())
        })
    });
}

const CHAIN: usize = 1000;

fn chain(g: &mut BenchmarkGroup<'_, WallTime>) {
    let x = param(&[1], 1.0);
    let one = Tensor::from_vec(vec![1e-3f32], &[1]).unwrap();
    let build = || {
        x.set_grad(None);
        let mut y = x.clone();
        for i in 0..CHAIN {
            y = if i % 2 == 0 { y.mul_scalar(1.0001) } else { y.add(&one) };
        }
        y
    };
    // The routine returns the chain so that criterion frees the graph outside the timing, as
    // the PyTorch script does.
    g.bench_function("chain_1000_backward", |b| {
        b.iter_batched(
            build,
            |y| {
                y.backward();
                y
            },
            BatchSize::SmallInput,
        )
    });
}

fn autograd(c: &mut Criterion) {
    let mut g = c.benchmark_group("autograd");
    g.sample_size(50);
    mlp(&mut g);
    // Each sample rebuilds the 1000-node graph outside the timing: allow for it.
    g.measurement_time(Duration::from_secs(12));
    chain(&mut g);
    g.finish();
}

criterion_group!(benches, autograd);
criterion_main!(benches);
