//! Random numbers on CUDA: the same counter-based Philox4x32-10 stream as the CPU (see
//! `oxten_runtime::generator`), with each thread computing one Philox block and the elements
//! that block feeds. Elements take their words exactly as on the CPU (`uniform_` of f32, f64,
//! f16 and bf16 and `bernoulli_` give the CPU's bits for the same generator state; `normal_`
//! uses the device's `log` and `sincospi`, within a few ulps of the CPU's), so a seed gives the
//! same stream on either device and whatever the launch configuration.
//!
//! Each CUDA device has a default generator ([`default_generator`], seeded by
//! [`manual_seed`]); a `Generator` passed to an operator is used as it is.

use super::check_no_internal_overlap;
use super::dist::{check_p, check_std, check_uniform};
use super::dropout::native_dropout_impl;
use crate::cuda::launch::not_implemented;
use crate::cuda::launch::{blocks_for, dtype_code, instance, launch, storage_type, InstanceKey};
use crate::generated::decls::{BernoulliFloatInplaceCuda, NativeDropoutCuda, NormalInplaceCuda, UniformInplaceCuda};
use crate::Cuda;
use oxten_runtime::cuda::MAX_DEVICES;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{DType, Device, Error, Generator, MemoryFormat, Result, Tensor};
use std::ffi::c_void;
use std::fmt::Write;
use std::sync::OnceLock;

static GENERATORS: [OnceLock<Generator>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];

/// The default generator of CUDA device `index` (`torch.cuda.default_generators[index]`).
pub fn default_generator(index: u8) -> Generator {
    GENERATORS[(index as usize).min(MAX_DEVICES - 1)].get_or_init(Generator::new).clone()
}

/// Seeds the default generator of every CUDA device (`torch.cuda.manual_seed_all`).
pub fn manual_seed(seed: u64) {
    for i in 0..MAX_DEVICES {
        default_generator(i as u8).manual_seed(seed);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dist {
    Uniform = 0,
    Normal = 1,
    Bernoulli = 2,
}

/// Elements one Philox block feeds.
fn per_block(dist: Dist, dtype: DType) -> u64 {
    match (dist, dtype) {
        (Dist::Uniform | Dist::Normal, DType::F64) => 2,
        _ => 4,
    }
}

static FAMILY: u8 = 0;

fn source(dist: Dist, dtype: DType) -> String {
    let mut s = String::from(crate::cuda::PRELUDE);
    let _ = writeln!(s, "typedef {} S;", storage_type(dtype));
    s.push_str(
        r#"struct OxWords { unsigned w[4]; };
// Philox4x32-10 of the counter (ctr, 0) under the key (k0, k1): the CPU's `philox4x32_10`.
__device__ __forceinline__ OxWords ox_philox(unsigned long long ctr, unsigned k0, unsigned k1) {
  unsigned c0 = (unsigned)ctr, c1 = (unsigned)(ctr >> 32), c2 = 0, c3 = 0;
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    unsigned hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    unsigned hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    unsigned n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
  }
  OxWords o; o.w[0] = c0; o.w[1] = c1; o.w[2] = c2; o.w[3] = c3;
  return o;
}
__device__ __forceinline__ float ox_unit_bits(unsigned w, int digits) {
  return (float)(w >> (32 - digits)) * __int_as_float((127 - digits) << 23);
}
__device__ __forceinline__ double ox_unit_f64(unsigned hi, unsigned lo) {
  unsigned long long u = ((unsigned long long)hi << 32) | lo;
  return (double)(long long)(u >> 11) * (1.0 / 9007199254740992.0);
}
"#,
    );
    let digits = match dtype {
        DType::F16 => 11,
        DType::BF16 => 8,
        _ => 24,
    };
    // `a`, `b`: from/range (uniform), mean/std (normal); `thr`: the Bernoulli threshold.
    let body = match (dist, dtype) {
        (Dist::Uniform, DType::F64) => "for (int j = 0; j < 2; ++j) out[2 * j] = __dadd_rn(__dmul_rn(ox_unit_f64(r.w[2 * j], r.w[2 * j + 1]), b), a);".to_string(),
        (Dist::Uniform, _) => format!(
            "for (int j = 0; j < 4; ++j) out[j] = __fadd_rn(__fmul_rn(ox_unit_bits(r.w[j], {digits}), (float)b), (float)a);"
        ),
        (Dist::Normal, DType::F64) => r#"double u1 = 1.0 - ox_unit_f64(r.w[0], r.w[1]);
      double rad = sqrt(-2.0 * log(u1));
      double sn, cs;
      sincospi(2.0 * ox_unit_f64(r.w[2], r.w[3]), &sn, &cs);
      out[0] = rad * cs * b + a;
      out[2] = rad * sn * b + a;"#
            .to_string(),
        (Dist::Normal, _) => r#"for (int j = 0; j < 2; ++j) {
        float u1 = 1.0f - ox_unit_bits(r.w[2 * j], 24);
        float rad = sqrtf(-2.0f * logf(u1));
        float sn, cs;
        sincospif(2.0f * ox_unit_bits(r.w[2 * j + 1], 24), &sn, &cs);
        out[2 * j] = rad * cs * (float)b + (float)a;
        out[2 * j + 1] = rad * sn * (float)b + (float)a;
      }"#
        .to_string(),
        (Dist::Bernoulli, _) => "for (int j = 0; j < 4; ++j) out[j] = ((unsigned long long)r.w[j] < thr) ? 1.0 : 0.0;".to_string(),
    };
    // `out[j]` above is element `per_block · blk + j`; the slots hold doubles, written below.
    let per = per_block(dist, dtype);
    let _ = write!(
        s,
        r#"extern "C" __global__ void ox_kernel(char* dst, long long n, unsigned long long seed, unsigned long long start,
                                     double a, double b, unsigned long long thr) {{
  long long blocks = (n + {per} - 1) / {per};
  for (long long blk = (long long)blockIdx.x * blockDim.x + threadIdx.x; blk < blocks; blk += (long long)gridDim.x * blockDim.x) {{
    OxWords r = ox_philox(start + (unsigned long long)blk, (unsigned)seed, (unsigned)(seed >> 32));
    double out[8];
    {{
      {body}
    }}
    for (int j = 0; j < {per}; ++j) {{
      long long k = blk * {per} + j;
      if (k < n) ((S*)dst)[k] = ox_store<S>(out[{stride} * j]);
    }}
  }}
}}
"#,
        stride = if per == 2 { 2 } else { 1 },
    );
    s
}

/// Fills `t` (any layout) from `g`'s stream: dense tensors in memory order, others through a
/// contiguous temporary, as on the CPU.
fn fill(t: &Tensor, g: &Generator, dist: Dist, a: f64, b: f64, thr: u64) -> Result<()> {
    let n = t.numel();
    if n == 0 {
        return Ok(());
    }
    let Device::Cuda(dev) = t.device() else {
        return Err(Error::device("random: a CUDA kernel was called on another device"));
    };
    let dtype = t.dtype();
    let per = per_block(dist, dtype);
    let stream = g.reserve((n as u64).div_ceil(per));
    let dense = if t.is_non_overlapping_and_dense() && t.strides().iter().all(|s| *s >= 0) {
        t.clone()
    } else {
        Tensor::empty(&t.sizes(), dtype, t.device(), MemoryFormat::Contiguous)?
    };
    let key = InstanceKey {
        family: &FAMILY as *const u8 as usize,
        variant: dtype_code(dtype) | (dist as u64) << 4,
        device: dev,
    };
    let f = instance(key, "random", || source(dist, dtype))?;
    // SAFETY: the kernel writes all `n` elements of the dense tensor (its storage from element
    // 0, in memory order).
    let (p, deferred) = unsafe { dense.data_ptr_for_overwrite() };
    let mut v = [p as u64, n as u64, stream.seed(), stream.start(), a.to_bits(), b.to_bits(), thr];
    let mut args: Vec<*mut c_void> = v.iter_mut().map(|x| x as *mut u64 as *mut c_void).collect();
    let blocks = (n as u64).div_ceil(per);
    // SAFETY: the arguments match the kernel's parameters; a non-overlapping, dense layout with
    // non-negative strides occupies exactly `n` consecutive elements from its lowest address,
    // which is element 0 of its storage offset.
    unsafe { launch(t.device(), f, blocks_for(blocks, 256), 256, 0, &mut args)? };
    if deferred {
        // SAFETY: written in full by the kernel queued above.
        unsafe { dense.storage().assume_init() };
    }
    if !dense.is_same(t) {
        t.try_copy_(&dense)?;
    }
    Ok(())
}

fn generator_for(t: &Tensor, g: Option<&Generator>) -> Generator {
    match (g, t.device()) {
        (Some(g), _) => g.clone(),
        (None, Device::Cuda(i)) => default_generator(i),
        (None, _) => default_generator(0),
    }
}

impl UniformInplaceCuda for Cuda {
    /// Uniform values in `[from, to)`, with the CPU's rounding of the bounds.
    fn uniform_(self_: &Tensor, from: f64, to: f64, generator: Option<&Generator>) -> Result<Tensor> {
        if self_.numel() == 0 {
            return Ok(self_.clone());
        }
        check_no_internal_overlap(self_)?;
        check_uniform(self_.dtype(), from, to)?;
        let (lo, range) = match self_.dtype() {
            DType::F32 => ((from as f32) as f64, ((to as f32) - (from as f32)) as f64),
            DType::F16 => {
                let (lo, hi) = (f16::from_f64(from).to_f32(), f16::from_f64(to).to_f32());
                (lo as f64, f16::from_f32(hi - lo).to_f32() as f64)
            }
            DType::BF16 => {
                let (lo, hi) = (bf16::from_f64(from).to_f32(), bf16::from_f64(to).to_f32());
                (lo as f64, bf16::from_f32(hi - lo).to_f32() as f64)
            }
            _ => (from, to - from),
        };
        fill(self_, &generator_for(self_, generator), Dist::Uniform, lo, range, 0)?;
        Ok(self_.clone())
    }
}

impl NormalInplaceCuda for Cuda {
    fn normal_(self_: &Tensor, mean: f64, std: f64, generator: Option<&Generator>) -> Result<Tensor> {
        check_std(std)?;
        if !self_.dtype().is_floating_point() {
            return Err(not_implemented("normal_kernel_cuda", self_.dtype()));
        }
        check_no_internal_overlap(self_)?;
        fill(self_, &generator_for(self_, generator), Dist::Normal, mean, std, 0)?;
        Ok(self_.clone())
    }
}

impl BernoulliFloatInplaceCuda for Cuda {
    fn bernoulli_float_(self_: &Tensor, p: f64, generator: Option<&Generator>) -> Result<Tensor> {
        check_p(p)?;
        check_no_internal_overlap(self_)?;
        let thr = super::sample::bernoulli_threshold(p);
        fill(self_, &generator_for(self_, generator), Dist::Bernoulli, 0.0, 0.0, thr)?;
        Ok(self_.clone())
    }
}

impl NativeDropoutCuda for Cuda {
    fn native_dropout(input: &Tensor, p: f64, train: Option<bool>) -> Result<(Tensor, Tensor)> {
        native_dropout_impl(input, p, train)
    }
}
