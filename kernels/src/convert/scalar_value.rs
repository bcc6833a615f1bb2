//! Reading a one-element tensor as a host value: `_local_scalar_dense` (the only kernel that
//! reads the data), `item` over it, and `is_nonzero` (PyTorch's `bool(tensor)`).
//!
//! `_local_scalar_dense` reads through [`Tensor::to_vec`], which copies a device tensor to the
//! host first, so one composite serves every backend with data (meta tensors get an error).

use crate::generated::decls::{IsNonzeroCompositeImplicit, ItemCompositeImplicit, LocalScalarDenseCompositeExplicit};
use crate::Composite;
use oxten_runtime::{match_dtype, ops, DType, Element, Error, Result, Scalar, Tensor};

impl LocalScalarDenseCompositeExplicit for Composite {
    /// Integers stay exact (an i64 is not read through f64), bools stay bools, floating values
    /// widen to f64 exactly.
    fn _local_scalar_dense(self_: &Tensor) -> Result<Scalar> {
        let n = self_.numel();
        if n != 1 {
            return Err(Error::runtime(format!("a Tensor with {n} elements cannot be converted to Scalar")));
        }
        Ok(match self_.dtype() {
            DType::Bool => Scalar::Bool(self_.to_vec::<bool>()?[0]),
            DType::I64 => Scalar::Int(self_.to_vec::<i64>()?[0]),
            d if d.is_integral(false) => {
                // At most 32 bits: exact through f64.
                match_dtype!(d, T => Scalar::Int(self_.to_vec::<T>()?[0].to_f64() as i64))
            }
            d => match_dtype!(d, T => Scalar::Float(self_.to_vec::<T>()?[0].to_f64())),
        })
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
