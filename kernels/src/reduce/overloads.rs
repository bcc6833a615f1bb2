//! Reductions under PyTorch's other overloads: `mean` of everything and the `unbiased=`
//! overloads of `var`/`std`/`var_mean`/`std_mean` (their `correction` form with 1 or 0).
//! CompositeImplicitAutograd.

use crate::generated::decls::{
    MeanCompositeImplicit, StdDimCompositeImplicit, StdMeanDimCompositeImplicit, StdMeanUnbiasedCompositeImplicit,
    StdUnbiasedCompositeImplicit, VarDimCompositeImplicit, VarMeanDimCompositeImplicit,
    VarMeanUnbiasedCompositeImplicit, VarUnbiasedCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, DType, Result, Scalar, Tensor};

impl MeanCompositeImplicit for Composite {
    fn mean(self_: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
        ops::mean_dim::call(self_, None, false, dtype)
    }
}

fn correction(unbiased: bool) -> Option<Scalar> {
    Some(Scalar::Int(i64::from(unbiased)))
}

impl VarUnbiasedCompositeImplicit for Composite {
    fn var_unbiased(self_: &Tensor, unbiased: bool) -> Result<Tensor> {
        ops::var_correction::call(self_, None, correction(unbiased), false)
    }
}

impl VarDimCompositeImplicit for Composite {
    fn var_dim(self_: &Tensor, dim: Option<&[i64]>, unbiased: bool, keepdim: bool) -> Result<Tensor> {
        ops::var_correction::call(self_, dim, correction(unbiased), keepdim)
    }
}

impl StdUnbiasedCompositeImplicit for Composite {
    fn std_unbiased(self_: &Tensor, unbiased: bool) -> Result<Tensor> {
        ops::std_correction::call(self_, None, correction(unbiased), false)
    }
}

impl StdDimCompositeImplicit for Composite {
    fn std_dim(self_: &Tensor, dim: Option<&[i64]>, unbiased: bool, keepdim: bool) -> Result<Tensor> {
        ops::std_correction::call(self_, dim, correction(unbiased), keepdim)
    }
}

impl VarMeanUnbiasedCompositeImplicit for Composite {
    fn var_mean_unbiased(self_: &Tensor, unbiased: bool) -> Result<(Tensor, Tensor)> {
        ops::var_mean_correction::call(self_, None, correction(unbiased), false)
    }
}

impl VarMeanDimCompositeImplicit for Composite {
    fn var_mean_dim(self_: &Tensor, dim: Option<&[i64]>, unbiased: bool, keepdim: bool) -> Result<(Tensor, Tensor)> {
        ops::var_mean_correction::call(self_, dim, correction(unbiased), keepdim)
    }
}

impl StdMeanUnbiasedCompositeImplicit for Composite {
    fn std_mean_unbiased(self_: &Tensor, unbiased: bool) -> Result<(Tensor, Tensor)> {
        ops::std_mean_correction::call(self_, None, correction(unbiased), false)
    }
}

impl StdMeanDimCompositeImplicit for Composite {
    fn std_mean_dim(self_: &Tensor, dim: Option<&[i64]>, unbiased: bool, keepdim: bool) -> Result<(Tensor, Tensor)> {
        ops::std_mean_correction::call(self_, dim, correction(unbiased), keepdim)
    }
}
