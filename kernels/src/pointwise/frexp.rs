//! `frexp`: `self = mantissa · 2^exponent` with `|mantissa|` in [0.5, 1), computed in float64 from
//! `log2` and corrected by one where `log2` rounded across a power of two. The exponent carries
//! no gradient, so the mantissa's is `2^-exponent`, as PyTorch's formula.

use crate::generated::decls::FrexpCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

impl FrexpCompositeImplicit for Composite {
    fn frexp(self_: &Tensor) -> Result<(Tensor, Tensor)> {
        if !self_.dtype().is_floating_point() {
            return Err(Error::runtime("torch.frexp() only supports floating-point dtypes"));
        }
        let x = self_.detach().try_to_dtype(DType::F64)?;
        let regular = ops::logical_and::call(&ops::isfinite::call(&x)?, &ops::ne_scalar::call(&x, Scalar::Int(0))?)?;
        let safe = ops::where_scalarother::call(&regular, &x.try_abs()?, Scalar::Int(1))?;
        let mut e = ops::floor::call(&ops::log2::call(&safe)?)?.try_add_scalar(Scalar::Int(1))?;
        // |x| / 2^e must lie in [0.5, 1): move e by one where log2 rounded the wrong way.
        let m = ops::div::call(&safe, &ops::exp2::call(&e)?)?;
        e = e.try_add(&ops::ge_scalar::call(&m, Scalar::Int(1))?.try_to_dtype(DType::F64)?)?;
        e = e.try_sub(&ops::lt_scalar::call(&m, Scalar::Float(0.5))?.try_to_dtype(DType::F64)?)?;
        let e = ops::where_scalarother::call(&regular, &e, Scalar::Int(0))?;
        // The scaling in float64: 2^-e of a subnormal float32 does not fit in float32.
        let scale = ops::exp2::call(&e.try_neg()?)?;
        let scaled = ops::mul::call(&self_.try_to_dtype(DType::F64)?, &scale)?.try_to_dtype(self_.dtype())?;
        let mantissa = ops::where_self::call(&regular, &scaled, self_)?;
        Ok((mantissa, e.try_to_dtype(DType::I32)?))
    }
}
