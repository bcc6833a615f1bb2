//! Device memory: the [`Allocator`] trait, the device-carrying [`DataPtr`], one registered
//! allocator per device type, and the registry of cross-device copy kernels.
//!
//! [`crate::Storage`] asks the allocator registered for its device for memory and keeps the
//! `DataPtr` it gets; it never looks at the device itself. The CPU ([`HostAllocator`]) and Meta
//! ([`MetaAllocator`]) allocators are registered from the start; a backend registers its own
//! with [`register_allocator`], and its copies to and from other devices with
//! [`register_copy`].

pub mod caching;
mod cross_device;
mod data_ptr;
mod host;
mod meta;

pub use cross_device::{copy_between, find_copy, register_copy, CopyFn};
pub use data_ptr::{DataPtr, DeleterFn};
pub use host::{cached_bytes, HostAllocator};
pub use meta::MetaAllocator;

#[cfg(test)]
pub(crate) use host::{cache_holds, CACHE_MAX_BYTES, CACHE_MIN};

use crate::device::{Device, DeviceType};
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Bytes of host storage kept inside the storage's own allocation instead of a separate buffer
/// (one-element tensors and other tiny ones: one allocation less per tensor).
pub(crate) const INLINE_BYTES: usize = 32;

/// Memory of one device type. Every method that takes raw addresses is `unsafe`: the caller
/// guarantees they come from this allocator's [`DataPtr`]s (or are host memory, for the host
/// side of a copy) and that the ranges are valid.
pub trait Allocator: Send + Sync {
    /// `nbytes` uninitialised bytes on `device`; out of memory is an error.
    fn allocate(&self, nbytes: usize, device: Device) -> Result<DataPtr>;

    /// `nbytes` zeroed bytes on `device`.
    fn allocate_zeroed(&self, nbytes: usize, device: Device) -> Result<DataPtr> {
        let p = self.allocate(nbytes, device)?;
        // SAFETY: `p` owns `nbytes` bytes of this allocator's memory.
        unsafe { self.memset(p.get(), 0, nbytes)? };
        Ok(p)
    }

    /// Sets `nbytes` bytes at `dst` to `value`.
    ///
    /// # Safety
    /// `dst` points into an allocation of this allocator with at least `nbytes` bytes left.
    unsafe fn memset(&self, dst: *mut u8, value: u8, nbytes: usize) -> Result<()>;

    /// Copies `nbytes` bytes from host memory at `src` to device memory at `dst`.
    ///
    /// # Safety
    /// `src` is readable host memory and `dst` device memory of this allocator, `nbytes` each,
    /// not overlapping.
    unsafe fn copy_from_host(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()>;

    /// Copies `nbytes` bytes from device memory at `src` to host memory at `dst`.
    ///
    /// # Safety
    /// As [`copy_from_host`](Self::copy_from_host), the other way round.
    unsafe fn copy_to_host(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()>;

    /// Copies `nbytes` bytes between two allocations of this allocator.
    ///
    /// # Safety
    /// Both ranges lie in allocations of this allocator and do not overlap.
    unsafe fn copy_on_device(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()>;

    /// Whether allocations hold bytes at all (false for meta, whose storages are sizes only).
    fn has_data(&self) -> bool {
        true
    }

    /// Storages up to this many bytes may live inside the storage object itself instead of an
    /// allocation of this allocator (the host allocator's small-tensor shortcut); 0 for memory
    /// the host cannot address.
    fn inline_bytes(&self) -> usize {
        0
    }

    /// Frees memory cached for reuse; returns the number of bytes released.
    fn empty_cache(&self) -> usize {
        0
    }
}

static HOST: HostAllocator = HostAllocator;
static META: MetaAllocator = MetaAllocator;
static HOST_REF: &(dyn Allocator + 'static) = &HOST;
static META_REF: &(dyn Allocator + 'static) = &META;

/// The registered allocator of each device type (null: none). A slot points at a leaked
/// `&'static dyn Allocator`, so reading it is one atomic load.
static ALLOCATORS: [AtomicPtr<&'static dyn Allocator>; DeviceType::COUNT] = [
    AtomicPtr::new(&HOST_REF as *const &dyn Allocator as *mut &dyn Allocator),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(&META_REF as *const &dyn Allocator as *mut &dyn Allocator),
    AtomicPtr::new(std::ptr::null_mut()),
];

/// The host allocator (CPU memory), for backends whose memory is host memory.
pub fn host() -> &'static HostAllocator {
    &HOST
}

/// Makes `allocator` the allocator of `device_type` (replacing any before it; storages already
/// allocated keep freeing through theirs).
pub fn register_allocator(device_type: DeviceType, allocator: &'static dyn Allocator) {
    let slot: &'static mut &'static dyn Allocator = Box::leak(Box::new(allocator));
    ALLOCATORS[device_type.index()].store(slot, Ordering::Release);
}

/// The allocator registered for `device_type`, if any.
#[inline]
pub fn get_allocator(device_type: DeviceType) -> Option<&'static dyn Allocator> {
    let p = ALLOCATORS[device_type.index()].load(Ordering::Acquire);
    // SAFETY: a non-null slot points at a leaked (so never freed) `&'static dyn Allocator`,
    // written before the Release store that published it.
    (!p.is_null()).then(|| unsafe { *p })
}

/// The allocator serving `device`, or an error naming the device.
#[inline]
pub fn allocator_for(device: Device) -> Result<&'static dyn Allocator> {
    get_allocator(device.device_type()).ok_or_else(|| {
        Error::device(format!(
            "no allocator is registered for device {device}; a backend registers one with \
             oxten_runtime::alloc::register_allocator"
        ))
    })
}

/// Frees the memory every registered allocator caches (like `torch.cuda.empty_cache()`, for
/// every device); returns the number of bytes released.
pub fn empty_cache() -> usize {
    DeviceType::ALL.into_iter().filter_map(get_allocator).map(|a| a.empty_cache()).sum()
}
