//! Conversions: `_to_copy` (always a new tensor) and `to.dtype` (an alias when nothing changes).

use crate::factory::empty_preserving;
use crate::generated::decls::{ToCopyCompositeExplicit, ToDtypeCompositeImplicit, ToDtypeLayoutCompositeImplicit};
use oxten_runtime::{ops, DType, Device, Error, Layout, MemoryFormat, Result, Tensor};

impl ToCopyCompositeExplicit for crate::Composite {
    /// A copy of `self` with another dtype and/or device. With `memory_format` None
    /// (preserve), dense layouts keep their exact strides and others get dense strides in the
    /// same dim order. `pin_memory` is ignored: PyTorch only pins the result of an asynchronous
    /// copy from an accelerator, which oxten cannot make.
    fn _to_copy(
        self_: &Tensor,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        _pin_memory: Option<bool>,
        non_blocking: bool,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        if let Some(l) = layout.filter(|&l| l != Layout::Strided) {
            return Err(Error::value(format!(
                "to(options) doesn't support converting to a different layout, but got self.layout being \
                 Strided and options.layout set as {l:?}"
            )));
        }
        let out = empty_preserving(
            self_,
            dtype.unwrap_or(self_.dtype()),
            layout,
            device.unwrap_or(self_.device()),
            None,
            memory_format,
        )?;
        ops::copy_::call(&out, self_, non_blocking)?;
        Ok(out)
    }
}

/// `self.to(...)`: `self` itself (the same tensor, not a copy) when the dtype and device already
/// match, `copy` is false and the requested memory format is preserve or the one `self`
/// already suggests; otherwise `_to_copy`.
#[allow(clippy::too_many_arguments)]
fn to_impl(
    self_: &Tensor,
    dtype: Option<DType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
    non_blocking: bool,
    copy: bool,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    let format = memory_format.unwrap_or(MemoryFormat::Preserve);
    let format_ok = format == MemoryFormat::Preserve || self_.suggest_memory_format() == format;
    let same = !matches!(dtype, Some(d) if d != self_.dtype())
        && !matches!(device, Some(d) if d != self_.device())
        && !matches!(layout, Some(l) if l != Layout::Strided);
    if same && !copy && format_ok {
        return Ok(self_.clone());
    }
    ops::_to_copy::call(self_, dtype, layout, device, pin_memory, non_blocking, memory_format)
}

impl ToDtypeCompositeImplicit for crate::Composite {
    fn to_dtype(
        self_: &Tensor,
        dtype: DType,
        non_blocking: bool,
        copy: bool,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        to_impl(self_, Some(dtype), None, None, None, non_blocking, copy, memory_format)
    }
}

impl ToDtypeLayoutCompositeImplicit for crate::Composite {
    #[allow(clippy::too_many_arguments)]
    fn to_dtype_layout(
        self_: &Tensor,
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        non_blocking: bool,
        copy: bool,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        to_impl(self_, dtype, layout, device, pin_memory, non_blocking, copy, memory_format)
    }
}
