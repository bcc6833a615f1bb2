//! The `_foreach_*` operators and the fused Adam/AdamW steps on CUDA.
//!
//! `_foreach_*` runs the single-tensor CUDA operator for each index, on the caller's thread and
//! stream (the CPU implementation's fallback path; a multi-tensor kernel is left to do).
//!
//! The fused Adam/AdamW steps: one kernel launch per parameter that reads the parameter,
//! gradient and moments once and writes them once, with the step count passed by value (the
//! optimizer counts steps on the host, so nothing is read back from the device). As in
//! PyTorch's fused kernels, `grad_scale` divides the gradients and a non-zero `found_inf` skips
//! the step, both read on the device (GradScaler's unscale-and-step without a host round trip).

use super::{check_lists, AdamStep};
use crate::cuda::launch::{blocks_for, compute_type, dtype_code, instance, launch, storage_type, InstanceKey};
use crate::cuda::reduce::value_acc;
use crate::generated::decls::*;
use crate::{Cpu, Cuda};
use oxten_runtime::{ops, DType, Device, Error, Result, Scalar, Tensor};
use std::ffi::c_void;
use std::fmt::Write;

const THREADS: u32 = 256;
static FAMILY: u8 = 0;

fn source(dtype: DType) -> String {
    let mut s = String::from(crate::cuda::PRELUDE);
    let _ = writeln!(
        s,
        "// fused Adam(W), generated instance\ntypedef {} T;\ntypedef {} ACC;",
        storage_type(dtype),
        compute_type(value_acc(dtype))
    );
    s.push_str(
        r#"extern "C" __global__ void ox_kernel(char* pp, const char* gp, char* mp, char* vp, char* vmaxp, long long n,
    double lr, double beta1, double beta2, double weight_decay, double eps, double step, long long flags,
    const char* grad_scale, const char* found_inf) {
  if (found_inf && *(const float*)found_inf != 0.0f) return;
  const bool amsgrad = flags & 1, maximize = flags & 2, decoupled = flags & 4;
  T* p = (T*)pp; const T* g = (const T*)gp; T* m = (T*)mp; T* v = (T*)vp; T* vmax = (T*)vmaxp;
  const ACC inv_scale = grad_scale ? ACC(1.0 / double(*(const float*)grad_scale)) : ACC(1);
  const double bc1 = 1.0 - pow(beta1, step);
  const ACC bc2_sqrt = ACC(sqrt(1.0 - pow(beta2, step)));
  const ACC step_size = ACC(lr / bc1);
  const ACC b1 = ACC(1.0 - beta1), b2 = ACC(beta2), one_b2 = ACC(1.0 - beta2);
  const ACC wd = ACC(weight_decay), decay = ACC(1.0 - lr * weight_decay), e = ACC(eps);
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
    ACC param = ox_load<ACC>(p[k]);
    ACC grad = ox_load<ACC>(g[k]) * inv_scale;
    if (maximize) grad = -grad;
    if (weight_decay != 0.0) {
      if (decoupled) param = param * decay; else grad = grad + wd * param;
    }
    ACC mk = ox_load<ACC>(m[k]);
    mk = mk + b1 * (grad - mk);
    ACC vk = b2 * ox_load<ACC>(v[k]) + one_b2 * grad * grad;
    m[k] = ox_store<T>(mk);
    v[k] = ox_store<T>(vk);
    ACC second = vk;
    if (amsgrad) { second = ox_max(ox_load<ACC>(vmax[k]), vk); vmax[k] = ox_store<T>(second); }
    ACC denom = ox_sqrt(second) / bc2_sqrt + e;
    p[k] = ox_store<T>(param - step_size * mk / denom);
  }
}
"#,
    );
    s
}

/// A scalar f32 CUDA tensor's address for the kernel, or null.
fn scalar_f32(op: &str, name: &str, t: Option<&Tensor>, device: Device) -> Result<u64> {
    let Some(t) = t else { return Ok(0) };
    if t.device() != device || t.dtype() != DType::F32 || t.numel() != 1 {
        return Err(Error::value(format!(
            "{op}: {name} must be a one-element float32 tensor on {device}, got {} {} with {} elements",
            t.dtype(),
            t.device(),
            t.numel()
        )));
    }
    Ok(t.data_ptr() as u64)
}

#[allow(clippy::too_many_arguments)]
fn fused_adam(
    op: &str,
    params: &[Tensor],
    grads: &[Tensor],
    exp_avgs: &[Tensor],
    exp_avg_sqs: &[Tensor],
    max_exp_avg_sqs: &[Tensor],
    state_steps: &[Tensor],
    h: AdamStep,
    grad_scale: Option<&Tensor>,
    found_inf: Option<&Tensor>,
) -> Result<()> {
    check_lists(op, &[params, grads, exp_avgs, exp_avg_sqs])?;
    // Gradients are only read: a strided one (a transposed weight's) is made contiguous, as on
    // the CPU.
    let grads: Vec<Tensor> = grads.iter().map(Tensor::try_contiguous).collect::<Result<_>>()?;
    let grads = &grads[..];
    if h.amsgrad {
        check_lists(op, &[params, max_exp_avg_sqs])?;
    }
    if state_steps.len() != params.len() {
        return Err(Error::value(format!("{op}: one state_step per parameter is needed")));
    }
    let Device::Cuda(dev) = params[0].device() else {
        return Err(Error::device(format!("{op}: a CUDA kernel was called on {}", params[0].device())));
    };
    let device = params[0].device();
    let (scale, inf) =
        (scalar_f32(op, "grad_scale", grad_scale, device)?, scalar_f32(op, "found_inf", found_inf, device)?);
    let dtype = params[0].dtype();
    if !matches!(dtype, DType::F32 | DType::F64 | DType::F16 | DType::BF16) {
        return Err(Error::dtype(format!("{op}: the fused step needs floating parameters, got {dtype}")));
    }
    let flags = h.amsgrad as u64 | (h.maximize as u64) << 1 | (h.decoupled as u64) << 2;
    let key = InstanceKey { family: &FAMILY as *const u8 as usize, variant: dtype_code(dtype), device: dev };
    let f = instance(key, op, || source(dtype))?;
    for i in 0..params.len() {
        let written = [&params[i], &exp_avgs[i], &exp_avg_sqs[i]];
        let vmax = if h.amsgrad { Some(&max_exp_avg_sqs[i]) } else { None };
        for t in written.iter().copied().chain(vmax).chain([&grads[i]]) {
            if t.device() != device || t.dtype() != dtype || !t.is_contiguous() {
                return Err(Error::value(format!(
                    "{op}: the tensors at index {i} must be contiguous {dtype} tensors on {device}, got a {} {} tensor{}",
                    t.dtype(),
                    t.device(),
                    if t.is_contiguous() { "" } else { " (not contiguous)" }
                )));
            }
        }
        let mut ptrs: Vec<usize> = written.iter().chain(vmax.iter()).map(|t| t.data_ptr() as usize).collect();
        ptrs.sort_unstable();
        if ptrs.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::value(format!("{op}: parameters and optimizer state must not share memory")));
        }
        let n = params[i].numel();
        if n == 0 {
            continue;
        }
        // The step count lives on the host (a CPU scalar) in oxten's optimizers: no device read.
        let step = state_steps[i].try_to_dtype(DType::F64)?.item::<f64>()?;
        let mut a = [
            params[i].data_ptr() as u64,
            grads[i].data_ptr() as u64,
            exp_avgs[i].data_ptr() as u64,
            exp_avg_sqs[i].data_ptr() as u64,
            vmax.map_or(0, |t| t.data_ptr() as u64),
            n as u64,
            h.lr.to_bits(),
            h.beta1.to_bits(),
            h.beta2.to_bits(),
            h.weight_decay.to_bits(),
            h.eps.to_bits(),
            step.to_bits(),
            flags,
            scale,
            inf,
        ];
        let mut args: Vec<*mut c_void> = a.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
        // SAFETY: the arguments match the kernel's parameters (8 bytes each); every tensor was
        // checked above to be a contiguous `dtype` tensor of `n` elements on this device, the
        // written ones distinct; `grad_scale`/`found_inf` are one-element f32 tensors or null.
        unsafe { launch(device, f, blocks_for(n as u64, THREADS).min(65_536), THREADS, 0, &mut args)? };
    }
    Ok(())
}

impl FusedAdamwInplaceCuda for Cuda {
    #[allow(clippy::too_many_arguments)]
    fn fused_adamw_(
        self_: &[Tensor],
        grads: &[Tensor],
        exp_avgs: &[Tensor],
        exp_avg_sqs: &[Tensor],
        max_exp_avg_sqs: &[Tensor],
        state_steps: &[Tensor],
        lr: f64,
        beta1: f64,
        beta2: f64,
        weight_decay: f64,
        eps: f64,
        amsgrad: bool,
        maximize: bool,
        grad_scale: Option<&Tensor>,
        found_inf: Option<&Tensor>,
    ) -> Result<()> {
        let h = AdamStep { lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled: true };
        fused_adam(
            "_fused_adamw_",
            self_,
            grads,
            exp_avgs,
            exp_avg_sqs,
            max_exp_avg_sqs,
            state_steps,
            h,
            grad_scale,
            found_inf,
        )
    }
}

impl FusedAdamInplaceCuda for Cuda {
    #[allow(clippy::too_many_arguments)]
    fn fused_adam_(
        self_: &[Tensor],
        grads: &[Tensor],
        exp_avgs: &[Tensor],
        exp_avg_sqs: &[Tensor],
        max_exp_avg_sqs: &[Tensor],
        state_steps: &[Tensor],
        lr: f64,
        beta1: f64,
        beta2: f64,
        weight_decay: f64,
        eps: f64,
        amsgrad: bool,
        maximize: bool,
        grad_scale: Option<&Tensor>,
        found_inf: Option<&Tensor>,
    ) -> Result<()> {
        let h = AdamStep { lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled: false };
        fused_adam(
            "_fused_adam_",
            self_,
            grads,
            exp_avgs,
            exp_avg_sqs,
            max_exp_avg_sqs,
            state_steps,
            h,
            grad_scale,
            found_inf,
        )
    }
}

// The CUDA `_foreach_*` kernels below run the CPU implementation, which takes its per-tensor
// fallback for device tensors (one single-tensor CUDA operator per index).

impl ForeachAddScalarInplaceCuda for Cuda {
    fn foreach_add_scalar_(self_: &[Tensor], scalar: Scalar) -> Result<()> {
        <Cpu as ForeachAddScalarInplaceCpu>::foreach_add_scalar_(self_, scalar)
    }
}

impl ForeachAddListInplaceCuda for Cuda {
    fn foreach_add_list_(self_: &[Tensor], other: &[Tensor], alpha: Scalar) -> Result<()> {
        <Cpu as ForeachAddListInplaceCpu>::foreach_add_list_(self_, other, alpha)
    }
}

impl ForeachMulScalarInplaceCuda for Cuda {
    fn foreach_mul_scalar_(self_: &[Tensor], scalar: Scalar) -> Result<()> {
        <Cpu as ForeachMulScalarInplaceCpu>::foreach_mul_scalar_(self_, scalar)
    }
}

impl ForeachMulListInplaceCuda for Cuda {
    fn foreach_mul_list_(self_: &[Tensor], other: &[Tensor]) -> Result<()> {
        <Cpu as ForeachMulListInplaceCpu>::foreach_mul_list_(self_, other)
    }
}

impl ForeachAddScalarlistInplaceCuda for Cuda {
    fn foreach_add_scalarlist_(self_: &[Tensor], scalars: &[Scalar]) -> Result<()> {
        <Cpu as ForeachAddScalarlistInplaceCpu>::foreach_add_scalarlist_(self_, scalars)
    }
}

impl ForeachMulScalarlistInplaceCuda for Cuda {
    fn foreach_mul_scalarlist_(self_: &[Tensor], scalars: &[Scalar]) -> Result<()> {
        <Cpu as ForeachMulScalarlistInplaceCpu>::foreach_mul_scalarlist_(self_, scalars)
    }
}

/// `other` stays on the device: no host read.
impl ForeachMulTensorInplaceCuda for Cuda {
    fn foreach_mul_tensor_(self_: &[Tensor], other: &Tensor) -> Result<()> {
        <Cpu as ForeachMulTensorInplaceCpu>::foreach_mul_tensor_(self_, other)
    }
}

impl ForeachDivListInplaceCuda for Cuda {
    fn foreach_div_list_(self_: &[Tensor], other: &[Tensor]) -> Result<()> {
        <Cpu as ForeachDivListInplaceCpu>::foreach_div_list_(self_, other)
    }
}

impl ForeachDivScalarlistInplaceCuda for Cuda {
    fn foreach_div_scalarlist_(self_: &[Tensor], scalars: &[Scalar]) -> Result<()> {
        <Cpu as ForeachDivScalarlistInplaceCpu>::foreach_div_scalarlist_(self_, scalars)
    }
}

impl ForeachAddcmulScalarlistInplaceCuda for Cuda {
    fn foreach_addcmul_scalarlist_(
        self_: &[Tensor],
        tensor1: &[Tensor],
        tensor2: &[Tensor],
        scalars: &[Scalar],
    ) -> Result<()> {
        <Cpu as ForeachAddcmulScalarlistInplaceCpu>::foreach_addcmul_scalarlist_(self_, tensor1, tensor2, scalars)
    }
}

impl ForeachAddcdivScalarlistInplaceCuda for Cuda {
    fn foreach_addcdiv_scalarlist_(
        self_: &[Tensor],
        tensor1: &[Tensor],
        tensor2: &[Tensor],
        scalars: &[Scalar],
    ) -> Result<()> {
        <Cpu as ForeachAddcdivScalarlistInplaceCpu>::foreach_addcdiv_scalarlist_(self_, tensor1, tensor2, scalars)
    }
}

impl ForeachDivScalarInplaceCuda for Cuda {
    fn foreach_div_scalar_(self_: &[Tensor], scalar: Scalar) -> Result<()> {
        <Cpu as ForeachDivScalarInplaceCpu>::foreach_div_scalar_(self_, scalar)
    }
}

impl ForeachLerpScalarInplaceCuda for Cuda {
    fn foreach_lerp_scalar_(self_: &[Tensor], tensors1: &[Tensor], weight: Scalar) -> Result<()> {
        <Cpu as ForeachLerpScalarInplaceCpu>::foreach_lerp_scalar_(self_, tensors1, weight)
    }
}

impl ForeachAddcmulScalarInplaceCuda for Cuda {
    fn foreach_addcmul_scalar_(self_: &[Tensor], tensor1: &[Tensor], tensor2: &[Tensor], value: Scalar) -> Result<()> {
        <Cpu as ForeachAddcmulScalarInplaceCpu>::foreach_addcmul_scalar_(self_, tensor1, tensor2, value)
    }
}

impl ForeachAddcdivScalarInplaceCuda for Cuda {
    fn foreach_addcdiv_scalar_(self_: &[Tensor], tensor1: &[Tensor], tensor2: &[Tensor], value: Scalar) -> Result<()> {
        <Cpu as ForeachAddcdivScalarInplaceCpu>::foreach_addcdiv_scalar_(self_, tensor1, tensor2, value)
    }
}

impl ForeachZeroInplaceCuda for Cuda {
    fn foreach_zero_(self_: &[Tensor]) -> Result<()> {
        <Cpu as ForeachZeroInplaceCpu>::foreach_zero_(self_)
    }
}

impl ForeachSqrtCuda for Cuda {
    fn foreach_sqrt(self_: &[Tensor]) -> Result<Vec<Tensor>> {
        <Cpu as ForeachSqrtCpu>::foreach_sqrt(self_)
    }
}

/// The norms one after another on this thread (the CPU's parallel loop would queue them from
/// other threads, on their streams).
impl ForeachNormCuda for Cuda {
    fn foreach_norm(self_: &[Tensor], ord: Scalar, dtype: Option<DType>) -> Result<Vec<Tensor>> {
        check_lists("_foreach_norm", &[self_])?;
        self_.iter().map(|t| ops::linalg_vector_norm::call(t, ord, None, false, dtype)).collect()
    }
}
