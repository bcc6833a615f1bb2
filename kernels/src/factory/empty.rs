//! `empty.memory_format` and `empty_strided` for CPU and meta (and `empty_permuted` over them): the allocations every other
//! factory is built on.

use crate::generated::decls::{EmptyCpu, EmptyMeta, EmptyPermutedCompositeExplicit, EmptyStridedCpu, EmptyStridedMeta};
use crate::views::check_sizes_nonnegative;
use oxten_runtime::dtype::DEFAULT_FLOAT;
use oxten_runtime::{DType, Device, Error, Layout, MemoryFormat, Result, Tensor};

/// Rejects layouts other than strided (the only kind of tensor oxten has).
pub(super) fn check_strided(layout: Option<Layout>) -> Result<()> {
    match layout {
        Some(l) if l != Layout::Strided => {
            Err(Error::value(format!("only strided tensors can be created here, got layout {l:?}")))
        }
        _ => Ok(()),
    }
}

/// CPU tensors cannot be pinned: pinning needs an accelerator's host allocator, and oxten has
/// none. Meta allocations ignore the flag, as PyTorch's meta `empty` does.
pub(super) fn check_not_pinned(pin_memory: Option<bool>) -> Result<()> {
    if pin_memory == Some(true) {
        return Err(Error::value("Need to provide pin_memory allocator to use pin memory."));
    }
    Ok(())
}

/// `empty` on `device` with PyTorch's defaults (default float dtype, row-major) and its errors
/// for negative sizes, `preserve_format` (there is no input whose format could be preserved)
/// and channels-last formats on the wrong rank.
pub(super) fn empty_on(
    size: &[i64],
    dtype: Option<DType>,
    format: Option<MemoryFormat>,
    device: Device,
) -> Result<Tensor> {
    check_sizes_nonnegative(size)?;
    let format = format.unwrap_or(MemoryFormat::Contiguous);
    match format {
        MemoryFormat::Preserve => return Err(Error::value("unsupported memory format option Preserve")),
        MemoryFormat::ChannelsLast if size.len() != 4 => {
            return Err(Error::value("required rank 4 tensor to use channels_last format"))
        }
        MemoryFormat::ChannelsLast3d if size.len() != 5 => {
            return Err(Error::value("required rank 5 tensor to use channels_last_3d format"))
        }
        _ => {}
    }
    let dtype = dtype.unwrap_or(DEFAULT_FLOAT);
    // On the CPU the storage is deferred: it still reads as zeros, but a kernel that overwrites
    // it (a copy, an elementwise op into `out=`) writes it once instead of after a memset.
    if device == Device::Cpu {
        return Tensor::empty_deferred(size, dtype, device, format);
    }
    Tensor::empty(size, dtype, device, format)
}

/// `empty_strided` on `device`: sizes and strides must have one entry per dim.
pub(super) fn empty_strided_on(size: &[i64], stride: &[i64], dtype: Option<DType>, device: Device) -> Result<Tensor> {
    check_sizes_nonnegative(size)?;
    if size.len() != stride.len() {
        return Err(Error::shape(format!(
            "dimensionality of sizes ({}) must match dimensionality of strides ({})",
            size.len(),
            stride.len()
        )));
    }
    let dtype = dtype.unwrap_or(DEFAULT_FLOAT);
    if device == Device::Cpu {
        return Tensor::empty_strided_deferred(size, stride, dtype, device);
    }
    Tensor::empty_strided(size, stride, dtype, device)
}

impl EmptyCpu for crate::Cpu {
    /// A CPU tensor of `size` laid out in `memory_format` (row-major by default). oxten's
    /// storage is zero-initialised, so "uninitialised" data reads as zeros.
    fn empty(
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        _device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        check_strided(layout)?;
        check_not_pinned(pin_memory)?;
        empty_on(size, dtype, memory_format, Device::Cpu)
    }
}

impl EmptyMeta for crate::Meta {
    /// A meta tensor: sizes, strides and dtype, no data.
    fn empty(
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        _device: Option<Device>,
        _pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        check_strided(layout)?;
        empty_on(size, dtype, memory_format, Device::Meta)
    }
}

impl EmptyStridedCpu for crate::Cpu {
    /// A CPU tensor with exactly these strides, backed by just enough storage for them.
    fn empty_strided(
        size: &[i64],
        stride: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        _device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        check_strided(layout)?;
        check_not_pinned(pin_memory)?;
        empty_strided_on(size, stride, dtype, Device::Cpu)
    }
}

impl EmptyStridedMeta for crate::Meta {
    /// A meta tensor with exactly these strides.
    fn empty_strided(
        size: &[i64],
        stride: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        _device: Option<Device>,
        _pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        check_strided(layout)?;
        empty_strided_on(size, stride, dtype, Device::Meta)
    }
}

impl EmptyPermutedCompositeExplicit for crate::Composite {
    /// `empty` of the shape in memory order (`size[physical_layout[i]]`), permuted back to
    /// `size`: dimension `physical_layout[0]` is outermost, with PyTorch's checks.
    fn empty_permuted(
        size: &[i64],
        physical_layout: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        let n = size.len();
        if physical_layout.len() != n {
            return Err(Error::runtime(format!(
                "Number of dimensions in size does not match the length of the physical_layout; i.e. len(size) = {n} is not equal to len(physical_layout) = {}",
                physical_layout.len()
            )));
        }
        let mut seen = vec![false; n];
        let mut inverse = vec![0i64; n];
        for (i, &d) in physical_layout.iter().enumerate() {
            if d < 0 || d as usize >= n {
                return Err(Error::index(format!(
                    "Dimension out of range (expected to be between 0 and {}, but got {d} at index {i}).  NB: negative dims not currently supported; file an issue if you want it.",
                    n as i64 - 1
                )));
            }
            if std::mem::replace(&mut seen[d as usize], true) {
                return Err(Error::runtime("Duplicate dim not allowed"));
            }
            inverse[d as usize] = i as i64;
        }
        let physical: Vec<i64> = physical_layout.iter().map(|&d| size[d as usize]).collect();
        let t = oxten_runtime::ops::empty::call(&physical, dtype, layout, device, pin_memory, None)?;
        oxten_runtime::ops::permute::call(&t, &inverse)
    }
}
