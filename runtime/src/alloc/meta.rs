//! The meta allocator: storages that are sizes without bytes.

use super::{Allocator, DataPtr};
use crate::device::Device;
use crate::error::Result;

/// Gives meta storages their size and a null address; allocates nothing.
pub struct MetaAllocator;

impl Allocator for MetaAllocator {
    fn allocate(&self, nbytes: usize, device: Device) -> Result<DataPtr> {
        Ok(DataPtr::without_data(std::ptr::null_mut(), nbytes, device))
    }
    fn allocate_zeroed(&self, nbytes: usize, device: Device) -> Result<DataPtr> {
        self.allocate(nbytes, device)
    }
    unsafe fn memset(&self, _dst: *mut u8, _value: u8, _nbytes: usize) -> Result<()> {
        Ok(())
    }
    unsafe fn copy_from_host(&self, _dst: *mut u8, _src: *const u8, _nbytes: usize) -> Result<()> {
        Ok(())
    }
    unsafe fn copy_to_host(&self, _dst: *mut u8, _src: *const u8, _nbytes: usize) -> Result<()> {
        Ok(())
    }
    unsafe fn copy_on_device(&self, _dst: *mut u8, _src: *const u8, _nbytes: usize) -> Result<()> {
        Ok(())
    }
    fn has_data(&self) -> bool {
        false
    }
}
