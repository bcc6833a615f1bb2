//! The CUDA device runtime: whether a GPU is there, one driver context per device, the current
//! stream of each device on each thread, events, and the caching allocator registered for
//! [`DeviceType::Cuda`].
//!
//! Everything goes through `cudarc` with dynamic loading: building needs no CUDA toolkit, and on
//! a machine without the driver [`is_available`] answers false instead of failing to start.

mod allocator;
mod stream;

pub use allocator::{
    empty_cache, max_memory_allocated, memory_allocated, memory_reserved, memory_stats, record_stream,
    reset_peak_memory_stats, CudaAllocator, ALLOCATOR,
};
pub use stream::{current_stream, set_current_stream, synchronize, Event, Stream, StreamGuard};

use crate::device::Device;
use crate::error::{Error, Result};
pub use cudarc::driver::sys as driver_sys;
use cudarc::driver::{result as drv, CudaContext, DriverError};
use std::cell::Cell;
use std::sync::{Arc, OnceLock};

/// Devices oxten addresses (`Device::Cuda(index)` with `index < MAX_DEVICES`).
pub const MAX_DEVICES: usize = 16;

/// Why CUDA cannot be used here, or `None` when it can.
fn unavailable_reason() -> &'static Option<String> {
    static REASON: OnceLock<Option<String>> = OnceLock::new();
    REASON.get_or_init(|| {
        // SAFETY: only asks whether the dynamic loader finds the library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Some("the CUDA driver library (libcuda.so) was not found by the dynamic loader".into());
        }
        if let Err(e) = drv::init() {
            return Some(format!("cuInit failed: {}", describe(e)));
        }
        match drv::device::get_count() {
            Ok(0) => Some("the CUDA driver reports no devices".into()),
            Ok(_) => None,
            Err(e) => Some(format!("cuDeviceGetCount failed: {}", describe(e))),
        }
    })
}

/// Whether a CUDA device can be used (`torch.cuda.is_available()`).
pub fn is_available() -> bool {
    unavailable_reason().is_none()
}

/// The number of CUDA devices (0 without a driver). Asked of the driver once: copies ask it to
/// find the device of an address.
pub fn device_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        if !is_available() {
            return 0;
        }
        drv::device::get_count().map_or(0, |n| (n as usize).min(MAX_DEVICES))
    })
}

/// Why [`is_available`] is false, for skip messages.
pub fn unavailable_because() -> Option<&'static str> {
    unavailable_reason().as_deref()
}

/// A driver error's name and description.
pub fn describe(e: DriverError) -> String {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if text.is_empty() {
        name
    } else {
        format!("{name} ({text})")
    }
}

/// An [`Error`] for a failed driver call.
pub fn driver_error(what: &str, e: DriverError) -> Error {
    Error::runtime(format!("CUDA error in {what}: {}", describe(e)))
}

fn device_index(device: Device) -> Result<usize> {
    match device {
        Device::Cuda(i) if (i as usize) < MAX_DEVICES => Ok(i as usize),
        Device::Cuda(i) => Err(Error::device(format!("CUDA device index {i} is out of range"))),
        other => Err(Error::device(format!("expected a CUDA device, got {other}"))),
    }
}

static CONTEXTS: [OnceLock<std::result::Result<Arc<CudaContext>, String>>; MAX_DEVICES] =
    [const { OnceLock::new() }; MAX_DEVICES];

thread_local! {
    /// The device whose context is current on this thread (`usize::MAX`: none yet).
    static BOUND: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The driver context of `device` (its primary context), made current on this thread. Every
/// driver call of the backend goes through here first: PyTorch's `CUDAGuard`.
pub fn context(device: Device) -> Result<&'static Arc<CudaContext>> {
    let i = device_index(device)?;
    if let Some(why) = unavailable_because() {
        return Err(Error::device(format!("cannot use {device}: CUDA is not available ({why})")));
    }
    let ctx = CONTEXTS[i]
        .get_or_init(|| {
            let n = device_count();
            if i >= n {
                return Err(format!("{device} does not exist: the driver reports {n} device(s)"));
            }
            CudaContext::new(i).map_err(|e| format!("cannot create a context on {device}: {}", describe(e)))
        })
        .as_ref()
        .map_err(|m| Error::device(m.clone()))?;
    if BOUND.with(|b| b.get()) != i {
        ctx.bind_to_thread().map_err(|e| driver_error("cuCtxSetCurrent", e))?;
        BOUND.with(|b| b.set(i));
    }
    Ok(ctx)
}

/// The compute capability (`(9, 0)` for an H100) of `device`.
pub fn compute_capability(device: Device) -> Result<(i32, i32)> {
    context(device)?.compute_capability().map_err(|e| driver_error("cuDeviceGetAttribute", e))
}

/// The device's name as the driver reports it.
pub fn device_name(device: Device) -> Result<String> {
    context(device)?.name().map_err(|e| driver_error("cuDeviceGetName", e))
}
