//! Five elementwise operators on 2^24 f32 elements: eager on the CPU (five passes over memory),
//! on the lazy device with the fusion pass (one pass, block by block), and on the lazy device
//! without it (five operators again, plus the graph's overhead).
//!
//! `cargo bench -p oxten-lazy --bench fusion`

use criterion::{criterion_group, criterion_main, Criterion};
use oxten::Tensor;
use oxten_lazy::{init, set_fusion, sync, LAZY};

/// Arithmetic only: every eager operator is a pass over memory.
fn arithmetic(x: &Tensor) -> Tensor {
    x.mul_scalar(1.5).add_scalar(0.25).relu().sub_scalar(0.5).mul_scalar(2.0)
}

/// Ending in `sigmoid`, whose `exp` makes the chain partly compute-bound.
fn with_sigmoid(x: &Tensor) -> Tensor {
    x.mul_scalar(1.5).add_scalar(0.25).relu().sub_scalar(0.5).sigmoid()
}

fn bench(c: &mut Criterion) {
    init().unwrap();
    let n = 1usize << 24;
    let x = Tensor::from_vec((0..n).map(|i| (i % 1000) as f32 / 500.0 - 1.0).collect(), &[n as i64]).unwrap();
    let lx = x.to_device(LAZY);
    oxten_lazy::sync(&[&lx]).unwrap();
    for (name, chain) in [("arithmetic", arithmetic as fn(&Tensor) -> Tensor), ("with_sigmoid", with_sigmoid)] {
        let mut g = c.benchmark_group(format!("pointwise_chain_2^24/{name}"));
        g.sample_size(20);
        g.bench_function("cpu_eager_5_ops", |b| b.iter(|| chain(&x)));
        g.bench_function("lazy_fused", |b| {
            b.iter(|| {
                let y = chain(&lx);
                sync(&[&y]).unwrap();
                y
            })
        });
        set_fusion(false);
        g.bench_function("lazy_unfused", |b| {
            b.iter(|| {
                let y = chain(&lx);
                sync(&[&y]).unwrap();
                y
            })
        });
        set_fusion(true);
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
