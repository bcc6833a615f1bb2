//! `_unsafe_masked_index` and `_unsafe_masked_index_put_accumulate`: advanced indexing where a
//! mask says which results are read (or written); elsewhere the indices may be anything, even
//! out of bounds (compilers emit these for padded gathers, reading nothing there). Eager
//! reference versions as PyTorch's: each index is clamped into its dimension's range, then
//! `self[indices]` with `fill` where the mask is false, or `index_put` with accumulation of the
//! values the mask keeps. Composites, so autograd follows `index`, `masked_fill` and
//! `index_put`.

use crate::generated::decls::{UnsafeMaskedIndexCompositeImplicit, UnsafeMaskedIndexPutAccumulateCompositeImplicit};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// The indices clamped into `[-size, size - 1]` of the dimension each indexes (integer index
/// tensors only: PyTorch refuses boolean masks here).
fn clamped_masked_indices(op: &str, self_: &Tensor, indices: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
    if indices.len() > self_.dim() {
        return Err(Error::index(format!(
            "{op}: too many indices for tensor of dimension {} (got {})",
            self_.dim(),
            indices.len()
        )));
    }
    let sizes = self_.sizes();
    indices
        .iter()
        .zip(sizes.iter())
        .map(|(index, &size)| {
            let Some(index) = index else { return Ok(None) };
            if !matches!(index.dtype(), DType::I64 | DType::I32) {
                return Err(Error::runtime(format!(
                    "{op} found unexpected index type {}",
                    scalar_type_name(index.dtype())
                )));
            }
            Ok(Some(ops::clamp::call(index, Some(Scalar::Int(-size)), Some(Scalar::Int(size - 1)))?))
        })
        .collect()
}

impl UnsafeMaskedIndexCompositeImplicit for Composite {
    fn _unsafe_masked_index(self_: &Tensor, mask: &Tensor, indices: &[Option<Tensor>], fill: Scalar) -> Result<Tensor> {
        const OP: &str = "_unsafe_masked_index";
        let clamped = clamped_masked_indices(OP, self_, indices)?;
        let keep_out = ops::logical_not::call(mask)?;
        if self_.numel() == 0 {
            // Nothing to read: a tensor of `fill` with one element along each indexed empty
            // dimension, so that the (clamped, then -1) indices address it.
            let sizes: Vec<i64> = self_
                .sizes()
                .iter()
                .enumerate()
                .map(|(d, &s)| if s == 0 && clamped.get(d).is_some_and(|i| i.is_some()) { 1 } else { s })
                .collect();
            let filled = ops::full::call(&sizes, fill, Some(self_.dtype()), None, Some(self_.device()), None)?;
            return ops::index::call(&filled, &clamped);
        }
        ops::masked_fill_scalar::call(&ops::index::call(self_, &clamped)?, &keep_out, fill)
    }
}

impl UnsafeMaskedIndexPutAccumulateCompositeImplicit for Composite {
    fn _unsafe_masked_index_put_accumulate(
        self_: &Tensor,
        mask: &Tensor,
        indices: &[Option<Tensor>],
        values: &Tensor,
    ) -> Result<Tensor> {
        const OP: &str = "_unsafe_masked_index_put_accumulate";
        let clamped = clamped_masked_indices(OP, self_, indices)?;
        if self_.numel() == 0 {
            return ops::deep_clone::call(self_, None);
        }
        let kept = ops::masked_fill_scalar::call(values, &ops::logical_not::call(mask)?, Scalar::Int(0))?;
        ops::index_put::call(self_, &clamped, &kept, true)
    }
}
