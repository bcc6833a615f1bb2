//! Layer normalization on CUDA: `native_layer_norm` and `native_layer_norm_backward`.
//!
//! The forward runs one block per row (`M` rows of `D` elements, as on the CPU): the mean and the
//! biased variance by two block reductions, then the normalized, scaled and shifted row. The
//! half types compute in f32, and `mean`/`rstd` are f32 for them (PyTorch's CUDA kernels keep the
//! statistics in the accumulation type). The backward computes, per row,
//! `dx = rstd · (g − mean(g) − x̂ · mean(g·x̂))` with `g = dy · weight` and `x̂ = (x − mean) · rstd`,
//! and the weight and bias gradients as column sums over row chunks (one partial row per chunk,
//! summed by the CUDA `sum`). Checks and shapes come from the CPU kernel's plan.

use super::layer_norm::{back_plan, grad_param_dtype, plan, stat_shape};
use super::undefined;
use crate::cuda::launch::{blocks_for, compute_type, dtype_code, instance, launch, storage_type, InstanceKey};
use crate::cuda::nvrtc::Function;
use crate::cuda::reduce::value_acc;
use crate::generated::decls::{LayerNormBackwardCudaCuda, LayerNormCudaCuda};
use crate::iter::to_dtype;
use crate::Cuda;
use oxten_runtime::{ops, DType, Device, Error, MemoryFormat, Result, Scalar, Tensor};
use std::ffi::c_void;
use std::fmt::Write;

const THREADS: u32 = 256;
/// Rows per chunk of the weight/bias gradient sums.
const ROWS_PER_CHUNK: i64 = 32;
static FAMILY: u8 = 0;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Forward = 0,
    BackwardInput = 1,
    BackwardParams = 2,
}

fn source(kind: Kind, sin: DType, stat: DType) -> String {
    let acc = value_acc(sin);
    let mut s = String::from(crate::cuda::PRELUDE);
    let _ = writeln!(
        s,
        "// layer norm, generated instance\ntypedef {} SI;\ntypedef {} SS;\ntypedef {} ACC;\nconst int THREADS = {THREADS};",
        storage_type(sin),
        storage_type(stat),
        compute_type(acc)
    );
    s.push_str(match kind {
        // `w` and `b` are ACC arrays (converted on the host) or null.
        Kind::Forward => {
            r#"extern "C" __global__ void ox_kernel(const char* __restrict__ xp, const char* __restrict__ wp, const char* __restrict__ bp,
    char* __restrict__ yp, char* __restrict__ meanp, char* __restrict__ rstdp, long long rows, long long d, double eps) {
  long long r = blockIdx.x;
  if (r >= rows) return;
  const SI* x = (const SI*)xp + r * d;
  SI* y = (SI*)yp + r * d;
  const ACC* w = (const ACC*)wp;
  const ACC* b = (const ACC*)bp;
  ACC s = 0;
  for (long long i = threadIdx.x; i < d; i += THREADS) s += ox_load<ACC>(x[i]);
  s = ox_block_reduce(s, OxSum(), ACC(0));
  ACC mean = d > 0 ? s / ACC(d) : ACC(0);
  ACC v = 0;
  for (long long i = threadIdx.x; i < d; i += THREADS) { ACC t = ox_load<ACC>(x[i]) - mean; v += t * t; }
  v = ox_block_reduce(v, OxSum(), ACC(0));
  ACC rstd = ox_rsqrt(v / ACC(d) + ACC(eps));
  for (long long i = threadIdx.x; i < d; i += THREADS) {
    ACC t = (ox_load<ACC>(x[i]) - mean) * rstd;
    if (w) t = t * w[i];
    if (b) t = t + b[i];
    y[i] = ox_store<SI>(t);
  }
  if (threadIdx.x == 0) { ((SS*)meanp)[r] = ox_store<SS>(mean); ((SS*)rstdp)[r] = ox_store<SS>(rstd); }
}
"#
        }
        Kind::BackwardInput => {
            r#"extern "C" __global__ void ox_kernel(const char* __restrict__ dyp, const char* __restrict__ xp, const char* __restrict__ wp,
    const char* __restrict__ meanp, const char* __restrict__ rstdp, char* __restrict__ dxp, long long rows, long long d) {
  long long r = blockIdx.x;
  if (r >= rows) return;
  const SI* dy = (const SI*)dyp + r * d;
  const SI* x = (const SI*)xp + r * d;
  const ACC* w = (const ACC*)wp;
  SI* dx = (SI*)dxp + r * d;
  ACC mean = ox_load<ACC>(((const SS*)meanp)[r]);
  ACC rstd = ox_load<ACC>(((const SS*)rstdp)[r]);
  ACC sg = 0, sgx = 0;
  for (long long i = threadIdx.x; i < d; i += THREADS) {
    ACC g = ox_load<ACC>(dy[i]) * (w ? w[i] : ACC(1));
    sg += g;
    sgx += g * (ox_load<ACC>(x[i]) - mean) * rstd;
  }
  sg = ox_block_reduce(sg, OxSum(), ACC(0)) / ACC(d);
  sgx = ox_block_reduce(sgx, OxSum(), ACC(0)) / ACC(d);
  for (long long i = threadIdx.x; i < d; i += THREADS) {
    ACC g = ox_load<ACC>(dy[i]) * (w ? w[i] : ACC(1));
    ACC xh = (ox_load<ACC>(x[i]) - mean) * rstd;
    dx[i] = ox_store<SI>(rstd * (g - sg - xh * sgx));
  }
}
"#
        }
        // Block `blk` handles columns `(blk % col_blocks) * THREADS + tid` over the rows of chunk
        // `blk / col_blocks`, writing one partial row of dw and of db (ACC).
        Kind::BackwardParams => {
            r#"extern "C" __global__ void ox_kernel(const char* __restrict__ dyp, const char* __restrict__ xp,
    const char* __restrict__ meanp, const char* __restrict__ rstdp, char* __restrict__ dwp, char* __restrict__ dbp,
    long long rows, long long d, long long col_blocks, long long rows_per_chunk) {
  long long chunk = blockIdx.x / col_blocks;
  long long j = (blockIdx.x % col_blocks) * THREADS + threadIdx.x;
  if (j >= d) return;
  const SI* dy = (const SI*)dyp;
  const SI* x = (const SI*)xp;
  long long r0 = chunk * rows_per_chunk;
  long long r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
  ACC dw = 0, db = 0;
  for (long long r = r0; r < r1; ++r) {
    ACC g = ox_load<ACC>(dy[r * d + j]);
    ACC xh = (ox_load<ACC>(x[r * d + j]) - ox_load<ACC>(((const SS*)meanp)[r])) * ox_load<ACC>(((const SS*)rstdp)[r]);
    dw += g * xh;
    db += g;
  }
  ((ACC*)dwp)[chunk * d + j] = dw;
  ((ACC*)dbp)[chunk * d + j] = db;
}
"#
        }
    });
    s
}

fn kernel(kind: Kind, sin: DType, stat: DType, dev: u8, what: &str) -> Result<Function> {
    let key = InstanceKey {
        family: &FAMILY as *const u8 as usize,
        variant: dtype_code(sin) | dtype_code(stat) << 4 | (kind as u64) << 8,
        device: dev,
    };
    instance(key, what, || source(kind, sin, stat))
}

fn cuda_index(t: &Tensor, what: &str) -> Result<u8> {
    match t.device() {
        Device::Cuda(i) => Ok(i),
        other => Err(Error::device(format!("{what}: a CUDA kernel was called on {other}"))),
    }
}

/// An optional parameter as a contiguous tensor of the compute dtype (null pointer when absent).
fn param(t: Option<&Tensor>, acc: DType) -> Result<Option<Tensor>> {
    t.map(|t| to_dtype(t, acc)?.try_contiguous()).transpose()
}

fn ptr(t: Option<&Tensor>) -> u64 {
    t.map_or(0, |t| t.data_ptr() as u64)
}

impl LayerNormCudaCuda for Cuda {
    fn layer_norm_cuda(
        input: &Tensor,
        normalized_shape: &[i64],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let what = "native_layer_norm";
        let (m, d, _) = plan(input, normalized_shape, weight, bias)?;
        let dev = cuda_index(input, what)?;
        let (sin, acc) = (input.dtype(), value_acc(input.dtype()));
        let device = input.device();
        let x = ops::contiguous::call(input, MemoryFormat::Contiguous)?;
        let y = Tensor::empty(&input.sizes(), sin, device, MemoryFormat::Contiguous)?;
        let shape = stat_shape(input, normalized_shape.len());
        let mean = Tensor::empty(&shape, acc, device, MemoryFormat::Contiguous)?;
        let rstd = Tensor::empty(&shape, acc, device, MemoryFormat::Contiguous)?;
        if m == 0 {
            return Ok((y, mean, rstd));
        }
        let (w, b) = (param(weight, acc)?, param(bias, acc)?);
        let f = kernel(Kind::Forward, sin, acc, dev, what)?;
        let mut a = [
            x.data_ptr() as u64,
            ptr(w.as_ref()),
            ptr(b.as_ref()),
            y.data_ptr() as u64,
            mean.data_ptr() as u64,
            rstd.data_ptr() as u64,
            m as u64,
            d as u64,
            eps.to_bits(),
        ];
        let mut args: Vec<*mut c_void> = a.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
        // SAFETY: the arguments match the forward kernel's parameters (8 bytes each); block `r`
        // reads row `r` of the contiguous `m × d` input and `d` elements of the parameters, and
        // writes row `r` of `y` and element `r` of `mean` and `rstd`, all allocated above.
        unsafe { launch(device, f, blocks_for(m as u64, 1), THREADS, 0, &mut args)? };
        Ok((y, mean, rstd))
    }
}

impl LayerNormBackwardCudaCuda for Cuda {
    fn layer_norm_backward_cuda(
        grad_out: &Tensor,
        input: &Tensor,
        normalized_shape: &[i64],
        mean: &Tensor,
        rstd: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        output_mask: &[bool],
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let what = "native_layer_norm_backward";
        let (m, d) = back_plan(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)?;
        let dev = cuda_index(input, what)?;
        let device = input.device();
        let (sin, acc) = (input.dtype(), value_acc(input.dtype()));
        let pd = grad_param_dtype(input, weight, bias);
        let x = ops::contiguous::call(input, MemoryFormat::Contiguous)?;
        let dy = ops::contiguous::call(grad_out, MemoryFormat::Contiguous)?;
        // The statistics as saved (any floating dtype), read in the compute dtype.
        let (mean, rstd) = (to_dtype(mean, acc)?.try_contiguous()?, to_dtype(rstd, acc)?.try_contiguous()?);
        let (m64, d64) = (m as i64, d as i64);
        let gi = if output_mask[0] {
            let dx = Tensor::empty(&input.sizes(), sin, device, MemoryFormat::Contiguous)?;
            if m * d > 0 {
                let w = param(weight, acc)?;
                let f = kernel(Kind::BackwardInput, sin, acc, dev, what)?;
                let mut a = [
                    dy.data_ptr() as u64,
                    x.data_ptr() as u64,
                    ptr(w.as_ref()),
                    mean.data_ptr() as u64,
                    rstd.data_ptr() as u64,
                    dx.data_ptr() as u64,
                    m as u64,
                    d as u64,
                ];
                let mut args: Vec<*mut c_void> = a.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
                // SAFETY: the arguments match the kernel's parameters; block `r` reads row `r` of
                // the contiguous `m × d` tensors `dy` and `x`, `d` weights, element `r` of the
                // statistics, and writes row `r` of `dx`.
                unsafe { launch(device, f, blocks_for(m as u64, 1), THREADS, 0, &mut args)? };
            }
            dx
        } else {
            undefined(sin, device)?
        };
        if !(output_mask[1] || output_mask[2]) {
            return Ok((gi, undefined(pd, device)?, undefined(pd, device)?));
        }
        let chunks = ((m64 + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK).max(1);
        let dw = Tensor::empty(&[chunks, d64], acc, device, MemoryFormat::Contiguous)?;
        let db = Tensor::empty(&[chunks, d64], acc, device, MemoryFormat::Contiguous)?;
        if m == 0 {
            ops::fill_scalar_::call(&dw, Scalar::Float(0.0))?;
            ops::fill_scalar_::call(&db, Scalar::Float(0.0))?;
        } else if d > 0 {
            let col_blocks = (d64 + THREADS as i64 - 1) / THREADS as i64;
            let blocks = u32::try_from(col_blocks * chunks)
                .map_err(|_| Error::value(format!("{what}: {m} rows of {d} are too many for one launch")))?;
            let f = kernel(Kind::BackwardParams, sin, acc, dev, what)?;
            let mut a = [
                dy.data_ptr() as u64,
                x.data_ptr() as u64,
                mean.data_ptr() as u64,
                rstd.data_ptr() as u64,
                dw.data_ptr() as u64,
                db.data_ptr() as u64,
                m as u64,
                d as u64,
                col_blocks as u64,
                ROWS_PER_CHUNK as u64,
            ];
            let mut args: Vec<*mut c_void> = a.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
            // SAFETY: the arguments match the kernel's parameters; each thread reads column `j < d`
            // of its chunk's rows (`< m`) and writes element `(chunk, j)` of the `chunks × d`
            // partials allocated above.
            unsafe { launch(device, f, blocks, THREADS, 0, &mut args)? };
        }
        let total = |t: &Tensor, on: bool| -> Result<Tensor> {
            if !on {
                return undefined(pd, device);
            }
            let s = ops::sum_dim_intlist::call(t, Some(&[0]), false, None)?;
            to_dtype(&s, pd)?.try_reshape(normalized_shape)
        };
        Ok((gi, total(&dw, output_mask[1])?, total(&db, output_mask[2])?))
    }
}
