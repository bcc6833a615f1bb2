//! `as_strided`: the general view with caller-chosen sizes, strides and offset.

use super::strided_view;
use crate::generated::decls::AsStridedCompositeExplicit;
use oxten_runtime::{Result, Tensor};

impl AsStridedCompositeExplicit for crate::Composite {
    /// A view with exactly the given geometry. Without `storage_offset` the view starts where
    /// `self` starts (PyTorch keeps `self.storage_offset()`), so `as_strided` on a slice stays
    /// inside that slice's storage region by default.
    fn as_strided(self_: &Tensor, size: &[i64], stride: &[i64], storage_offset: Option<i64>) -> Result<Tensor> {
        let offset = storage_offset.unwrap_or_else(|| self_.storage_offset());
        strided_view(self_, size, stride, offset)
    }
}
