//! `cov` and `corrcoef`: PyTorch's (and NumPy's) weighted covariance of the variables in the
//! rows, and the correlation coefficients over it. CompositeImplicitAutograd: the gradients
//! come from `sum`, `mm` and the divisions.

use crate::generated::decls::{CorrcoefCompositeImplicit, CovCompositeImplicit};
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// The bool held by a one-element bool tensor.
fn truth(t: &Tensor) -> Result<bool> {
    Ok(matches!(ops::_local_scalar_dense::call(t)?, Scalar::Bool(true)))
}

fn check_weights(w: &Tensor, what: &str, observations: i64, dtype_ok: bool, kind: &str) -> Result<()> {
    if w.dim() > 1 {
        return Err(Error::runtime(format!(
            "cov(): expected {what} to have one or fewer dimensions but got {what} with {} dimensions",
            w.dim()
        )));
    }
    if !dtype_ok {
        return Err(Error::runtime(format!(
            "cov(): expected {what} to have {kind} dtype but got {what} with {} dtype",
            scalar_type_name(w.dtype())
        )));
    }
    if w.numel() != observations {
        return Err(Error::runtime(format!(
            "cov(): expected {what} to have the same numel as there are observations in the input but got {} != {observations}",
            w.numel()
        )));
    }
    if observations != 0 && !truth(&ops::ge_scalar::call(&ops::min::call(w)?, Scalar::Int(0))?)? {
        return Err(Error::runtime(format!("cov(): {what} cannot be negative")));
    }
    Ok(())
}

impl CovCompositeImplicit for Composite {
    /// Rows are variables and columns observations (a 1-D input is one variable). With weights
    /// `w = fweights * aweights`, the mean is `sum(x * w) / sum(w)` and the normaliser
    /// `sum(w) - correction * sum(w * aweights) / sum(w)` (`sum(w) - correction` without
    /// aweights); a normaliser at or below zero becomes 0, as in PyTorch (which warns).
    fn cov(self_: &Tensor, correction: i64, fweights: Option<&Tensor>, aweights: Option<&Tensor>) -> Result<Tensor> {
        if self_.dim() > 2 {
            return Err(Error::runtime(format!(
                "cov(): expected input to have two or fewer dimensions but got an input with {} dimensions",
                self_.dim()
            )));
        }
        if self_.dtype() == DType::Bool {
            return Err(Error::runtime("cov(): bool dtype is not supported for input"));
        }
        let x = if self_.dim() < 2 { ops::view::call(self_, &[1, -1])? } else { self_.clone() };
        let observations = x.sizes()[1];
        let mut w: Option<Tensor> = None;
        if let Some(f) = fweights {
            check_weights(f, "fweights", observations, f.dtype().is_integral(false), "integral")?;
            w = Some(f.clone());
        }
        if let Some(a) = aweights {
            check_weights(a, "aweights", observations, a.dtype().is_floating_point(), "floating point")?;
            w = Some(match &w {
                Some(f) => ops::mul::call(f, a)?,
                None => a.clone(),
            });
        }
        let w_sum = match &w {
            Some(w) => ops::sum::call(w, None)?,
            None => {
                ops::scalar_tensor::call(Scalar::Int(observations), Some(DType::I64), None, Some(x.device()), None)?
            }
        };
        if w.is_some() && !truth(&ops::ne_scalar::call(&w_sum, Scalar::Int(0))?)? {
            return Err(Error::runtime("cov(): weights sum to zero, can't be normalized"));
        }
        let weighted = |t: &Tensor| match &w {
            Some(w) => ops::mul::call(t, w),
            None => Ok(t.clone()),
        };
        let avg = ops::div::call(&ops::sum_dim_intlist::call(&weighted(&x)?, Some(&[1]), false, None)?, &w_sum)?;
        let norm_factor = match (&w, aweights) {
            (Some(w), Some(a)) if correction != 0 => {
                let wa = ops::sum::call(&ops::mul::call(w, a)?, None)?;
                let shrink = ops::div::call(&ops::mul_scalar::call(&wa, Scalar::Int(correction))?, &w_sum)?;
                ops::sub::call(&w_sum, &shrink, Scalar::Int(1))?
            }
            _ => ops::sub_scalar::call(&w_sum, Scalar::Int(correction), Scalar::Int(1))?,
        };
        let norm_factor = if truth(&ops::le_scalar::call(&norm_factor, Scalar::Int(0))?)? {
            ops::zeros_like::call(&norm_factor, None, None, None, None, None)?
        } else {
            norm_factor
        };
        let centred = ops::sub::call(&x, &ops::unsqueeze::call(&avg, 1)?, Scalar::Int(1))?;
        let c = ops::mm::call(&centred, &ops::t::call(&weighted(&centred)?)?)?;
        ops::squeeze::call(&ops::true_divide::call(&c, &norm_factor)?)
    }
}

impl CorrcoefCompositeImplicit for Composite {
    /// `cov / (stddev_i * stddev_j)`, clipped to [-1, 1]; a single variable gives `c / c` (1, or
    /// NaN where the variance is 0, inf or NaN).
    fn corrcoef(self_: &Tensor) -> Result<Tensor> {
        if self_.dim() > 2 {
            return Err(Error::runtime(format!(
                "corrcoef(): expected input to have two or fewer dimensions but got an input with {} dimensions",
                self_.dim()
            )));
        }
        let c = ops::cov::call(self_, 1, None, None)?;
        if c.dim() == 0 {
            return ops::div::call(&c, &c);
        }
        let stddev = ops::sqrt::call(&ops::diagonal::call(&c, 0, 0, 1)?)?;
        let c = ops::div::call(&c, &ops::view::call(&stddev, &[-1, 1])?)?;
        let c = ops::div::call(&c, &ops::view::call(&stddev, &[1, -1])?)?;
        ops::clamp::call(&c, Some(Scalar::Int(-1)), Some(Scalar::Int(1)))
    }
}
