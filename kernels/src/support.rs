//! Checks shared by kernels (generated and hand-written).

use oxten_runtime::{DType, Error, Result, Scalar};

/// PyTorch's `alpha_check`: a boolean result needs a boolean `alpha`, and an integral result an
/// integral one.
pub fn check_alpha(dtype: DType, alpha: Scalar) -> Result<()> {
    if dtype == DType::Bool && !alpha.is_bool() {
        return Err(Error::value("Boolean alpha only supported for Boolean results."));
    }
    if dtype.is_integral(true) && alpha.is_floating_point() {
        return Err(Error::value("For integral input tensors, argument alpha must not be a floating point number."));
    }
    Ok(())
}
