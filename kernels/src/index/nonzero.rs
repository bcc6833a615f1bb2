//! `nonzero` (and `nonzero_static`) and `masked_select`: the data-dependent selections, whose result size depends on
//! the values (so neither runs on meta tensors).

use crate::generated::decls::{
    MaskedSelectCompositeImplicit, NonzeroCpu, NonzeroNumpyCompositeImplicit, NonzeroStaticCompositeExplicit,
};
use crate::iter::{infer_size, to_dtype};
use crate::{Composite, Cpu};
use oxten_runtime::{ops, DType, Error, MemoryFormat, Result, Scalar, Tensor};

/// The row-major coordinates of the nonzero elements of `t` (NaN counts as nonzero): their
/// number and the coordinates, `ndim` per element.
pub(crate) fn nonzero_coords(t: &Tensor) -> Result<(usize, Vec<i64>)> {
    let values = to_dtype(t, DType::Bool)?.to_vec::<bool>()?;
    let sizes = t.sizes();
    let nd = sizes.len();
    let count = values.iter().filter(|&&v| v).count();
    let mut coords = Vec::with_capacity(count * nd);
    let mut c = vec![0i64; nd];
    for &v in &values {
        if v {
            coords.extend_from_slice(&c);
        }
        for d in (0..nd).rev() {
            c[d] += 1;
            if c[d] < sizes[d] {
                break;
            }
            c[d] = 0;
        }
    }
    Ok((count, coords))
}

impl NonzeroCpu for Cpu {
    fn nonzero(self_: &Tensor) -> Result<Tensor> {
        let (count, coords) = nonzero_coords(self_)?;
        // PyTorch fills `[ndim, n]` and returns its transpose, so each coordinate column is
        // contiguous; the strides say so.
        let nd = self_.dim();
        let by_dim: Vec<i64> = (0..nd).flat_map(|d| coords.iter().skip(d).step_by(nd.max(1)).copied()).collect();
        Tensor::from_vec(by_dim, &[nd as i64, count as i64])?.try_t()
    }
}

impl NonzeroNumpyCompositeImplicit for Composite {
    /// `nonzero(as_tuple=True)`: `nonzero`'s columns (a 0-dim tensor is taken as 1-D).
    fn nonzero_numpy(self_: &Tensor) -> Result<Vec<Tensor>> {
        let t = if self_.dim() == 0 { self_.try_unsqueeze(0)? } else { self_.clone() };
        ops::unbind::call(&ops::nonzero::call(&t)?, 1)
    }
}

impl MaskedSelectCompositeImplicit for Composite {
    /// `self[mask]` after broadcasting both, so autograd comes from `index`.
    fn masked_select(self_: &Tensor, mask: &Tensor) -> Result<Tensor> {
        if mask.dtype() != DType::Bool {
            return Err(Error::dtype("masked_select: expected BoolTensor for mask"));
        }
        let mut shape = infer_size(&self_.sizes(), &mask.sizes())?;
        if shape.is_empty() {
            // Indexing wants at least one dimension; the result is 1-D either way.
            shape = vec![1];
        }
        ops::index::call(&self_.try_expand(&shape)?, &[Some(mask.try_expand(&shape)?)])
    }
}

impl NonzeroStaticCompositeExplicit for Composite {
    /// `nonzero`'s first `size` rows, padded with rows of `fill_value` to `size`.
    fn nonzero_static(self_: &Tensor, size: i64, fill_value: i64) -> Result<Tensor> {
        if size < 0 {
            return Err(Error::runtime("nonzero_static: 'size' must be an non-negative integer"));
        }
        let all = ops::nonzero::call(self_)?;
        let found = all.size(0)?;
        if found >= size {
            return ops::contiguous::call(&ops::narrow::call(&all, 0, 0, size)?, MemoryFormat::Contiguous);
        }
        let pad = ops::full::call(
            &[size - found, self_.dim() as i64],
            Scalar::Int(fill_value),
            Some(DType::I64),
            None,
            Some(self_.device()),
            None,
        )?;
        ops::cat::call(&[all, pad], 0)
    }
}
