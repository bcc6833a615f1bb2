//! Run-time CPU feature dispatch for the inner loops.
//!
//! The crate is compiled for baseline x86-64 (SSE2). The contiguous inner loops of the typed
//! kernels are written once, as an [`InnerLoop`] whose `run` is `#[inline(always)]`, and
//! [`run`] calls it through a `#[target_feature]` wrapper for the best instruction set the CPU
//! has: the loop body (with the kernel's closure, and the `#[inline(always)]` element math of
//! `oxten-kernels`) is inlined into the wrapper and vectorized for AVX2 or AVX-512 there. Only
//! contiguous loops are dispatched (strided loops do not vectorize), so each kernel gets at most
//! three copies of its contiguous loops.
//!
//! The level is detected once. `OXTEN_CPU_CAPABILITY=default|avx2|avx512` (read once, like
//! PyTorch's `ATEN_CPU_CAPABILITY`) or [`set_simd_level`] lower it, e.g. to test the fallback
//! paths on a machine that has AVX-512. Plain multiplies and adds are never fused into FMAs
//! (Rust does not contract floating-point expressions), so every level computes bit-identical
//! results.

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level the inner loops are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum SimdLevel {
    /// Baseline x86-64 (SSE2), and every non-x86 target.
    Default = 1,
    /// AVX2 + FMA + F16C (x86-64-v3).
    Avx2 = 2,
    /// AVX-512 F/BW/VL/DQ on top of AVX2.
    Avx512 = 3,
}

impl SimdLevel {
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Default => "default",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
        }
    }
    fn from_u8(v: u8) -> SimdLevel {
        match v {
            3 => SimdLevel::Avx512,
            2 => SimdLevel::Avx2,
            _ => SimdLevel::Default,
        }
    }
}

/// 0 until detected.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The level the inner loops run at (detected on first use).
#[inline(always)]
pub fn simd_level() -> SimdLevel {
    match LEVEL.load(Ordering::Relaxed) {
        0 => init_level(),
        v => SimdLevel::from_u8(v),
    }
}

/// The best level this CPU supports.
pub fn detected_simd_level() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c");
        let avx512 = avx2
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512dq");
        if avx512 {
            return SimdLevel::Avx512;
        }
        if avx2 {
            return SimdLevel::Avx2;
        }
    }
    SimdLevel::Default
}

#[cold]
fn init_level() -> SimdLevel {
    let best = detected_simd_level();
    let wanted = match std::env::var("OXTEN_CPU_CAPABILITY").as_deref() {
        Ok("default") => SimdLevel::Default,
        Ok("avx2") => SimdLevel::Avx2,
        _ => SimdLevel::Avx512,
    };
    let level = best.min(wanted);
    LEVEL.store(level as u8, Ordering::Relaxed);
    level
}

/// Sets the level (at most what the CPU supports) and returns the level now in effect. For tests
/// and benchmarks of the fallback paths; results are the same at every level.
pub fn set_simd_level(level: SimdLevel) -> SimdLevel {
    let l = level.min(detected_simd_level());
    LEVEL.store(l as u8, Ordering::Relaxed);
    l
}

/// A loop to compile once per instruction-set level. Implementations mark `run`
/// `#[inline(always)]`, so that it is inlined into the `#[target_feature]` wrappers of [`run`].
pub(crate) trait InnerLoop {
    /// # Safety
    /// Whatever the implementing type requires of the pointers it holds.
    unsafe fn run(self);
}

/// Runs `l` compiled for the current [`simd_level`].
///
/// # Safety
/// As for `l.run()`.
#[inline(always)]
pub(crate) unsafe fn run<L: InnerLoop>(l: L) {
    #[cfg(target_arch = "x86_64")]
    {
        match simd_level() {
            // SAFETY: the level is at most what `detected_simd_level` found on this CPU, so the
            // wrapper's target features are available; `l.run()`'s own contract is forwarded.
            SimdLevel::Avx512 => return unsafe { run_avx512(l) },
            // SAFETY: as above.
            SimdLevel::Avx2 => return unsafe { run_avx2(l) },
            SimdLevel::Default => {}
        }
    }
    // SAFETY: forwarded to the caller.
    unsafe { l.run() }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn run_avx2<L: InnerLoop>(l: L) {
    // SAFETY: forwarded from `run`.
    unsafe { l.run() }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn run_avx512<L: InnerLoop>(l: L) {
    // SAFETY: forwarded from `run`.
    unsafe { l.run() }
}

/// The maps run in fixed-size chunks: LLVM vectorizes and fully unrolls each chunk, so that
/// several independent vectors are in flight (a long element function such as `exp` would
/// otherwise be bound by the latency of one vector's dependency chain).
const CHUNK: usize = 64;

/// `o[i] = f(a[i])` for `i < n`.
pub(crate) struct Map1<A, O, F> {
    pub o: *mut O,
    pub a: *const A,
    pub n: usize,
    pub f: F,
}

impl<A: Copy, O, F: Fn(A) -> O> InnerLoop for Map1<A, O, F> {
    /// # Safety
    /// `o` and `a` address `n` valid elements; `o` may equal `a` but not partially overlap it.
    #[inline(always)]
    unsafe fn run(self) {
        let Map1 { o, a, n, f } = self;
        let mut i = 0;
        while i + CHUNK <= n {
            for k in i..i + CHUNK {
                // SAFETY: `k < n` (see the contract).
                unsafe { *o.add(k) = f(*a.add(k)) };
            }
            i += CHUNK;
        }
        for k in i..n {
            // SAFETY: `k < n`.
            unsafe { *o.add(k) = f(*a.add(k)) };
        }
    }
}

/// `o[i] = f(a[i], b[i])` for `i < n`.
pub(crate) struct Map2<A, B, O, F> {
    pub o: *mut O,
    pub a: *const A,
    pub b: *const B,
    pub n: usize,
    pub f: F,
}

impl<A: Copy, B: Copy, O, F: Fn(A, B) -> O> InnerLoop for Map2<A, B, O, F> {
    /// # Safety
    /// `o`, `a` and `b` address `n` valid elements; `o` may equal an input but not partially
    /// overlap one.
    #[inline(always)]
    unsafe fn run(self) {
        let Map2 { o, a, b, n, f } = self;
        let mut i = 0;
        while i + CHUNK <= n {
            for k in i..i + CHUNK {
                // SAFETY: `k < n` (see the contract).
                unsafe { *o.add(k) = f(*a.add(k), *b.add(k)) };
            }
            i += CHUNK;
        }
        for k in i..n {
            // SAFETY: `k < n`.
            unsafe { *o.add(k) = f(*a.add(k), *b.add(k)) };
        }
    }
}

/// `o[i] = f(a[i], b[i], c[i])` for `i < n`.
pub(crate) struct Map3<A, B, C, O, F> {
    pub o: *mut O,
    pub a: *const A,
    pub b: *const B,
    pub c: *const C,
    pub n: usize,
    pub f: F,
}

impl<A: Copy, B: Copy, C: Copy, O, F: Fn(A, B, C) -> O> InnerLoop for Map3<A, B, C, O, F> {
    /// # Safety
    /// As for [`Map2`], with three inputs.
    #[inline(always)]
    unsafe fn run(self) {
        let Map3 { o, a, b, c, n, f } = self;
        let mut i = 0;
        while i + CHUNK <= n {
            for k in i..i + CHUNK {
                // SAFETY: `k < n` (see the contract).
                unsafe { *o.add(k) = f(*a.add(k), *b.add(k), *c.add(k)) };
            }
            i += CHUNK;
        }
        for k in i..n {
            // SAFETY: `k < n`.
            unsafe { *o.add(k) = f(*a.add(k), *b.add(k), *c.add(k)) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_settable() {
        assert!(SimdLevel::Default < SimdLevel::Avx2 && SimdLevel::Avx2 < SimdLevel::Avx512);
        let best = detected_simd_level();
        let before = simd_level();
        assert!(before <= best);
        assert_eq!(set_simd_level(SimdLevel::Default), SimdLevel::Default);
        assert_eq!(simd_level(), SimdLevel::Default);
        assert_eq!(set_simd_level(SimdLevel::Avx512), best);
        set_simd_level(before);
    }

    #[test]
    fn maps_compute_the_same_at_every_level() {
        let a: Vec<f32> = (0..1000).map(|i| i as f32 * 0.37 - 100.0).collect();
        let b: Vec<f32> = (0..1000).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        let before = simd_level();
        let mut results = Vec::new();
        for l in [SimdLevel::Default, SimdLevel::Avx2, SimdLevel::Avx512] {
            set_simd_level(l);
            let mut o = vec![0f32; 1000];
            // SAFETY: all three slices have 1000 elements.
            unsafe {
                run(Map2 { o: o.as_mut_ptr(), a: a.as_ptr(), b: b.as_ptr(), n: 1000, f: |x: f32, y: f32| x * y + 1.0 })
            };
            results.push(o);
        }
        set_simd_level(before);
        assert_eq!(results[0], results[1]);
        assert_eq!(results[0], results[2]);
    }
}
