//! Matrix products against PyTorch (`scripts/bench_linalg_pytorch.py` prints the same case names
//! with PyTorch's medians): `matmul` of square matrices in f32 (256² and 1024²) and bf16
//! (256², 1024², 2048²), a linear layer's `x @ w.t()` in f32 and bf16 (a column-major operand,
//! read in place), the first
//! layer of issue 3's MLP (`x @ w.t()` for a batch of 64, 784 -> 256), and a batched `bmm` of 32
//! products of 128²; and the factorizations: `linalg.solve` (a 256² system, 16 right-hand
//! sides), `linalg.inv` (256², and a batch of 4096 4×4), `linalg.cholesky` (256²).
//!
//! Run: `cargo bench -p oxten --bench linalg`, then `python3 scripts/bench_linalg_pytorch.py`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use oxten::{DType, Tensor};
use std::hint::black_box;

/// A deterministic fill in [-1, 1), the same as the PyTorch script's.
fn rand_tensor(shape: &[i64], dtype: DType, salt: i64) -> Tensor {
    let n: i64 = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| (((i + salt) * 7919 % 1000) as f32) / 500.0 - 1.0).collect();
    Tensor::from_vec(v, shape).unwrap().to_dtype(dtype)
}

fn products(c: &mut Criterion) {
    let mut g = c.benchmark_group("linalg");
    g.sample_size(20);
    for (dtype, n) in
        [(DType::F32, 256i64), (DType::F32, 1024), (DType::BF16, 256), (DType::BF16, 1024), (DType::BF16, 2048)]
    {
        let a = rand_tensor(&[n, n], dtype, 0);
        let b = rand_tensor(&[n, n], dtype, 1);
        g.throughput(Throughput::Elements((2 * n * n * n) as u64));
        g.bench_function(BenchmarkId::new(format!("matmul_{}", dtype.name()), n), |bench| {
            bench.iter(|| black_box(a.matmul(&b)))
        });
    }
    let n = 1024i64;
    let x = rand_tensor(&[n, n], DType::F32, 0);
    let w = rand_tensor(&[n, n], DType::F32, 1);
    g.throughput(Throughput::Elements((2 * n * n * n) as u64));
    g.bench_function(BenchmarkId::new("linear_float32", n), |bench| {
        bench.iter(|| black_box(oxten::linear(&x, &w, None)))
    });
    let (x, w) = (x.to_dtype(DType::BF16), w.to_dtype(DType::BF16));
    g.bench_function(BenchmarkId::new("linear_bfloat16", n), |bench| {
        bench.iter(|| black_box(oxten::linear(&x, &w, None)))
    });
    // The first layer of issue 3's MLP: a batch of 64 through a 784 -> 256 linear layer,
    // `x @ w.t()` (staged through a column-major matrix, see `kernels/src/linalg/mod.rs`).
    let x = rand_tensor(&[64, 784], DType::F32, 2);
    let w = rand_tensor(&[256, 784], DType::F32, 3);
    g.throughput(Throughput::Elements(2 * 64 * 784 * 256));
    g.bench_function("mm_xwt_float32/64x784x256", |bench| bench.iter(|| black_box(x.mm(&w.t()))));
    let (batch, m) = (32i64, 128i64);
    let a = rand_tensor(&[batch, m, m], DType::F32, 0);
    let b = rand_tensor(&[batch, m, m], DType::F32, 1);
    g.throughput(Throughput::Elements((2 * batch * m * m * m) as u64));
    g.bench_function("bmm_float32/32x128x128", |bench| bench.iter(|| black_box(a.bmm(&b))));
    g.finish();
}

/// A well-conditioned `[.., n, n]` f32 matrix: the deterministic fill plus `n` on the diagonal.
fn dominant(shape: &[i64], salt: i64) -> Tensor {
    let n = shape[shape.len() - 1];
    rand_tensor(shape, DType::F32, salt).try_add(&oxten::eye(n).try_mul_scalar(n as f64).unwrap()).unwrap()
}

fn factorizations(c: &mut Criterion) {
    let mut g = c.benchmark_group("linalg");
    g.sample_size(20);
    let a = dominant(&[256, 256], 0);
    let b = rand_tensor(&[256, 16], DType::F32, 1);
    g.bench_function("solve_float32/256x16", |bench| bench.iter(|| black_box(oxten::linalg_solve(&a, &b))));
    g.bench_function("inv_float32/256", |bench| bench.iter(|| black_box(oxten::linalg_inv(&a))));
    let spd = a.matmul(&a.t());
    g.bench_function("cholesky_float32/256", |bench| bench.iter(|| black_box(oxten::linalg_cholesky(&spd))));
    let small = dominant(&[4096, 4, 4], 2);
    g.bench_function("inv_float32/4096x4x4", |bench| bench.iter(|| black_box(oxten::linalg_inv(&small))));
    g.finish();
}

fn decompositions(c: &mut Criterion) {
    let mut g = c.benchmark_group("linalg");
    g.sample_size(10);
    let a = rand_tensor(&[128, 128], DType::F32, 3);
    g.bench_function("qr_float32/128", |bench| bench.iter(|| black_box(oxten::linalg_qr(&a))));
    let sym = a.try_add(&a.t()).unwrap();
    g.bench_function("eigh_float32/128", |bench| bench.iter(|| black_box(oxten::linalg_eigh(&sym))));
    g.bench_function("svd_float32/128", |bench| bench.iter(|| black_box(oxten::linalg_svd(&a))));
    let small = rand_tensor(&[1024, 4, 4], DType::F32, 4);
    g.bench_function("svdvals_float32/1024x4x4", |bench| bench.iter(|| black_box(oxten::linalg_svdvals(&small))));
    g.finish();
}

criterion_group!(benches, products, factorizations, decompositions);
criterion_main!(benches);
