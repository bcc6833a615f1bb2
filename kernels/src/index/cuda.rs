//! Indexing on CUDA: `index_select`, `gather`, `masked_fill_` and `embedding`'s backward.
//!
//! Index values are checked on the host before any kernel reads through them (one small
//! device-to-host copy of the index): an index out of range is an error naming the operator,
//! never an out-of-bounds access on the device.

use super::masked::{check_tensor_value, item_scalar, masked_fill_iter};
use super::select::{embedding_dense_backward_output, index_select_meta};
use crate::cuda::launch::{blocks_for, dtype_code, instance, launch, storage_type, InstanceKey};
use crate::cuda::pointwise::{launch_pointwise_in, PointwiseKernel};
use crate::cuda::reduce::contiguous_target;
use crate::generated::decls::{
    EmbeddingDenseBackwardCuda, GatherOutCuda, IndexSelectCuda, IndexSelectOutCuda, MaskedFillInplaceScalarCuda,
    MaskedFillInplaceTensorCuda,
};
use crate::logical::promote::FromScalar;
use crate::Cuda;
use oxten_runtime::{
    match_dtype, wrap_dim, DType, Device, Error, MemoryFormat, Result, Scalar, Tensor, TensorIteratorConfig,
};
use std::ffi::c_void;
use std::fmt::Write;

const THREADS: u32 = 256;
const MAX_DIMS: usize = 25;

/// The index as i64 on `device`, each value checked against `0..n` on the host first.
fn checked_index(op: &str, index: &Tensor, n: i64, device: Device) -> Result<Tensor> {
    let idx = index.try_to_dtype(DType::I64)?.try_contiguous()?;
    if let Some(v) = idx.to_vec::<i64>()?.into_iter().find(|v| !(0..n).contains(v)) {
        return Err(Error::index(format!("{op}(): index {v} is out of bounds for dimension with size {n}")));
    }
    if idx.device() != device {
        return idx.try_to_device(device);
    }
    Ok(idx)
}

/// The C type that moves one element of `dtype` (the kernels only copy bytes).
fn word(dtype: DType) -> &'static str {
    match dtype.size() {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        _ => "unsigned long long",
    }
}

fn cuda_index(t: &Tensor) -> Result<u8> {
    match t.device() {
        Device::Cuda(d) => Ok(d),
        other => Err(Error::device(format!("a CUDA kernel was called on {other}"))),
    }
}

static SELECT: u8 = 0;

/// `out[o, j, k] = src[o, idx[j], k]` over contiguous `[outer, n, inner]` → `[outer, m, inner]`.
fn index_select_into(self_: &Tensor, dim: i64, index: &Tensor, out: &Tensor) -> Result<()> {
    let index_dev = if index.device() == Device::Cpu { index.try_to_device(self_.device())? } else { index.clone() };
    let d = index_select_meta(self_, dim, &index_dev, out)?;
    if out.numel() == 0 {
        return Ok(());
    }
    let n = if self_.dim() == 0 { 1 } else { self_.sizes()[d] };
    let idx = checked_index("index_select", &index_dev, n, self_.device())?;
    let src = self_.try_contiguous()?;
    let sizes = src.sizes();
    let outer: i64 = if self_.dim() == 0 { 1 } else { sizes[..d].iter().product() };
    let inner: i64 = if self_.dim() == 0 { 1 } else { sizes[d + 1..].iter().product() };
    let m = idx.numel();
    let target = contiguous_target(out)?;
    let dev = cuda_index(self_)?;
    let key = InstanceKey { family: &SELECT as *const u8 as usize, variant: dtype_code(self_.dtype()), device: dev };
    let f = instance(key, "index_select", || {
        let mut s = String::from(crate::cuda::PRELUDE);
        let _ = writeln!(s, "typedef {} E;", word(self_.dtype()));
        s.push_str(
            r#"extern "C" __global__ void ox_kernel(const char* src, const long long* idx, char* dst, long long outer, long long n, long long m, long long inner) {
  long long total = outer * m * inner;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    long long k = e % inner;
    long long j = (e / inner) % m;
    long long o = e / (inner * m);
    ((E*)dst)[e] = ((const E*)src)[(o * n + idx[j]) * inner + k];
  }
}
"#,
        );
        s
    })?;
    // SAFETY: the kernel writes every element of the contiguous target.
    let (pd, deferred) = unsafe { target.data_ptr_for_overwrite() };
    let mut v =
        [src.data_ptr() as u64, idx.data_ptr() as u64, pd as u64, outer as u64, n as u64, m as u64, inner as u64];
    let mut args: Vec<*mut c_void> = v.iter_mut().map(|p| p as *mut u64 as *mut c_void).collect();
    // SAFETY: every index is in `0..n` (checked above), so reads stay inside `src`
    // (`outer · n · inner` elements) and writes inside the target (`outer · m · inner`).
    unsafe { launch(self_.device(), f, blocks_for((outer * m * inner) as u64, THREADS), THREADS, 0, &mut args)? };
    if deferred {
        // SAFETY: written in full by the kernel queued above.
        unsafe { target.storage().assume_init() };
    }
    if !out.is_same(&target) {
        out.try_copy_(&target)?;
    }
    Ok(())
}

impl IndexSelectCuda for Cuda {
    fn index_select(self_: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
        let out = Tensor::empty(&[0], self_.dtype(), self_.device(), MemoryFormat::Contiguous)?;
        index_select_into(self_, dim, index, &out)?;
        Ok(out)
    }
}

impl IndexSelectOutCuda for Cuda {
    fn index_select_out(self_: &Tensor, dim: i64, index: &Tensor, out: &Tensor) -> Result<Tensor> {
        index_select_into(self_, dim, index, out)?;
        Ok(out.clone())
    }
}

static GATHER: u8 = 0;

impl GatherOutCuda for Cuda {
    /// `out[i][j][k] = self[index[i][j][k]][j][k]` (for `dim` 0), `out` shaped like `index`.
    fn gather_out(self_: &Tensor, dim: i64, index: &Tensor, _sparse_grad: bool, out: &Tensor) -> Result<()> {
        if index.numel() == 0 {
            return Ok(());
        }
        let d = wrap_dim(dim, self_.dim())?;
        let n = if self_.dim() == 0 { 1 } else { self_.sizes()[d] };
        let idx = checked_index("gather", index, n, self_.device())?;
        let nd = index.dim().max(1);
        if nd > MAX_DIMS {
            return Err(Error::shape(format!("gather: CUDA kernels support at most {MAX_DIMS} dims")));
        }
        let target = contiguous_target(out)?;
        let mut geom = vec![0i64; 2 + 2 * MAX_DIMS];
        geom[0] = nd as i64;
        geom[1] = d as i64;
        let (isz, sst) = (index.sizes(), self_.strides());
        for i in 0..nd {
            geom[2 + i] = if index.dim() == 0 { 1 } else { isz[i] };
            geom[2 + MAX_DIMS + i] = if self_.dim() == 0 { 0 } else { sst[i] };
        }
        let dev = cuda_index(self_)?;
        let key =
            InstanceKey { family: &GATHER as *const u8 as usize, variant: dtype_code(self_.dtype()), device: dev };
        let f = instance(key, "gather", || {
            let mut s = String::from(crate::cuda::PRELUDE);
            let _ = writeln!(s, "typedef {} E;\nconst int MAXD = {MAX_DIMS};", word(self_.dtype()));
            s.push_str(
                r#"struct Geom { long long ndim; long long dim; long long isizes[MAXD]; long long sstrides[MAXD]; };
extern "C" __global__ void ox_kernel(const Geom g, const char* src, const long long* idx, char* dst, long long total) {
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    long long r = e, off = 0;
    for (int d = (int)g.ndim - 1; d >= 0; --d) {
      long long c = r % g.isizes[d];
      r /= g.isizes[d];
      off += (d == g.dim ? idx[e] : c) * g.sstrides[d];
    }
    ((E*)dst)[e] = ((const E*)src)[off];
  }
}
"#,
            );
            s
        })?;
        let total = index.numel();
        // SAFETY: the kernel writes every element of the contiguous target.
        let (pd, deferred) = unsafe { target.data_ptr_for_overwrite() };
        let mut p = [self_.data_ptr() as u64, idx.data_ptr() as u64, pd as u64, total as u64];
        let mut args: Vec<*mut c_void> = vec![geom.as_mut_ptr() as *mut c_void];
        args.extend(p.iter_mut().map(|v| v as *mut u64 as *mut c_void));
        // SAFETY: the meta function checked that `index` is no larger than `self` in every dim
        // but `dim`, and every index value is in `0..n`: each offset lies inside `self`'s layout.
        unsafe { launch(self_.device(), f, blocks_for(total as u64, THREADS), THREADS, 0, &mut args)? };
        if deferred {
            // SAFETY: written in full by the kernel queued above.
            unsafe { target.storage().assume_init() };
        }
        if !out.is_same(&target) {
            out.try_copy_(&target)?;
        }
        Ok(())
    }
}

static EMBEDDING_BACKWARD: u8 = 0;

impl EmbeddingDenseBackwardCuda for Cuda {
    /// Sums the gradient rows of equal indices into the weight's gradient with atomic adds (in
    /// f32, or f64 for f64), skipping `padding_idx`; `scale_grad_by_freq` divides each row by
    /// its index's count.
    fn embedding_dense_backward(
        grad_output: &Tensor,
        indices: &Tensor,
        num_weights: i64,
        padding_idx: i64,
        scale_grad_by_freq: bool,
    ) -> Result<Tensor> {
        let (out, d) = embedding_dense_backward_output(grad_output, indices, num_weights)?;
        let numel = indices.numel();
        if grad_output.numel() != numel * d {
            return Err(Error::shape(format!(
                "embedding_dense_backward: grad_output of shape {:?} does not match indices of shape {:?}",
                &grad_output.sizes()[..],
                &indices.sizes()[..]
            )));
        }
        if numel == 0 || d == 0 {
            return Ok(out);
        }
        let host = indices.try_to_dtype(DType::I64)?.try_reshape(&[-1])?.to_vec::<i64>()?;
        let mut counts = std::collections::HashMap::new();
        for &k in &host {
            *counts.entry(k).or_insert(0i64) += 1;
        }
        // Rows to skip get scale 0 and index 0, so the kernel needs no bounds logic.
        let keep = |k: i64| k != padding_idx && (0..num_weights).contains(&k);
        let scale: Vec<f64> = host
            .iter()
            .map(|k| {
                if !keep(*k) {
                    0.0
                } else if scale_grad_by_freq {
                    1.0 / counts[k] as f64
                } else {
                    1.0
                }
            })
            .collect();
        let safe_idx: Vec<i64> = host.iter().map(|&k| if keep(k) { k } else { 0 }).collect();
        let acc = if out.dtype() == DType::F64 { DType::F64 } else { DType::F32 };
        let device = out.device();
        let idx = Tensor::from_vec(safe_idx, &[numel])?.try_to_device(device)?;
        let scale = Tensor::from_vec(scale, &[numel])?.try_to_dtype(acc)?.try_to_device(device)?;
        let grad = grad_output.try_to_dtype(acc)?.try_contiguous()?;
        let sum = oxten_runtime::ops::zeros::call(&[num_weights, d], Some(acc), None, Some(device), None)?;
        let dev = cuda_index(&out)?;
        let key =
            InstanceKey { family: &EMBEDDING_BACKWARD as *const u8 as usize, variant: dtype_code(acc), device: dev };
        let f = instance(key, "embedding_dense_backward", || {
            let mut s = String::from(crate::cuda::PRELUDE);
            let _ = writeln!(s, "typedef {} ACC;", storage_type(acc));
            s.push_str(
                r#"extern "C" __global__ void ox_kernel(const ACC* g, const long long* idx, const ACC* scale, ACC* sum, long long rows, long long d) {
  long long total = rows * d;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    long long i = e / d, j = e % d;
    ACC s = scale[i];
    if (s != ACC(0)) atomicAdd(&sum[idx[i] * d + j], g[e] * s);
  }
}
"#,
            );
            s
        })?;
        let mut p = [
            grad.data_ptr() as u64,
            idx.data_ptr() as u64,
            scale.data_ptr() as u64,
            sum.data_ptr() as u64,
            numel as u64,
            d as u64,
        ];
        let mut args: Vec<*mut c_void> = p.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
        // SAFETY: every index is in `0..num_weights` (others were replaced by 0 with scale 0),
        // so each atomic add lands inside the `[num_weights, d]` sum; reads stay inside the
        // contiguous `[numel, d]` gradient and the `numel`-long index and scale.
        unsafe { launch(device, f, blocks_for((numel * d) as u64, THREADS), THREADS, 0, &mut args)? };
        out.try_copy_(&sum)?;
        Ok(out)
    }
}

static MASKED_FILL: PointwiseKernel = PointwiseKernel {
    op: "masked_fill_",
    expr: "((a1 != T(0)) ? c0 : a2)",
    arity: 2,
    float_only: false,
    int_only: false,
    bool_ok: true,
};

/// `self[mask] = value`: the CPU's checks, then `self = mask ? value : self` over `self`, the
/// mask and `self` again (so every element is written and none needs a branch on memory).
fn masked_fill_cuda(self_: &Tensor, mask: &Tensor, value: Scalar) -> Result<()> {
    masked_fill_iter(self_, mask)?;
    let dtype = self_.dtype();
    // PyTorch's checked conversion of the value, then the value in the tensor's category.
    match_dtype!(dtype, T => { <T as FromScalar>::from_scalar(value)?; });
    let v = match dtype {
        DType::Bool => Scalar::Bool(value.to_f64() != 0.0),
        d if d.is_floating_point() => Scalar::Float(value.to_f64()),
        _ => Scalar::Int(value.to_i64()),
    };
    let iter = TensorIteratorConfig::new()
        .check_mem_overlap(false)
        .check_all_same_dtype(false)
        .resize_outputs(false)
        .add_output(self_)
        .add_input(mask)
        .add_input(self_)
        .build()?;
    launch_pointwise_in(&iter, &MASKED_FILL, &[v], dtype)
}

impl MaskedFillInplaceScalarCuda for Cuda {
    fn masked_fill_inplace_scalar(self_: &Tensor, mask: &Tensor, value: Scalar) -> Result<Tensor> {
        masked_fill_cuda(self_, mask, value)?;
        Ok(self_.clone())
    }
}

impl MaskedFillInplaceTensorCuda for Cuda {
    fn masked_fill_inplace_tensor(self_: &Tensor, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
        check_tensor_value(value)?;
        masked_fill_cuda(self_, mask, item_scalar(value)?)?;
        Ok(self_.clone())
    }
}
