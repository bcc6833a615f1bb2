//! Dim reorderings: `permute`, `transpose`, `t`.

use super::strided_view;
use crate::generated::decls::{PermuteCompositeExplicit, TCompositeExplicit, TransposeCompositeExplicit};
use oxten_runtime::{ops, wrap_dim, Error, Result, Tensor};

impl PermuteCompositeExplicit for crate::Composite {
    /// Result dim `i` is `self`'s dim `dims[i]` (negative dims wrap); `dims` must name every dim
    /// exactly once.
    fn permute(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
        let l = self_.layout();
        let ndim = l.dim();
        if dims.len() != ndim {
            // PyTorch shares this check with its sparse kernel, hence the "(sparse_coo)" that
            // dense users see too.
            return Err(Error::shape(format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of \
                 the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {}",
                dims.len()
            )));
        }
        let mut seen = vec![false; ndim];
        let mut sizes = Vec::with_capacity(ndim);
        let mut strides = Vec::with_capacity(ndim);
        for &d in dims {
            let d = wrap_dim(d, ndim)?;
            if seen[d] {
                return Err(Error::value("permute(): duplicate dims are not allowed."));
            }
            seen[d] = true;
            sizes.push(l.sizes[d]);
            strides.push(l.strides[d]);
        }
        strided_view(self_, &sizes, &strides, l.offset)
    }
}

impl TransposeCompositeExplicit for crate::Composite {
    /// Swaps two dims (negative dims wrap; a 0-dim tensor accepts 0 and -1). Swapping a dim with
    /// itself still returns a new alias, as PyTorch does.
    fn transpose(self_: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
        let l = self_.layout();
        let ndim = l.dim();
        let d0 = wrap_dim(dim0, ndim)?;
        let d1 = wrap_dim(dim1, ndim)?;
        let mut sizes = l.sizes.clone();
        let mut strides = l.strides.clone();
        if ndim > 0 {
            sizes.swap(d0, d1);
            strides.swap(d0, d1);
        }
        strided_view(self_, &sizes, &strides, l.offset)
    }
}

impl TCompositeExplicit for crate::Composite {
    /// The matrix transpose; 0-d and 1-d tensors come back as aliases of themselves.
    fn t(self_: &Tensor) -> Result<Tensor> {
        let ndim = self_.dim();
        if ndim > 2 {
            return Err(Error::shape(format!("t() expects a tensor with <= 2 dimensions, but self is {ndim}D")));
        }
        ops::transpose::call(self_, 0, if ndim < 2 { 0 } else { 1 })
    }
}
