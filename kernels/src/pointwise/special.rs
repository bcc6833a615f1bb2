//! The special functions built from the `pointwise:` ones: `polygamma_` and `special_polygamma`
//! (argument orders that a structured delegate cannot express), and `mvlgamma`, the
//! multivariate log-gamma function `Σ_{j<p} lgamma(x - j/2) + p(p-1)/4 · ln π`.

use crate::generated::decls::{
    MvlgammaCompositeImplicit, MvlgammaInplaceCompositeImplicit, MvlgammaOutCompositeImplicit,
    PolygammaInplaceCompositeImplicit, SpecialPolygammaCompositeImplicit,
};
use crate::support::resize_output;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

impl PolygammaInplaceCompositeImplicit for Composite {
    fn polygamma_(self_: &Tensor, n: i64) -> Result<Tensor> {
        let value = ops::polygamma::call(n, self_)?;
        ops::copy_::call(self_, &value, false)
    }
}

impl SpecialPolygammaCompositeImplicit for Composite {
    fn special_polygamma(n: i64, self_: &Tensor) -> Result<Tensor> {
        ops::polygamma::call(n, self_)
    }
}

impl MvlgammaCompositeImplicit for Composite {
    fn mvlgamma(self_: &Tensor, p: i64) -> Result<Tensor> {
        if p < 1 {
            return Err(Error::value("p has to be greater than or equal to 1"));
        }
        // Integer inputs compute in the default float dtype, as PyTorch's.
        let x = if self_.dtype().is_floating_point() { self_.clone() } else { self_.try_to_dtype(DType::F32)? };
        let bound = 0.5 * (p - 1) as f64;
        if !x.is_meta() && x.numel() > 0 && !x.try_gt_scalar(bound)?.try_all()?.item::<bool>()? {
            return Err(Error::value("All elements must be greater than (p-1)/2"));
        }
        // x - j/2 for j = p-1 … 0, along a new last dim.
        let offsets = ops::arange_start_step::call(
            Scalar::Float(0.5 - 0.5 * p as f64),
            Scalar::Float(0.5),
            Scalar::Float(0.5),
            Some(x.dtype()),
            None,
            Some(x.device()),
            None,
        )?;
        let args = ops::unsqueeze::call(&x, -1)?.try_add(&offsets)?;
        let summed = ops::sum_dim_intlist::call(&ops::lgamma::call(&args)?, Some(&[-1]), false, None)?;
        let constant = (p * (p - 1)) as f64 * std::f64::consts::PI.ln() * 0.25;
        summed.try_add_scalar(constant)
    }
}

impl MvlgammaInplaceCompositeImplicit for Composite {
    fn mvlgamma_(self_: &Tensor, p: i64) -> Result<Tensor> {
        let value = ops::mvlgamma::call(self_, p)?;
        ops::copy_::call(self_, &value, false)
    }
}

impl MvlgammaOutCompositeImplicit for Composite {
    fn mvlgamma_out(self_: &Tensor, p: i64, out: &Tensor) -> Result<Tensor> {
        let value = ops::mvlgamma::call(self_, p)?;
        resize_output(out, &value.sizes())?;
        ops::copy_::call(out, &value, false)
    }
}
