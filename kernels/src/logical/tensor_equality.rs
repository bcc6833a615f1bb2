//! Whole-tensor comparisons that answer with one bool: `equal`, `allclose`, `is_same_size`.
//!
//! Composites over `eq`/`isclose`, `all` and `_local_scalar_dense`, so every backend with those
//! kernels has them; only the final bool crosses to the host.

use crate::generated::decls::{AllcloseCompositeExplicit, EqualCompositeExplicit, IsSameSizeCompositeExplicit};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

/// The bool held by a 0-dim bool tensor.
fn truth(t: &Tensor) -> Result<bool> {
    Ok(matches!(ops::_local_scalar_dense::call(t)?, Scalar::Bool(true)))
}

impl EqualCompositeExplicit for Composite {
    /// Different sizes give `false` (no broadcasting); the values compare in the promoted dtype
    /// (`equal([1], [1.0])` is true) and NaN equals nothing, not even itself.
    fn equal(self_: &Tensor, other: &Tensor) -> Result<bool> {
        if self_.device() != other.device() {
            return Err(Error::runtime(format!(
                "Cannot compare two tensors on different devices. Got: {} and {}",
                self_.device(),
                other.device()
            )));
        }
        if self_.sizes() != other.sizes() {
            return Ok(false);
        }
        if self_.numel() == 0 {
            return Ok(true);
        }
        truth(&ops::all::call(&ops::eq::call(self_, other)?)?)
    }
}

impl AllcloseCompositeExplicit for Composite {
    /// PyTorch's `isclose(...).all()`: the operands broadcast, their dtypes must match.
    fn allclose(self_: &Tensor, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool> {
        truth(&ops::all::call(&ops::isclose::call(self_, other, rtol, atol, equal_nan)?)?)
    }
}

impl IsSameSizeCompositeExplicit for Composite {
    fn is_same_size(self_: &Tensor, other: &Tensor) -> Result<bool> {
        Ok(self_.sizes() == other.sizes())
    }
}
