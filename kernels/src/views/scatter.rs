//! The scatter forms of the views (`select_scatter`, `slice_scatter`, `diagonal_scatter`,
//! `as_strided_scatter`): a copy of `self` with `src` written into the view, PyTorch's
//! functional counterparts of writing through a view. CompositeImplicitAutograd: `clone`, the
//! view and `copy_`, so the gradient of `self` is zero inside the view and `src`'s is the view of
//! the output's gradient.

use crate::generated::decls::{
    AsStridedScatterCompositeImplicit, DiagonalScatterCompositeImplicit, SelectScatterCompositeImplicit,
    SliceScatterCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

/// `out`'s view (made by `view`) overwritten with `src`, whose shape must be the view's.
fn scatter_into(op: &str, self_: &Tensor, src: &Tensor, view: impl Fn(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    // A fresh contiguous copy: `as_strided_scatter`'s geometry addresses the copy's own storage
    // from offset 0, as PyTorch's clone of a (non-dense) input.
    let out = ops::deep_clone::call(self_, Some(oxten_runtime::MemoryFormat::Contiguous))?;
    let slice = view(&out)?;
    if slice.sizes() != src.sizes() {
        return Err(Error::runtime(format!(
            "{op}: expected src to have a size equal to the slice of self. src size = {:?}, slice size = {:?}",
            &src.sizes()[..],
            &slice.sizes()[..]
        )));
    }
    slice.try_copy_(src)?;
    Ok(out)
}

impl SelectScatterCompositeImplicit for Composite {
    fn select_scatter(self_: &Tensor, src: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
        scatter_into("select_scatter", self_, src, |t| ops::select::call(t, dim, index))
    }
}

impl SliceScatterCompositeImplicit for Composite {
    fn slice_scatter(
        self_: &Tensor,
        src: &Tensor,
        dim: i64,
        start: Option<i64>,
        end: Option<i64>,
        step: i64,
    ) -> Result<Tensor> {
        scatter_into("slice_scatter", self_, src, |t| ops::slice::call(t, dim, start, end, step))
    }
}

impl DiagonalScatterCompositeImplicit for Composite {
    fn diagonal_scatter(self_: &Tensor, src: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        scatter_into("diagonal_scatter", self_, src, |t| ops::diagonal::call(t, offset, dim1, dim2))
    }
}

impl AsStridedScatterCompositeImplicit for Composite {
    fn as_strided_scatter(
        self_: &Tensor,
        src: &Tensor,
        size: &[i64],
        stride: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<Tensor> {
        scatter_into("as_strided_scatter", self_, src, |t| ops::as_strided::call(t, size, stride, storage_offset))
    }
}
