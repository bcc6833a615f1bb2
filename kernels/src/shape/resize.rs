//! `resize_` and `resize_as_` (and their functional forms `resize`, `resize_as`), on the
//! runtime's [`Tensor::resize_`]: the sizes and strides change in place and the storage grows
//! when it must, as PyTorch's `resize_`.

use crate::generated::decls::{
    ResizeAsCompositeExplicit, ResizeAsInplaceCompositeExplicit, ResizeCompositeExplicit,
    ResizeInplaceCompositeExplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, MemoryFormat, Result, Tensor};

/// PyTorch's refusal: a resized tensor that requires grad would leave its graph inconsistent.
fn check_no_grad(t: &Tensor) -> Result<()> {
    if t.requires_grad() {
        return Err(Error::runtime("cannot resize variables that require grad"));
    }
    Ok(())
}

/// `resize_` without the autograd check (the functional forms resize a fresh copy).
fn resize_in_place(t: &Tensor, size: &[i64], memory_format: Option<MemoryFormat>) -> Result<()> {
    if let Some(d) = size.iter().find(|&&d| d < 0) {
        return Err(Error::runtime(format!("Trying to create tensor with negative dimension {d}: {size:?}")));
    }
    let format = match memory_format {
        // `None` keeps the strides of unchanged sizes and makes changed ones contiguous.
        None => MemoryFormat::Preserve,
        Some(MemoryFormat::Preserve) => return Err(Error::runtime("Unsupported memory format Preserve")),
        Some(f) => f,
    };
    if format == MemoryFormat::ChannelsLast && size.len() != 4 {
        return Err(Error::runtime("required rank 4 tensor to use channels_last format"));
    }
    if format == MemoryFormat::ChannelsLast3d && size.len() != 5 {
        return Err(Error::runtime("required rank 5 tensor to use channels_last_3d format"));
    }
    t.resize_(size, format)
}

/// `resize_as_`'s steps: the template's sizes, then the requested strides.
fn resize_as_in_place(t: &Tensor, template: &Tensor, memory_format: Option<MemoryFormat>) -> Result<()> {
    resize_in_place(t, &template.sizes(), None)?;
    if let Some(f) = memory_format {
        let f = if f == MemoryFormat::Preserve { template.suggest_memory_format() } else { f };
        resize_in_place(t, &template.sizes(), Some(f))?;
    }
    Ok(())
}

impl ResizeInplaceCompositeExplicit for Composite {
    fn resize_(self_: &Tensor, size: &[i64], memory_format: Option<MemoryFormat>) -> Result<Tensor> {
        check_no_grad(self_)?;
        resize_in_place(self_, size, memory_format)?;
        Ok(self_.clone())
    }
}

impl ResizeCompositeExplicit for Composite {
    fn resize(self_: &Tensor, size: &[i64], memory_format: Option<MemoryFormat>) -> Result<Tensor> {
        let out = ops::deep_clone::call(self_, None)?;
        resize_in_place(&out, size, memory_format)?;
        Ok(out)
    }
}

impl ResizeAsInplaceCompositeExplicit for Composite {
    fn resize_as_(self_: &Tensor, the_template: &Tensor, memory_format: Option<MemoryFormat>) -> Result<Tensor> {
        check_no_grad(self_)?;
        resize_as_in_place(self_, the_template, memory_format)?;
        Ok(self_.clone())
    }
}

impl ResizeAsCompositeExplicit for Composite {
    fn resize_as(self_: &Tensor, the_template: &Tensor, memory_format: Option<MemoryFormat>) -> Result<Tensor> {
        let out = ops::deep_clone::call(self_, None)?;
        resize_as_in_place(&out, the_template, memory_format)?;
        Ok(out)
    }
}
