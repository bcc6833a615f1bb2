//! `float_power`: `pow` in double precision. Every operand is converted to float64 first, so the
//! result is float64 whatever the inputs; an `out=` tensor or an in-place `self` must already be
//! float64 (PyTorch's error otherwise, not a silent narrowing). Autograd comes from `pow` and the
//! conversions.

use crate::generated::decls::{
    FloatPowerScalarCompositeImplicit, FloatPowerScalarInplaceCompositeImplicit, FloatPowerScalarOutCompositeImplicit,
    FloatPowerTensorInplaceCompositeImplicit, FloatPowerTensorScalarCompositeImplicit,
    FloatPowerTensorScalarOutCompositeImplicit, FloatPowerTensorTensorCompositeImplicit,
    FloatPowerTensorTensorOutCompositeImplicit,
};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::ops;
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};

fn f64_tensor(t: &Tensor) -> Result<Tensor> {
    t.try_to_dtype(DType::F64)
}

fn f64_scalar(s: Scalar) -> Scalar {
    Scalar::Float(s.to_f64())
}

/// PyTorch's check that a destination (`what`: "output" or "base") can hold the float64 result.
fn check_double(t: &Tensor, what: &str, op: &str) -> Result<()> {
    if t.dtype() != DType::F64 {
        return Err(Error::dtype(format!(
            "the {what} given to {op} has dtype {} but the operation's result requires dtype Double",
            scalar_type_name(t.dtype())
        )));
    }
    Ok(())
}

impl FloatPowerTensorTensorCompositeImplicit for Composite {
    fn float_power_tensor_tensor(self_: &Tensor, exponent: &Tensor) -> Result<Tensor> {
        ops::pow_tensor_tensor::call(&f64_tensor(self_)?, &f64_tensor(exponent)?)
    }
}

impl FloatPowerTensorTensorOutCompositeImplicit for Composite {
    fn float_power_tensor_tensor_out(self_: &Tensor, exponent: &Tensor, out: &Tensor) -> Result<Tensor> {
        check_double(out, "output", "float_power")?;
        ops::pow_tensor_tensor_out::call(&f64_tensor(self_)?, &f64_tensor(exponent)?, out)
    }
}

impl FloatPowerScalarCompositeImplicit for Composite {
    fn float_power_scalar(self_: Scalar, exponent: &Tensor) -> Result<Tensor> {
        ops::pow_scalar::call(f64_scalar(self_), &f64_tensor(exponent)?)
    }
}

impl FloatPowerScalarOutCompositeImplicit for Composite {
    fn float_power_scalar_out(self_: Scalar, exponent: &Tensor, out: &Tensor) -> Result<Tensor> {
        check_double(out, "output", "float_power")?;
        ops::pow_scalar_out::call(f64_scalar(self_), &f64_tensor(exponent)?, out)
    }
}

impl FloatPowerTensorScalarCompositeImplicit for Composite {
    fn float_power_tensor_scalar(self_: &Tensor, exponent: Scalar) -> Result<Tensor> {
        ops::pow_tensor_scalar::call(&f64_tensor(self_)?, f64_scalar(exponent))
    }
}

impl FloatPowerTensorScalarOutCompositeImplicit for Composite {
    fn float_power_tensor_scalar_out(self_: &Tensor, exponent: Scalar, out: &Tensor) -> Result<Tensor> {
        check_double(out, "output", "float_power")?;
        ops::pow_tensor_scalar_out::call(&f64_tensor(self_)?, f64_scalar(exponent), out)
    }
}

impl FloatPowerScalarInplaceCompositeImplicit for Composite {
    fn float_power_scalar_(self_: &Tensor, exponent: Scalar) -> Result<Tensor> {
        check_double(self_, "base", "float_power_")?;
        ops::pow_scalar_::call(self_, f64_scalar(exponent))
    }
}

impl FloatPowerTensorInplaceCompositeImplicit for Composite {
    fn float_power_tensor_(self_: &Tensor, exponent: &Tensor) -> Result<Tensor> {
        check_double(self_, "base", "float_power_")?;
        ops::pow_::call(self_, &f64_tensor(exponent)?)
    }
}
