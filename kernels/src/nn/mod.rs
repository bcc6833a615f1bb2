//! Neural-network operators: activations, the softmax family and losses.
//!
//! * [`activation`]: `elu`, `hardtanh`, `softplus_backward` and friends. `leaky_relu`,
//!   `leaky_relu_backward` and `softplus` are `pointwise:` expressions; only their dtype checks
//!   live here. As in PyTorch, the element kernels exist for the floating dtypes only (f16/bf16
//!   computed in f32), except `hardtanh`, which is `clamp` with PyTorch's legacy integer bounds.
//! * [`softmax`]: structured `_softmax` / `_log_softmax` and their backward kernels (max
//!   subtracted, f32 accumulation for f16/bf16, any dim, a vectorizable last-dim path split over the thread pool
//!   over rows), the `softmax.int` / `log_softmax.int` composites and `logsumexp`.
//! * [`attention`]: `scaled_dot_product_attention`, its math decomposition and the fused CPU
//!   forward and backward kernels (blocked, online softmax).
//! * [`loss`]: `nll_loss_forward` / `nll_loss_backward` (structured), the `nll_loss`,
//!   `nll_loss_nd` and `cross_entropy_loss` composites, `mse_loss` (+ backward) and
//!   `binary_cross_entropy_with_logits`.
//! * `grid_sample`: `grid_sampler{,_2d,_3d}` and `affine_grid_generator`, composites.
//!
//! Losses take PyTorch's `int reduction`: [`REDUCTION_NONE`] (0), [`REDUCTION_MEAN`] (1) or
//! [`REDUCTION_SUM`] (2).

mod activation;
mod activation_composites;
mod attention;
mod composite_losses;
mod ctc_loss;
#[cfg(feature = "cuda")]
mod cuda;
mod distance;
mod embedding_bag;
mod grid_sample;
mod loss;
mod one_hot;
pub mod rnn_cells;
mod safe_softmax;
mod softmax;
mod upsample;

use crate::iter::scalar_type_name;
use oxten_runtime::{DType, Error};

/// `reduction=0`: one loss per element.
pub(crate) const REDUCTION_NONE: i64 = 0;
/// `reduction=1`: the mean of the losses (PyTorch's default).
pub(crate) const REDUCTION_MEAN: i64 = 1;
/// `reduction=2`: the sum of the losses.
pub(crate) const REDUCTION_SUM: i64 = 2;

pub(crate) use crate::support::not_implemented;

/// Kernels with floating loops only (f16, bf16, f32, f64) reject every other dtype.
pub(crate) fn floating_only(kernel: &str, dtype: DType) -> oxten_runtime::Result<()> {
    if dtype.is_floating_point() {
        Ok(())
    } else {
        Err(not_implemented(kernel, dtype))
    }
}

/// `data_ptr<scalar_t>()`'s check in PyTorch kernels that read several tensors as the dtype of
/// the first: `expected scalar type Float but found Double`.
pub(crate) fn expect_dtype(expected: DType, found: DType) -> oxten_runtime::Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::dtype(format!(
            "expected scalar type {} but found {}",
            scalar_type_name(expected),
            scalar_type_name(found)
        )))
    }
}

/// Runs `$f::<S, M>($args)` for the floating storage type `S` of `$dtype` (with its math type
/// `M`: f32 for f16/bf16), or returns PyTorch's "not implemented" error naming `$kernel`.
macro_rules! float_dispatch {
    ($kernel:expr, $dtype:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        match $dtype {
            oxten_runtime::DType::F32 => $f::<f32, f32>($($arg),*),
            oxten_runtime::DType::F64 => $f::<f64, f64>($($arg),*),
            oxten_runtime::DType::F16 => $f::<oxten_runtime::dtype::f16, f32>($($arg),*),
            oxten_runtime::DType::BF16 => $f::<oxten_runtime::dtype::bf16, f32>($($arg),*),
            other => return Err($crate::nn::not_implemented($kernel, other)),
        }
    };
}
pub(crate) use float_dispatch;
