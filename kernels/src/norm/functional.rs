//! `normalize` and `local_response_norm`, which `torch.nn.functional` writes in Python: a
//! division by a norm along one dimension, and by a power of the mean square over neighbouring
//! channels. CompositeImplicitAutograd, as PyTorch's are.

use crate::generated::decls::{LocalResponseNormCompositeImplicit, NormalizeCompositeImplicit};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

impl NormalizeCompositeImplicit for Composite {
    fn normalize(input: &Tensor, p: f64, dim: i64, eps: f64) -> Result<Tensor> {
        let norm = ops::norm_scalaropt_dim::call(input, Some(Scalar::Float(p)), &[dim], true)?;
        let denom = ops::clamp_min::call(&norm, Scalar::Float(eps))?;
        ops::div::call(input, &ops::expand::call(&denom, &input.sizes(), false)?)
    }
}

impl LocalResponseNormCompositeImplicit for Composite {
    fn local_response_norm(input: &Tensor, size: i64, alpha: f64, beta: f64, k: f64) -> Result<Tensor> {
        let dim = input.dim();
        if dim < 3 {
            // PyTorch's message, its run of spaces included (a line continuation in its source).
            return Err(Error::value(format!(
                "Expected 3D or higher dimensionality                          input (got {dim} dimensions)"
            )));
        }
        if input.numel() == 0 {
            return Ok(input.clone());
        }
        let sizes = input.sizes();
        // The channels become the height of a one-channel image whose width is everything after
        // them; a (size, 1) average pool over the zero-padded squares is then PyTorch's
        // avg_pool2d (3-D input) or avg_pool3d (size, 1, 1) window.
        let square = ops::mul::call(input, input)?;
        let square = ops::reshape::call(&square, &[sizes[0], 1, sizes[1], -1])?;
        let padded = ops::constant_pad_nd::call(&square, &[0, 0, size / 2, (size - 1) / 2], Scalar::Int(0))?;
        let mean = ops::avg_pool2d::call(&padded, &[size, 1], &[1, 1], &[0, 0], false, true, None)?;
        let mean = ops::reshape::call(&mean, &sizes)?;
        let div = ops::pow_tensor_scalar::call(
            &mean.try_mul_scalar(Scalar::Float(alpha))?.try_add_scalar(Scalar::Float(k))?,
            Scalar::Float(beta),
        )?;
        ops::div::call(input, &div)
    }
}
