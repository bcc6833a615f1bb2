//! `linalg.vander`: the Vandermonde matrix as PyTorch builds it, a column of ones beside the
//! running products of `x` (`cumprod`), so its gradient comes from `cumprod` and `cat`.

use crate::generated::decls::LinalgVanderCompositeImplicit;
use crate::iter::scalar_type_name;
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

impl LinalgVanderCompositeImplicit for Composite {
    fn linalg_vander(x: &Tensor, n: Option<i64>) -> Result<Tensor> {
        let d = x.dtype();
        if !(d.is_integral(false) || matches!(d, oxten_runtime::DType::F32 | oxten_runtime::DType::F64)) {
            return Err(Error::runtime(format!(
                "linalg.vander supports floating point, complex, and integer tensors, but got {}",
                scalar_type_name(d)
            )));
        }
        let x = if x.dim() == 0 { ops::unsqueeze::call(x, -1)? } else { x.clone() };
        let mut shape = x.sizes().to_vec();
        let n = n.unwrap_or(*shape.last().expect("at least 1-D"));
        if n <= 1 {
            return Err(Error::runtime("N must be greater than 1."));
        }
        shape.push(n - 1);
        let powers = ops::cumprod::call(&ops::expand::call(&ops::unsqueeze::call(&x, -1)?, &shape, false)?, -1, None)?;
        *shape.last_mut().expect("just pushed") = 1;
        let ones = ops::ones::call(&shape, Some(powers.dtype()), None, Some(powers.device()), None)?;
        ops::cat::call(&[ones, powers], -1)
    }
}
