//! Reductions under PyTorch's other overloads and names: `mean` of everything, the `unbiased=`
//! overloads of `var`/`std`/`var_mean`/`std_mean` (their `correction` form with 1 or 0),
//! `aminmax` and `dist`. CompositeImplicitAutograd.

use crate::generated::decls::{
    AminmaxCompositeImplicit, DistCompositeImplicit, MeanCompositeImplicit, StdDimCompositeImplicit,
    StdMeanDimCompositeImplicit, StdMeanUnbiasedCompositeImplicit, StdUnbiasedCompositeImplicit,
    VarDimCompositeImplicit, VarMeanDimCompositeImplicit, VarMeanUnbiasedCompositeImplicit,
    VarUnbiasedCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, wrap_dim, DType, Error, Result, Scalar, Tensor};

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

impl AminmaxCompositeImplicit for Composite {
    fn aminmax(self_: &Tensor, dim: Option<i64>, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dims: Vec<i64> = match dim {
            Some(d) => {
                let w = wrap_dim(d, self_.dim())?;
                if self_.dim() > 0 && self_.sizes()[w] == 0 {
                    return Err(Error::index(
                        "aminmax(): Expected reduction dim 0 to have non-zero size.".replace('0', &w.to_string()),
                    ));
                }
                vec![d]
            }
            None => {
                if self_.numel() == 0 {
                    return Err(Error::runtime(
                        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.",
                    ));
                }
                vec![]
            }
        };
        Ok((ops::amin::call(self_, &dims, keepdim)?, ops::amax::call(self_, &dims, keepdim)?))
    }
}

impl DistCompositeImplicit for Composite {
    fn dist(self_: &Tensor, other: &Tensor, p: Scalar) -> Result<Tensor> {
        let diff = ops::sub::call(self_, other, Scalar::Int(1))?;
        ops::linalg_vector_norm::call(&diff, p, None, false, None)
    }
}
