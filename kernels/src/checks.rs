//! Argument checks that generated pointwise meta functions run first (`pointwise_check:`).

use crate::generated::decls::{NegCheck, ReluCheck, SubCheck, SubScalarCheck};
use crate::Meta;
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};

/// PyTorch's `sub_check`: subtraction is not defined on booleans.
fn sub_bool_check(self_is_bool: bool, other_is_bool: bool) -> Result<()> {
    if self_is_bool && other_is_bool {
        return Err(Error::dtype(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
        ));
    }
    if self_is_bool || other_is_bool {
        return Err(Error::dtype(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
        ));
    }
    Ok(())
}

impl SubCheck for Meta {
    fn sub_check(self_: &Tensor, other: &Tensor, _alpha: Scalar) -> Result<()> {
        sub_bool_check(self_.dtype() == DType::Bool, other.dtype() == DType::Bool)
    }
}

impl SubScalarCheck for Meta {
    fn sub_scalar_check(self_: &Tensor, other: Scalar, _alpha: Scalar) -> Result<()> {
        sub_bool_check(self_.dtype() == DType::Bool, other.is_bool())
    }
}

impl NegCheck for Meta {
    fn neg_check(self_: &Tensor) -> Result<()> {
        if self_.dtype() == DType::Bool {
            return Err(Error::dtype(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ));
        }
        Ok(())
    }
}

impl ReluCheck for Meta {
    fn relu_check(self_: &Tensor) -> Result<()> {
        if self_.dtype() == DType::Bool {
            return Err(Error::dtype("Boolean inputs not supported for relu"));
        }
        Ok(())
    }
}
