//! Storage: the reference-counted buffer that tensors and their views share.

use crate::device::Device;
use crate::error::{Error, Result};
use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Buffers are 64-byte aligned so vector loads never split cache lines at the start.
const ALIGN: usize = 64;

/// One heap allocation. Zero-initialised: reading an `empty` tensor gives zeros, never
/// uninitialised memory.
struct Buffer {
    ptr: NonNull<u8>,
    nbytes: usize,
}

impl Buffer {
    fn zeroed(nbytes: usize) -> Result<Buffer> {
        if nbytes == 0 {
            return Ok(Buffer { ptr: NonNull::dangling(), nbytes: 0 });
        }
        let layout = Layout::from_size_align(nbytes, ALIGN)
            .map_err(|_| Error::value(format!("cannot allocate {nbytes} bytes")))?;
        // SAFETY: `layout` has a non-zero size (checked above).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr)
            .ok_or_else(|| Error::runtime(format!("out of memory: tried to allocate {nbytes} bytes")))?;
        Ok(Buffer { ptr, nbytes })
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.nbytes != 0 {
            // SAFETY: allocated in `zeroed` with this exact size and alignment.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), Layout::from_size_align_unchecked(self.nbytes, ALIGN)) }
        }
    }
}

// SAFETY: a Buffer is a uniquely owned heap allocation; ownership can move between threads.
unsafe impl Send for Buffer {}
// SAFETY: the buffer itself hands out only raw pointers; synchronising element access is the
// caller's business, exactly as with PyTorch storages.
unsafe impl Sync for Buffer {}

struct StorageImpl {
    device: Device,
    data: AtomicPtr<u8>,
    nbytes: AtomicUsize,
    /// The live buffer, and every buffer replaced by a resize. Old buffers are kept until the
    /// storage dies so that a pointer obtained before a resize never dangles.
    buffers: Mutex<Vec<Buffer>>,
    /// The version counter shared by every tensor viewing this storage; bumped by in-place ops.
    version: AtomicU64,
}

/// A shared, resizable byte buffer on a device. Meta storages track a size but own no memory.
#[derive(Clone)]
pub struct Storage(Arc<StorageImpl>);

impl Storage {
    /// Allocates `nbytes` zeroed bytes on `device` (no memory for [`Device::Meta`]).
    pub fn new(nbytes: usize, device: Device) -> Result<Storage> {
        let (ptr, buffers) = match device {
            // Out-of-tree backends registered under PrivateUse1 get host memory, so a backend
            // written in Rust can run its kernels on it.
            Device::Cpu | Device::PrivateUse1(_) => {
                let b = Buffer::zeroed(nbytes)?;
                (b.ptr.as_ptr(), vec![b])
            }
            Device::Meta => (std::ptr::null_mut(), vec![]),
            other => return Err(Error::device(format!("no allocator for device {other}; register a backend for it"))),
        };
        Ok(Storage(Arc::new(StorageImpl {
            device,
            data: AtomicPtr::new(ptr),
            nbytes: AtomicUsize::new(nbytes),
            buffers: Mutex::new(buffers),
            version: AtomicU64::new(0),
        })))
    }

    pub fn device(&self) -> Device {
        self.0.device
    }
    pub fn nbytes(&self) -> usize {
        self.0.nbytes.load(Ordering::Acquire)
    }
    /// The base address (null on meta).
    pub fn data_ptr(&self) -> *mut u8 {
        self.0.data.load(Ordering::Acquire)
    }
    /// Whether two storages are the same allocation.
    pub fn is_alias_of(&self, other: &Storage) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// Grows the storage to at least `nbytes`, keeping its contents (shrinking never happens, as
    /// in PyTorch). Every tensor sharing the storage sees the new buffer.
    pub fn grow(&self, nbytes: usize) -> Result<()> {
        let mut bufs = self.0.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let old = self.nbytes();
        if nbytes <= old {
            return Ok(());
        }
        if self.0.device == Device::Meta {
            self.0.nbytes.store(nbytes, Ordering::Release);
            return Ok(());
        }
        let b = Buffer::zeroed(nbytes)?;
        // SAFETY: both buffers are live for this call; `old` bytes fit in both.
        unsafe { std::ptr::copy_nonoverlapping(self.data_ptr(), b.ptr.as_ptr(), old) };
        self.0.data.store(b.ptr.as_ptr(), Ordering::Release);
        self.0.nbytes.store(nbytes, Ordering::Release);
        bufs.push(b);
        Ok(())
    }
    /// The shared version counter.
    pub fn version(&self) -> u64 {
        self.0.version.load(Ordering::Relaxed)
    }
    pub fn bump_version(&self) {
        self.0.version.fetch_add(1, Ordering::Relaxed);
    }
    /// Number of handles (tensors and views) sharing this storage.
    pub fn use_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Storage({} bytes on {})", self.nbytes(), self.device())
    }
}
