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

use crate::generated::decls::{ClampTensorCompositeExplicit, LogitCompositeImplicit, LogitInplaceCompositeImplicit};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::ops;
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};

impl LogitCompositeImplicit for Composite {
    fn logit(self_: &Tensor, eps: Option<f64>) -> Result<Tensor> {
        // Integer and bool inputs compute in the default float dtype, as PyTorch's float ops do.
        let x = if self_.dtype().is_floating_point() { self_.clone() } else { self_.try_to_dtype(DType::F32)? };
        let z = match eps {
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
