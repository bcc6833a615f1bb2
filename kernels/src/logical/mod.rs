//! Selection and logical kernels: `where.self` (and its `out=` form), the scalar overloads of
//! `where` (composites over `where.self`) and `logical_not`.
//!
//! Neither operator is structured in PyTorch, so these are plain kernels: they compute the
//! result dtype themselves, hand the `out=` tensor to a [`TensorIterator`] (which resizes it to
//! the broadcast shape) and run a typed loop. The Meta kernels build the same iterator (shapes
//! and dtypes checked, outputs resized) and stop there.

#[cfg(feature = "cuda")]
mod cuda;
pub(crate) mod promote;
mod tensor_equality;

use crate::generated::decls::{
    LogicalNotCompositeExplicit, LogicalNotOutCpu, LogicalNotOutMeta, WhereScalarCompositeImplicit,
    WhereScalarOtherCompositeImplicit, WhereScalarSelfCompositeImplicit, WhereSelfCpu, WhereSelfMeta, WhereSelfOutCpu,
    WhereSelfOutMeta,
};
use crate::iter::{
    copy_, cpu_kernel_ternary, cpu_kernel_unary, scalar_type_name, to_dtype, TensorIterator, TensorIteratorConfig,
};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::{match_dtype, ops, DType, Device, Element, Error, MemoryFormat, Result, Scalar, Tensor};
use promote::{result_type, Arg};

// ---------------------------------------------------------------------------------------------
// where
// ---------------------------------------------------------------------------------------------

/// The device a functional `where` allocates its result on: the first operand that is not on
/// the CPU (0-dim CPU tensors may accompany tensors of another device), else the CPU.
fn where_device(condition: &Tensor, self_: &Tensor, other: &Tensor) -> Device {
    [self_, other, condition].iter().map(|t| t.device()).find(|&d| d != Device::Cpu).unwrap_or(Device::Cpu)
}

/// A 0-dim CPU tensor used next to tensors on `device` stands for a scalar: PyTorch moves it to
/// the output's device. On meta that means a meta tensor of the same dtype (no data to move).
fn to_device_if_cpu_scalar(t: Tensor, device: Device) -> Result<Tensor> {
    if device == Device::Meta && t.device() == Device::Cpu && t.dim() == 0 {
        return Tensor::empty(&[], t.dtype(), Device::Meta, MemoryFormat::Contiguous);
    }
    Ok(t)
}

/// The iterator of `where(condition, self, other, out=out)` and the result type: `self` and
/// `other` are converted to their result type, which `out` must already have; the three inputs
/// broadcast together and `out` is resized to the broadcast shape. All the Meta kernels do.
pub(crate) fn where_iter(
    condition: &Tensor,
    self_: &Tensor,
    other: &Tensor,
    out: &Tensor,
) -> Result<(TensorIterator, DType)> {
    let rt = result_type(&[Arg::Tensor(self_), Arg::Tensor(other)]);
    if out.dtype() != rt {
        return Err(Error::dtype(format!(
            "Expected out type to be {} but got {}",
            scalar_type_name(rt),
            scalar_type_name(out.dtype())
        )));
    }
    let device = out.device();
    let a = to_device_if_cpu_scalar(to_dtype(self_, rt)?, device)?;
    let b = to_device_if_cpu_scalar(to_dtype(other, rt)?, device)?;
    // uint8 masks are still accepted by PyTorch (deprecated, with a warning): they are read as
    // `mask != 0`.
    let c = if condition.dtype() == DType::U8 { to_dtype(condition, DType::Bool)? } else { condition.clone() };
    if c.dtype() != DType::Bool {
        return Err(Error::dtype(format!(
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            scalar_type_name(c.dtype())
        )));
    }
    let c = to_device_if_cpu_scalar(c, device)?;
    let iter = TensorIteratorConfig::new()
        .check_all_same_dtype(false)
        .add_output(out)
        .add_input(&c)
        .add_input(&a)
        .add_input(&b)
        .build()?;
    Ok((iter, rt))
}

/// `where(condition, self, other, out=out)` on the CPU: the iterator, then the select loop.
fn where_into(condition: &Tensor, self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<()> {
    let (iter, rt) = where_iter(condition, self_, other, out)?;
    match_dtype!(rt, T => cpu_kernel_ternary::<bool, T, T, T>(&iter, |c, a, b| if c { a } else { b }));
    Ok(())
}

/// Functional `where`'s result: the promoted dtype, allocated empty (the iterator gives it the
/// broadcast shape).
pub(crate) fn where_output(condition: &Tensor, self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    let rt = result_type(&[Arg::Tensor(self_), Arg::Tensor(other)]);
    Tensor::empty(&[0], rt, where_device(condition, self_, other), MemoryFormat::Contiguous)
}

impl WhereSelfCpu for Cpu {
    fn where_self(condition: &Tensor, self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        let out = where_output(condition, self_, other)?;
        where_into(condition, self_, other, &out)?;
        Ok(out)
    }
}

impl WhereSelfMeta for Meta {
    fn where_self(condition: &Tensor, self_: &Tensor, other: &Tensor) -> Result<Tensor> {
        let out = where_output(condition, self_, other)?;
        where_iter(condition, self_, other, &out)?;
        Ok(out)
    }
}

impl WhereSelfOutCpu for Cpu {
    fn where_self_out(condition: &Tensor, self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
        where_into(condition, self_, other, out)?;
        Ok(out.clone())
    }
}

impl WhereSelfOutMeta for Meta {
    fn where_self_out(condition: &Tensor, self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
        where_iter(condition, self_, other, out)?;
        Ok(out.clone())
    }
}

/// A 0-dim tensor holding `s` in `dtype` on `device`: a scalar branch of `where`, already in the
/// dtype the scalar promoted to as a wrapped number (so `where(c, int_tensor, 2.5)` is float).
fn where_branch(s: Scalar, dtype: DType, device: Device) -> Result<Tensor> {
    ops::full::call(&[], s, Some(dtype), None, Some(device), None)
}

impl WhereScalarOtherCompositeImplicit for Composite {
    fn where_scalar_other(condition: &Tensor, self_: &Tensor, other: Scalar) -> Result<Tensor> {
        let dtype = result_type(&[Arg::Tensor(self_), Arg::Scalar(other)]);
        ops::where_self::call(condition, self_, &where_branch(other, dtype, self_.device())?)
    }
}

impl WhereScalarSelfCompositeImplicit for Composite {
    fn where_scalar_self(condition: &Tensor, self_: Scalar, other: &Tensor) -> Result<Tensor> {
        let dtype = result_type(&[Arg::Scalar(self_), Arg::Tensor(other)]);
        ops::where_self::call(condition, &where_branch(self_, dtype, other.device())?, other)
    }
}

impl WhereScalarCompositeImplicit for Composite {
    fn where_scalar(condition: &Tensor, self_: Scalar, other: Scalar) -> Result<Tensor> {
        let dtype = result_type(&[Arg::Scalar(self_), Arg::Scalar(other)]);
        let device = condition.device();
        ops::where_self::call(condition, &where_branch(self_, dtype, device)?, &where_branch(other, dtype, device)?)
    }
}

// ---------------------------------------------------------------------------------------------
// logical_not
// ---------------------------------------------------------------------------------------------

/// `logical_not(self)`: a bool result, computed by the `out=` overload (as in PyTorch, so a
/// backend only has to provide `logical_not.out`).
impl LogicalNotCompositeExplicit for Composite {
    fn logical_not(self_: &Tensor) -> Result<Tensor> {
        let out = oxten_runtime::ops::empty::call(&[0], Some(DType::Bool), None, Some(self_.device()), None, None)?;
        oxten_runtime::ops::logical_not_out::call(self_, &out)
    }
}

/// Writes `x == 0` for every element of `self_` into `out` (resized to `self_`'s shape), cast
/// to `out`'s dtype: a bool `out` is written directly; any other dtype receives the 0/1 values
/// through a bool temporary, which keeps the loop to one instantiation per input dtype.
fn logical_not_into(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    let iter = logical_not_iter(self_, out)?;
    if out.dtype() == DType::Bool {
        logical_not_loop(&iter, self_.dtype());
    } else {
        let tmp = Tensor::empty(&out.sizes(), DType::Bool, Device::Cpu, MemoryFormat::Contiguous)?;
        let iter = TensorIteratorConfig::new().check_all_same_dtype(false).add_output(&tmp).add_input(self_).build()?;
        logical_not_loop(&iter, self_.dtype());
        copy_(out, &tmp)?;
    }
    Ok(out.clone())
}

/// The iterator of `logical_not(self, out=out)`: `out` resized to `self`'s shape, any dtypes
/// (all the Meta kernel does).
fn logical_not_iter(self_: &Tensor, out: &Tensor) -> Result<TensorIterator> {
    TensorIteratorConfig::new().check_all_same_dtype(false).add_output(out).add_input(self_).build()
}

/// The `bool <- x == 0` loop; NaN is nonzero, so `logical_not(nan)` is false.
fn logical_not_loop(iter: &TensorIterator, dtype: DType) {
    match_dtype!(dtype, T => {
        let zero = <T as Element>::from_f64(0.0);
        cpu_kernel_unary::<T, bool>(iter, move |x| x == zero)
    })
}

impl LogicalNotOutCpu for Cpu {
    fn logical_not_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
        logical_not_into(self_, out)
    }
}

impl LogicalNotOutMeta for Meta {
    fn logical_not_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
        logical_not_iter(self_, out)?;
        Ok(out.clone())
    }
}
