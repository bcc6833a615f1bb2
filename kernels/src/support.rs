//! Checks and names shared by kernels (generated and hand-written).

use oxten_runtime::{DType, Error, MemoryFormat, Result, Scalar, Tensor};

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

/// The error PyTorch's dispatch macros raise for a dtype a kernel has no loop for:
/// `"kernel_cpu" not implemented for 'Long'`.
pub fn not_implemented(kernel: &str, dtype: DType) -> Error {
    Error::dtype(format!("\"{kernel}\" not implemented for '{}'", crate::iter::scalar_type_name(dtype)))
}

/// Formats like C++'s default stream output of a double (`%g`: 6 significant digits, trailing
/// zeros dropped, scientific notation outside `1e-5 ..= 1e6`), as PyTorch's messages print
/// scalars.
pub fn format_g(v: f64) -> String {
    if v.is_nan() {
        // C++ streams print NaN as `nan`.
        return "nan".into();
    }
    if v == 0.0 || v.is_infinite() {
        return format!("{v}");
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` output has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-5..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        trim(&format!("{v:.*}", (5 - exp) as usize))
    }
}

/// The value of a one-element tensor as a Scalar of its category (`Tensor::item`, the
/// `_local_scalar_dense` kernel): integers read as i64 (exact), floating values as f64, bools as
/// bools; a device tensor's element is copied to the host.
pub fn item_scalar(t: &Tensor) -> Result<Scalar> {
    use crate::iter::to_dtype;
    if t.numel() != 1 {
        return Err(Error::runtime(format!("a Tensor with {} elements cannot be converted to Scalar", t.numel())));
    }
    Ok(match t.dtype() {
        DType::Bool => Scalar::Bool(to_dtype(t, DType::Bool)?.to_vec::<bool>()?[0]),
        d if d.is_floating_point() => Scalar::Float(to_dtype(t, DType::F64)?.to_vec::<f64>()?[0]),
        _ => Scalar::Int(to_dtype(t, DType::I64)?.to_vec::<i64>()?[0]),
    })
}

/// `at::native::resize_output` for the non-structured `out=` overloads: an `out` of another shape
/// is resized (contiguous); one of the right shape keeps its strides.
pub(crate) fn resize_output(out: &Tensor, shape: &[i64]) -> Result<()> {
    if out.sizes() != shape {
        out.resize_(shape, MemoryFormat::Contiguous)?;
    }
    Ok(())
}

/// Whether any element of the integer tensor `t` lies outside `[lo, hi)`: the host-side range
/// check of an index or target argument, as PyTorch's CPU kernels make it (other devices leave it
/// to their kernels).
pub(crate) fn any_outside(t: &Tensor, lo: i64, hi: i64) -> Result<bool> {
    if t.numel() == 0 || t.device() != oxten_runtime::Device::Cpu {
        return Ok(false);
    }
    let outside = oxten_runtime::ops::logical_or::call(
        &oxten_runtime::ops::lt_scalar::call(t, Scalar::Int(lo))?,
        &oxten_runtime::ops::ge_scalar::call(t, Scalar::Int(hi))?,
    )?;
    oxten_runtime::ops::any::call(&outside)?.item::<bool>()
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
