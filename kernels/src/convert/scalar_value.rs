//! Reading a one-element tensor as a host value: `_local_scalar_dense` (the only kernel that
//! reads the data), `item` over it, and `is_nonzero` (PyTorch's `bool(tensor)`).
//!
//! `_local_scalar_dense` reads through [`Tensor::to_vec`] (in `support::item_scalar`), which
//! copies a device tensor to the host first, so one composite serves every backend with data
//! (meta tensors get an error).

use crate::generated::decls::{IsNonzeroCompositeImplicit, ItemCompositeImplicit, LocalScalarDenseCompositeExplicit};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

impl LocalScalarDenseCompositeExplicit for Composite {
    fn _local_scalar_dense(self_: &Tensor) -> Result<Scalar> {
        crate::support::item_scalar(self_)
    }
}

impl ItemCompositeImplicit for Composite {
    fn item(self_: &Tensor) -> Result<Scalar> {
        ops::_local_scalar_dense::call(self_)
    }
}

impl IsNonzeroCompositeImplicit for Composite {
    /// NaN is true, as in Python (`bool(float("nan"))`).
    fn is_nonzero(self_: &Tensor) -> Result<bool> {
        match self_.numel() {
            0 => return Err(Error::runtime("Boolean value of Tensor with no values is ambiguous")),
            1 => {}
            _ => return Err(Error::runtime("Boolean value of Tensor with more than one value is ambiguous")),
        }
        Ok(match ops::item::call(self_)? {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
        })
    }
}
