//! `view` (never copies), `alias` (the same view) and `reshape` (a view when possible, else a
//! contiguous copy).

use super::{compute_stride, infer_size, strided_view};
use crate::generated::decls::{AliasCompositeExplicit, ReshapeCompositeImplicit, ViewCompositeExplicit};
use oxten_runtime::{ops, Error, MemoryFormat, Result, Tensor};

/// PyTorch's message when a view would need a dim that crosses two memory chunks.
const VIEW_INCOMPATIBLE: &str = "view size is not compatible with input tensor's size and stride (at least one \
     dimension spans across two contiguous subspaces). Use .reshape(...) instead.";

impl ViewCompositeExplicit for crate::Composite {
    /// Reinterprets the elements (in row-major order) with a new shape, keeping the storage and
    /// offset. Works on non-contiguous tensors whenever `compute_stride` finds strides, and
    /// fails rather than copy otherwise: callers rely on `view` aliasing.
    fn view(self_: &Tensor, size: &[i64]) -> Result<Tensor> {
        let l = self_.layout();
        let shape = infer_size(size, l.numel())?;
        let strides = compute_stride(&l.sizes, &l.strides, &shape).ok_or_else(|| Error::shape(VIEW_INCOMPATIBLE))?;
        strided_view(self_, &shape, &strides, l.offset)
    }
}

impl AliasCompositeExplicit for crate::Composite {
    /// The same layout over the same storage.
    fn alias(self_: &Tensor) -> Result<Tensor> {
        let l = self_.layout();
        strided_view(self_, &l.sizes, &l.strides, l.offset)
    }
}

impl ReshapeCompositeImplicit for crate::Composite {
    /// `view` when the layout allows it, otherwise a contiguous `clone` viewed with the new
    /// shape. Both steps go through the dispatcher so that layers above the backends (autograd)
    /// see `view`/`clone` rather than an opaque reshape.
    fn reshape(self_: &Tensor, shape: &[i64]) -> Result<Tensor> {
        let l = self_.layout();
        let shape = infer_size(shape, l.numel())?;
        if compute_stride(&l.sizes, &l.strides, &shape).is_some() {
            return ops::view::call(self_, &shape);
        }
        let copy = ops::deep_clone::call(self_, Some(MemoryFormat::Contiguous))?;
        ops::view::call(&copy, &shape)
    }
}
