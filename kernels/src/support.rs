//! Checks and names shared by kernels (generated and hand-written).

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

/// The dtype's name as PyTorch's `TypeMeta` prints it (`float`, `long int`, `c10::Half`), in
/// messages such as sdpa's and lerp's dtype checks.
pub fn type_meta_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        DType::I64 => "long int",
        DType::I32 => "int",
        DType::I16 => "short int",
        DType::I8 => "signed char",
        DType::U8 => "unsigned char",
        DType::Bool => "bool",
    }
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
