//! Pointwise kernels that need more than a `pointwise:` expression: `gelu` (a string argument
//! selecting the formula), `clamp` (optional bounds that take part in type promotion) and
//! `pow(Tensor, Scalar)` (exponent-dependent fast paths and exact integer powers).
//!
//! All three are structured TensorIterator operators, with PyTorch's dtype rules:
//!
//! * `gelu` and `clamp` are `build_unary_op`s: the iterator sees one input in the result dtype
//!   and insists that the output has that dtype too, so `clamp(int_tensor, 0.5,
//!   out=int_tensor)` is an error rather than a silent truncation. `clamp`'s result dtype comes
//!   from promoting `self` with the bounds as wrapped numbers; the input is converted first.
//! * `pow` is a binary op with the exponent as a wrapped-number input: promotion, a cast into a
//!   wider `out=` tensor, and the safe-casting check for in-place calls all come from the
//!   iterator.

mod composites;
#[cfg(feature = "cuda")]
mod cuda;
mod float_power;
mod frexp;
mod gradient;
mod real_aliases;
mod special;
use crate::generated::decls::{
    ClampOutCpu, ClampOutMetaFn, GeluOutCpu, GeluOutMetaFn, PowTensorScalarOutCpu, PowTensorScalarOutMetaFn,
};
use crate::iter::{
    binary_op_config, cpu_kernel_binary, cpu_kernel_binary_math, cpu_kernel_unary_math, scalar_type_name, to_dtype,
    unary_op_config, OpMath, StructuredOutputs, TensorIterator,
};
use crate::logical::promote::{result_type, Arg, FromScalar};
use crate::math::{self as m, Float};
use crate::reduce::{max_nan, min_nan};
use crate::{Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{match_dtype, DType, Element, Error, Result, Scalar, Tensor};

use crate::support::not_implemented;

// ---------------------------------------------------------------------------------------------
// gelu
// ---------------------------------------------------------------------------------------------

/// `approximate='tanh'` selects the tanh formula; `'none'` the exact erf one.
fn gelu_uses_tanh(approximate: &str) -> Result<bool> {
    match approximate {
        "none" => Ok(false),
        "tanh" => Ok(true),
        _ => Err(Error::value("approximate argument must be either none or tanh.")),
    }
}

/// `gelu`'s meta function: PyTorch's `build_unary_op` (no promotion: the kernel exists for
/// floating dtypes only, and the output must have the input's dtype). The `approximate` string
/// is validated here so that meta tensors reject it too.
impl GeluOutMetaFn for Meta {
    fn gelu_out(outs: &mut StructuredOutputs, self_: &Tensor, approximate: &str) -> Result<TensorIterator> {
        gelu_uses_tanh(approximate)?;
        unary_op_config().add_input(self_).build_structured(outs)
    }
}

/// Runs GELU in `S::Math` (f32 for f16/bf16, rounded once).
#[inline(never)]
fn gelu_loop<S: OpMath<Math = T>, T: Float>(iter: &TensorIterator, tanh: bool) {
    if tanh {
        cpu_kernel_unary_math::<S>(iter, m::gelu_tanh::<T>);
    } else {
        cpu_kernel_unary_math::<S>(iter, m::gelu::<T>);
    }
}

impl GeluOutCpu for Cpu {
    fn gelu_out(iter: &TensorIterator, _self: &Tensor, approximate: &str) -> Result<()> {
        let tanh = gelu_uses_tanh(approximate)?;
        match iter.common_dtype() {
            DType::F16 => gelu_loop::<f16, f32>(iter, tanh),
            DType::BF16 => gelu_loop::<bf16, f32>(iter, tanh),
            DType::F32 => gelu_loop::<f32, f32>(iter, tanh),
            DType::F64 => gelu_loop::<f64, f64>(iter, tanh),
            other => return Err(not_implemented("GeluKernelImpl", other)),
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// clamp
// ---------------------------------------------------------------------------------------------

/// The range of an integral dtype, for `clamp`'s bound checks.
fn int_range(dtype: DType) -> Option<(i64, i64)> {
    Some(match dtype {
        DType::U8 => (u8::MIN.into(), u8::MAX.into()),
        DType::I8 => (i8::MIN.into(), i8::MAX.into()),
        DType::I16 => (i16::MIN.into(), i16::MAX.into()),
        DType::I32 => (i32::MIN.into(), i32::MAX.into()),
        DType::I64 => (i64::MIN, i64::MAX),
        _ => return None,
    })
}

/// Checks shared by `clamp`'s meta function: at least one bound, an in-place call may not
/// change `self`'s dtype, and for an integral result a lower bound above the type's range (or
/// an upper bound below it) is an error, since no value of the type could satisfy it. Returns
/// the result dtype.
fn clamp_result_type(
    outs: &StructuredOutputs,
    self_: &Tensor,
    min: Option<Scalar>,
    max: Option<Scalar>,
) -> Result<DType> {
    if min.is_none() && max.is_none() {
        return Err(Error::value("torch.clamp: At least one of 'min' or 'max' must not be None"));
    }
    let self_dtype = self_.dtype();
    // Floating is the highest category, so a floating `self` never promotes.
    if self_dtype.is_floating_point() {
        return Ok(self_dtype);
    }
    let mut args = vec![Arg::Tensor(self_)];
    args.extend(min.map(Arg::Scalar));
    args.extend(max.map(Arg::Scalar));
    let rt = result_type(&args);
    let inplace = outs.maybe_get_output(0).is_some_and(|o| o.is_same(self_));
    if rt != self_dtype && inplace {
        return Err(Error::dtype(format!(
            "result type {} can't be cast to the desired output type {}",
            scalar_type_name(rt),
            crate::support::type_meta_name(self_dtype)
        )));
    }
    if let Some((lowest, highest)) = int_range(rt) {
        let out_of_range = |which: &str, v: i64| {
            Error::value(format!(
                "Clamp {which} value {} is outside the representable range of {}",
                crate::support::format_g(v as f64),
                scalar_type_name(rt)
            ))
        };
        if let Some(Scalar::Int(v)) = min {
            if v > highest {
                return Err(out_of_range("min", v));
            }
        }
        if let Some(Scalar::Int(v)) = max {
            if v < lowest {
                return Err(out_of_range("max", v));
            }
        }
    }
    Ok(rt)
}

/// `clamp`'s meta function: the bounds are scalars promoted like wrapped numbers
/// (`clamp(int_tensor, 0.5)` is float), then a unary iterator over `self` in that dtype. The
/// output must have that dtype too (PyTorch's `build_unary_op`).
impl ClampOutMetaFn for Meta {
    fn clamp_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        min: Option<Scalar>,
        max: Option<Scalar>,
    ) -> Result<TensorIterator> {
        let rt = clamp_result_type(outs, self_, min, max)?;
        let input = to_dtype(self_, rt)?;
        unary_op_config().add_input(&input).build_structured(outs)
    }
}

/// A clamp bound in the element type: integers saturate to the type's range (a bound beyond it
/// constrains nothing; the meta function rejected the bounds that exclude every value), floats
/// must fit the type (infinities do).
fn clamp_bound<T: FromScalar>(s: Scalar, dtype: DType) -> Result<T> {
    match (s, int_range(dtype)) {
        (Scalar::Int(v), Some((lowest, highest))) => T::from_scalar(Scalar::Int(v.clamp(lowest, highest))),
        _ => T::from_scalar(s),
    }
}

/// `min(max(x, lo), hi)` with either bound optional, computed on `S::Math` values. Bounds are
/// converted to the element type first (as PyTorch does), so an f16 tensor is clamped to the
/// f16 value nearest to each bound. NaN in `x` or in a bound gives NaN; `lo > hi` gives `hi`.
#[inline(never)]
fn clamp_loop<S: OpMath + FromScalar>(iter: &TensorIterator, lo: Option<S>, hi: Option<S>) {
    let lo = lo.map(S::to_math);
    let hi = hi.map(S::to_math);
    match (lo, hi) {
        (Some(lo), Some(hi)) => cpu_kernel_unary_math::<S>(iter, move |x| min_nan(max_nan(x, lo), hi)),
        (Some(lo), None) => cpu_kernel_unary_math::<S>(iter, move |x| max_nan(x, lo)),
        (None, Some(hi)) => cpu_kernel_unary_math::<S>(iter, move |x| min_nan(x, hi)),
        (None, None) => unreachable!("the meta function requires a bound"),
    }
}

impl ClampOutCpu for Cpu {
    fn clamp_out(iter: &TensorIterator, _self: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<()> {
        let dtype = iter.common_dtype();
        if dtype == DType::Bool {
            let kernel = match (min, max) {
                (Some(_), Some(_)) => "clamp_scalar_cpu",
                (Some(_), None) => "clamp_min_scalar_cpu",
                _ => "clamp_max_scalar_cpu",
            };
            return Err(not_implemented(kernel, dtype));
        }
        match_dtype!(dtype, T => {
            let lo = min.map(|s| clamp_bound::<T>(s, dtype)).transpose()?;
            let hi = max.map(|s| clamp_bound::<T>(s, dtype)).transpose()?;
            clamp_loop::<T>(iter, lo, hi)
        });
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// pow(Tensor, Scalar)
// ---------------------------------------------------------------------------------------------

/// `pow`'s meta function: NumPy's rule against integers to negative integer powers, then a
/// binary iterator with the exponent as a wrapped number, so the result type is PyTorch's
/// (`int_tensor ** 2` stays integral, `int_tensor ** 2.5` is the default float,
/// `f16_tensor ** 2.5` stays f16), an `out=` tensor of a wider dtype receives a cast result,
/// and `int_tensor.pow_(0.5)` is rejected.
impl PowTensorScalarOutMetaFn for Meta {
    fn pow_tensor_scalar_out(outs: &mut StructuredOutputs, self_: &Tensor, exponent: Scalar) -> Result<TensorIterator> {
        if self_.dtype().is_integral(true) && exponent.is_integral() && exponent.to_i64() < 0 {
            return Err(Error::value("Integers to negative integer powers are not allowed."));
        }
        binary_op_config().add_input(self_).add_input_scalar(exponent).build_structured(outs)
    }
}

/// Integer power by repeated squaring, wrapping on overflow like C++ integer arithmetic. The
/// meta function rules out negative exponents for integral tensors.
#[inline(always)]
fn powi<T: m::Element>(base: T, exp: u64) -> T {
    let mut result = T::one();
    let mut b = base;
    let mut e = exp;
    while e > 0 {
        if e & 1 == 1 {
            result = result.mul_wrapping(b);
        }
        e >>= 1;
        if e > 0 {
            b = b.mul_wrapping(b);
        }
    }
    result
}

/// Integer pow. The exponent must fit the element type (as in PyTorch, where it is converted to
/// it): `uint8_tensor ** 300` is an error.
#[inline(never)]
fn pow_int_loop<T: OpMath<Math = T> + m::Element + FromScalar>(iter: &TensorIterator, exponent: Scalar) -> Result<()> {
    T::from_scalar(exponent)?;
    let e = exponent.to_i64().max(0) as u64;
    cpu_kernel_binary_math::<T>(iter, move |x, _| powi(x, e));
    Ok(())
}

/// Floating pow with fast paths for common exponents: squares, cubes and their reciprocals by
/// multiplication, `sqrt` for 0.5, `1/sqrt` for -0.5 and `1/x` for -1; `powf` otherwise.
/// Computed in `S::Math` (f32 for f16/bf16). The exponent operand of the iterator is ignored:
/// `exponent` is the exact value.
#[inline(never)]
fn pow_float_loop<S: OpMath<Math = T>, T: Float>(iter: &TensorIterator, exponent: f64) {
    let one = T::one();
    if exponent == 2.0 {
        cpu_kernel_binary_math::<S>(iter, |x, _| x * x);
    } else if exponent == 3.0 {
        cpu_kernel_binary_math::<S>(iter, |x, _| x * x * x);
    } else if exponent == -2.0 {
        cpu_kernel_binary_math::<S>(iter, move |x, _| one / (x * x));
    } else if exponent == 0.5 {
        cpu_kernel_binary_math::<S>(iter, |x, _| x.sqrt());
    } else if exponent == -0.5 {
        cpu_kernel_binary_math::<S>(iter, move |x, _| one / x.sqrt());
    } else if exponent == -1.0 {
        cpu_kernel_binary_math::<S>(iter, move |x, _| one / x);
    } else {
        let e = T::from_f64(exponent);
        cpu_kernel_binary_math::<S>(iter, move |x, _| x.powf(e));
    }
}

impl PowTensorScalarOutCpu for Cpu {
    fn pow_tensor_scalar_out(iter: &TensorIterator, _self: &Tensor, exponent: Scalar) -> Result<()> {
        let dtype = iter.common_dtype();
        let e = exponent.to_f64();
        // x ** 0 is 1 (even for NaN) and x ** 1 is x, for every dtype.
        if e == 0.0 {
            match_dtype!(dtype, T => {
                let one = <T as Element>::from_f64(1.0);
                cpu_kernel_binary::<T, T, T>(iter, move |_, _| one)
            });
            return Ok(());
        }
        if e == 1.0 {
            match_dtype!(dtype, T => cpu_kernel_binary::<T, T, T>(iter, |x, _| x));
            return Ok(());
        }
        match dtype {
            DType::F32 => pow_float_loop::<f32, f32>(iter, e),
            DType::F64 => pow_float_loop::<f64, f64>(iter, e),
            // The reduced types compute in f32 but, as in PyTorch, the exponent must fit the
            // element type; f16 also rounds it to f16 first.
            DType::BF16 => {
                bf16::from_scalar(exponent)?;
                pow_float_loop::<bf16, f32>(iter, e)
            }
            DType::F16 => pow_float_loop::<f16, f32>(iter, f16::from_scalar(exponent)?.to_f64()),
            DType::U8 => pow_int_loop::<u8>(iter, exponent)?,
            DType::I8 => pow_int_loop::<i8>(iter, exponent)?,
            DType::I16 => pow_int_loop::<i16>(iter, exponent)?,
            DType::I32 => pow_int_loop::<i32>(iter, exponent)?,
            DType::I64 => pow_int_loop::<i64>(iter, exponent)?,
            DType::Bool => return Err(not_implemented("pow", dtype)),
        }
        Ok(())
    }
}
