//! [`DataPtr`]: an owned allocation that knows its device and how to free itself.

use crate::device::Device;

/// Frees an allocation: called once, with the pointer, size and context it was made with.
///
/// # Safety
/// Called only by [`DataPtr`]'s `Drop`, with the values it was constructed with.
pub type DeleterFn = unsafe fn(ptr: *mut u8, nbytes: usize, ctx: *mut ());

/// An allocation on a device: its address, its size, its device, and its deleter (a function
/// pointer and a context word, as in PyTorch's `c10::DataPtr`, so that making one allocates
/// nothing). Dropping it frees the memory.
pub struct DataPtr {
    ptr: *mut u8,
    nbytes: usize,
    device: Device,
    ctx: *mut (),
    deleter: Option<DeleterFn>,
}

// SAFETY: a DataPtr uniquely owns its allocation, which may be freed from any thread (every
// allocator's deleter must allow that: it is `Send + Sync` by the `Allocator` contract).
unsafe impl Send for DataPtr {}
// SAFETY: a shared DataPtr only hands out its address; synchronising access to the bytes is the
// caller's business, as with PyTorch storages.
unsafe impl Sync for DataPtr {}

impl DataPtr {
    /// Wraps an allocation.
    ///
    /// # Safety
    /// `deleter`, if any, must be sound to call once with `(ptr, nbytes, ctx)` from any thread
    /// once the `DataPtr` is dropped, and `ptr` must stay valid for `nbytes` bytes until then.
    pub unsafe fn new(ptr: *mut u8, nbytes: usize, device: Device, ctx: *mut (), deleter: Option<DeleterFn>) -> Self {
        DataPtr { ptr, nbytes, device, ctx, deleter }
    }

    /// An allocation-less pointer: `nbytes` bytes that exist only as a size (meta storages),
    /// or an empty allocation when `nbytes` is 0.
    pub fn without_data(ptr: *mut u8, nbytes: usize, device: Device) -> Self {
        DataPtr { ptr, nbytes, device, ctx: std::ptr::null_mut(), deleter: None }
    }

    /// The address (null for meta storages).
    #[inline]
    pub fn get(&self) -> *mut u8 {
        self.ptr
    }
    /// The allocation's size in bytes.
    pub fn nbytes(&self) -> usize {
        self.nbytes
    }
    /// The device the memory is on.
    pub fn device(&self) -> Device {
        self.device
    }
}

impl Drop for DataPtr {
    fn drop(&mut self) {
        if let Some(delete) = self.deleter {
            // SAFETY: the constructor's contract: the deleter takes exactly these values, once.
            unsafe { delete(self.ptr, self.nbytes, self.ctx) }
        }
    }
}

impl std::fmt::Debug for DataPtr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DataPtr({:p}, {} bytes on {})", self.ptr, self.nbytes, self.device)
    }
}
