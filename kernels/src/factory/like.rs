//! The `*_like` factories: a new tensor with `self`'s sizes, and by default its dtype, device
//! and memory layout.

use super::infer_dense_strides;
use crate::generated::decls::{
    EmptyLikeCompositeExplicit, FullLikeCompositeExplicit, OnesLikeCompositeExplicit, ZerosLikeCompositeExplicit,
};
use oxten_runtime::{ops, DType, Device, Layout, MemoryFormat, Result, Scalar, Tensor};

/// Allocates a tensor with `self_`'s sizes in `memory_format`, where `None` means
/// `preserve_format`: a non-overlapping and dense `self_` has its strides copied exactly
/// (channels-last, transposed … all survive); any other layout (sliced, expanded) gets the dense
/// strides that keep its dim order (`infer_dense_strides`). An explicit format is used as is.
pub(crate) fn empty_preserving(
    self_: &Tensor,
    dtype: DType,
    layout: Option<Layout>,
    device: Device,
    pin_memory: Option<bool>,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    let l = self_.layout();
    match memory_format.unwrap_or(MemoryFormat::Preserve) {
        MemoryFormat::Preserve => {
            let strides = if l.is_non_overlapping_and_dense() {
                l.strides.to_vec()
            } else {
                infer_dense_strides(&l.sizes, &l.strides)
            };
            ops::empty_strided::call(&l.sizes, &strides, Some(dtype), layout, Some(device), pin_memory)
        }
        format => ops::empty::call(&l.sizes, Some(dtype), layout, Some(device), pin_memory, Some(format)),
    }
}

impl EmptyLikeCompositeExplicit for crate::Composite {
    /// An uninitialised (zero-filled in oxten) tensor like `self`; see `empty_preserving` for
    /// the layout.
    fn empty_like(
        self_: &Tensor,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        empty_preserving(
            self_,
            dtype.unwrap_or(self_.dtype()),
            layout,
            device.unwrap_or(self_.device()),
            pin_memory,
            memory_format,
        )
    }
}

impl ZerosLikeCompositeExplicit for crate::Composite {
    /// `empty_like` then `zero_`.
    fn zeros_like(
        self_: &Tensor,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        let t = ops::empty_like::call(self_, dtype, layout, device, pin_memory, memory_format)?;
        ops::zero_::call(&t)
    }
}

impl OnesLikeCompositeExplicit for crate::Composite {
    /// `empty_like` then `fill_(1)`.
    fn ones_like(
        self_: &Tensor,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        let t = ops::empty_like::call(self_, dtype, layout, device, pin_memory, memory_format)?;
        ops::fill_scalar_::call(&t, Scalar::Int(1))
    }
}

impl FullLikeCompositeExplicit for crate::Composite {
    /// `empty_like` then `fill_(fill_value)`. The dtype comes from `self` (or `dtype`), never
    /// from the fill value, unlike `full`.
    fn full_like(
        self_: &Tensor,
        fill_value: Scalar,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        let t = ops::empty_like::call(self_, dtype, layout, device, pin_memory, memory_format)?;
        ops::fill_scalar_::call(&t, fill_value)
    }
}
