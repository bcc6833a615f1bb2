//! Pointwise operators that are compositions of others: every backend comes from the operators
//! they call, and so do autograd and double backward for the CompositeImplicitAutograd ones.
//!
//! * `logit(x, eps)` is `log(z / (1 - z))` with `z = clamp(x, eps, 1 - eps)` when `eps >= 0`
//!   (PyTorch's kernel skips the clamp for `None` or a negative `eps`); `clamp`'s gradient gives
//!   `logit_backward`'s zero outside `[eps, 1 - eps]`.
//! * `clamp.Tensor(x, min, max)` is `minimum(maximum(x, min), max)`: the bounds broadcast and
//!   take part in type promotion, and NaN in `x` or a bound propagates, as in PyTorch's kernel.
//!   It is CompositeExplicitAutograd: its derivatives.yaml formula routes the gradient as PyTorch
//!   does where `x` ties a bound or `min > max`, which the composition's gradient would not.
//! * `square(x)` is `pow(x, 2)` (bool squares to int64 by `pow`'s promotion) and `fix` is `trunc`.
//! * `div(x, y, rounding_mode=…)` is `div` (`None`), `_div_trunc` (`"trunc"`) or `floor_divide`
//!   (`"floor"`), in every variant; `true_divide` is `div`; `positive` is `self` (not for bool).

use crate::generated::decls::{
    ClampTensorCompositeExplicit, DivOutModeCompositeImplicit, DivScalarModeCompositeImplicit,
    DivScalarModeInplaceCompositeImplicit, DivScalarModeOutCompositeImplicit, DivTensorModeCompositeImplicit,
    DivTensorModeInplaceCompositeImplicit, FixCompositeImplicit, FixInplaceCompositeImplicit, FixOutCompositeImplicit,
    LogitCompositeImplicit, LogitInplaceCompositeImplicit, PositiveCompositeImplicit, SquareCompositeImplicit,
    SquareInplaceCompositeImplicit, SquareOutCompositeImplicit, TrueDivideCompositeImplicit,
    TrueDivideInplaceCompositeImplicit, TrueDivideOutCompositeImplicit, TrueDivideScalarCompositeImplicit,
    TrueDivideScalarInplaceCompositeImplicit,
};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::ops;
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};

impl LogitCompositeImplicit for Composite {
    fn logit(self_: &Tensor, eps: Option<f64>) -> Result<Tensor> {
        // Integer and bool inputs compute in the default float dtype, as PyTorch's float ops do.
        let x = if self_.dtype().is_floating_point() { self_.clone() } else { self_.try_to_dtype(DType::F32)? };
        let z = match eps {
            Some(e) if e > 0.5 => {
                // The bounds cross: PyTorch's `x < lo ? lo : (x > hi ? hi : x)` gives lo below lo
                // and hi elsewhere, where clamp would give hi throughout.
                let (lo, hi) = (Scalar::Float(e), Scalar::Float(1.0 - e));
                let upper = ops::where_scalarself::call(&ops::gt_scalar::call(&x, hi)?, hi, &x)?;
                ops::where_scalarself::call(&ops::lt_scalar::call(&x, lo)?, lo, &upper)?
            }
            Some(e) if e >= 0.0 => ops::clamp::call(&x, Some(Scalar::Float(e)), Some(Scalar::Float(1.0 - e)))?,
            _ => x,
        };
        z.try_div(&z.try_neg()?.try_add_scalar(1)?)?.try_log()
    }
}

impl LogitInplaceCompositeImplicit for Composite {
    fn logit_(self_: &Tensor, eps: Option<f64>) -> Result<Tensor> {
        if !self_.dtype().is_floating_point() {
            return Err(Error::dtype(format!(
                "result type Float can't be cast to the desired output type {}",
                scalar_type_name(self_.dtype())
            )));
        }
        let result = ops::logit::call(self_, eps)?;
        self_.try_copy_(&result)
    }
}

impl ClampTensorCompositeExplicit for Composite {
    fn clamp_tensor(self_: &Tensor, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
        match (min, max) {
            (None, None) => Err(Error::value("torch.clamp: At least one of 'min' or 'max' must not be None")),
            (Some(lo), None) => self_.try_maximum(lo),
            (None, Some(hi)) => self_.try_minimum(hi),
            (Some(lo), Some(hi)) => self_.try_maximum(lo)?.try_minimum(hi),
        }
    }
}

impl SquareCompositeImplicit for Composite {
    fn square(self_: &Tensor) -> Result<Tensor> {
        ops::pow_tensor_scalar::call(self_, Scalar::Int(2))
    }
}

impl SquareInplaceCompositeImplicit for Composite {
    fn square_(self_: &Tensor) -> Result<Tensor> {
        ops::pow_scalar_::call(self_, Scalar::Int(2))
    }
}

impl SquareOutCompositeImplicit for Composite {
    fn square_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
        ops::pow_tensor_scalar_out::call(self_, Scalar::Int(2), out)
    }
}

impl FixCompositeImplicit for Composite {
    fn fix(self_: &Tensor) -> Result<Tensor> {
        ops::trunc::call(self_)
    }
}

impl FixInplaceCompositeImplicit for Composite {
    fn fix_(self_: &Tensor) -> Result<Tensor> {
        ops::trunc_::call(self_)
    }
}

impl FixOutCompositeImplicit for Composite {
    fn fix_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
        ops::trunc_out::call(self_, out)
    }
}

/// `div`'s rounding modes.
enum Rounding {
    True,
    Trunc,
    Floor,
}

fn rounding(mode: Option<&str>) -> Result<Rounding> {
    match mode {
        None => Ok(Rounding::True),
        Some("trunc") => Ok(Rounding::Trunc),
        Some("floor") => Ok(Rounding::Floor),
        Some(other) => Err(Error::value(format!(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{other}'"
        ))),
    }
}

impl DivTensorModeCompositeImplicit for Composite {
    fn div_tensor_mode(self_: &Tensor, other: &Tensor, rounding_mode: Option<&str>) -> Result<Tensor> {
        match rounding(rounding_mode)? {
            Rounding::True => ops::div::call(self_, other),
            Rounding::Trunc => ops::_div_trunc::call(self_, other),
            Rounding::Floor => ops::floor_divide::call(self_, other),
        }
    }
}

impl DivTensorModeInplaceCompositeImplicit for Composite {
    fn div_tensor_mode_(self_: &Tensor, other: &Tensor, rounding_mode: Option<&str>) -> Result<Tensor> {
        match rounding(rounding_mode)? {
            Rounding::True => ops::div_::call(self_, other),
            Rounding::Trunc => ops::_div_trunc_::call(self_, other),
            Rounding::Floor => ops::floor_divide_::call(self_, other),
        }
    }
}

impl DivOutModeCompositeImplicit for Composite {
    fn div_out_mode(self_: &Tensor, other: &Tensor, rounding_mode: Option<&str>, out: &Tensor) -> Result<Tensor> {
        match rounding(rounding_mode)? {
            Rounding::True => ops::div_out::call(self_, other, out),
            Rounding::Trunc => ops::_div_trunc_out::call(self_, other, out),
            Rounding::Floor => ops::floor_divide_out::call(self_, other, out),
        }
    }
}

impl DivScalarModeCompositeImplicit for Composite {
    fn div_scalar_mode(self_: &Tensor, other: Scalar, rounding_mode: Option<&str>) -> Result<Tensor> {
        match rounding(rounding_mode)? {
            Rounding::True => ops::div_scalar::call(self_, other),
            Rounding::Trunc => ops::_div_trunc_scalar::call(self_, other),
            Rounding::Floor => ops::floor_divide_scalar::call(self_, other),
        }
    }
}

impl DivScalarModeInplaceCompositeImplicit for Composite {
    fn div_scalar_mode_(self_: &Tensor, other: Scalar, rounding_mode: Option<&str>) -> Result<Tensor> {
        match rounding(rounding_mode)? {
            Rounding::True => ops::div_scalar_::call(self_, other),
            Rounding::Trunc => ops::_div_trunc_scalar_::call(self_, other),
            Rounding::Floor => ops::floor_divide_scalar_::call(self_, other),
        }
    }
}

impl DivScalarModeOutCompositeImplicit for Composite {
    fn div_scalar_mode_out(self_: &Tensor, other: Scalar, rounding_mode: Option<&str>, out: &Tensor) -> Result<Tensor> {
        match rounding(rounding_mode)? {
            Rounding::True => ops::div_scalar_out::call(self_, other, out),
            Rounding::Trunc => ops::_div_trunc_scalar_out::call(self_, other, out),
            Rounding::Floor => ops::floor_divide_scalar_out::call(self_, other, out),
        }
    }
}

impl PositiveCompositeImplicit for Composite {
    fn positive(self_: &Tensor) -> Result<Tensor> {
        if self_.dtype() == DType::Bool {
            return Err(Error::dtype("The `+` operator, on a bool tensor is not supported."));
        }
        Ok(self_.clone())
    }
}

impl TrueDivideCompositeImplicit for Composite {
    fn true_divide(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        ops::div::call(self_, other)
    }
}

impl TrueDivideInplaceCompositeImplicit for Composite {
    fn true_divide_(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        ops::div_::call(self_, other)
    }
}

impl TrueDivideOutCompositeImplicit for Composite {
    fn true_divide_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
        ops::div_out::call(self_, other, out)
    }
}

impl TrueDivideScalarCompositeImplicit for Composite {
    fn true_divide_scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
        ops::div_scalar::call(self_, other)
    }
}

impl TrueDivideScalarInplaceCompositeImplicit for Composite {
    fn true_divide_scalar_(self_: &Tensor, other: Scalar) -> Result<Tensor> {
        ops::div_scalar_::call(self_, other)
    }
}
