//! Constant fills: `fill_` (the kernel), `zero_` and `zero`, and the factories built on them (`zeros`,
//! `ones`, `full`).

use super::{scalar_to, ScalarElem};
use crate::generated::decls::{
    FillInplaceCpu, FillInplaceMeta, FullCompositeExplicit, OnesCompositeExplicit, ZeroCompositeExplicit,
    ZeroInplaceCompositeExplicit, ZerosCompositeExplicit,
};
use crate::iter::{cpu_kernel_nullary, has_internal_overlap, MemOverlap, TensorIteratorConfig, GRAIN_SIZE};
use oxten_runtime::dtype::DEFAULT_FLOAT;
use oxten_runtime::{match_dtype, ops, DType, Device, Layout, Result, Scalar, Tensor};

impl FillInplaceCpu for crate::Cpu {
    /// Writes `value`, converted to `self`'s dtype with PyTorch's overflow check, into every
    /// element of `self`, whatever its strides.
    ///
    /// Like PyTorch, a `self` whose elements share memory (an expanded tensor) is allowed:
    /// filling is idempotent, so writing a location twice gives the same result.
    fn fill_(self_: &Tensor, value: Scalar) -> Result<Tensor> {
        match_dtype!(self_.dtype(), T => fill_typed::<T>(self_, scalar_to::<T>(value)?)?);
        Ok(self_.clone())
    }
}

impl FillInplaceMeta for crate::Meta {
    /// Nothing to write on meta; PyTorch's meta kernel does not even check the value.
    fn fill_(self_: &Tensor, _value: Scalar) -> Result<Tensor> {
        Ok(self_.clone())
    }
}

/// Fills `t` with `v`. Overlapping layouts are first reduced to the memory they actually touch
/// (broadcast dims collapsed to size 1), and whatever still overlaps is filled in pieces small
/// enough to run on one thread, so no two threads ever write the same element.
fn fill_typed<T: ScalarElem>(t: &Tensor, v: T) -> Result<()> {
    let t = without_broadcast_dims(t)?;
    if t.numel() >= GRAIN_SIZE as i64 && has_internal_overlap(&t) != MemOverlap::No {
        // numel > 1 here, so there is a dim to split along.
        for i in 0..t.size(0)? {
            fill_typed(&t.try_select(0, i)?, v)?;
        }
        return Ok(());
    }
    let iter = TensorIteratorConfig::new()
        .check_mem_overlap(false)
        .check_all_same_dtype(false)
        .add_output(&t)
        .resize_outputs(false)
        .build()?;
    cpu_kernel_nullary::<T>(&iter, move || v);
    Ok(())
}

/// `t` with every stride-0 dim shrunk to size 1: the same memory locations, each once per
/// remaining index.
fn without_broadcast_dims(t: &Tensor) -> Result<Tensor> {
    let l = t.layout();
    if !l.strides.contains(&0) {
        return Ok(t.clone());
    }
    let sizes: Vec<i64> =
        l.sizes.iter().zip(l.strides.iter()).map(|(&n, &s)| if s == 0 { n.min(1) } else { n }).collect();
    t.alias_with_layout(&sizes, &l.strides, l.offset)
}

impl ZeroInplaceCompositeExplicit for crate::Composite {
    /// `fill_(0)`.
    fn zero_(self_: &Tensor) -> Result<Tensor> {
        ops::fill_scalar_::call(self_, Scalar::Int(0))
    }
}

impl ZeroCompositeExplicit for crate::Composite {
    /// `zeros_like(self)`: PyTorch's `zero` is `clone` then `zero_`, which keeps the strides.
    fn zero(self_: &Tensor) -> Result<Tensor> {
        ops::zeros_like::call(self_, None, None, None, None, None)
    }
}

impl ZerosCompositeExplicit for crate::Composite {
    /// `empty` then `zero_`.
    fn zeros(
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let t = ops::empty::call(size, dtype, layout, device, pin_memory, None)?;
        ops::zero_::call(&t)
    }
}

impl OnesCompositeExplicit for crate::Composite {
    /// `full(size, 1)` with the default float dtype unless one is given (the fill value does not
    /// choose the dtype here, unlike `full`).
    fn ones(
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let t = ops::empty::call(size, dtype, layout, device, pin_memory, None)?;
        ops::fill_scalar_::call(&t, Scalar::Int(1))
    }
}

impl FullCompositeExplicit for crate::Composite {
    /// A tensor of `size` filled with `fill_value`. Without `dtype`, the value's kind picks it:
    /// bool → bool, integer → int64, float → the default float dtype.
    fn full(
        size: &[i64],
        fill_value: Scalar,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(match fill_value {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DEFAULT_FLOAT,
        });
        let t = ops::empty::call(size, Some(dtype), layout, device, pin_memory, None)?;
        ops::fill_scalar_::call(&t, fill_value)
    }
}
