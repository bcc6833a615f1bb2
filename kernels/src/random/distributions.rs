//! `cauchy`, `exponential`, `geometric` and `log_normal` (functional forms): inverse-CDF
//! transforms of `uniform_` samples (`normal` for `log_normal`), drawn from the given generator.

use crate::generated::decls::{
    CauchyCompositeImplicit, ExponentialCompositeImplicit, GeometricCompositeImplicit, LogNormalCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Generator, Result, Scalar, Tensor};

/// Uniform samples in [0, 1) of `self`'s shape, in float64 (transformed, then cast).
fn uniform(self_: &Tensor, generator: Option<&Generator>) -> Result<Tensor> {
    let u = ops::empty::call(&self_.sizes(), Some(DType::F64), None, Some(self_.device()), None, None)?;
    ops::uniform_::call(&u, 0.0, 1.0, generator)
}

fn floating(op: &str, self_: &Tensor) -> Result<()> {
    if !self_.dtype().is_floating_point() {
        return Err(crate::support::not_implemented(op, self_.dtype()));
    }
    Ok(())
}

impl CauchyCompositeImplicit for Composite {
    fn cauchy(self_: &Tensor, median: f64, sigma: f64, generator: Option<&Generator>) -> Result<Tensor> {
        floating("cauchy_cpu", self_)?;
        if sigma <= 0.0 {
            return Err(Error::runtime(format!("cauchy_ expects sigma > 0.0, but found sigma={sigma}")));
        }
        let u = uniform(self_, generator)?.try_sub_scalar(Scalar::Float(0.5))?;
        let t = ops::tan::call(&u.try_mul_scalar(Scalar::Float(std::f64::consts::PI))?)?;
        t.try_mul_scalar(Scalar::Float(sigma))?.try_add_scalar(Scalar::Float(median))?.try_to_dtype(self_.dtype())
    }
}

impl ExponentialCompositeImplicit for Composite {
    fn exponential(self_: &Tensor, lambd: f64, generator: Option<&Generator>) -> Result<Tensor> {
        floating("exponential_cpu", self_)?;
        if lambd <= 0.0 {
            return Err(Error::runtime(format!("exponential_ expects lambda > 0.0, but found lambda={lambd}")));
        }
        let u = uniform(self_, generator)?;
        // -log(1 - u) / lambda: u in [0, 1) keeps the logarithm finite.
        let e = ops::log1p::call(&u.try_neg()?)?.try_mul_scalar(Scalar::Float(-1.0 / lambd))?;
        e.try_to_dtype(self_.dtype())
    }
}

impl GeometricCompositeImplicit for Composite {
    fn geometric(self_: &Tensor, p: f64, generator: Option<&Generator>) -> Result<Tensor> {
        if !(p > 0.0 && p < 1.0) {
            return Err(Error::runtime(format!("geometric_ expects p to be in (0, 1), got p={p}")));
        }
        if self_.dtype() == DType::Bool {
            return Err(crate::support::not_implemented("geometric_cpu", DType::Bool));
        }
        let u = uniform(self_, generator)?;
        // The number of trials to the first success: ceil(log(1 - u) / log(1 - p)), at least 1.
        let k = ops::ceil::call(&ops::log1p::call(&u.try_neg()?)?.try_div_scalar((-p).ln_1p())?)?;
        k.try_clamp_min(1)?.try_to_dtype(self_.dtype())
    }
}

impl LogNormalCompositeImplicit for Composite {
    fn log_normal(self_: &Tensor, mean: f64, std: f64, generator: Option<&Generator>) -> Result<Tensor> {
        floating("log_normal_cpu", self_)?;
        if std <= 0.0 {
            return Err(Error::runtime(format!("log_normal_ expects std > 0.0, but found std={std}")));
        }
        let n = ops::normal_float_float::call(
            mean,
            std,
            &self_.sizes(),
            generator,
            Some(DType::F64),
            None,
            Some(self_.device()),
            None,
        )?;
        ops::exp::call(&n)?.try_to_dtype(self_.dtype())
    }
}
