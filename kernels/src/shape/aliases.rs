//! Shape operators composed of others (PyTorch's CompositeImplicitAutograd ones): the flips of
//! one dimension, `ravel`, the `*_as` views, `swapaxes`/`swapdims` (`transpose`), the
//! transposing properties `T`, `H`, `mT`, `mH` and `adjoint`, `atleast_Nd`
//! and the `hstack`/`vstack`/`dstack`/`column_stack` concatenations (an empty list never reaches
//! them: the dispatcher refuses it), with PyTorch's checks.

use crate::generated::decls::{
    AdjointCompositeImplicit, Atleast1dCompositeImplicit, Atleast1dSequenceCompositeImplicit,
    Atleast2dCompositeImplicit, Atleast2dSequenceCompositeImplicit, Atleast3dCompositeImplicit,
    Atleast3dSequenceCompositeImplicit, ColumnStackCompositeImplicit, DstackCompositeImplicit,
    ExpandAsCompositeImplicit, FliplrCompositeImplicit, FlipudCompositeImplicit, HstackCompositeImplicit,
    MatrixAdjointCompositeImplicit, MatrixHCompositeImplicit, MatrixTransposeCompositeImplicit,
    NumpyTCompositeImplicit, RavelCompositeImplicit, ReshapeAsCompositeImplicit, SwapaxesCompositeImplicit,
    SwapdimsCompositeImplicit, ViewAsCompositeImplicit, VstackCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

impl FliplrCompositeImplicit for Composite {
    fn fliplr(self_: &Tensor) -> Result<Tensor> {
        if self_.dim() < 2 {
            return Err(Error::runtime("Input must be >= 2-d."));
        }
        ops::flip::call(self_, &[1])
    }
}

impl FlipudCompositeImplicit for Composite {
    fn flipud(self_: &Tensor) -> Result<Tensor> {
        if self_.dim() < 1 {
            return Err(Error::runtime("Input must be >= 1-d."));
        }
        ops::flip::call(self_, &[0])
    }
}

impl RavelCompositeImplicit for Composite {
    fn ravel(self_: &Tensor) -> Result<Tensor> {
        ops::reshape::call(self_, &[-1])
    }
}

impl ViewAsCompositeImplicit for Composite {
    fn view_as(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        ops::view::call(self_, &other.sizes())
    }
}

impl ExpandAsCompositeImplicit for Composite {
    fn expand_as(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        ops::expand::call(self_, &other.sizes(), false)
    }
}

impl ReshapeAsCompositeImplicit for Composite {
    fn reshape_as(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        ops::reshape::call(self_, &other.sizes())
    }
}

impl SwapaxesCompositeImplicit for Composite {
    fn swapaxes(self_: &Tensor, axis0: i64, axis1: i64) -> Result<Tensor> {
        ops::transpose::call(self_, axis0, axis1)
    }
}

impl SwapdimsCompositeImplicit for Composite {
    fn swapdims(self_: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
        ops::transpose::call(self_, dim0, dim1)
    }
}

impl Atleast1dCompositeImplicit for Composite {
    fn atleast_1d(self_: &Tensor) -> Result<Tensor> {
        match self_.dim() {
            0 => ops::reshape::call(self_, &[1]),
            _ => Ok(self_.clone()),
        }
    }
}

impl Atleast2dCompositeImplicit for Composite {
    fn atleast_2d(self_: &Tensor) -> Result<Tensor> {
        match self_.dim() {
            0 => ops::reshape::call(self_, &[1, 1]),
            1 => ops::unsqueeze::call(self_, 0),
            _ => Ok(self_.clone()),
        }
    }
}

impl Atleast3dCompositeImplicit for Composite {
    fn atleast_3d(self_: &Tensor) -> Result<Tensor> {
        match self_.dim() {
            0 => ops::reshape::call(self_, &[1, 1, 1]),
            1 => ops::unsqueeze::call(&ops::unsqueeze::call(self_, 0)?, -1),
            2 => ops::unsqueeze::call(self_, -1),
            _ => Ok(self_.clone()),
        }
    }
}

impl Atleast1dSequenceCompositeImplicit for Composite {
    fn atleast_1d_sequence(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
        tensors.iter().map(ops::atleast_1d::call).collect()
    }
}

impl Atleast2dSequenceCompositeImplicit for Composite {
    fn atleast_2d_sequence(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
        tensors.iter().map(ops::atleast_2d::call).collect()
    }
}

impl Atleast3dSequenceCompositeImplicit for Composite {
    fn atleast_3d_sequence(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
        tensors.iter().map(ops::atleast_3d::call).collect()
    }
}

impl HstackCompositeImplicit for Composite {
    fn hstack(tensors: &[Tensor]) -> Result<Tensor> {
        let parts = tensors.iter().map(ops::atleast_1d::call).collect::<Result<Vec<_>>>()?;
        let dim = if parts.first().is_some_and(|p| p.dim() == 1) { 0 } else { 1 };
        ops::cat::call(&parts, dim)
    }
}

impl VstackCompositeImplicit for Composite {
    fn vstack(tensors: &[Tensor]) -> Result<Tensor> {
        let parts = tensors.iter().map(ops::atleast_2d::call).collect::<Result<Vec<_>>>()?;
        ops::cat::call(&parts, 0)
    }
}

impl DstackCompositeImplicit for Composite {
    fn dstack(tensors: &[Tensor]) -> Result<Tensor> {
        let parts = tensors.iter().map(ops::atleast_3d::call).collect::<Result<Vec<_>>>()?;
        ops::cat::call(&parts, 2)
    }
}

impl ColumnStackCompositeImplicit for Composite {
    fn column_stack(tensors: &[Tensor]) -> Result<Tensor> {
        let parts = tensors
            .iter()
            .map(|t| if t.dim() <= 1 { ops::reshape::call(t, &[t.numel(), 1]) } else { Ok(t.clone()) })
            .collect::<Result<Vec<_>>>()?;
        ops::hstack::call(&parts)
    }
}

/// `tensor.mT`'s check (shared by `mH` and `adjoint`): at least two dimensions.
fn check_batch_of_matrices(self_: &Tensor, what: &str) -> Result<()> {
    if self_.dim() < 2 {
        return Err(Error::runtime(format!(
            "tensor.{what} is only supported on matrices or batches of matrices. Got {}-D tensor.",
            self_.dim()
        )));
    }
    Ok(())
}

impl NumpyTCompositeImplicit for Composite {
    fn numpy_t(self_: &Tensor) -> Result<Tensor> {
        let reversed: Vec<i64> = (0..self_.dim() as i64).rev().collect();
        ops::permute::call(self_, &reversed)
    }
}

impl MatrixHCompositeImplicit for Composite {
    fn matrix_h(self_: &Tensor) -> Result<Tensor> {
        if self_.dim() != 2 {
            let hint = if self_.dim() > 2 { " For batches of matrices, consider using tensor.mH" } else { "" };
            return Err(Error::runtime(format!(
                "tensor.H is only supported on matrices (2-D tensors). Got {}-D tensor.{hint}",
                self_.dim()
            )));
        }
        // Real dtypes only: the conjugate transpose is the transpose.
        ops::transpose::call(self_, 0, 1)
    }
}

impl MatrixTransposeCompositeImplicit for Composite {
    fn matrix_transpose(self_: &Tensor) -> Result<Tensor> {
        check_batch_of_matrices(self_, "mT")?;
        ops::transpose::call(self_, -2, -1)
    }
}

impl MatrixAdjointCompositeImplicit for Composite {
    fn matrix_adjoint(self_: &Tensor) -> Result<Tensor> {
        check_batch_of_matrices(self_, "mH")?;
        ops::transpose::call(self_, -2, -1)
    }
}

impl AdjointCompositeImplicit for Composite {
    fn adjoint(self_: &Tensor) -> Result<Tensor> {
        check_batch_of_matrices(self_, "adjoint()")?;
        ops::transpose::call(self_, -2, -1)
    }
}
