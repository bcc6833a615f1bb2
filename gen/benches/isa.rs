//! The multiply-add throughput of this CPU's instruction forms that a bf16 product could use,
//! as GFLOP/s of one core (criterion's "elements" are floating-point operations: read its
//! `thrpt` line as Gelem/s = GFLOP/s):
//!
//! - `isa/f32_fma_zmm`: `vfmadd231ps` on 512-bit registers, 16 multiply-adds an instruction
//!   (what the f32 `gemm` kernel, and oxten's bf16 path after widening, run on);
//! - `isa/bf16_dot_zmm`: `vdpbf16ps` (AVX-512 BF16), 32 bf16 multiply-adds into f32 an
//!   instruction, the form a native bf16 kernel (oneDNN's `avx512_core_bf16`) is built on.
//!
//! Both run 24 independent accumulators (more than either instruction's latency × throughput),
//! all in registers, so the figure is the execution units' peak. Where `vdpbf16ps` issues at
//! the FMA's rate it doubles the multiply-adds, and oxten's bf16 products run on it
//! (`kernels/src/linalg/bf16_gemm/avx512_bf16.rs`); on the 2-core AMD EPYC VMs of 2026-11 it
//! measured 234 against 117 GFLOP/s per core (an earlier host gave half the f32 rate). A case is
//! skipped where the CPU lacks the instructions.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

/// Loop trips of one measured call.
const TRIPS: usize = 10_000;
/// Independent accumulators.
const ACC: usize = 24;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{ACC, TRIPS};
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma_f32(a: f32, b: f32) -> f32 {
        let (va, vb) = (_mm512_set1_ps(a), _mm512_set1_ps(b));
        let mut acc = [_mm512_setzero_ps(); ACC];
        for _ in 0..TRIPS {
            for r in acc.iter_mut() {
                *r = _mm512_fmadd_ps(va, vb, *r);
            }
        }
        let total = acc.iter().fold(_mm512_setzero_ps(), |s, r| _mm512_add_ps(s, *r));
        _mm512_reduce_add_ps(total)
    }

    /// # Safety
    /// The CPU must support AVX-512F and AVX-512 BF16.
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub unsafe fn dot_bf16(bits: u32) -> f32 {
        // Two bf16 values per 32-bit lane.
        let v: __m512bh = std::mem::transmute(_mm512_set1_epi32(bits as i32));
        let mut acc = [_mm512_setzero_ps(); ACC];
        for _ in 0..TRIPS {
            for r in acc.iter_mut() {
                *r = _mm512_dpbf16_ps(*r, v, v);
            }
        }
        let total = acc.iter().fold(_mm512_setzero_ps(), |s, r| _mm512_add_ps(s, *r));
        _mm512_reduce_add_ps(total)
    }
}

fn isa(c: &mut Criterion) {
    let mut g = c.benchmark_group("isa");
    g.measurement_time(Duration::from_secs(3)).sample_size(30);
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // Multiply-adds × 2 flops: 16 lanes an instruction.
            g.throughput(Throughput::Elements((TRIPS * ACC * 16 * 2) as u64));
            // SAFETY: AVX-512F was detected at run time.
            g.bench_function("f32_fma_zmm", |b| {
                b.iter(|| unsafe { x86::fma_f32(black_box(1.0001), black_box(0.9999)) })
            });
        }
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bf16") {
            // 32 bf16 products an instruction, each a multiply and an add.
            g.throughput(Throughput::Elements((TRIPS * ACC * 32 * 2) as u64));
            // SAFETY: AVX-512F and AVX-512 BF16 were detected at run time.
            g.bench_function("bf16_dot_zmm", |b| b.iter(|| unsafe { x86::dot_bf16(black_box(0x3f80_3f80)) }));
        }
    }
    g.finish();
}

criterion_group!(benches, isa);
criterion_main!(benches);
