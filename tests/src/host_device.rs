//! The memory of the test backends at `PrivateUse1`: host memory from the host allocator,
//! counted, so a test can check that its device's tensors came from the device's allocator.

use oxten::alloc::{self, Allocator, DataPtr};
use oxten::{Device, Result};
use std::sync::atomic::{AtomicUsize, Ordering};

/// An allocator of host memory for a test device, counting its allocations.
pub struct HostBackedAllocator {
    allocations: AtomicUsize,
}

impl HostBackedAllocator {
    /// An allocator that has allocated nothing yet.
    pub const fn new() -> Self {
        HostBackedAllocator { allocations: AtomicUsize::new(0) }
    }

    /// How many allocations it has served.
    pub fn allocations(&self) -> usize {
        self.allocations.load(Ordering::Relaxed)
    }
}

impl Default for HostBackedAllocator {
    fn default() -> Self {
        Self::new()
    }
}

impl Allocator for HostBackedAllocator {
    fn allocate(&self, nbytes: usize, device: Device) -> Result<DataPtr> {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        alloc::host().allocate(nbytes, device)
    }
    unsafe fn memset(&self, dst: *mut u8, value: u8, nbytes: usize) -> Result<()> {
        // SAFETY: forwarded under the caller's guarantee; the memory is host memory.
        unsafe { alloc::host().memset(dst, value, nbytes) }
    }
    unsafe fn copy_from_host(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        // SAFETY: as above.
        unsafe { alloc::host().copy_from_host(dst, src, nbytes) }
    }
    unsafe fn copy_to_host(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        // SAFETY: as above.
        unsafe { alloc::host().copy_to_host(dst, src, nbytes) }
    }
    unsafe fn copy_on_device(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        // SAFETY: as above.
        unsafe { alloc::host().copy_on_device(dst, src, nbytes) }
    }
}
