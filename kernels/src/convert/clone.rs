//! `clone` (always a copy) and `contiguous` (a copy only when needed).

use crate::generated::decls::{CloneCompositeExplicit, ContiguousCompositeImplicit};
use oxten_runtime::{ops, Error, MemoryFormat, Result, Tensor};

impl CloneCompositeExplicit for crate::Composite {
    /// A new tensor with `self`'s values. `memory_format` None (preserve) keeps the exact
    /// strides of a dense `self` and the dim order of any other; an explicit format lays the
    /// copy out in that format.
    fn clone(self_: &Tensor, memory_format: Option<MemoryFormat>) -> Result<Tensor> {
        let out = ops::empty_like::call(self_, None, None, None, None, memory_format)?;
        ops::copy_::call(&out, self_, false)?;
        Ok(out)
    }
}

impl ContiguousCompositeImplicit for crate::Composite {
    /// `self` itself when it is already contiguous in `memory_format`, else a `clone` in that
    /// format. `preserve_format` names no layout to reach, so it is only accepted for tensors
    /// that are already (row-major) contiguous.
    fn contiguous(self_: &Tensor, memory_format: MemoryFormat) -> Result<Tensor> {
        if self_.is_contiguous_as(memory_format) {
            return Ok(self_.clone());
        }
        if memory_format == MemoryFormat::Preserve {
            return Err(Error::value("preserve memory format is unsupported by the contiguous operator"));
        }
        ops::deep_clone::call(self_, Some(memory_format))
    }
}
