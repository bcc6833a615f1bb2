//! The gradient-scaling operators behind `oxten::amp::GradScaler`, written once for every device
//! from tensor operators, so that the scale and the found-inf flag stay on the gradients' device
//! (no value is read back to the host): `_amp_foreach_non_finite_check_and_unscale_` and
//! `_amp_update_scale_`, with PyTorch's checks and messages.

use crate::generated::decls::{
    AmpForeachNonFiniteCheckAndUnscaleInplaceCompositeExplicit, AmpUpdateScaleInplaceCompositeExplicit,
};
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Tensor};

/// A one-element tensor of a floating dtype (`what` names it in PyTorch's words).
fn check_one_element(t: &Tensor, what: &str, float: bool) -> Result<()> {
    if t.numel() != 1 {
        return Err(Error::value(format!("{what} must be a 1-element tensor.")));
    }
    if float && t.dtype() != DType::F32 {
        return Err(Error::dtype(format!("{what} must be a float tensor.")));
    }
    if !float && t.dtype() != DType::I32 {
        return Err(Error::dtype(format!("{what} must be an int tensor.")));
    }
    Ok(())
}

impl AmpForeachNonFiniteCheckAndUnscaleInplaceCompositeExplicit for Composite {
    fn amp_foreach_non_finite_check_and_unscale_(
        self_: &[Tensor],
        found_inf: &Tensor,
        inv_scale: &Tensor,
    ) -> Result<()> {
        check_one_element(found_inf, "found_inf", true)?;
        check_one_element(inv_scale, "inv_scale", true)?;
        for (i, g) in self_.iter().enumerate() {
            if g.device() != found_inf.device() {
                return Err(Error::device(format!(
                    "_amp_foreach_non_finite_check_and_unscale_: scaled_grads[{i}] is on {}, found_inf on {}",
                    g.device(),
                    found_inf.device()
                )));
            }
            if !g.dtype().is_floating_point() {
                return Err(Error::dtype(format!(
                    "_amp_foreach_non_finite_check_and_unscale_: scaled_grads[{i}] must be a floating point tensor, got {}",
                    g.dtype()
                )));
            }
            if g.numel() == 0 {
                continue;
            }
            // The largest |g| is NaN when g holds a NaN and inf when it holds an inf; times zero it
            // is non-zero exactly then.
            let largest = g.try_abs()?.try_amax(&[], false)?;
            let bad = largest.try_mul_scalar(0.0)?.try_ne_scalar(0.0)?.try_to_dtype(DType::F32)?;
            ops::copy_::call(found_inf, &found_inf.try_maximum(&bad.try_reshape(&found_inf.sizes())?)?, false)?;
            g.try_mul_(&inv_scale.try_reshape(&[])?)?;
        }
        Ok(())
    }
}

impl AmpUpdateScaleInplaceCompositeExplicit for Composite {
    fn amp_update_scale_(
        self_: &Tensor,
        growth_tracker: &Tensor,
        found_inf: &Tensor,
        scale_growth_factor: f64,
        scale_backoff_factor: f64,
        growth_interval: i64,
    ) -> Result<Tensor> {
        check_one_element(self_, "current_scale", true)?;
        check_one_element(growth_tracker, "growth_tracker", false)?;
        check_one_element(found_inf, "found_inf", true)?;
        // Selected elementwise on the device: after an inf/NaN the scale backs off and the count
        // restarts; otherwise the count grows, and on reaching the interval the scale grows
        // (unless that overflows) and the count restarts.
        let found = found_inf.try_gt_scalar(0.0)?;
        let successful = growth_tracker.try_add_scalar(1)?;
        let due = successful.try_ge_scalar(growth_interval)?;
        let grown = self_.try_mul_scalar(scale_growth_factor)?;
        let finite = grown.try_mul_scalar(0.0)?.try_eq_scalar(0.0)?;
        let kept_or_grown = ops::where_self::call(&due, &ops::where_self::call(&finite, &grown, self_)?, self_)?;
        let new_scale = ops::where_self::call(&found, &self_.try_mul_scalar(scale_backoff_factor)?, &kept_or_grown)?;
        let zero = successful.try_mul_scalar(0)?;
        let new_count = ops::where_self::call(&found, &zero, &ops::where_self::call(&due, &zero, &successful)?)?;
        ops::copy_::call(self_, &new_scale, false)?;
        ops::copy_::call(growth_tracker, &new_count, false)?;
        Ok(self_.clone())
    }
}
