//! `rms_norm`: `x / sqrt(mean(x², trailing dims) + eps) · weight`, CompositeImplicitAutograd as in
//! PyTorch, computed in f32 for f16/bf16 inputs (their `opmath` type) and rounded once.

use super::layer_norm::check_inputs;
use crate::generated::decls::RmsNormCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, DType, Result, Scalar, Tensor};

/// The machine epsilon of `dtype`, PyTorch's default `eps` (of the compute type).
fn epsilon(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::EPSILON,
        _ => f32::EPSILON as f64,
    }
}

impl RmsNormCompositeImplicit for Composite {
    fn rms_norm(input: &Tensor, normalized_shape: &[i64], weight: Option<&Tensor>, eps: Option<f64>) -> Result<Tensor> {
        check_inputs(input, normalized_shape, weight, None)?;
        let compute = match input.dtype() {
            DType::F16 | DType::BF16 => DType::F32,
            d => d,
        };
        let x = input.try_to_dtype(compute)?;
        let ndim = input.dim() as i64;
        let dims: Vec<i64> = (ndim - normalized_shape.len() as i64..ndim).collect();
        let mean_square = ops::mean_dim::call(&x.try_mul(&x)?, Some(&dims), true, None)?;
        let inv_rms = mean_square.try_add_scalar(Scalar::Float(eps.unwrap_or(epsilon(compute))))?.try_rsqrt()?;
        let y = x.try_mul(&inv_rms)?.try_to_dtype(input.dtype())?;
        match weight {
            Some(w) => y.try_mul(w),
            None => Ok(y),
        }
    }
}
