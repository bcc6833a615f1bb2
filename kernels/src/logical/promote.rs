//! Type promotion and scalar conversion for kernels that promote their operands by hand.
//!
//! PyTorch's `where`, `clamp` and `pow(Tensor, Scalar)` compute `at::result_type` over their
//! arguments *before* building an iterator, so that the iterator itself can insist on a single
//! dtype (an `out=` tensor of another dtype is then an error, not a silent cast).

use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};

/// One argument taking part in [`result_type`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg<'a> {
    /// A tensor: dimensioned tensors outrank 0-dim ones.
    Tensor(&'a Tensor),
    /// A Rust number, treated as a wrapped number (lowest priority; a float counts as the
    /// default float dtype).
    Scalar(Scalar),
}

/// `at::result_type` over `args` (see [`oxten_runtime::result_type`]).
///
/// # Panics
/// If `args` is empty (every caller passes at least one tensor).
pub(crate) fn result_type(args: &[Arg<'_>]) -> DType {
    let tensors: Vec<&Tensor> =
        args.iter().filter_map(|a| if let Arg::Tensor(t) = a { Some(*t) } else { None }).collect();
    let scalars: Vec<Scalar> =
        args.iter().filter_map(|a| if let Arg::Scalar(s) = a { Some(*s) } else { None }).collect();
    oxten_runtime::result_type(&tensors, &scalars).expect("result_type needs at least one argument")
}

/// Conversion of a [`Scalar`] to an element type with PyTorch's `Scalar::to<scalar_t>()`
/// rules: the value must fit the target type (infinities and NaN fit every floating type;
/// negative integers down to `-MAX` fit unsigned types, wrapping), else the conversion fails
/// with c10's message naming the C++ type.
pub(crate) trait FromScalar: Sized + Copy {
    /// The C++ name c10 uses for the type in conversion errors.
    const CPP_NAME: &'static str;
    /// Converts, or fails when the value overflows the type.
    fn from_scalar(s: Scalar) -> Result<Self>;
}

fn overflow_error(cpp_name: &str) -> Error {
    Error::value(format!("value cannot be converted to type {cpp_name} without overflow"))
}

macro_rules! from_scalar_int {
    ($($t:ty => $name:expr, $unsigned:expr);* $(;)?) => {$(
        impl FromScalar for $t {
            const CPP_NAME: &'static str = $name;
            fn from_scalar(s: Scalar) -> Result<Self> {
                match s {
                    Scalar::Bool(b) => Ok(b as $t),
                    Scalar::Int(i) => {
                        let fits = if $unsigned {
                            // Unsigned: negative values wrap, as long as their magnitude fits.
                            i.unsigned_abs() <= <$t>::MAX as u64
                        } else {
                            <$t>::try_from(i).is_ok()
                        };
                        if fits { Ok(i as $t) } else { Err(overflow_error(Self::CPP_NAME)) }
                    }
                    Scalar::Float(f) => {
                        if f >= <$t>::MIN as f64 && f <= <$t>::MAX as f64 {
                            Ok(f as $t)
                        } else {
                            Err(overflow_error(Self::CPP_NAME))
                        }
                    }
                }
            }
        }
    )*};
}
from_scalar_int!(
    u8 => "uint8_t", true;
    i8 => "int8_t", false;
    i16 => "int16_t", false;
    i32 => "int", false;
    i64 => "int64_t", false;
);

macro_rules! from_scalar_float {
    ($($t:ty => $name:expr, $max:expr, $from_f64:expr);* $(;)?) => {$(
        impl FromScalar for $t {
            const CPP_NAME: &'static str = $name;
            fn from_scalar(s: Scalar) -> Result<Self> {
                let v = s.to_f64();
                if v.is_finite() && v.abs() > $max {
                    return Err(overflow_error(Self::CPP_NAME));
                }
                let conv: fn(f64) -> $t = $from_f64;
                Ok(conv(v))
            }
        }
    )*};
}
from_scalar_float!(
    f16 => "c10::Half", f16::MAX.to_f64(), f16::from_f64;
    bf16 => "c10::BFloat16", bf16::MAX.to_f64(), bf16::from_f64;
    f32 => "float", f32::MAX as f64, |v| v as f32;
    f64 => "double", f64::MAX, |v| v;
);

impl FromScalar for bool {
    const CPP_NAME: &'static str = "bool";
    fn from_scalar(s: Scalar) -> Result<Self> {
        Ok(s.to_bool())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(d: DType, sizes: &[i64]) -> Tensor {
        Tensor::empty(sizes, d, oxten_runtime::Device::Meta, Default::default()).unwrap()
    }

    #[test]
    fn tiers_follow_pytorch() {
        // torch.result_type(torch.ones(2, dtype=torch.int32), 2.5) -> float32
        let i32v = t(DType::I32, &[2]);
        assert_eq!(result_type(&[Arg::Tensor(&i32v), Arg::Scalar(Scalar::Float(2.5))]), DType::F32);
        // f16 tensor with a float scalar stays f16.
        let h = t(DType::F16, &[2]);
        assert_eq!(result_type(&[Arg::Tensor(&h), Arg::Scalar(Scalar::Float(2.5))]), DType::F16);
        // i32 tensor with an int scalar stays i32; bool tensor with an int scalar is i64.
        assert_eq!(result_type(&[Arg::Tensor(&i32v), Arg::Scalar(Scalar::Int(7))]), DType::I32);
        let b = t(DType::Bool, &[2]);
        assert_eq!(result_type(&[Arg::Tensor(&b), Arg::Scalar(Scalar::Int(7))]), DType::I64);
        // A 0-dim f64 tensor beneath an i32 tensor: higher category, so promoted to f64.
        let z = t(DType::F64, &[]);
        assert_eq!(result_type(&[Arg::Tensor(&i32v), Arg::Tensor(&z)]), DType::F64);
        // Two 0-dim tensors promote normally.
        let zi = t(DType::I64, &[]);
        assert_eq!(result_type(&[Arg::Tensor(&zi), Arg::Tensor(&z)]), DType::F64);
    }

    #[test]
    fn scalar_conversions_check_overflow() {
        // torch: `torch.tensor([1], dtype=torch.uint8) ** 300` raises
        // "value cannot be converted to type uint8_t without overflow".
        let e = u8::from_scalar(Scalar::Int(300)).unwrap_err();
        assert_eq!(e.message, "value cannot be converted to type uint8_t without overflow");
        assert_eq!(u8::from_scalar(Scalar::Int(-1)).unwrap(), 255);
        assert!(i8::from_scalar(Scalar::Int(200)).is_err());
        assert_eq!(i32::from_scalar(Scalar::Int(-7)).unwrap(), -7);
        assert_eq!(f16::from_scalar(Scalar::Float(0.5)).unwrap(), f16::from_f32(0.5));
        assert!(f16::from_scalar(Scalar::Int(70000)).is_err());
        assert!(f16::from_scalar(Scalar::Float(f64::INFINITY)).unwrap().is_infinite());
        assert!(f32::from_scalar(Scalar::Float(1e39)).is_err());
        assert!(bool::from_scalar(Scalar::Int(2)).unwrap());
        assert_eq!(f32::from_scalar(Scalar::Bool(true)).unwrap(), 1.0);
    }
}
