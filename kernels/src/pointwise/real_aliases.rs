//! Pointwise composites that are other operators under PyTorch's names (`rsub`, `max.other`,
//! `min.other`, `ldexp`), the complex-number views of a real tensor (`conj`, `resolve_conj`,
//! `resolve_neg`, `real`, `conj_physical`, `angle`, `isreal`), `isclose` and `nan_to_num`.
//! CompositeImplicitAutograd: autograd comes from the operators called.

use crate::generated::decls::{
    AngleCompositeImplicit, ConjCompositeImplicit, ConjPhysicalCompositeImplicit, IscloseCompositeImplicit,
    IsrealCompositeImplicit, LdexpCompositeImplicit, MaxOtherCompositeImplicit, MinOtherCompositeImplicit,
    NanToNumCompositeImplicit, NanToNumInplaceCompositeImplicit, RealCompositeImplicit, ResolveConjCompositeImplicit,
    ResolveNegCompositeImplicit, RsubCompositeImplicit, RsubScalarCompositeImplicit,
};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::dtype::DEFAULT_FLOAT;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

const BOOL_SUB: &str = "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.";

impl RsubCompositeImplicit for Composite {
    fn rsub(self_: &Tensor, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        ops::sub::call(other, self_, alpha)
    }
}

impl RsubScalarCompositeImplicit for Composite {
    /// `other - alpha * self`, with `other` a wrapped number (it does not widen `self`'s dtype).
    fn rsub_scalar(self_: &Tensor, other: Scalar, alpha: Scalar) -> Result<Tensor> {
        if self_.dtype() == DType::Bool {
            return Err(Error::runtime(BOOL_SUB));
        }
        ops::add_scalar::call(&ops::mul_scalar::call(self_, alpha)?.try_neg()?, other, Scalar::Int(1))
    }
}

impl MaxOtherCompositeImplicit for Composite {
    fn max_other(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        ops::maximum::call(self_, other)
    }
}

impl MinOtherCompositeImplicit for Composite {
    fn min_other(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        ops::minimum::call(self_, other)
    }
}

impl LdexpCompositeImplicit for Composite {
    /// `self * 2^other`, as PyTorch's `mul(self, pow(2.0, other))`.
    fn ldexp(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        ops::mul::call(self_, &ops::exp2::call(other)?)
    }
}

impl ConjCompositeImplicit for Composite {
    fn conj(self_: &Tensor) -> Result<Tensor> {
        Ok(self_.clone())
    }
}

impl ResolveConjCompositeImplicit for Composite {
    fn resolve_conj(self_: &Tensor) -> Result<Tensor> {
        Ok(self_.clone())
    }
}

impl ResolveNegCompositeImplicit for Composite {
    fn resolve_neg(self_: &Tensor) -> Result<Tensor> {
        Ok(self_.clone())
    }
}

impl RealCompositeImplicit for Composite {
    fn real(self_: &Tensor) -> Result<Tensor> {
        Ok(self_.clone())
    }
}

impl ConjPhysicalCompositeImplicit for Composite {
    fn conj_physical(self_: &Tensor) -> Result<Tensor> {
        Ok(self_.clone())
    }
}

impl AngleCompositeImplicit for Composite {
    /// π where negative, 0 elsewhere, NaN kept; integer and bool inputs give the default float.
    fn angle(self_: &Tensor) -> Result<Tensor> {
        let x = if self_.dtype().is_floating_point() { self_.clone() } else { self_.try_to_dtype(DEFAULT_FLOAT)? };
        let negative = ops::lt_scalar::call(&x, Scalar::Int(0))?.try_to_dtype(x.dtype())?;
        let angle = ops::mul_scalar::call(&negative, Scalar::Float(std::f64::consts::PI))?;
        ops::where_self::call(&ops::isnan::call(&x)?, &x, &angle)
    }
}

impl IsrealCompositeImplicit for Composite {
    fn isreal(self_: &Tensor) -> Result<Tensor> {
        ops::ones_like::call(self_, Some(DType::Bool), None, None, None, None)
    }
}

impl IscloseCompositeImplicit for Composite {
    /// PyTorch's rule: equal elements, NaN pairs with `equal_nan`, and finite differences within
    /// `atol + |rtol * other|`; bool operands compare in the default float dtype.
    fn isclose(self_: &Tensor, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<Tensor> {
        if self_.dtype() != other.dtype() {
            return Err(Error::runtime(format!(
                "{} did not match {}",
                scalar_type_name(self_.dtype()),
                scalar_type_name(other.dtype())
            )));
        }
        if rtol < 0.0 {
            return Err(Error::runtime(format!("rtol must be greater than or equal to zero, but got {rtol}")));
        }
        if atol < 0.0 {
            return Err(Error::runtime(format!("atol must be greater than or equal to zero, but got {atol}")));
        }
        let mut close = ops::eq::call(self_, other)?;
        if equal_nan && self_.dtype().is_floating_point() {
            let both = ops::logical_and::call(&ops::isnan::call(self_)?, &ops::isnan::call(other)?)?;
            close = ops::logical_or::call(&close, &both)?;
        }
        if rtol == 0.0 && atol == 0.0 {
            return Ok(close);
        }
        let cast = |t: &Tensor| if t.dtype() == DType::Bool { t.try_to_dtype(DEFAULT_FLOAT) } else { Ok(t.clone()) };
        let (a, b) = (cast(self_)?, cast(other)?);
        let allowed = ops::mul_scalar::call(&b, Scalar::Float(rtol))?.try_abs()?.try_add_scalar(Scalar::Float(atol))?;
        let actual = ops::sub::call(&a, &b, Scalar::Int(1))?.try_abs()?;
        let within = ops::logical_and::call(&ops::isfinite::call(&actual)?, &ops::le::call(&actual, &allowed)?)?;
        ops::logical_or::call(&close, &within)
    }
}

/// The largest finite value of a floating dtype.
fn finite_max(d: DType) -> f64 {
    match d {
        DType::F16 => 65504.0,
        DType::BF16 => 3.3895313892515355e38,
        DType::F32 => f64::from(f32::MAX),
        _ => f64::MAX,
    }
}

impl NanToNumCompositeImplicit for Composite {
    fn nan_to_num(self_: &Tensor, nan: Option<f64>, posinf: Option<f64>, neginf: Option<f64>) -> Result<Tensor> {
        let d = self_.dtype();
        if !d.is_floating_point() {
            return ops::deep_clone::call(self_, None);
        }
        let top = finite_max(d);
        let x = ops::masked_fill_scalar::call(self_, &ops::isnan::call(self_)?, Scalar::Float(nan.unwrap_or(0.0)))?;
        let x = ops::masked_fill_scalar::call(&x, &ops::isposinf::call(self_)?, Scalar::Float(posinf.unwrap_or(top)))?;
        ops::masked_fill_scalar::call(&x, &ops::isneginf::call(self_)?, Scalar::Float(neginf.unwrap_or(-top)))
    }
}

impl NanToNumInplaceCompositeImplicit for Composite {
    fn nan_to_num_(self_: &Tensor, nan: Option<f64>, posinf: Option<f64>, neginf: Option<f64>) -> Result<Tensor> {
        let r = Self::nan_to_num(self_, nan, posinf, neginf)?;
        self_.try_copy_(&r)
    }
}
