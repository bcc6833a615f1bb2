//! `arange`: evenly spaced values in `[start, end)`.

use super::{scalar_to, ScalarElem};
use crate::generated::decls::{
    ArangeCompositeExplicit, ArangeOutCpu, ArangeOutMeta, ArangeStartCompositeExplicit,
    ArangeStartStepCompositeExplicit,
};
use crate::iter::scalar_type_name;
use oxten_runtime::dtype::{bf16, f16, DEFAULT_FLOAT};
use oxten_runtime::{ops, DType, Device, Error, Layout, MemoryFormat, Result, Scalar, Tensor};

/// The three functional overloads: allocate an empty tensor of the right dtype and let
/// `arange.start_out` size and fill it. Without `dtype`, all-integral (or bool) bounds and step
/// give int64 and anything else the default float dtype.
fn arange_functional(
    start: Scalar,
    end: Scalar,
    step: Scalar,
    dtype: Option<DType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let integral = [start, end, step].iter().all(|s| !s.is_floating_point());
    let dtype = dtype.unwrap_or(if integral { DType::I64 } else { DEFAULT_FLOAT });
    let out = ops::empty::call(&[0], Some(dtype), layout, device, pin_memory, None)?;
    ops::arange_start_out::call(start, end, step, &out)
}

impl ArangeCompositeExplicit for crate::Composite {
    /// `arange(0, end, 1)`.
    fn arange(
        end: Scalar,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        arange_functional(Scalar::Int(0), end, Scalar::Int(1), dtype, layout, device, pin_memory)
    }
}

impl ArangeStartCompositeExplicit for crate::Composite {
    /// `arange(start, end, 1)`.
    fn arange_start(
        start: Scalar,
        end: Scalar,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        arange_functional(start, end, Scalar::Int(1), dtype, layout, device, pin_memory)
    }
}

impl ArangeStartStepCompositeExplicit for crate::Composite {
    /// `arange(start, end, step)`.
    fn arange_start_step(
        start: Scalar,
        end: Scalar,
        step: Scalar,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        arange_functional(start, end, step, dtype, layout, device, pin_memory)
    }
}

/// Where the arithmetic of an output dtype happens: PyTorch's CPU accumulate type (int64 for
/// integers, double for float/double, float for half/bfloat16).
enum Acc {
    Int { start: i64, step: i64 },
    Float { start: f64, step: f64, single: bool },
}

/// PyTorch prints doubles with C++ streams: `nan`/`inf` rather than Rust's `NaN`/`inf`.
fn cpp_double(v: f64) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else {
        format!("{v}")
    }
}

/// Checks the range and returns the element count and the accumulate-type start and step for
/// `dtype`, with PyTorch's errors (`arange_check_bounds` and `compute_arange_size`).
///
/// The checks and the count use doubles of the original scalars, whatever the dtype, so the
/// length does not depend on the output precision; only an int64 output with integer bounds
/// and step counts in exact integer arithmetic, since doubles would round large int64 bounds.
fn plan(start: Scalar, end: Scalar, step: Scalar, dtype: DType) -> Result<(i64, Acc)> {
    if dtype == DType::Bool {
        return Err(Error::dtype(format!("\"arange_cpu\" not implemented for '{}'", scalar_type_name(dtype))));
    }
    let (dstart, dend, dstep) = (start.to_f64(), end.to_f64(), step.to_f64());
    // A NaN step is neither positive nor negative, so PyTorch reports it as zero too.
    if dstep == 0.0 || dstep.is_nan() {
        return Err(Error::value("step must be nonzero"));
    }
    if !dstart.is_finite() || !dend.is_finite() {
        return Err(Error::value(format!("unsupported range: {} -> {}", cpp_double(dstart), cpp_double(dend))));
    }
    if !((dstep > 0.0 && dend >= dstart) || (dstep < 0.0 && dend <= dstart)) {
        return Err(Error::value("upper bound and larger bound inconsistent with step sign"));
    }
    let size = match (start, end, step) {
        (Scalar::Int(s), Scalar::Int(e), Scalar::Int(st)) if dtype == DType::I64 => {
            // Rounded-up division toward the step's sign, in i128 so it cannot overflow.
            let (s, e, st) = (s as i128, e as i128, st as i128);
            ((e - s + st - st.signum()) / st) as f64
        }
        _ => ((dend - dstart) / dstep).ceil(),
    };
    if !(size >= 0.0 && size <= i64::MAX as f64) {
        return Err(Error::value("invalid size, possible overflow?"));
    }
    // The values are computed in the accumulate type, converted with PyTorch's checked
    // `Scalar::to` (so e.g. a float step of an integer arange truncates toward zero).
    let acc = if dtype.is_integral(false) {
        Acc::Int { start: scalar_to::<i64>(start)?, step: scalar_to::<i64>(step)? }
    } else if dtype.is_reduced_float() {
        Acc::Float {
            start: f64::from(scalar_to::<f32>(start)?),
            step: f64::from(scalar_to::<f32>(step)?),
            single: true,
        }
    } else {
        Acc::Float { start: scalar_to::<f64>(start)?, step: scalar_to::<f64>(step)?, single: false }
    };
    Ok((size as i64, acc))
}

/// Sizes `out` for the range: resized to 1-D only when its element count differs (PyTorch
/// keeps the shape of an `out` that already has the right number of elements).
fn resize_for(out: &Tensor, size: i64) -> Result<()> {
    if out.numel() != size {
        out.resize_(&[size], MemoryFormat::Preserve)?;
    }
    Ok(())
}

/// Element `i` is `start + i * step` in the accumulate type, then converted to `T`.
fn values<T: ScalarElem>(n: i64, acc: &Acc) -> Vec<T> {
    match *acc {
        Acc::Int { start, step } => (0..n).map(|i| T::cast_i64(start.wrapping_add(step.wrapping_mul(i)))).collect(),
        Acc::Float { start, step, single: true } => {
            let (start, step) = (start as f32, step as f32);
            (0..n).map(|i| T::cast_f64(f64::from(start + step * i as f32))).collect()
        }
        Acc::Float { start, step, single: false } => (0..n).map(|i| T::cast_f64(start + step * i as f64)).collect(),
    }
}

impl ArangeOutCpu for crate::Cpu {
    /// Resizes `out` to the element count of the range and writes the values in row-major
    /// order, whatever `out`'s strides.
    fn arange_out(start: Scalar, end: Scalar, step: Scalar, out: &Tensor) -> Result<Tensor> {
        arange_into(start, end, step, out)
    }
}

/// On CUDA the values are computed on the host, exactly as on the CPU, and copied into `out`
/// in one transfer (a range is small next to the work that uses it).
#[cfg(feature = "cuda")]
impl crate::generated::decls::ArangeOutCuda for crate::Cuda {
    fn arange_out(start: Scalar, end: Scalar, step: Scalar, out: &Tensor) -> Result<Tensor> {
        arange_into(start, end, step, out)
    }
}

/// The range's values written into `out` (any device: `copy_` uploads them).
fn arange_into(start: Scalar, end: Scalar, step: Scalar, out: &Tensor) -> Result<Tensor> {
    let (size, acc) = plan(start, end, step, out.dtype())?;
    resize_for(out, size)?;
    let sizes = out.sizes();
    let src = match out.dtype() {
        DType::U8 => Tensor::from_vec(values::<u8>(size, &acc), &sizes)?,
        DType::I8 => Tensor::from_vec(values::<i8>(size, &acc), &sizes)?,
        DType::I16 => Tensor::from_vec(values::<i16>(size, &acc), &sizes)?,
        DType::I32 => Tensor::from_vec(values::<i32>(size, &acc), &sizes)?,
        DType::I64 => Tensor::from_vec(values::<i64>(size, &acc), &sizes)?,
        DType::F16 => Tensor::from_vec(values::<f16>(size, &acc), &sizes)?,
        DType::BF16 => Tensor::from_vec(values::<bf16>(size, &acc), &sizes)?,
        DType::F32 => Tensor::from_vec(values::<f32>(size, &acc), &sizes)?,
        DType::F64 => Tensor::from_vec(values::<f64>(size, &acc), &sizes)?,
        // `plan` has already rejected bool outputs with PyTorch's message.
        DType::Bool => return Err(Error::dtype("\"arange_cpu\" not implemented for 'Bool'")),
    };
    // Through the dispatcher, which copies across devices.
    out.try_copy_(&src)?;
    Ok(out.clone())
}

impl ArangeOutMeta for crate::Meta {
    /// The same checks and resize as on CPU, without values.
    fn arange_out(start: Scalar, end: Scalar, step: Scalar, out: &Tensor) -> Result<Tensor> {
        let (size, _) = plan(start, end, step, out.dtype())?;
        resize_for(out, size)?;
        Ok(out.clone())
    }
}
