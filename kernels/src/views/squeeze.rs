//! Adding and removing size-1 dims: `squeeze`, `squeeze.dim`, `unsqueeze`.

use super::strided_view;
use crate::generated::decls::{SqueezeCompositeExplicit, SqueezeDimCompositeExplicit, UnsqueezeCompositeExplicit};
use oxten_runtime::{wrap_dim, Result, Tensor};

impl SqueezeCompositeExplicit for crate::Composite {
    /// Drops every size-1 dim.
    fn squeeze(self_: &Tensor) -> Result<Tensor> {
        let l = self_.layout();
        let (sizes, strides): (Vec<i64>, Vec<i64>) =
            l.sizes.iter().zip(l.strides.iter()).filter(|&(&n, _)| n != 1).map(|(&n, &s)| (n, s)).unzip();
        strided_view(self_, &sizes, &strides, l.offset)
    }
}

impl SqueezeDimCompositeExplicit for crate::Composite {
    /// Drops `dim` if its size is 1; otherwise (or on a 0-dim tensor) returns an unchanged alias
    /// rather than an error, as PyTorch does.
    fn squeeze_dim(self_: &Tensor, dim: i64) -> Result<Tensor> {
        let l = self_.layout();
        let d = wrap_dim(dim, l.dim())?;
        let mut sizes = l.sizes.clone();
        let mut strides = l.strides.clone();
        if l.dim() > 0 && sizes[d] == 1 {
            sizes.remove(d);
            strides.remove(d);
        }
        strided_view(self_, &sizes, &strides, l.offset)
    }
}

impl UnsqueezeCompositeExplicit for crate::Composite {
    /// Inserts a size-1 dim at `dim`, which may be anything in `[-dim-1, dim]` (the position
    /// after the last dim is allowed). The new stride is the one a contiguous tensor would have
    /// there: `size * stride` of the dim that follows, or 1 at the end.
    fn unsqueeze(self_: &Tensor, dim: i64) -> Result<Tensor> {
        let l = self_.layout();
        let d = wrap_dim(dim, l.dim() + 1)?;
        let stride = if d >= l.dim() { 1 } else { l.sizes[d] * l.strides[d] };
        let mut sizes = l.sizes.clone();
        let mut strides = l.strides.clone();
        sizes.insert(d, 1);
        strides.insert(d, stride);
        strided_view(self_, &sizes, &strides, l.offset)
    }
}
