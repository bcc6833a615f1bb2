//! The fusion benchmark's cases timed in alternation (eager CPU, lazy fused, lazy unfused, one
//! of each per round), so that a noisy host slows all three alike; prints medians and ratios.
//! `benches/fusion.rs` runs the same cases under criterion.
//!
//! `cargo run --release -p oxten-lazy --example fusion_timing`

use oxten::Tensor;
use oxten_lazy::{init, set_fusion, sync, LAZY};
use std::time::Instant;

fn arithmetic(x: &Tensor) -> Tensor {
    x.mul_scalar(1.5).add_scalar(0.25).relu().sub_scalar(0.5).mul_scalar(2.0)
}

fn with_sigmoid(x: &Tensor) -> Tensor {
    x.mul_scalar(1.5).add_scalar(0.25).relu().sub_scalar(0.5).sigmoid()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Milliseconds of one run of `f`.
fn time(f: impl FnOnce() -> Tensor) -> f64 {
    let start = Instant::now();
    let y = f();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    drop(y);
    ms
}

fn main() {
    init().unwrap();
    let n = 1usize << 24;
    let x = Tensor::from_vec((0..n).map(|i| (i % 1000) as f32 / 500.0 - 1.0).collect(), &[n as i64]).unwrap();
    let lx = x.to_device(LAZY);
    sync(&[&lx]).unwrap();
    let lazy = |chain: fn(&Tensor) -> Tensor| {
        let y = chain(&lx);
        sync(&[&y]).unwrap();
        y
    };
    for (name, chain) in [("arithmetic", arithmetic as fn(&Tensor) -> Tensor), ("with_sigmoid", with_sigmoid)] {
        let (mut eager, mut fused, mut unfused) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..31 {
            eager.push(time(|| chain(&x)));
            fused.push(time(|| lazy(chain)));
            set_fusion(false);
            unfused.push(time(|| lazy(chain)));
            set_fusion(true);
        }
        let (e, f, u) = (median(eager), median(fused), median(unfused));
        println!(
            "{name:>12}: cpu eager {e:6.2} ms | lazy fused {f:6.2} ms ({:.2}x faster) | lazy unfused {u:6.2} ms",
            e / f
        );
    }
}
