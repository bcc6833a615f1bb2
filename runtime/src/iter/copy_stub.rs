//! The element-copy loop of each device type, registered by its backend (PyTorch's
//! `copy_stub`, one of its `DispatchStub`s): what this device-agnostic module runs when it
//! moves elements itself — converting operands to the common dtype before a kernel and copying
//! cast results back after it — without knowing any device's loops.

use crate::device::DeviceType;
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::Tensor;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Copies `src` (broadcast to `dst`'s shape, converted to its dtype) into `dst`, both on the
/// stub's device.
pub type CopyStub = fn(dst: &Tensor, src: &Tensor) -> Result<()>;

static STUBS: [AtomicPtr<()>; DeviceType::COUNT] = [const { AtomicPtr::new(std::ptr::null_mut()) }; DeviceType::COUNT];

/// Registers the copy loop of `device_type` (its backend does, when it registers its kernels).
pub fn register_copy_stub(device_type: DeviceType, f: CopyStub) {
    STUBS[device_type.index()].store(f as *mut (), Ordering::Release);
}

/// Copies `src` into `dst` with the copy loop of `dst`'s device; through the dispatcher's
/// `copy_` when the backend registered none.
pub fn copy_stub(dst: &Tensor, src: &Tensor) -> Result<()> {
    let p = STUBS[dst.device().device_type().index()].load(Ordering::Acquire);
    if p.is_null() {
        return crate::ops::copy_::call(dst, src, false).map(drop);
    }
    // SAFETY: a non-null slot holds a `CopyStub` stored by `register_copy_stub`.
    let f: CopyStub = unsafe { std::mem::transmute::<*mut (), CopyStub>(p) };
    f(dst, src)
}

/// `t.to(dtype)`: `t` itself when the dtype already matches, else a copy on the same device
/// that keeps a dense layout (otherwise takes the suggested memory format), made by the device's
/// copy loop.
pub fn to_dtype(t: &Tensor, dtype: DType) -> Result<Tensor> {
    if t.dtype() == dtype {
        return Ok(t.clone());
    }
    let l = t.layout();
    let out = if l.is_non_overlapping_and_dense() {
        Tensor::empty_strided_deferred(&l.sizes, &l.strides, dtype, t.device())?
    } else {
        Tensor::empty_deferred(&l.sizes, dtype, t.device(), l.suggest_memory_format())?
    };
    copy_stub(&out, t)?;
    Ok(out)
}
