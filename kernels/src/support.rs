//! Checks shared by kernels (generated and hand-written).

use oxten_runtime::{DType, Error, Result, Scalar};

/// PyTorch's `alpha_check`: a boolean `alpha` only for boolean results, and no floating `alpha`
/// for integral (or boolean) results.
pub fn check_alpha(dtype: DType, alpha: Scalar) -> Result<()> {
    if alpha.is_bool() && dtype != DType::Bool {
        return Err(Error::value("Boolean alpha only supported for Boolean results."));
    }
    if dtype.is_integral(true) && alpha.is_floating_point() {
        return Err(Error::value("For integral input tensors, argument alpha must not be a floating point number."));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_rules_follow_pytorch() {
        assert!(check_alpha(DType::Bool, Scalar::Int(1)).is_ok());
        assert!(check_alpha(DType::Bool, Scalar::Bool(true)).is_ok());
        assert!(check_alpha(DType::F32, Scalar::Float(0.5)).is_ok());
        assert!(check_alpha(DType::F32, Scalar::Bool(true)).is_err());
        assert!(check_alpha(DType::I64, Scalar::Float(0.5)).is_err());
        assert!(check_alpha(DType::Bool, Scalar::Float(0.5)).is_err());
    }
}
