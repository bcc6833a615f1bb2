//! `unravel_index` (PyTorch has it in Python only): flat indices into coordinates of `shape`,
//! `index.floor_divide(stride) % size` along each dim, composed of those two operators (so every
//! backend has it, and a negative or too large index wraps as PyTorch's does).

use crate::generated::decls::UnravelIndexCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Tensor};

impl UnravelIndexCompositeImplicit for Composite {
    fn unravel_index(indices: &Tensor, shape: &[i64]) -> Result<Vec<Tensor>> {
        let dtype = indices.dtype();
        if dtype.is_floating_point() || dtype == DType::Bool {
            return Err(Error::dtype(format!(
                "unravel_index: expected 'indices' to be integer dtype, but got torch.{}",
                dtype.name()
            )));
        }
        let listed = || shape.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        let tuple = || if shape.len() == 1 { format!("({},)", shape[0]) } else { format!("({})", listed()) };
        if shape.iter().any(|&d| d < 0) {
            return Err(Error::value(format!(
                "unravel_index: 'shape' cannot have negative values, but got {}",
                tuple()
            )));
        }
        if shape.contains(&0) && indices.numel() > 0 {
            return Err(Error::value(format!(
                "unravel_index: 'shape' cannot have zero dimensions when 'indices' is non-empty, but got {}",
                tuple()
            )));
        }
        // The stride of each dim (`[1]` for an empty shape, whose result has no coordinates).
        let mut strides = vec![1i64; shape.len().max(1)];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1].checked_mul(shape[d + 1]).ok_or_else(|| {
                Error::value(format!("unravel_index: the product of 'shape' {} overflows int64", tuple()))
            })?;
        }
        let n = strides.len() as i64;
        let strides = Tensor::from_vec(strides, &[n])?.try_to_device(indices.device())?;
        let sizes = Tensor::from_vec(shape.to_vec(), &[shape.len() as i64])?.try_to_device(indices.device())?;
        let quotient = ops::floor_divide::call(&indices.try_unsqueeze(-1)?, &strides)?;
        let coords = ops::remainder::call(&quotient, &sizes)?;
        ops::unbind::call(&coords, -1)
    }
}
