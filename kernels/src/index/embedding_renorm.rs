//! `embedding_renorm_`: the rows an embedding lookup names rescaled, in place, to a maximum norm
//! (what `nn.Embedding(max_norm=)` runs before each lookup). Its own file: a composite of other
//! operators, which a selective build keeps only when something calls it.

use super::select::check_indices;
use crate::generated::decls::EmbeddingRenormInplaceCompositeExplicit;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

impl EmbeddingRenormInplaceCompositeExplicit for Composite {
    /// PyTorch's `embedding_renorm_`: each distinct row named by `indices` whose
    /// `norm_type`-norm (computed in `self`'s dtype) exceeds `max_norm` is multiplied by
    /// `max_norm / (norm + 1e-7)` (computed in f64, then rounded to the dtype, as PyTorch's
    /// `row *= scale` rounds it, f16 and bf16 included). A negative index
    /// counts from the end, as `self[i]` does in PyTorch's loop.
    fn embedding_renorm_(self_: &Tensor, indices: &Tensor, max_norm: f64, norm_type: f64) -> Result<Tensor> {
        if self_.dim() != 2 {
            return Err(Error::shape(format!(
                "Expected 2-dimensional tensor, but got {}-dimensional tensor for argument #1 'self' (while checking \
                 arguments for embedding_renorm_)",
                self_.dim()
            )));
        }
        check_indices(indices, 2, "indices", "embedding_renorm_")?;
        let n = self_.sizes()[0];
        let mut rows = indices.try_to_dtype(DType::I64)?.to_vec::<i64>()?;
        for r in rows.iter_mut() {
            if *r < -n || *r >= n {
                return Err(Error::index(format!(
                    "select(): index {r} out of range for tensor of size {:?} at dimension 0",
                    &self_.sizes()[..]
                )));
            }
            if *r < 0 {
                *r += n;
            }
        }
        rows.sort_unstable();
        rows.dedup();
        if rows.is_empty() {
            return Ok(self_.clone());
        }
        let count = rows.len() as i64;
        let idx = Tensor::from_vec(rows, &[count])?.try_to_device(self_.device())?;
        let picked = ops::index_select::call(self_, 0, &idx)?;
        let norms = ops::linalg_vector_norm::call(&picked, Scalar::Float(norm_type), Some(&[1]), true, None)?;
        let norms = norms.try_to_dtype(DType::F64)?;
        let limit = ops::full_like::call(&norms, Scalar::Float(max_norm), None, None, None, None, None)?;
        let denominator = ops::add_scalar::call(&norms, Scalar::Float(1e-7), Scalar::Int(1))?;
        let scale = ops::div::call(&limit, &denominator)?;
        let too_long = ops::gt_scalar::call(&norms, Scalar::Float(max_norm))?;
        let scale = ops::where_scalarother::call(&too_long, &scale, Scalar::Float(1.0))?;
        // PyTorch's `row *= scale` rounds the scale to the row's dtype first (f16/bf16 too).
        let scaled = ops::mul::call(&picked, &scale.try_to_dtype(self_.dtype())?)?;
        ops::index_put_::call(self_, &[Some(idx)], &scaled, false)
    }
}
