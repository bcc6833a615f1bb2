//! `mm`, `bmm`, `addmm`, `mv` and `dot` on CUDA through cuBLAS (`cublasGemmStridedBatchedEx`) for f32, f64,
//! f16 and bf16, the half types on tensor cores with f32 accumulation. Row-major operands are handed to the column-major
//! library as their transposes (C = A·B is Cᵀ = Bᵀ·Aᵀ), so row-major and transposed inputs
//! need no copy; other layouts are made contiguous first. TF32 is off unless
//! [`set_allow_tf32`] turns it on (`torch.backends.cuda.matmul.allow_tf32`).

use super::vector::{dot_check, mv_out_checked, mv_output};
use crate::generated::decls::{AddmmOutCuda, BmmOutCuda, DotCuda, MmOutCuda, MvCuda, MvOutCuda};
use cudarc::cublas::sys as cublas;
use oxten_runtime::cuda::{context, current_stream, MAX_DEVICES};
use oxten_runtime::{DType, Device, Error, MemoryFormat, Result, Scalar, Tensor};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

static ALLOW_TF32: AtomicBool = AtomicBool::new(false);

/// Lets f32 matrix products use TF32 tensor cores (10-bit mantissa inputs).
pub fn set_allow_tf32(allow: bool) {
    ALLOW_TF32.store(allow, Ordering::Relaxed);
}

/// Whether f32 matrix products may use TF32.
pub fn allow_tf32() -> bool {
    ALLOW_TF32.load(Ordering::Relaxed)
}

struct Handle(cublas::cublasHandle_t);
// SAFETY: a cuBLAS handle may be used from any thread as long as calls are not concurrent; the
// mutex around it ensures that.
unsafe impl Send for Handle {}

static HANDLES: [OnceLock<std::result::Result<Mutex<Handle>, String>>; MAX_DEVICES] =
    [const { OnceLock::new() }; MAX_DEVICES];

fn handle(dev: u8) -> Result<&'static Mutex<Handle>> {
    context(Device::Cuda(dev))?;
    HANDLES[dev as usize]
        .get_or_init(|| {
            // SAFETY: only asks whether the dynamic loader finds the library.
            if !unsafe { cublas::is_culib_present() } {
                return Err("the cuBLAS library (libcublas.so) was not found by the dynamic loader".into());
            }
            let mut h = std::ptr::null_mut();
            // SAFETY: creates a handle for the current context into a local.
            unsafe { cublas::cublasCreate_v2(&mut h) }.result().map_err(|e| format!("cublasCreate failed: {e:?}"))?;
            Ok(Mutex::new(Handle(h)))
        })
        .as_ref()
        .map_err(|m| Error::runtime(m.clone()))
}

/// How cuBLAS sees the matrices (the last two dims) of a row-major operand: transposed or not,
/// its leading dimension and batch stride; `None` when its strides fit neither layout.
fn operand(t: &Tensor) -> Option<(bool, i64, i64)> {
    let (s, st) = (t.sizes(), t.strides());
    let nd = s.len();
    let (rows, cols) = (s[nd - 2], s[nd - 1]);
    let (r, c) = (st[nd - 2], st[nd - 1]);
    let batch = if nd == 3 { st[0] } else { 0 };
    if nd == 3 && s[0] > 1 && batch < rows * cols {
        return None;
    }
    if c == 1 && r >= cols.max(1) {
        Some((false, r, batch))
    } else if r == 1 && c >= rows.max(1) {
        Some((true, c, batch))
    } else {
        None
    }
}

fn data_type(d: DType) -> Option<cublas::cudaDataType> {
    Some(match d {
        DType::F32 => cublas::cudaDataType::CUDA_R_32F,
        DType::F64 => cublas::cudaDataType::CUDA_R_64F,
        DType::F16 => cublas::cudaDataType::CUDA_R_16F,
        DType::BF16 => cublas::cudaDataType::CUDA_R_16BF,
        _ => return None,
    })
}

/// `out = alpha · a @ b + beta · out` for matrices (2-D) or batches of them (3-D), with `out`
/// contiguous. Operands whose strides cuBLAS cannot take are made contiguous first.
fn gemm(a: &Tensor, b: &Tensor, out: &Tensor, alpha: f64, beta: f64, what: &str) -> Result<()> {
    let Device::Cuda(dev) = out.device() else {
        return Err(Error::device(format!("{what}: the CUDA kernel was called on {}", out.device())));
    };
    let dtype = out.dtype();
    let ty = data_type(dtype).ok_or_else(|| crate::cuda::launch::not_implemented(what, dtype))?;
    let nd = a.dim();
    let (m, k, n) = (a.sizes()[nd - 2], a.sizes()[nd - 1], b.sizes()[nd - 1]);
    let batch = if nd == 3 { a.sizes()[0] } else { 1 };
    if [m, n, k, batch].iter().any(|v| *v > i32::MAX as i64) {
        return Err(Error::value(format!("{what}: CUDA matrix dims above 2^31 - 1 are not supported")));
    }
    let dense = |t: &Tensor| -> Result<Tensor> {
        match operand(t) {
            Some(_) => Ok(t.clone()),
            None => t.try_contiguous(),
        }
    };
    let (a, b) = (dense(a)?, dense(b)?);
    let layout = |t: &Tensor| {
        operand(t).ok_or_else(|| {
            Error::runtime(format!("{what}: cuBLAS cannot take an operand with strides {:?}", t.strides()))
        })
    };
    let ((ta, lda, sa), (tb, ldb, sb)) = (layout(&a)?, layout(&b)?);
    let op = |t: bool| if t { cublas::cublasOperation_t::CUBLAS_OP_T } else { cublas::cublasOperation_t::CUBLAS_OP_N };
    let compute = match dtype {
        DType::F64 => cublas::cublasComputeType_t::CUBLAS_COMPUTE_64F,
        DType::F32 if allow_tf32() => cublas::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
        _ => cublas::cublasComputeType_t::CUBLAS_COMPUTE_32F,
    };
    let (af, bf) = (alpha as f32, beta as f32);
    let (pa, pb): (*const c_void, *const c_void) = if dtype == DType::F64 {
        (&alpha as *const f64 as *const c_void, &beta as *const f64 as *const c_void)
    } else {
        (&af as *const f32 as *const c_void, &bf as *const f32 as *const c_void)
    };
    let h = handle(dev)?.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the handle belongs to this device's context (current), the stream is a live
    // stream of it; A, B and C are device matrices whose extents the leading dimensions, batch
    // strides and sizes describe (checked layouts); C is contiguous and fully written (or read
    // and written, with beta != 0, after the caller filled it).
    unsafe {
        let (pc, deferred) = if beta == 0.0 { out.data_ptr_for_overwrite() } else { (out.data_ptr(), false) };
        cublas::cublasSetStream_v2(h.0, current_stream(out.device()).raw() as cublas::cudaStream_t)
            .result()
            .map_err(|e| Error::runtime(format!("cublasSetStream failed: {e:?}")))?;
        cublas::cublasGemmStridedBatchedEx(
            h.0,
            op(tb),
            op(ta),
            n as i32,
            m as i32,
            k as i32,
            pa,
            b.data_ptr() as *const c_void,
            ty,
            ldb as i32,
            sb,
            a.data_ptr() as *const c_void,
            ty,
            lda as i32,
            sa,
            pb,
            pc as *mut c_void,
            ty,
            n as i32,
            m * n,
            batch as i32,
            compute,
            cublas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
        .result()
        .map_err(|e| Error::runtime(format!("{what}: cublasGemmStridedBatchedEx failed: {e:?}")))?;
        if deferred {
            out.storage().assume_init();
        }
    }
    Ok(())
}

/// `out = beta · bias + alpha · a @ b` into any `out` (computed in a contiguous temporary when
/// `out` is not contiguous); `bias` `None` means beta 0.
fn product_into(
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    bias: Option<(&Tensor, Scalar)>,
    alpha: Scalar,
    what: &str,
) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    if data_type(out.dtype()).is_none() {
        return Err(crate::cuda::launch::not_implemented(what, out.dtype()));
    }
    let c = if out.is_contiguous() {
        out.clone()
    } else {
        Tensor::empty(&out.sizes(), out.dtype(), out.device(), MemoryFormat::Contiguous)?
    };
    let mut beta = 0.0;
    if let Some((bias, bt)) = bias {
        // PyTorch ignores the bias (even NaN) when beta is 0.
        if bt.to_f64() != 0.0 {
            if !c.is_same(bias) {
                c.try_copy_(&bias.try_expand(&c.sizes())?)?;
            }
            beta = bt.to_f64();
        }
    }
    if a.sizes()[a.dim() - 1] == 0 {
        // Nothing to multiply: alpha · 0 added to beta · bias.
        if beta == 0.0 {
            c.try_zero_()?;
        } else if beta != 1.0 {
            c.try_copy_(&c.try_mul_scalar(beta)?)?;
        }
    } else {
        gemm(a, b, &c, alpha.to_f64(), beta, what)?;
    }
    if !out.is_same(&c) {
        out.try_copy_(&c)?;
    }
    Ok(())
}

impl MmOutCuda for crate::Cuda {
    fn mm_out(self_: &Tensor, mat2: &Tensor, out: &Tensor) -> Result<()> {
        product_into(out, self_, mat2, None, Scalar::Int(1), "addmm")
    }
}

impl BmmOutCuda for crate::Cuda {
    fn bmm_out(self_: &Tensor, mat2: &Tensor, out: &Tensor) -> Result<()> {
        product_into(out, self_, mat2, None, Scalar::Int(1), "bmm")
    }
}

impl AddmmOutCuda for crate::Cuda {
    fn addmm_out(
        self_: &Tensor,
        mat1: &Tensor,
        mat2: &Tensor,
        beta: Scalar,
        alpha: Scalar,
        out: &Tensor,
    ) -> Result<()> {
        product_into(out, mat1, mat2, Some((self_, beta)), alpha, "addmm")
    }
}

/// `out = mat @ vec` as an `m × 1` product.
fn mv_into(out: &Tensor, mat: &Tensor, vec: &Tensor) -> Result<()> {
    let (m, n) = (mat.sizes()[0], mat.sizes()[1]);
    let col = vec.try_reshape(&[n, 1])?;
    if out.is_contiguous() {
        return product_into(&out.try_reshape(&[m, 1])?, mat, &col, None, Scalar::Int(1), "addmv");
    }
    let tmp = Tensor::empty(&[m, 1], out.dtype(), out.device(), MemoryFormat::Contiguous)?;
    product_into(&tmp, mat, &col, None, Scalar::Int(1), "addmv")?;
    out.try_copy_(&tmp.try_reshape(&[m])?)?;
    Ok(())
}

impl MvCuda for crate::Cuda {
    fn mv(self_: &Tensor, vec: &Tensor) -> Result<Tensor> {
        let out = mv_output(self_, vec, false)?;
        mv_into(&out, self_, vec)?;
        Ok(out)
    }
}

impl MvOutCuda for crate::Cuda {
    fn mv_out(self_: &Tensor, vec: &Tensor, out: &Tensor) -> Result<Tensor> {
        mv_out_checked(self_, vec, out, false)?;
        mv_into(out, self_, vec)?;
        Ok(out.clone())
    }
}

impl DotCuda for crate::Cuda {
    /// A `1 × 1` product of the row `self` and the column `tensor`.
    fn dot(self_: &Tensor, tensor: &Tensor) -> Result<Tensor> {
        dot_check(self_, tensor)?;
        let n = self_.numel();
        let out = Tensor::empty(&[1, 1], self_.dtype(), self_.device(), MemoryFormat::Contiguous)?;
        product_into(&out, &self_.try_reshape(&[1, n])?, &tensor.try_reshape(&[n, 1])?, None, Scalar::Int(1), "dot")?;
        out.try_reshape(&[])
    }
}
