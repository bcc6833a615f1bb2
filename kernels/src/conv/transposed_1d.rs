//! `conv_transpose1d`: `conv_transpose2d` on a height of 1 (input `[N, C, 1, L]`, weight
//! `[C_in, C_out / groups, 1, K]`), so the 1-D operator has the 2-D one's kernels and gradient.

use crate::generated::decls::ConvTranspose1dCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

impl ConvTranspose1dCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn conv_transpose1d(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        output_padding: &[i64],
        groups: i64,
        dilation: &[i64],
    ) -> Result<Tensor> {
        if !matches!(input.dim(), 2 | 3) {
            return Err(Error::runtime(format!(
                "Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input of size: {:?}",
                &input.sizes()[..]
            )));
        }
        if weight.dim() != 3 {
            return Err(Error::runtime(format!(
                "conv_transpose1d: expected weight to be 3-dimensional, but got weight of size {:?}",
                &weight.sizes()[..]
            )));
        }
        let first = |name: &str, v: &[i64]| -> Result<i64> {
            match v {
                [x] => Ok(*x),
                _ => Err(Error::runtime(format!(
                    "expected {name} to be a single integer value or a list of 1 values to match the convolution dimensions, but got {name}={v:?}"
                ))),
            }
        };
        let (s, p) = (first("stride", stride)?, first("padding", padding)?);
        let (op, d) = (first("output_padding", output_padding)?, first("dilation", dilation)?);
        let x = input.try_unsqueeze(-2)?;
        let w = weight.try_unsqueeze(-2)?;
        ops::conv_transpose2d_input::call(&x, &w, bias, &[1, s], &[0, p], &[0, op], groups, &[1, d])?
            .try_squeeze_dim(-2)
    }
}
