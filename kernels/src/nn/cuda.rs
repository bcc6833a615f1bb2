//! `softmax` and `log_softmax` on CUDA, forward and backward: one block per row along `dim`
//! (moved last and made contiguous), three passes over the row (max, sum of exponentials,
//! write), f32 arithmetic for the half types; and `nll_loss` forward and backward.

use crate::cuda::launch::{blocks_for, dtype_code, instance, launch, not_implemented, storage_type, InstanceKey};
use crate::cuda::reduce::{rows_along, rows_finish, rows_target};
use crate::generated::decls::{
    LogSoftmaxBackwardOutCuda, LogSoftmaxOutCuda, NllLossBackwardOutCuda, NllLossForwardOutCuda,
    SoftmaxBackwardOutCuda, SoftmaxOutCuda,
};
use crate::Cuda;
use oxten_runtime::{wrap_dim, DType, Device, Error, Result, Tensor};
use std::ffi::c_void;
use std::fmt::Write;

const THREADS: u32 = 256;
static FAMILY: u8 = 0;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Softmax = 0,
    LogSoftmax = 1,
    SoftmaxBackward = 2,
    LogSoftmaxBackward = 3,
}

fn source(kind: Kind, sin: DType, sout: DType) -> String {
    let mut s = String::from(crate::cuda::PRELUDE);
    let acc = if sin == DType::F64 { "double" } else { "float" };
    let _ = writeln!(
        s,
        "typedef {} SI;\ntypedef {} SO;\ntypedef {acc} ACC;\nconst int THREADS = {THREADS};",
        storage_type(sin),
        storage_type(sout)
    );
    let body = match kind {
        Kind::Softmax | Kind::LogSoftmax => {
            let write = if kind == Kind::Softmax {
                "ox_exp(ox_load<ACC>(x[i]) - m) / t"
            } else {
                "ox_load<ACC>(x[i]) - m - ox_log(t)"
            };
            format!(
                r#"extern "C" __global__ void ox_kernel(const char* __restrict__ xp, char* __restrict__ yp, const char* unused, long long rows, long long len) {{
  long long r = blockIdx.x;
  if (r >= rows) return;
  const SI* x = (const SI*)xp + r * len;
  SO* y = (SO*)yp + r * len;
  ACC m = OxLimits<ACC>::lowest();
  for (long long i = threadIdx.x; i < len; i += THREADS) m = ox_max(m, ox_load<ACC>(x[i]));
  m = ox_block_reduce(m, OxMaxOp(), OxLimits<ACC>::lowest());
  // A row of -inf stays NaN-free only in PyTorch's sense: exp(-inf - -inf) is NaN there too.
  ACC t = 0;
  for (long long i = threadIdx.x; i < len; i += THREADS) t += ox_exp(ox_load<ACC>(x[i]) - m);
  t = ox_block_reduce(t, OxSum(), ACC(0));
  for (long long i = threadIdx.x; i < len; i += THREADS) y[i] = ox_store<SO>({write});
}}
"#
            )
        }
        Kind::SoftmaxBackward | Kind::LogSoftmaxBackward => {
            let (dot, write) = if kind == Kind::SoftmaxBackward {
                ("ox_load<ACC>(g[i]) * ox_load<ACC>(o[i])", "ox_load<ACC>(o[i]) * (ox_load<ACC>(g[i]) - t)")
            } else {
                ("ox_load<ACC>(g[i])", "ox_load<ACC>(g[i]) - ox_exp(ox_load<ACC>(o[i])) * t")
            };
            format!(
                r#"extern "C" __global__ void ox_kernel(const char* __restrict__ gp, char* __restrict__ yp, const char* __restrict__ op, long long rows, long long len) {{
  long long r = blockIdx.x;
  if (r >= rows) return;
  const SI* g = (const SI*)gp + r * len;
  const SI* o = (const SI*)op + r * len;
  SO* y = (SO*)yp + r * len;
  ACC t = 0;
  for (long long i = threadIdx.x; i < len; i += THREADS) t += {dot};
  t = ox_block_reduce(t, OxSum(), ACC(0));
  for (long long i = threadIdx.x; i < len; i += THREADS) y[i] = ox_store<SO>({write});
}}
"#
            )
        }
    };
    s.push_str(&body);
    s
}

/// Runs one of the four kernels: `a` is the input (forward) or the gradient (backward), `b`
/// the forward's output (backward only), over rows along `dim`, into `out`.
fn run(kind: Kind, a: &Tensor, b: Option<&Tensor>, dim: i64, out: &Tensor, what: &str) -> Result<()> {
    if !matches!(a.dtype(), DType::F32 | DType::F64 | DType::F16 | DType::BF16) {
        return Err(not_implemented(what, a.dtype()));
    }
    if a.numel() == 0 {
        return Ok(());
    }
    let Device::Cuda(dev) = a.device() else {
        return Err(Error::device(format!("{what}: a CUDA kernel was called on {}", a.device())));
    };
    let d = if a.dim() == 0 { 0 } else { wrap_dim(dim, a.dim())? };
    let (xa, perm, rows, len) = rows_along(a, d)?;
    // The backward reads the output in the gradient's dtype and layout.
    let xb =
        b.map(|t| -> Result<Tensor> { Ok(rows_along(&crate::iter::to_dtype(t, a.dtype())?, d)?.0) }).transpose()?;
    let (target, own) = rows_target(out, &perm, out.dtype())?;
    let (sin, sout) = (a.dtype(), out.dtype());
    let key = InstanceKey {
        family: &FAMILY as *const u8 as usize,
        variant: dtype_code(sin) | dtype_code(sout) << 4 | (kind as u64) << 8,
        device: dev,
    };
    let f = instance(key, what, || source(kind, sin, sout))?;
    // SAFETY: the kernel writes every element of the target.
    let (py, deferred) = unsafe { target.data_ptr_for_overwrite() };
    let mut v =
        [xa.data_ptr() as u64, py as u64, xb.as_ref().map_or(0, |t| t.data_ptr() as u64), rows as u64, len as u64];
    let mut args: Vec<*mut c_void> = v.iter_mut().map(|p| p as *mut u64 as *mut c_void).collect();
    // SAFETY: the arguments match the kernel's parameters; each block touches one row of
    // `len` elements of contiguous `rows × len` tensors.
    unsafe { launch(a.device(), f, blocks_for(rows as u64, 1), THREADS, 0, &mut args)? };
    if deferred {
        // SAFETY: written in full by the kernel queued above.
        unsafe { target.storage().assume_init() };
    }
    rows_finish(out, &perm, &target, own)
}

impl SoftmaxOutCuda for Cuda {
    fn softmax_out(self_: &Tensor, dim: i64, _half_to_float: bool, out: &Tensor) -> Result<()> {
        run(Kind::Softmax, self_, None, dim, out, "softmax")
    }
}
impl LogSoftmaxOutCuda for Cuda {
    fn log_softmax_out(self_: &Tensor, dim: i64, _half_to_float: bool, out: &Tensor) -> Result<()> {
        run(Kind::LogSoftmax, self_, None, dim, out, "log_softmax")
    }
}
impl SoftmaxBackwardOutCuda for Cuda {
    fn softmax_backward_out(
        grad_output: &Tensor,
        output: &Tensor,
        dim: i64,
        _input_dtype: DType,
        grad_input: &Tensor,
    ) -> Result<()> {
        run(Kind::SoftmaxBackward, grad_output, Some(output), dim, grad_input, "softmax_backward")
    }
}
impl LogSoftmaxBackwardOutCuda for Cuda {
    fn log_softmax_backward_out(
        grad_output: &Tensor,
        output: &Tensor,
        dim: i64,
        _input_dtype: DType,
        out: &Tensor,
    ) -> Result<()> {
        run(Kind::LogSoftmaxBackward, grad_output, Some(output), dim, out, "log_softmax_backward")
    }
}

static NLL: u8 = 0;
static NLL_BACKWARD: u8 = 0;

/// The targets on the host, each a class index or `ignore_index` (the check the CPU makes).
fn checked_targets(target: &Tensor, n_classes: i64, ignore_index: i64) -> Result<Vec<i64>> {
    let t = target.try_to_dtype(DType::I64)?.to_vec::<i64>()?;
    for &v in &t {
        if v != ignore_index {
            super::loss::check_target(v, n_classes)?;
        }
    }
    Ok(t)
}

/// `(rows, classes, row stride, class stride)` of a 1-D or 2-D input.
fn nll_geometry(self_: &Tensor) -> (i64, i64, i64, i64) {
    let (s, st) = (self_.sizes(), self_.strides());
    if self_.dim() == 2 {
        (s[0], s[1], st[0], st[1])
    } else {
        (1, s[0], 0, st[0])
    }
}

impl NllLossForwardOutCuda for Cuda {
    /// One block: each thread picks `-w[t] · x[i, t]` for its rows; the sums of losses and
    /// weights are block-reduced (reduction `mean` divides one by the other).
    fn nll_loss_forward_out(
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
        ignore_index: i64,
        output: &Tensor,
        total_weight: &Tensor,
    ) -> Result<()> {
        let dtype = self_.dtype();
        if !dtype.is_floating_point() {
            return Err(not_implemented("nll_loss_forward_out", dtype));
        }
        let (rows, classes, rs, cs) = nll_geometry(self_);
        checked_targets(target, classes, ignore_index)?;
        let Device::Cuda(dev) = self_.device() else {
            return Err(Error::device("nll_loss: a CUDA kernel was called on another device"));
        };
        let tgt = target.try_to_dtype(DType::I64)?.try_contiguous()?;
        let w = weight.map(|w| w.try_to_dtype(dtype)?.try_contiguous()).transpose()?;
        let none = reduction == super::REDUCTION_NONE && self_.dim() == 2;
        let out = if none { crate::cuda::reduce::contiguous_target(output)? } else { output.clone() };
        let key = InstanceKey { family: &NLL as *const u8 as usize, variant: dtype_code(dtype), device: dev };
        let f = instance(key, "nll_loss", || {
            let mut s = String::from(crate::cuda::PRELUDE);
            let acc = if dtype == DType::F64 { "double" } else { "float" };
            let _ =
                writeln!(s, "typedef {} S;\ntypedef {acc} ACC;\nconst int THREADS = {THREADS};", storage_type(dtype));
            s.push_str(
                r#"extern "C" __global__ void ox_kernel(const char* xp, const long long* t, const char* wp, char* outp, char* twp,
                                     long long rows, long long rs, long long cs, long long ignore, long long reduction) {
  const S* x = (const S*)xp;
  const S* w = (const S*)wp;
  ACC loss = 0, total = 0;
  for (long long i = threadIdx.x; i < rows; i += THREADS) {
    long long c = t[i];
    ACC v = 0, wt = 0;
    if (c != ignore) {
      wt = w ? ox_load<ACC>(w[c]) : ACC(1);
      v = -ox_load<ACC>(x[i * rs + c * cs]) * wt;
    }
    if (reduction == 0) ((S*)outp)[i] = ox_store<S>(v);
    loss += v;
    total += wt;
  }
  loss = ox_block_reduce(loss, OxSum(), ACC(0));
  total = ox_block_reduce(total, OxSum(), ACC(0));
  if (threadIdx.x == 0) {
    if (reduction != 0) ((S*)outp)[0] = ox_store<S>(reduction == 1 ? loss / total : loss);
    ((S*)twp)[0] = ox_store<S>(reduction == 0 ? ACC(0) : total);
  }
}
"#,
            );
            s
        })?;
        let red = if none { 0 } else { reduction.max(1) };
        let mut v = [
            self_.data_ptr() as u64,
            tgt.data_ptr() as u64,
            w.as_ref().map_or(0, |w| w.data_ptr() as u64),
            out.data_ptr() as u64,
            total_weight.data_ptr() as u64,
            rows as u64,
            rs as u64,
            cs as u64,
            ignore_index as u64,
            red as u64,
        ];
        let mut args: Vec<*mut c_void> = v.iter_mut().map(|p| p as *mut u64 as *mut c_void).collect();
        // SAFETY: every target is a class index in `0..classes` or the ignored one (checked on
        // the host), so each read `x[i·rs + t·cs]` is an element of `self`; the weight has
        // `classes` elements (the meta function checked), the outputs `rows` or 1.
        unsafe { launch(self_.device(), f, 1, THREADS, 0, &mut args)? };
        if !out.is_same(output) {
            output.try_copy_(&out)?;
        }
        Ok(())
    }
}

impl NllLossBackwardOutCuda for Cuda {
    /// `grad_input[i, c] = -w[t_i] · g_i` at `c = t_i` (g scaled by `1 / total_weight` for the
    /// mean), 0 elsewhere.
    fn nll_loss_backward_out(
        grad_output: &Tensor,
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
        ignore_index: i64,
        total_weight: &Tensor,
        grad_input: &Tensor,
    ) -> Result<()> {
        let dtype = grad_input.dtype();
        if !dtype.is_floating_point() {
            return Err(not_implemented("nll_loss_backward_out", dtype));
        }
        let (rows, classes, _, _) = nll_geometry(self_);
        checked_targets(target, classes, ignore_index)?;
        let Device::Cuda(dev) = grad_input.device() else {
            return Err(Error::device("nll_loss_backward: a CUDA kernel was called on another device"));
        };
        let tgt = target.try_to_dtype(DType::I64)?.try_contiguous()?;
        let w = weight.map(|w| w.try_to_dtype(dtype)?.try_contiguous()).transpose()?;
        let go = grad_output.try_to_dtype(dtype)?.try_contiguous()?;
        let tw = total_weight.try_to_dtype(dtype)?.try_contiguous()?;
        let gi = crate::cuda::reduce::contiguous_target(grad_input)?;
        let none = reduction == super::REDUCTION_NONE && self_.dim() == 2;
        let key = InstanceKey { family: &NLL_BACKWARD as *const u8 as usize, variant: dtype_code(dtype), device: dev };
        let f = instance(key, "nll_loss_backward", || {
            let mut s = String::from(crate::cuda::PRELUDE);
            let acc = if dtype == DType::F64 { "double" } else { "float" };
            let _ = writeln!(s, "typedef {} S;\ntypedef {acc} ACC;", storage_type(dtype));
            s.push_str(
                r#"extern "C" __global__ void ox_kernel(const char* gp, const long long* t, const char* wp, const char* twp, char* gip,
                                     long long rows, long long classes, long long ignore, long long reduction) {
  const S* w = (const S*)wp;
  long long total = rows * classes;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    long long i = e / classes, c = e % classes;
    ACC v = 0;
    if (c == t[i] && c != ignore) {
      ACC g = ox_load<ACC>(((const S*)gp)[reduction == 0 ? i : 0]);
      if (reduction == 1) g = g / ox_load<ACC>(((const S*)twp)[0]);
      v = -(w ? ox_load<ACC>(w[c]) : ACC(1)) * g;
    }
    ((S*)gip)[e] = ox_store<S>(v);
  }
}
"#,
            );
            s
        })?;
        // SAFETY: the kernel writes every element of the contiguous target.
        let (pgi, deferred) = unsafe { gi.data_ptr_for_overwrite() };
        let red = if none { 0 } else { reduction.max(1) };
        let mut v = [
            go.data_ptr() as u64,
            tgt.data_ptr() as u64,
            w.as_ref().map_or(0, |w| w.data_ptr() as u64),
            tw.data_ptr() as u64,
            pgi as u64,
            rows as u64,
            classes as u64,
            ignore_index as u64,
            red as u64,
        ];
        let mut args: Vec<*mut c_void> = v.iter_mut().map(|p| p as *mut u64 as *mut c_void).collect();
        // SAFETY: targets were checked on the host; reads stay inside the gradient (`rows` or
        // 1 elements), the weight (`classes`) and the total weight (1), writes inside the
        // contiguous `rows × classes` target.
        unsafe { launch(grad_input.device(), f, blocks_for((rows * classes) as u64, THREADS), THREADS, 0, &mut args)? };
        if deferred {
            // SAFETY: written in full by the kernel queued above.
            unsafe { gi.storage().assume_init() };
        }
        if !gi.is_same(grad_input) {
            grad_input.try_copy_(&gi)?;
        }
        Ok(())
    }
}
