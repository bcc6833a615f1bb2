//! `copy_` on CUDA: within a device a dtype-converting, broadcasting, strided copy (the
//! pointwise machinery with the identity expression, or one `cuMemcpyDtoD` when both sides are
//! contiguous and of one dtype), and the copies between the host and the device.

use crate::cuda::pointwise::{launch_pointwise_in, PointwiseKernel};
use crate::generated::decls::CopyInplaceCuda;
use oxten_runtime::iter::{get_overlap_status, MemOverlapStatus};
use oxten_runtime::{alloc, Device, Error, MemoryFormat, Result, Tensor, TensorIteratorConfig};

static COPY: PointwiseKernel =
    PointwiseKernel { op: "copy_", expr: "a1", arity: 1, float_only: false, int_only: false, bool_ok: true };

impl CopyInplaceCuda for crate::Cuda {
    /// Copies `src` into `self`. Across devices (other than from a 0-dim CPU scalar) through the
    /// copy kernel registered for the pair; copies from the host are synchronous, as
    /// `non_blocking` only matters for pinned memory, which oxten does not allocate yet.
    fn copy_(self_: &Tensor, src: &Tensor, non_blocking: bool) -> Result<Tensor> {
        if self_.device() != src.device() && !(src.dim() == 0 && src.device() == Device::Cpu) {
            alloc::copy_between(self_, src, non_blocking)?;
        } else {
            copy_same_device(self_, src)?;
        }
        Ok(self_.clone())
    }
}

/// Copies `src` (same device, or a 0-dim CPU tensor) into `dst`, broadcasting and converting.
/// Also the CUDA copy stub of the TensorIterator.
pub fn copy_same_device(dst: &Tensor, src: &Tensor) -> Result<()> {
    if dst.is_same(src) || dst.numel() == 0 {
        return Ok(());
    }
    oxten_runtime::iter::assert_no_internal_overlap(dst)?;
    let tmp;
    let src = match get_overlap_status(dst, src) {
        MemOverlapStatus::No => src,
        MemOverlapStatus::Full if dst.dtype() == src.dtype() && dst.sizes() == src.sizes() => return Ok(()),
        _ => {
            tmp = Tensor::empty(&src.sizes(), src.dtype(), src.device(), MemoryFormat::Contiguous)?;
            copy_same_device(&tmp, src)?;
            &tmp
        }
    };
    if src.device() != Device::Cpu
        && dst.dtype() == src.dtype()
        && dst.sizes() == src.sizes()
        && dst.is_contiguous()
        && src.is_contiguous()
    {
        let n = dst.numel() as usize * dst.dtype().size();
        let a = alloc::allocator_for(dst.device())?;
        // SAFETY: both tensors are contiguous with `n` bytes of device memory from their
        // element 0, checked against their storages when built, and do not overlap (above);
        // every byte of `dst` is written.
        unsafe {
            let (d, deferred) = dst.data_ptr_for_overwrite();
            a.copy_on_device(d, src.data_ptr(), n)?;
            if deferred {
                dst.storage().assume_init();
            }
        }
        return Ok(());
    }
    let iter = TensorIteratorConfig::new()
        .add_output(dst)
        .add_input(src)
        .resize_outputs(false)
        .check_all_same_dtype(false)
        .check_all_same_device(false)
        .check_mem_overlap(false)
        .build()?;
    launch_pointwise_in(&iter, &COPY, &[], src.dtype())
}

/// CPU → CUDA: the host converts, broadcasts and lays out the values, the device receives them
/// in one copy (into `dst` itself when it is contiguous).
pub fn copy_from_cpu(dst: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<()> {
    check_devices(dst, src)?;
    let staged = src.try_expand(&dst.sizes())?.try_to_dtype(dst.dtype())?.try_contiguous()?;
    let n = dst.numel() as usize * dst.dtype().size();
    let target = if dst.is_contiguous() {
        dst.clone()
    } else {
        Tensor::empty(&dst.sizes(), dst.dtype(), dst.device(), MemoryFormat::Contiguous)?
    };
    let a = alloc::allocator_for(dst.device())?;
    // SAFETY: `staged` is `n` contiguous host bytes, `target` `n` contiguous device bytes from
    // its element 0 (layouts checked against their storages); all of them are written.
    unsafe {
        let (d, deferred) = target.data_ptr_for_overwrite();
        a.copy_from_host(d, staged.data_ptr(), n)?;
        if deferred {
            target.storage().assume_init();
        }
    }
    if !dst.is_same(&target) {
        copy_same_device(dst, &target)?;
    }
    Ok(())
}

/// CUDA → CPU: the device makes the values contiguous, one copy brings them to the host, and
/// the CPU's `copy_` converts and lays them out in `dst`.
pub fn copy_to_cpu(dst: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<()> {
    check_devices(src, dst)?;
    let dense = if src.is_contiguous() {
        src.clone()
    } else {
        let t = Tensor::empty(&src.sizes(), src.dtype(), src.device(), MemoryFormat::Contiguous)?;
        copy_same_device(&t, src)?;
        t
    };
    let host = Tensor::empty(&src.sizes(), src.dtype(), Device::Cpu, MemoryFormat::Contiguous)?;
    let n = src.numel() as usize * src.dtype().size();
    let a = alloc::allocator_for(src.device())?;
    // SAFETY: `dense` holds `n` contiguous device bytes, `host` `n` contiguous host bytes; all
    // of `host` is written before it is read.
    unsafe {
        let (h, deferred) = host.data_ptr_for_overwrite();
        a.copy_to_host(h, dense.data_ptr(), n)?;
        if deferred {
            host.storage().assume_init();
        }
    }
    dst.try_copy_(&host)?;
    Ok(())
}

fn check_devices(cuda: &Tensor, cpu: &Tensor) -> Result<()> {
    match (cuda.device(), cpu.device()) {
        (Device::Cuda(_), Device::Cpu) => Ok(()),
        (a, b) => Err(Error::device(format!("copy_: expected a CUDA and a CPU tensor, got {a} and {b}"))),
    }
}
