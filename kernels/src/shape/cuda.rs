//! Shape operators on CUDA. `cat`: each input is copied into its slice of the output (one
//! strided, converting copy kernel per input), skipping the legacy empty tensors the CPU skips
//! too. `tril`/`triu`: one kernel over the elements of a contiguous result, keeping those on
//! the kept side of the diagonal (elements are moved as raw bits, so every dtype works).

use super::cat::{cat_should_skip, narrow_view};
use crate::cuda::launch::{blocks_for, instance, launch, InstanceKey};
use crate::generated::decls::{CatOutCuda, TrilCudaCuda, TriuCudaCuda};
use crate::Cuda;
use oxten_runtime::{Device, Error, MemoryFormat, Result, Tensor};
use std::ffi::c_void;

const THREADS: u32 = 256;
static TRI: u8 = 0;

fn tri_source(bytes: usize, lower: bool) -> String {
    let ty = match bytes {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        _ => "unsigned long long",
    };
    let keep = if lower { "j - i <= diagonal" } else { "j - i >= diagonal" };
    format!(
        r#"// tril/triu, generated instance
typedef {ty} E;
extern "C" __global__ void ox_kernel(const char* __restrict__ xp, char* __restrict__ yp, long long n, long long rows,
                                     long long cols, long long diagonal) {{
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {{
    long long j = k % cols;
    long long i = (k / cols) % rows;
    ((E*)yp)[k] = ({keep}) ? ((const E*)xp)[k] : E(0);
  }}
}}
"#
    )
}

/// `out` = the kept triangle of `self_` (`out` may be `self_`: each element is read, then
/// written, by one thread).
fn tri_cuda(self_: &Tensor, diagonal: i64, out: &Tensor, lower: bool) -> Result<()> {
    let what = if lower { "tril" } else { "triu" };
    let n = self_.numel();
    if n == 0 {
        return Ok(());
    }
    let Device::Cuda(dev) = out.device() else {
        return Err(Error::device(format!("{what}: a CUDA kernel was called on {}", out.device())));
    };
    let x = self_.try_contiguous()?;
    // Written directly unless `out` is strided or shares memory with the input in another way.
    let aliased = out.storage().data_ptr() == x.storage().data_ptr() && !out.is_same(&x);
    let target = if out.is_contiguous() && !aliased {
        out.clone()
    } else {
        Tensor::empty(&out.sizes(), out.dtype(), out.device(), MemoryFormat::Contiguous)?
    };
    let sizes = self_.sizes();
    let (rows, cols) = (sizes[sizes.len() - 2], sizes[sizes.len() - 1]);
    let bytes = self_.dtype().size();
    let key =
        InstanceKey { family: &TRI as *const u8 as usize, variant: bytes as u64 | (lower as u64) << 8, device: dev };
    let f = instance(key, what, || format!("{}{}", crate::cuda::PRELUDE, tri_source(bytes, lower)))?;
    let mut a = [x.data_ptr() as u64, target.data_ptr() as u64, n as u64, rows as u64, cols as u64, diagonal as u64];
    let mut args: Vec<*mut c_void> = a.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
    // SAFETY: the arguments match the kernel's parameters (8 bytes each; `diagonal` is read back
    // as the same two's-complement bits); `x` and `target` are contiguous with `n` elements of
    // `bytes` bytes, and each thread reads and writes only its own element `k < n`.
    unsafe { launch(out.device(), f, blocks_for(n as u64, THREADS).min(65_536), THREADS, 0, &mut args)? };
    if !target.is_same(out) {
        out.try_copy_(&target)?;
    }
    Ok(())
}

impl TrilCudaCuda for Cuda {
    fn tril_cuda(self_: &Tensor, diagonal: i64, out: &Tensor) -> Result<()> {
        tri_cuda(self_, diagonal, out, true)
    }
}

impl TriuCudaCuda for Cuda {
    fn triu_cuda(self_: &Tensor, diagonal: i64, out: &Tensor) -> Result<()> {
        tri_cuda(self_, diagonal, out, false)
    }
}

impl CatOutCuda for Cuda {
    #[allow(clippy::too_many_arguments)]
    fn cat_out(
        tensors: &[Tensor],
        dim: i64,
        _valid: i64,
        _all_contiguous: bool,
        _all_same_dtype: bool,
        _all_same_sizes_and_stride: bool,
        _memory_format: MemoryFormat,
        out: &Tensor,
    ) -> Result<()> {
        if out.numel() == 0 {
            return Ok(());
        }
        let dim = dim as usize;
        let mut offset = 0;
        for t in tensors.iter().filter(|t| !cat_should_skip(t)) {
            let n = t.sizes()[dim];
            narrow_view(out, dim, offset, n)?.try_copy_(t)?;
            offset += n;
        }
        Ok(())
    }
}
