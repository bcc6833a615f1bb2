//! Sorting and selection against PyTorch (`scripts/bench_sort_pytorch.py` prints the same case
//! names with PyTorch's medians): `sort` and `topk(k = 100)` of 2^20 f32 elements in one row,
//! and `sort` of 1024 rows of 1024.
//!
//! Run: `cargo bench -p oxten --bench sort`, then `python3 scripts/bench_sort_pytorch.py`.

use criterion::{criterion_group, criterion_main, Criterion};
use oxten::Tensor;
use std::hint::black_box;

/// Multiplicative hashing of the index into [0, 1): distinct-looking values, the same as the
/// PyTorch script's.
fn hashed(shape: &[i64]) -> Tensor {
    let n: i64 = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((i as u64 * 2_654_435_761) % (1 << 32)) as f32 / 4_294_967_296.0).collect();
    Tensor::from_vec(v, shape).unwrap()
}

fn sorting(c: &mut Criterion) {
    let mut g = c.benchmark_group("sort");
    g.sample_size(10);
    let long = hashed(&[1 << 20]);
    g.bench_function("sort_2p20_float32", |b| b.iter(|| black_box(long.sort(-1))));
    g.bench_function("topk100_2p20_float32", |b| b.iter(|| black_box(long.topk(100))));
    let rows = hashed(&[1024, 1024]);
    g.bench_function("sort_1024x1024_float32", |b| b.iter(|| black_box(rows.sort(-1))));
    g.finish();
}

criterion_group!(benches, sorting);
criterion_main!(benches);
