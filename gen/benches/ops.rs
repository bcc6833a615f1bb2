//! Hot paths of the core: full-API latency of a tiny op, and throughput of large elementwise
//! ops, a reduction, broadcasting and a strided (transposed) input. `scripts/bench.sh` runs this
//! and the same cases in PyTorch, and prints the table for BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use oxten::{DType, Tensor};
use std::hint::black_box;

fn rand_tensor(n: i64, dtype: DType) -> Tensor {
    // A cheap deterministic fill in [-1, 1).
    let v: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1000) as f32) / 500.0 - 1.0).collect();
    Tensor::from_vec(v, &[n]).unwrap().to_dtype(dtype)
}

fn tiny_add(c: &mut Criterion) {
    let a = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
    let b = Tensor::from_vec(vec![2.0f32], &[1]).unwrap();
    c.bench_function("add_1elem_alloc", |bench| bench.iter(|| black_box(a.add(black_box(&b)))));
    // The same add into an existing output: no allocation, the output's shape already right.
    let out = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    c.bench_function("add_1elem_out", |bench| {
        bench.iter(|| black_box(oxten::add_out(black_box(&a), black_box(&b), &out)))
    });
}

fn elementwise(c: &mut Criterion) {
    let mut g = c.benchmark_group("elementwise");
    g.sample_size(20);
    for &n in &[1i64 << 20, 1i64 << 24] {
        for dtype in [DType::F32, DType::BF16] {
            let a = rand_tensor(n, dtype);
            let b = rand_tensor(n, dtype).flip_sign_for_bench();
            g.throughput(Throughput::Elements(n as u64));
            let id = |op: &str| BenchmarkId::new(format!("{op}_{}", dtype.name()), n);
            g.bench_function(id("add"), |bench| bench.iter(|| black_box(a.add(&b))));
            g.bench_function(id("mul"), |bench| bench.iter(|| black_box(a.mul(&b))));
            g.bench_function(id("exp"), |bench| bench.iter(|| black_box(a.exp())));
        }
    }
    // Operators declared by `pointwise:` alone: rounding, Python's remainder, integer division
    // (whose zero-divisor check reads the divisor first).
    let n = 1i64 << 20;
    let a = rand_tensor(n, DType::F32).mul_scalar(10.0);
    let b = rand_tensor(n, DType::F32).add_scalar(1.5);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new("round_float32", n), |bench| bench.iter(|| black_box(a.round())));
    g.bench_function(BenchmarkId::new("remainder_float32", n), |bench| bench.iter(|| black_box(a.remainder(&b))));
    let ai = a.mul_scalar(100.0).to_dtype(DType::I64);
    let bi = b.mul_scalar(10.0).to_dtype(DType::I64);
    g.bench_function(BenchmarkId::new("floor_divide_int64", n), |bench| bench.iter(|| black_box(ai.floor_divide(&bi))));
    g.finish();
}

trait FlipForBench {
    fn flip_sign_for_bench(self) -> Tensor;
}
impl FlipForBench for Tensor {
    fn flip_sign_for_bench(self) -> Tensor {
        self.neg()
    }
}

fn reductions_and_layouts(c: &mut Criterion) {
    let mut g = c.benchmark_group("layout");
    g.sample_size(20);
    let big = rand_tensor(1 << 24, DType::F32);
    g.throughput(Throughput::Elements(1 << 24));
    g.bench_function(BenchmarkId::new("sum_f32", 1 << 24), |bench| bench.iter(|| black_box(big.sum())));
    let mid = rand_tensor(1 << 20, DType::F32);
    g.throughput(Throughput::Elements(1 << 20));
    g.bench_function(BenchmarkId::new("sum_f32", 1 << 20), |bench| bench.iter(|| black_box(mid.sum())));
    let m = rand_tensor(1 << 20, DType::F32).view(&[1024, 1024]);
    let row = rand_tensor(1024, DType::F32);
    g.throughput(Throughput::Elements(1 << 20));
    g.bench_function("broadcast_add_1024x1024+1024", |bench| bench.iter(|| black_box(m.add(&row))));
    let mt = m.t();
    g.bench_function("transposed_add_1024x1024", |bench| bench.iter(|| black_box(mt.add(&m))));
    // The sizes of the MLP of BENCHMARKS.md: a bias gradient (`sum(dim=0)` of a batch of 64
    // activations of 256) and a transposed 64 x 256 matrix made contiguous.
    let act = rand_tensor(64 * 256, DType::F32).view(&[64, 256]);
    g.throughput(Throughput::Elements(64 * 256));
    g.bench_function("sum_dim0_64x256", |bench| bench.iter(|| black_box(act.sum_dim_intlist(Some(&[0]), false))));
    let act_t = rand_tensor(64 * 256, DType::F32).view(&[256, 64]).t();
    g.bench_function("transpose_contiguous_64x256", |bench| bench.iter(|| black_box(act_t.contiguous())));
    g.finish();
}

/// `embedding_bag` forward on a recommender-sized table: 2048 bags of 20 rows of a 100 000 × 64
/// f32 table, sum and max; and sum over bags of mixed sizes.
fn embedding_bags(c: &mut Criterion) {
    let mut g = c.benchmark_group("nn");
    g.sample_size(20);
    let (rows, dim, bags, per) = (100_000i64, 64i64, 2048i64, 20i64);
    let weight = rand_tensor(rows * dim, DType::F32).view(&[rows, dim]);
    let indices =
        Tensor::from_vec((0..bags * per).map(|i| i * 7919 % rows).collect::<Vec<_>>(), &[bags * per]).unwrap();
    let offsets = Tensor::from_vec((0..bags).map(|b| b * per).collect::<Vec<_>>(), &[bags]).unwrap();
    for (mode, name) in [(0, "sum"), (2, "max")] {
        g.bench_function(BenchmarkId::new(format!("embedding_bag_{name}"), bags * per), |bench| {
            bench.iter(|| {
                let out = oxten::ops::embedding_bag::call(&weight, &indices, &offsets, false, mode, false, None, false);
                black_box(out.unwrap().0)
            })
        });
    }
    // Bags of 1 to 39 rows (20 on average), as a recommender's variable-length features.
    let starts: Vec<i64> = (0..bags)
        .scan(0i64, |at, b| {
            let start = *at;
            *at += 1 + b * 7 % 39;
            Some(start)
        })
        .collect();
    let total = starts[bags as usize - 1] + 1 + (bags - 1) * 7 % 39;
    let mixed_indices = Tensor::from_vec((0..total).map(|i| i * 7919 % rows).collect::<Vec<_>>(), &[total]).unwrap();
    let mixed_offsets = Tensor::from_vec(starts, &[bags]).unwrap();
    g.bench_function(BenchmarkId::new("embedding_bag_sum_mixed", total), |bench| {
        bench.iter(|| {
            let out =
                oxten::ops::embedding_bag::call(&weight, &mixed_indices, &mixed_offsets, false, 0, false, None, false);
            black_box(out.unwrap().0)
        })
    });
    // The gradient side of a bag sum: 40 960 rows of 64 added into 2048 rows.
    let source = rand_tensor(bags * per * dim, DType::F32).view(&[bags * per, dim]);
    let into = Tensor::from_vec((0..bags * per).map(|i| i * 7919 % bags).collect::<Vec<_>>(), &[bags * per]).unwrap();
    let target = oxten::zeros(&[bags, dim]);
    g.bench_function(BenchmarkId::new("index_add_rows", bags * per), |bench| {
        bench.iter(|| black_box(oxten::ops::index_add::call(&target, 0, &into, &source, 1.into()).unwrap()))
    });
    // The weight's gradient of the bags: 40 960 rows of 64 summed into a 100 000-row table.
    g.bench_function(BenchmarkId::new("embedding_dense_backward", bags * per), |bench| {
        bench
            .iter(|| black_box(oxten::ops::embedding_dense_backward::call(&source, &indices, rows, -1, false).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, tiny_add, elementwise, reductions_and_layouts, embedding_bags);
criterion_main!(benches);
