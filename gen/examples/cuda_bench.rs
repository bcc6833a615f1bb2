//! GPU benchmarks of the CUDA backend, one JSON object per line (`scripts/bench_cuda_pytorch.py`
//! runs the same cases in PyTorch; `scripts/bench_cuda.sh` runs both on the GPU machine).
//!
//! Timing: CUDA events around `iters` launches after a warm-up (module load, NVRTC compile,
//! cuBLAS handle), median over `reps` repetitions; random data.
//!
//! `cargo run --release --features cuda --example cuda_bench [-- --quick]`

use oxten::{cuda, DType, Device, Tensor};

/// GPU benchmarks of the CUDA backend, one JSON object per line.
#[derive(clap::Parser)]
struct Args {
    /// Fewer repetitions (a smoke run).
    #[arg(long)]
    quick: bool,
    /// Only the transformer training steps.
    #[arg(long)]
    transformer: bool,
}

const GPU: Device = Device::Cuda(0);

fn rand(n: i64, dtype: DType) -> Tensor {
    // Uniform values from a counter hash on the host: never zeros, reproducible.
    let v: Vec<f32> = (0..n as u64)
        .map(|i| {
            let h = (i.wrapping_mul(0x9e3779b97f4a7c15) >> 40) as f32 / (1u64 << 24) as f32;
            h * 2.0 - 1.0
        })
        .collect();
    Tensor::from_vec(v, &[n]).unwrap().to_dtype(dtype).to_device(GPU)
}

/// Median milliseconds per call of `f`, timed with events over `iters` calls, `reps` times.
fn time_ms(iters: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    cuda::synchronize(GPU).unwrap();
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let (a, b) = (cuda::Event::new(GPU).unwrap(), cuda::Event::new(GPU).unwrap());
            let s = cuda::current_stream(GPU);
            a.record(s).unwrap();
            for _ in 0..iters {
                f();
            }
            b.record(s).unwrap();
            b.synchronize().unwrap();
            a.elapsed_time(&b).unwrap() as f64 / iters as f64
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Median wall-clock microseconds per call (host-side cost included), synchronising once per
/// batch.
fn wall_us(iters: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..100 {
        f();
    }
    cuda::synchronize(GPU).unwrap();
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..iters {
                f();
            }
            cuda::synchronize(GPU).unwrap();
            t.elapsed().as_secs_f64() * 1e6 / iters as f64
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn report(case: &str, ms: f64, bytes: f64, flops: f64) {
    let tbs = if bytes > 0.0 { bytes / (ms * 1e-3) / 1e12 } else { 0.0 };
    let tflops = if flops > 0.0 { flops / (ms * 1e-3) / 1e12 } else { 0.0 };
    println!(
        "{{\"lib\": \"oxten\", \"case\": \"{case}\", \"ms\": {ms:.5}, \"tb_s\": {tbs:.3}, \"tflop_s\": {tflops:.1}}}"
    );
}

fn main() {
    oxten::init();
    if !cuda::is_available() {
        eprintln!("CUDA is not available: {}", cuda::unavailable_because().unwrap_or("?"));
        return;
    }
    let args = <Args as clap::Parser>::parse();
    let quick = args.quick;
    eprintln!("device: {} (sm_{:?})", cuda::device_name(GPU).unwrap(), cuda::compute_capability(GPU).unwrap());
    if args.transformer {
        for (batch, amp) in [(16, false), (16, true), (64, true)] {
            let ms = transformer_step_ms(batch, amp);
            let case = format!("gpt_step_b{batch}_{}", if amp { "bf16_autocast" } else { "f32" });
            println!("{{\"lib\": \"oxten\", \"case\": \"{case}\", \"ms\": {ms:.3}}}");
        }
        return;
    }
    let t0 = std::time::Instant::now();
    let c0 = cuda::compile_stats();
    // Copy bandwidth: the ceiling (bytes read + written).
    for p in [24u32, 28] {
        let n = 1i64 << p;
        let x = rand(n, DType::F32);
        let y = oxten::empty_like(&x);
        let ms = time_ms(10, 7, || {
            y.copy_(&x);
        });
        report(&format!("copy_f32_2^{p}"), ms, 8.0 * n as f64, 0.0);
    }
    for dtype in [DType::F32, DType::BF16] {
        let name = if dtype == DType::F32 { "f32" } else { "bf16" };
        for p in [24u32, 28] {
            let n = 1i64 << p;
            let es = dtype.size() as f64;
            let (x, y) = (rand(n, dtype), rand(n, dtype));
            let out = oxten::empty_like(&x);
            let ms = time_ms(10, 7, || {
                oxten::add_out(&x, &y, &out);
            });
            report(&format!("add_{name}_2^{p}"), ms, 3.0 * es * n as f64, 0.0);
            let ms = time_ms(10, 7, || {
                oxten::mul_out(&x, &y, &out);
            });
            report(&format!("mul_{name}_2^{p}"), ms, 3.0 * es * n as f64, 0.0);
            let ms = time_ms(10, 7, || {
                oxten::exp_out(&x, &out);
            });
            report(&format!("exp_{name}_2^{p}"), ms, 2.0 * es * n as f64, 0.0);
            // Allocating form (the caching allocator in the loop).
            let ms = time_ms(10, 7, || {
                let _ = x.add(&y);
            });
            report(&format!("add_alloc_{name}_2^{p}"), ms, 3.0 * es * n as f64, 0.0);
        }
    }
    for p in [24u32, 28] {
        let n = 1i64 << p;
        let x = rand(n, DType::F32);
        let ms = time_ms(10, 7, || {
            let _ = x.sum();
        });
        report(&format!("sum_f32_2^{p}"), ms, 4.0 * n as f64, 0.0);
    }
    // Transposed add: the strided loop.
    {
        let n = 8192i64;
        let x = rand(n * n, DType::F32).reshape(&[n, n]);
        let y = rand(n * n, DType::F32).reshape(&[n, n]).t();
        let ms = time_ms(5, 5, || {
            let _ = x.add(&y);
        });
        report("add_transposed_f32_8192^2", ms, 12.0 * (n * n) as f64, 0.0);
    }
    // Softmax over rows.
    {
        let n = 4096i64;
        let x = rand(n * n, DType::F32).reshape(&[n, n]);
        let ms = time_ms(10, 7, || {
            let _ = x.softmax(1);
        });
        report("softmax_f32_4096^2", ms, 8.0 * (n * n) as f64, 0.0);
    }
    // An MLP SGD step (784-256-10, batch 64): bound by the per-op cost on the host.
    {
        let x = rand(64 * 784, DType::F32).reshape(&[64, 784]);
        let y = Tensor::from_vec((0..64).map(|i| (i % 10) as i64).collect::<Vec<_>>(), &[64]).unwrap().to_device(GPU);
        let w1 = rand(256 * 784, DType::F32).reshape(&[256, 784]).mul_scalar(0.05).requires_grad_(true);
        let b1 = rand(256, DType::F32).mul_scalar(0.05).requires_grad_(true);
        let w2 = rand(10 * 256, DType::F32).reshape(&[10, 256]).mul_scalar(0.05).requires_grad_(true);
        let b2 = rand(10, DType::F32).mul_scalar(0.05).requires_grad_(true);
        let params = [w1.clone(), b1.clone(), w2.clone(), b2.clone()];
        let us = wall_us(200, 9, || {
            let h = oxten::linear(&x, &w1, Some(&b1)).relu();
            let logits = oxten::linear(&h, &w2, Some(&b2));
            let loss = oxten::nll_loss(&logits.log_softmax(1), &y);
            loss.backward();
            oxten::autograd::no_grad(|| {
                for p in &params {
                    let g = p.grad().unwrap();
                    p.sub_(&g.mul_scalar(0.01));
                    p.set_grad(None);
                }
            });
        });
        println!("{{\"lib\": \"oxten\", \"case\": \"mlp_sgd_step\", \"us\": {us:.2}}}");
    }
    // Matrix products.
    let mm_sizes: &[(DType, i64, &str)] = if quick {
        &[(DType::F32, 2048, "f32"), (DType::BF16, 4096, "bf16")]
    } else {
        &[(DType::F32, 4096, "f32"), (DType::BF16, 8192, "bf16"), (DType::F16, 8192, "f16")]
    };
    for &(dtype, n, name) in mm_sizes {
        let a = rand(n * n, dtype).reshape(&[n, n]);
        let b = rand(n * n, dtype).reshape(&[n, n]);
        let ms = time_ms(5, 5, || {
            let _ = a.mm(&b);
        });
        report(&format!("matmul_{name}_{n}"), ms, 0.0, 2.0 * (n * n * n) as f64);
        if dtype == DType::F32 {
            cuda::set_allow_tf32(true);
            let ms = time_ms(5, 5, || {
                let _ = a.mm(&b);
            });
            report(&format!("matmul_tf32_{n}"), ms, 0.0, 2.0 * (n * n * n) as f64);
            cuda::set_allow_tf32(false);
        }
    }
    // Per-op cost: a 1-element add, allocating and out=, wall clock.
    {
        let (x, y) = (rand(1, DType::F32), rand(1, DType::F32));
        let out = oxten::empty_like(&x);
        let us = wall_us(2000, 9, || {
            let _ = x.add(&y);
        });
        println!("{{\"lib\": \"oxten\", \"case\": \"add_1_alloc\", \"us\": {us:.2}}}");
        let us = wall_us(2000, 9, || {
            oxten::add_out(&x, &y, &out);
        });
        println!("{{\"lib\": \"oxten\", \"case\": \"add_1_out\", \"us\": {us:.2}}}");
        let us = wall_us(200, 9, || {
            let _ = x.add(&y).item::<f32>().unwrap();
        });
        println!("{{\"lib\": \"oxten\", \"case\": \"add_1_item\", \"us\": {us:.2}}}");
    }
    let c1 = cuda::compile_stats();
    println!(
        "{{\"lib\": \"oxten\", \"case\": \"nvrtc\", \"compiles\": {}, \"disk_hits\": {}, \"compile_ms\": {}, \"ms_per_compile\": {:.1}, \"total_s\": {:.2}}}",
        c1.compiles - c0.compiles,
        c1.disk_hits - c0.disk_hits,
        c1.compile_ms - c0.compile_ms,
        (c1.compile_ms - c0.compile_ms) as f64 / (c1.compiles - c0.compiles).max(1) as f64,
        t0.elapsed().as_secs_f64()
    );
}

/// Wall-clock milliseconds per training step (median of 3 batches of 10 after 3 warm-up steps)
/// of a GPT written with functional operators, as `scripts/bench_cuda_pytorch.py` writes it:
/// 6 layers, width 512, 8 heads, context 256, vocabulary 4096; causal attention, tanh-GELU MLP,
/// cross-entropy, gradient clipping at 1.0 and fused AdamW; optionally under bf16 autocast.
fn transformer_step_ms(batch: i64, amp: bool) -> f64 {
    use oxten::optim::{AdamOpts, AdamW, Optimizer};
    let (layers, d, heads, t, vocab) = (6usize, 512i64, 8i64, 256i64, 4096i64);
    let param = |shape: &[i64], scale: f64| {
        rand(shape.iter().product(), DType::F32).reshape(shape).mul_scalar(scale).requires_grad_(true)
    };
    let (emb, pos, lnf_w, lnf_b) = (
        param(&[vocab, d], 0.02),
        param(&[t, d], 0.02),
        param(&[d], 0.0).add_scalar(1.0).detach().requires_grad_(true),
        param(&[d], 0.0),
    );
    let blocks: Vec<[Tensor; 8]> = (0..layers)
        .map(|_| {
            let one = || param(&[d], 0.0).add_scalar(1.0).detach().requires_grad_(true);
            [
                one(),
                param(&[d], 0.0),
                param(&[3 * d, d], 0.02),
                param(&[d, d], 0.02),
                one(),
                param(&[d], 0.0),
                param(&[4 * d, d], 0.02),
                param(&[d, 4 * d], 0.02),
            ]
        })
        .collect();
    let mut params = vec![emb.clone(), pos.clone(), lnf_w.clone(), lnf_b.clone()];
    params.extend(blocks.iter().flat_map(|b| b.iter().cloned()));
    let tokens = Tensor::from_vec((0..batch * t).map(|i| (i * 7919) % vocab).collect::<Vec<i64>>(), &[batch, t])
        .unwrap()
        .to_device(GPU);
    let targets =
        Tensor::from_vec((0..batch * t).map(|i| (i * 104729 + 1) % vocab).collect::<Vec<i64>>(), &[batch * t])
            .unwrap()
            .to_device(GPU);
    let mut opt = AdamW::new(params.clone(), AdamOpts { lr: 3e-4, fused: true, ..AdamOpts::adamw() }).unwrap();
    let mut step = || {
        let logits = {
            let _amp = amp.then(|| oxten::autocast::AutocastGuard::new(GPU, DType::BF16));
            let ln = |x: &Tensor, w: &Tensor, b: &Tensor| oxten::layer_norm(x, &[d], Some(w), Some(b));
            let mut x = oxten::embedding(&emb, &tokens).add(&pos);
            for [l1w, l1b, qkv_w, proj_w, l2w, l2b, fc1, fc2] in &blocks {
                let qkv = oxten::linear(&ln(&x, l1w, l1b), qkv_w, None)
                    .reshape(&[batch, t, 3, heads, d / heads])
                    .permute(&[2, 0, 3, 1, 4]);
                let opts = oxten::options::ScaledDotProductAttentionOpts { is_causal: true, ..Default::default() };
                let att = oxten::scaled_dot_product_attention_with(
                    &qkv.select(0, 0),
                    &qkv.select(0, 1),
                    &qkv.select(0, 2),
                    opts,
                );
                x = x.add(&oxten::linear(&att.transpose(1, 2).reshape(&[batch, t, d]), proj_w, None));
                let h = oxten::linear(&ln(&x, l2w, l2b), fc1, None)
                    .gelu_with(oxten::options::GeluOpts { approximate: "tanh" });
                x = x.add(&oxten::linear(&h, fc2, None));
            }
            oxten::linear(&ln(&x, &lnf_w, &lnf_b), &emb, None).reshape(&[batch * t, vocab])
        };
        let loss = oxten::cross_entropy_loss(&logits, &targets);
        loss.backward();
        oxten::nn::clip_grad_norm_(&params, 1.0).unwrap();
        opt.step().unwrap();
        for p in &params {
            p.set_grad(None);
        }
    };
    for _ in 0..3 {
        step();
    }
    cuda::synchronize(GPU).unwrap();
    let mut v: Vec<f64> = (0..3)
        .map(|_| {
            let t0 = std::time::Instant::now();
            for _ in 0..10 {
                step();
            }
            cuda::synchronize(GPU).unwrap();
            t0.elapsed().as_secs_f64() * 1e3 / 10.0
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[1]
}
