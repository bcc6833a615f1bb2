//! Views that cut or regroup dims: `split.Tensor`, `split.sizes`, `split_with_sizes`, `chunk`,
//! `flatten.using_ints`, `unflatten.int`.
//!
//! All are CompositeImplicitAutograd: they call `narrow`/`slice`, `reshape` and `view` through
//! the dispatcher, so their results are views sharing `self`'s storage (when PyTorch's are) and
//! their gradients come from those operators.

use crate::generated::decls::{
    ChunkCompositeImplicit, FlattenCompositeImplicit, SplitCompositeImplicit, SplitWithSizesCompositeImplicit,
    UnflattenCompositeImplicit,
};
use crate::views::infer_size;
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, Error, Result, Tensor};

impl SplitCompositeImplicit for Composite {
    /// Pieces of `split_size` along `dim` (the last one smaller); `split_size` 0 is only valid
    /// on an empty dim.
    fn split(self_: &Tensor, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
        if self_.dim() == 0 {
            return Err(Error::runtime("split expects at least a 1-dimensional tensor"));
        }
        if split_size < 0 {
            return Err(Error::value(format!(
                "split expects split_size be non-negative, but got split_size={split_size}"
            )));
        }
        let dim_size = self_.size(dim)?;
        if split_size == 0 && dim_size != 0 {
            return Err(Error::value(format!(
                "split_size can only be 0 if dimension size is 0, but got dimension size of {dim_size}"
            )));
        }
        // `ceil(dim_size / split_size)` without overflow for a huge `split_size`.
        let num_splits =
            if split_size == 0 { 1 } else { (dim_size / split_size + i64::from(dim_size % split_size != 0)).max(1) };
        let last = dim_size - (num_splits - 1) * split_size;
        // A huge empty dim split into pieces asks for more handles than memory holds: an error.
        let mut pieces = Tensor::try_reserve_handles(num_splits as usize)?;
        for i in 0..num_splits {
            let len = if i < num_splits - 1 { split_size } else { last };
            pieces.push(ops::narrow::call(self_, dim, i * split_size, len)?);
        }
        Ok(pieces)
    }
}

impl crate::generated::decls::SplitSizesCompositeImplicit for Composite {
    /// `split` with a list of sizes is `split_with_sizes`.
    fn split_sizes(self_: &Tensor, split_size: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        ops::split_with_sizes::call(self_, split_size, dim)
    }
}

impl SplitWithSizesCompositeImplicit for Composite {
    /// Consecutive pieces of the given sizes along `dim`, which must add up to its size.
    fn split_with_sizes(self_: &Tensor, split_sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        if self_.dim() == 0 {
            return Err(Error::runtime("split expects at least a 1-dimensional tensor"));
        }
        let dim_size = self_.size(dim)?;
        let mut start = 0;
        let mut out = Vec::with_capacity(split_sizes.len());
        for &len in split_sizes {
            if len < 0 {
                return Err(Error::value(format!(
                    "split_with_sizes expects split_sizes have only non-negative entries, but got \
                     split_sizes={split_sizes:?}"
                )));
            }
            // Saturating: sizes that overflow cannot sum to the dim's size, which is checked below.
            out.push(ops::slice::call(self_, dim, Some(start), Some(start.saturating_add(len)), 1)?);
            start = start.saturating_add(len);
        }
        if start != dim_size {
            return Err(Error::value(format!(
                "split_with_sizes expects split_sizes to sum exactly to {dim_size} (input tensor's size at dimension \
                 {dim}), but got split_sizes={split_sizes:?}"
            )));
        }
        Ok(out)
    }
}

impl ChunkCompositeImplicit for Composite {
    /// `chunks` pieces of equal size (rounded up) along `dim`; fewer when the dim is too small,
    /// and exactly `chunks` empty pieces of an empty dim.
    fn chunk(self_: &Tensor, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
        if self_.dim() == 0 {
            return Err(Error::runtime("chunk expects at least a 1-dimensional tensor"));
        }
        if chunks <= 0 {
            return Err(Error::value(format!("chunk expects `chunks` to be greater than 0, got: {chunks}")));
        }
        let dim_size = self_.size(dim)?;
        // `ceil(dim_size / chunks)`, without overflowing for huge `chunks`.
        let split_size = dim_size / chunks + i64::from(dim_size % chunks != 0);
        if dim_size == 0 {
            // PyTorch returns `chunks` empty tensors here.
            let mut sizes = oxten_runtime::error::try_vec_with_capacity(chunks as usize)?;
            sizes.resize(chunks as usize, 0);
            return ops::split_with_sizes::call(self_, &sizes, dim);
        }
        ops::split::call(self_, split_size, dim)
    }
}

impl FlattenCompositeImplicit for Composite {
    /// Merges dims `start_dim..=end_dim` into one (a view when the layout allows, as `reshape`);
    /// a 0-dim tensor becomes `[1]`, and a single dim returns `self` itself.
    fn flatten(self_: &Tensor, start_dim: i64, end_dim: i64) -> Result<Tensor> {
        let n = self_.dim();
        let start = wrap_dim(start_dim, n)?;
        let end = wrap_dim(end_dim, n)?;
        if start > end {
            return Err(Error::value("flatten() has invalid args: start_dim cannot come after end_dim"));
        }
        if n == 0 {
            return ops::reshape::call(self_, &[1]);
        }
        if start == end {
            return Ok(self_.clone());
        }
        let sizes = self_.sizes();
        let mut shape: Vec<i64> = sizes[..start].to_vec();
        shape.push(sizes[start..=end].iter().product());
        shape.extend_from_slice(&sizes[end + 1..]);
        ops::reshape::call(self_, &shape)
    }
}

impl UnflattenCompositeImplicit for Composite {
    /// Splits `dim` into `sizes` (one of which may be -1) with a `view`.
    fn unflatten(self_: &Tensor, dim: i64, sizes: &[i64]) -> Result<Tensor> {
        let d = wrap_dim(dim, self_.dim())?;
        if sizes.is_empty() {
            return Err(Error::value("unflatten: sizes must be non-empty"));
        }
        let n = self_.size(d as i64)?;
        let inferred = infer_size(sizes, n).map_err(|e| {
            if e.message.contains("is invalid for input of size") {
                Error::value(format!(
                    "unflatten: Provided sizes {sizes:?} don't multiply up to the size of dim {d} ({n}) in the input \
                     tensor"
                ))
            } else {
                Error::value(format!("unflatten got an unexpected error:\n{}", e.message))
            }
        })?;
        let mut shape = self_.sizes().to_vec();
        shape.splice(d..=d, inferred);
        ops::view::call(self_, &shape)
    }
}
