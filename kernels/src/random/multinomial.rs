//! `multinomial`: category indices drawn from the rows of an unnormalised probability tensor.
//!
//! With replacement, each draw is `searchsorted(cdf, u, right)` for a uniform `u` against the
//! row's normalised cumulative sum (whose last entry is exactly 1, so a zero-probability
//! category is never drawn). Without replacement it is PyTorch's exponential race: the `n`
//! largest `p / E` with `E ~ Exp(1)` per category, which picks categories in proportion to their
//! probabilities, one after another, without repeats.

use crate::generated::decls::MultinomialCompositeExplicit;
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Generator, Result, Scalar, Tensor};

fn check(self_: &Tensor, num_samples: i64, replacement: bool) -> Result<()> {
    if !self_.dtype().is_floating_point() {
        return Err(Error::dtype(format!(
            "multinomial only supports floating-point dtypes for input, got: {}",
            scalar_type_name(self_.dtype())
        )));
    }
    if !(1..=2).contains(&self_.dim()) {
        return Err(Error::runtime("prob_dist must be 1 or 2 dim"));
    }
    if num_samples <= 0 {
        return Err(Error::runtime("cannot sample n_sample <= 0 samples"));
    }
    let categories = self_.sizes()[self_.dim() - 1];
    if !replacement && num_samples > categories {
        return Err(Error::runtime("cannot sample n_sample > prob_dist.size(-1) samples without replacement"));
    }
    Ok(())
}

impl MultinomialCompositeExplicit for Composite {
    fn multinomial(
        self_: &Tensor,
        num_samples: i64,
        replacement: bool,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        check(self_, num_samples, replacement)?;
        let p = self_.try_to_dtype(DType::F64)?;
        let p = if p.dim() == 1 { p.try_unsqueeze(0)? } else { p };
        let values = p.to_vec::<f64>()?;
        if values.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(Error::runtime("probability tensor contains either `inf`, `nan` or element < 0"));
        }
        let rows = p.sizes()[0];
        let categories = p.sizes()[1] as usize;
        if values.chunks(categories.max(1)).any(|row| row.iter().sum::<f64>() <= 0.0) {
            return Err(Error::runtime("invalid multinomial distribution (sum of probabilities <= 0)"));
        }
        let uniform = |cols: i64| {
            ops::rand_generator::call(&[rows, cols], generator, Some(DType::F64), None, Some(self_.device()), None)
        };
        let picked = if replacement {
            let cdf = p.try_cumsum(1)?;
            let total = cdf.try_narrow(1, categories as i64 - 1, 1)?;
            ops::searchsorted::call(&cdf.try_div(&total)?, &uniform(num_samples)?, false, true, None, None)?
        } else {
            // E = -ln(1 - u) ~ Exp(1), positive since u < 1.
            let e = uniform(categories as i64)?.try_neg()?.try_add_scalar(Scalar::Int(1))?.try_log()?.try_neg()?;
            ops::topk::call(&p.try_div(&e)?, num_samples, 1, true, true)?.1
        };
        if self_.dim() == 1 {
            picked.try_squeeze_dim(0)
        } else {
            Ok(picked)
        }
    }
}
