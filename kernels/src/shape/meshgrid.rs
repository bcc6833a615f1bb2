//! `meshgrid`: coordinate grids as expanded views of the 0-D/1-D inputs.

use crate::generated::decls::{MeshgridCompositeImplicit, MeshgridIndexingCompositeImplicit};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

impl MeshgridIndexingCompositeImplicit for Composite {
    fn meshgrid_indexing(tensors: &[Tensor], indexing: &str) -> Result<Vec<Tensor>> {
        let xy = match indexing {
            "ij" => false,
            "xy" => true,
            other => {
                return Err(Error::value(format!(
                    "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {other}"
                )))
            }
        };
        if tensors.is_empty() {
            return Err(Error::value("torch.meshgrid: Expected at least one tensor"));
        }
        for t in tensors {
            if t.dim() > 1 {
                return Err(Error::value(format!(
                    "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a {}-D tensor",
                    t.dim()
                )));
            }
            if t.dtype() != tensors[0].dtype() {
                return Err(Error::dtype("meshgrid expects all tensors to have the same dtype"));
            }
            if t.device() != tensors[0].device() {
                return Err(Error::device("meshgrid expects all tensors to have the same device"));
            }
        }
        // "xy" swaps the first two output dimensions (Cartesian indexing).
        let axis = |i: usize| if xy && tensors.len() >= 2 && i < 2 { 1 - i } else { i };
        let mut shape = vec![0i64; tensors.len()];
        for (i, t) in tensors.iter().enumerate() {
            shape[axis(i)] = t.numel();
        }
        tensors
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut view = vec![1i64; tensors.len()];
                view[axis(i)] = -1;
                t.try_reshape(&view)?.try_expand(&shape)
            })
            .collect()
    }
}

impl MeshgridCompositeImplicit for Composite {
    /// Matrix (`"ij"`) indexing, PyTorch's default.
    fn meshgrid(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
        ops::meshgrid_indexing::call(tensors, "ij")
    }
}
