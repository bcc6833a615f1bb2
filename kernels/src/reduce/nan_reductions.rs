//! Reductions composed of others (PyTorch's CompositeImplicitAutograd ones): `count_nonzero`
//! sums `self != 0`, `nansum` sums with NaN replaced by zero, `nanmean` divides that by the
//! count of non-NaN elements, `trace` sums the diagonal. Gradients come from the operators
//! they call (`nansum`'s is `grad` where the element is not NaN, as PyTorch's).

use crate::generated::decls::{
    CountNonzeroCompositeImplicit, CountNonzeroDimsCompositeImplicit, NanmeanCompositeImplicit,
    NansumCompositeImplicit, TraceCompositeImplicit,
};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

impl CountNonzeroDimsCompositeImplicit for Composite {
    fn count_nonzero_dims(self_: &Tensor, dim: &[i64]) -> Result<Tensor> {
        let nonzero = ops::ne_scalar::call(self_, Scalar::Int(0))?;
        ops::sum_dim_intlist::call(&nonzero, Some(dim), false, Some(DType::I64))
    }
}

impl CountNonzeroCompositeImplicit for Composite {
    fn count_nonzero(self_: &Tensor, dim: Option<i64>) -> Result<Tensor> {
        let nonzero = ops::ne_scalar::call(self_, Scalar::Int(0))?;
        match dim {
            Some(d) => ops::sum_dim_intlist::call(&nonzero, Some(&[d]), false, Some(DType::I64)),
            None => ops::sum::call(&nonzero, Some(DType::I64)),
        }
    }
}

/// `self` with NaN replaced by zero (integers have none).
fn nan_to_zero(self_: &Tensor) -> Result<Tensor> {
    if !self_.dtype().is_floating_point() {
        return Ok(self_.clone());
    }
    ops::where_scalarself::call(&ops::isnan::call(self_)?, Scalar::Int(0), self_)
}

impl NansumCompositeImplicit for Composite {
    fn nansum(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        ops::sum_dim_intlist::call(&nan_to_zero(self_)?, dim, keepdim, dtype)
    }
}

impl NanmeanCompositeImplicit for Composite {
    fn nanmean(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        if !self_.dtype().is_floating_point() {
            return Err(Error::dtype(format!(
                "nanmean(): expected input to have floating point or complex dtype but got {}",
                scalar_type_name(self_.dtype())
            )));
        }
        let count = ops::logical_not::call(&ops::isnan::call(self_)?)?;
        let count = ops::sum_dim_intlist::call(&count, dim, keepdim, None)?;
        ops::nansum::call(self_, dim, keepdim, dtype)?.try_div(&count)
    }
}

impl TraceCompositeImplicit for Composite {
    fn trace(self_: &Tensor) -> Result<Tensor> {
        if self_.dim() != 2 {
            return Err(Error::runtime(format!("trace: expected a matrix, but got tensor with dim {}", self_.dim())));
        }
        if self_.dtype() == DType::Bool {
            return Err(crate::support::not_implemented("trace", DType::Bool));
        }
        ops::sum::call(&ops::diagonal::call(self_, 0, 0, 1)?, None)
    }
}
