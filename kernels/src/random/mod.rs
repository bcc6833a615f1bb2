//! Random sampling: the in-place distributions (`uniform_`, `normal_`, `random_`,
//! `bernoulli_`), the factories built on them (`rand`, `randn`, `randint`, the `*_like` forms,
//! `bernoulli`, `randperm`, `normal` with tensor arguments, and their `out=` overloads) and
//! dropout (`native_dropout` and its backward, `dropout`, `feature_dropout`).
//!
//! Every kernel draws from a [`Generator`] (the one passed, else the default generator) through
//! Philox blocks: it reserves the blocks it needs up front ([`Generator::reserve`]) and element
//! `i` of the tensor's memory (in memory order, for a dense tensor) is computed from the block(s)
//! at a fixed position `i / per_block`. Work is split over the thread pool in chunks that start at block
//! boundaries, so the values never depend on the number of threads. A tensor that is not dense
//! (a strided slice) is sampled into a contiguous temporary and copied in.
//!
//! The argument checks and their messages are PyTorch's (`DistributionTemplates.h`,
//! `Dropout.cpp`); the values are oxten's own (Philox, not PyTorch's CPU mt19937).

#[cfg(feature = "cuda")]
pub(crate) mod cuda;
mod dist;
mod distributions;
mod dropout;
mod factories;
mod multinomial;
mod out;
mod sample;

use crate::iter::{copy_, has_internal_overlap, MemOverlap, GRAIN_SIZE};
#[cfg(target_arch = "x86_64")]
use crate::iter::{simd_level, SimdLevel};
use oxten_runtime::generator::{default_generator, PhiloxStream};
use oxten_runtime::{DType, Device, Element, Error, Generator, MemoryFormat, Result, Tensor};
use sample::Sampler;

/// Elements per parallel task: a multiple of every sampler's elements per batch of blocks.
const CHUNK: usize = 1 << 14;

/// The generator to draw from: the one given, else the default one.
fn generator_or_default(g: Option<&Generator>) -> Generator {
    g.cloned().unwrap_or_else(default_generator)
}

/// A double as C++ streams print it (`%g`: six significant digits, `1e+06`, `nan`, `inf`), for
/// messages that must read like PyTorch's.
pub(crate) fn cpp_double(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // Round to 6 significant digits first: the exponent is the rounded value's.
    let sci = format!("{v:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), exp.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    }
}

use crate::support::not_implemented;

/// The C++ type name PyTorch's `CHECK_OUT_OF_BOUNDS` prints for a dtype.
fn cpp_type_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "bool",
        DType::U8 => "unsigned char",
        DType::I8 => "signed char",
        DType::I16 => "short int",
        DType::I32 => "int",
        DType::I64 => "long int",
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        DType::F32 => "float",
        DType::F64 => "double",
    }
}

/// Errors if writing `t` would write some element twice (an expanded tensor).
pub(super) fn check_no_internal_overlap(t: &Tensor) -> Result<()> {
    if has_internal_overlap(t) == MemOverlap::Yes {
        return Err(Error::overlap(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory \
             location. Please clone() the tensor before performing the operation.",
        ));
    }
    Ok(())
}

/// `sampler.fill(stream, first, out)` compiled for the CPU's best instruction set (the samplers
/// are `#[inline(always)]`, so each level gets its own vectorized copy). Plain multiplies and
/// adds are never fused into FMAs, so every level computes the same bits.
#[inline(always)]
fn fill_chunk<T, S: Sampler<T>>(sampler: &S, stream: &PhiloxStream, first: u64, out: &mut [T]) {
    #[cfg(target_arch = "x86_64")]
    {
        match simd_level() {
            // SAFETY: `simd_level` is at most what the CPU supports, so the wrapper's target
            // features are available.
            SimdLevel::Avx512 => return unsafe { fill_avx512(sampler, stream, first, out) },
            // SAFETY: as above.
            SimdLevel::Avx2 => return unsafe { fill_avx2(sampler, stream, first, out) },
            SimdLevel::Default => {}
        }
    }
    sampler.fill(stream, first, out)
}

/// [`Sampler::fill`] compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2, FMA and F16C (the caller checked at run time).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn fill_avx2<T, S: Sampler<T>>(sampler: &S, stream: &PhiloxStream, first: u64, out: &mut [T]) {
    sampler.fill(stream, first, out)
}

/// [`Sampler::fill`] compiled for AVX-512.
///
/// # Safety
/// The CPU has every feature enabled here (the caller checked at run time).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn fill_avx512<T, S: Sampler<T>>(sampler: &S, stream: &PhiloxStream, first: u64, out: &mut [T]) {
    sampler.fill(stream, first, out)
}

/// Fills the CPU tensor `t` (of element type `T`) with `sampler`'s values: reserves
/// `ceil(numel / S::PER_BLOCK)` blocks of `gen`, and fills `t`'s elements in memory order (through
/// a contiguous temporary when `t` is not dense), in chunks of [`CHUNK`] elements that each start
/// at a block boundary, in parallel for large tensors.
fn fill_random<T: Element, S: Sampler<T>>(t: &Tensor, gen: &Generator, sampler: S) -> Result<()> {
    debug_assert_eq!(t.dtype(), T::DTYPE);
    debug_assert_eq!(CHUNK % S::PER_BLOCK, 0);
    let n = t.numel() as usize;
    if n == 0 {
        return Ok(());
    }
    let stream = gen.reserve(n.div_ceil(S::PER_BLOCK) as u64);
    let dense = if t.is_non_overlapping_and_dense() {
        t.clone()
    } else {
        Tensor::empty(&t.sizes(), t.dtype(), Device::Cpu, MemoryFormat::Contiguous)?
    };
    let blocks_per_chunk = (CHUNK / S::PER_BLOCK) as u64;
    let run = |c: usize, chunk: &mut [T]| fill_chunk(&sampler, &stream, c as u64 * blocks_per_chunk, chunk);
    // SAFETY: `dense` is a CPU tensor of element type `T` whose `n` elements occupy exactly the
    // `n` slots from `data_ptr` on (non-overlapping and dense, strides non-negative). Every
    // element is written below before anything reads it, and `assume_init` follows as the
    // deferred-storage contract asks; the slice is the only access while it lives.
    unsafe {
        let (ptr, deferred) = dense.data_ptr_for_overwrite();
        let out = std::slice::from_raw_parts_mut(ptr.cast::<T>(), n);
        if n >= GRAIN_SIZE && oxten_runtime::parallel::threads_now() > 1 {
            oxten_runtime::parallel::chunks_mut(out, CHUNK, |c, chunk| run(c, chunk));
        } else {
            out.chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| run(c, chunk));
        }
        if deferred {
            dense.storage().assume_init();
        }
    }
    if !dense.is_same(t) {
        copy_(t, &dense)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_like_cpp() {
        for (v, s) in [
            (1.0, "1"),
            (-0.5, "-0.5"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (3e38, "3e+38"),
            (-1e39, "-1e+39"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.7, "0.7"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
            (65504.0, "65504"),
            (1.0 / 3.0, "0.333333"),
        ] {
            assert_eq!(cpp_double(v), s, "{v}");
        }
    }

    /// The values do not depend on the number of threads: the same generator state gives the
    /// same tensor on one thread (inside a one-thread rayon pool, where parallel loops run
    /// serially) and on all of the pool's.
    #[test]
    fn values_do_not_depend_on_the_thread_count() {
        let sample = |threads: usize, dtype: DType| {
            let draw = || {
                let t = Tensor::empty(&[3 * CHUNK as i64 + 5], dtype, Device::Cpu, MemoryFormat::Contiguous).unwrap();
                let g = Generator::with_seed(11);
                match dtype {
                    DType::F32 => dist::normal_cpu(&t, 0.0, 1.0, &g).unwrap(),
                    DType::I64 => {
                        dist::random_cpu(&t, dist::random_range(dtype, -5, Some(1 << 40)).unwrap(), &g).unwrap()
                    }
                    _ => dist::uniform_cpu(&t, 0.0, 1.0, &g).unwrap(),
                }
                t.to_f64_vec().unwrap()
            };
            if threads == 1 {
                rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(draw)
            } else {
                draw()
            }
        };
        // Under Miri, one float and one integer fill (the same chunked write paths, cheaper
        // transforms): the others take most of an hour there.
        let dtypes: &[DType] =
            if cfg!(miri) { &[DType::F64, DType::I64] } else { &[DType::F32, DType::F64, DType::BF16, DType::I64] };
        for &dtype in dtypes {
            assert_eq!(sample(1, dtype), sample(0, dtype), "{dtype:?}");
        }
        // Nor on the instruction set the samplers are compiled for (Miri runs the scalar code
        // only).
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            use crate::iter::{detected_simd_level, set_simd_level};
            let best = sample(2, DType::F32);
            set_simd_level(SimdLevel::Default);
            let baseline = sample(2, DType::F32);
            set_simd_level(detected_simd_level());
            assert_eq!(best, baseline);
        }
    }
}
