//! `cat` on CUDA: each input is copied into its slice of the output (one strided, converting
//! copy kernel per input), skipping the legacy empty tensors the CPU skips too.

use super::cat::{cat_should_skip, narrow_view};
use crate::generated::decls::CatOutCuda;
use crate::Cuda;
use oxten_runtime::{MemoryFormat, Result, Tensor};

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
