//! The allocator registered for CUDA tensors: one [`CachingAllocator`] per device over the
//! driver (`cuMemAlloc` segments), and host↔device copies on the current stream.

use super::{context, current_stream, device_index, driver_error, MAX_DEVICES};
use crate::alloc::caching::{CachingAllocator, MemoryStats, SegmentProvider};
use crate::alloc::{Allocator, DataPtr};
use crate::device::Device;
use crate::error::Result;
use cudarc::driver::{result as drv, sys};
use std::sync::OnceLock;

/// Segments straight from the driver of one device.
pub struct DriverSegments {
    device: Device,
}

impl SegmentProvider for DriverSegments {
    fn alloc(&self, nbytes: usize) -> Result<Option<u64>> {
        context(self.device)?;
        // SAFETY: the context is current; the memory is handed out uninitialised as bytes.
        match unsafe { drv::malloc_sync(nbytes) } {
            Ok(p) => Ok(Some(p)),
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => Ok(None),
            Err(e) => Err(driver_error("cuMemAlloc", e)),
        }
    }
    fn free(&self, ptr: u64, _nbytes: usize) {
        if context(self.device).is_ok() {
            // SAFETY: `ptr` is a segment this provider allocated, released once by the caching
            // allocator when no block of it is in use.
            let _ = unsafe { drv::free_sync(ptr) };
        }
    }
    fn record_event(&self, stream: u64) -> Result<u64> {
        context(self.device)?;
        let ev = drv::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(|e| driver_error("cuEventCreate", e))?;
        // SAFETY: a fresh event and a live stream of this context.
        unsafe { drv::event::record(ev, stream as sys::CUstream) }.map_err(|e| driver_error("cuEventRecord", e))?;
        Ok(ev as u64)
    }
    fn event_done(&self, event: u64) -> bool {
        // SAFETY: `event` came from `record_event` and is not destroyed yet.
        context(self.device).is_ok() && unsafe { drv::event::query(event as sys::CUevent) }.is_ok()
    }
    fn destroy_event(&self, event: u64) {
        // SAFETY: as above; not used afterwards.
        let _ = unsafe { drv::event::destroy(event as sys::CUevent) };
    }
    fn mem_info(&self) -> Option<(usize, usize)> {
        context(self.device).ok()?;
        drv::mem_get_info().ok()
    }
}

static POOLS: [OnceLock<CachingAllocator<DriverSegments>>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];

fn pool(device: Device) -> Result<&'static CachingAllocator<DriverSegments>> {
    let i = device_index(device)?;
    Ok(POOLS[i].get_or_init(|| CachingAllocator::new(DriverSegments { device })))
}

/// The allocator of CUDA memory (registered for `DeviceType::Cuda` by the CUDA backend).
pub struct CudaAllocator;

/// The one instance.
pub static ALLOCATOR: CudaAllocator = CudaAllocator;

/// Frees a block into its device's cache; `ctx` holds the device index.
///
/// # Safety
/// Called by `DataPtr`'s drop with the address `allocate` returned.
unsafe fn free_block(ptr: *mut u8, _nbytes: usize, ctx: *mut ()) {
    if let Some(p) = POOLS.get(ctx as usize).and_then(|p| p.get()) {
        p.free(ptr as u64);
    }
}

impl Allocator for CudaAllocator {
    fn allocate(&self, nbytes: usize, device: Device) -> Result<DataPtr> {
        let i = device_index(device)?;
        if nbytes == 0 {
            context(device)?;
            return Ok(DataPtr::without_data(std::ptr::null_mut(), 0, device));
        }
        let p = pool(device)?.malloc(nbytes, current_stream(device).id())?;
        // SAFETY: `free_block` returns the block to the pool it came from, from any thread.
        Ok(unsafe { DataPtr::new(p as *mut u8, nbytes, device, i as *mut (), Some(free_block)) })
    }

    unsafe fn memset(&self, dst: *mut u8, value: u8, nbytes: usize) -> Result<()> {
        if nbytes == 0 {
            return Ok(());
        }
        let device = device_of(dst)?;
        context(device)?;
        // SAFETY: the caller's contract: `dst` has `nbytes` of this allocator's memory.
        unsafe { drv::memset_d8_async(dst as u64, value, nbytes, current_stream(device).raw()) }
            .map_err(|e| driver_error("cuMemsetD8Async", e))
    }

    unsafe fn copy_from_host(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        if nbytes == 0 {
            return Ok(());
        }
        let device = device_of(dst)?;
        context(device)?;
        let s = current_stream(device);
        // SAFETY: the caller's contract: `src` is `nbytes` of readable host memory, `dst` device
        // memory; the stream is synchronised before returning, so `src` may be freed after.
        unsafe {
            let host = std::slice::from_raw_parts(src, nbytes);
            drv::memcpy_htod_async(dst as u64, host, s.raw()).map_err(|e| driver_error("cuMemcpyHtoDAsync", e))?;
        }
        s.synchronize()
    }

    unsafe fn copy_to_host(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        if nbytes == 0 {
            return Ok(());
        }
        let device = device_of(src as *mut u8)?;
        context(device)?;
        let s = current_stream(device);
        // SAFETY: as above, the other way round; synchronised before the host reads `dst`.
        unsafe {
            let host = std::slice::from_raw_parts_mut(dst, nbytes);
            drv::memcpy_dtoh_async(host, src as u64, s.raw()).map_err(|e| driver_error("cuMemcpyDtoHAsync", e))?;
        }
        s.synchronize()
    }

    unsafe fn copy_on_device(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        if nbytes == 0 {
            return Ok(());
        }
        let device = device_of(dst)?;
        context(device)?;
        // SAFETY: both ranges are this allocator's memory (the caller's contract).
        unsafe { drv::memcpy_dtod_async(dst as u64, src as u64, nbytes, current_stream(device).raw()) }
            .map_err(|e| driver_error("cuMemcpyDtoDAsync", e))
    }

    fn empty_cache(&self) -> usize {
        POOLS.iter().filter_map(|p| p.get()).map(|p| p.empty_cache()).sum()
    }
}

/// The device owning a device address: the only device in the common one-GPU case; otherwise
/// the driver's pointer attribute.
fn device_of(ptr: *mut u8) -> Result<Device> {
    let n = super::device_count();
    if n <= 1 {
        return Ok(Device::Cuda(0));
    }
    let mut ordinal: i32 = 0;
    // SAFETY: queries one attribute of an address into a local of the attribute's type.
    unsafe {
        sys::cuPointerGetAttribute(
            &mut ordinal as *mut i32 as *mut std::ffi::c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            ptr as u64,
        )
        .result()
        .map_err(|e| driver_error("cuPointerGetAttribute", e))?;
    }
    Ok(Device::Cuda(ordinal as u8))
}

fn stats(device: Device) -> MemoryStats {
    device_index(device).ok().and_then(|i| POOLS[i].get()).map(|p| p.stats()).unwrap_or_default()
}

/// Bytes of `device` memory held by tensors (`torch.cuda.memory_allocated`).
pub fn memory_allocated(device: Device) -> usize {
    stats(device).allocated
}

/// Bytes of `device` memory reserved by the caching allocator (`torch.cuda.memory_reserved`).
pub fn memory_reserved(device: Device) -> usize {
    stats(device).reserved
}

/// The peak of [`memory_allocated`] since the start or the last reset.
pub fn max_memory_allocated(device: Device) -> usize {
    stats(device).peak_allocated
}

/// All of the allocator's counters for `device`.
pub fn memory_stats(device: Device) -> MemoryStats {
    stats(device)
}

/// Resets the peaks of `device` to the current values.
pub fn reset_peak_memory_stats(device: Device) {
    if let Some(p) = device_index(device).ok().and_then(|i| POOLS[i].get()) {
        p.reset_peak_stats();
    }
}

/// Releases the cached, unused memory of every device; returns the bytes released.
pub fn empty_cache() -> usize {
    ALLOCATOR.empty_cache()
}

/// Marks the block holding `ptr` (a storage's base address on `device`) as used on `stream`
/// too, so it is not reused before that stream's work up to its free has run
/// (`Tensor.record_stream`).
pub fn record_stream(ptr: *mut u8, device: Device, stream: super::Stream) {
    if let Some(p) = device_index(device).ok().and_then(|i| POOLS[i].get()) {
        p.record_stream(ptr as u64, stream.id());
    }
}
