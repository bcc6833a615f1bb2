//! The lazy device's memory: a storage is a token (an address nobody reads) bound to the graph
//! node that holds its contents. Allocation hands out a token; binding happens when a kernel
//! records a node or a copy writes into the storage; freeing the storage forgets the binding.

use crate::graph::Node;
use oxten::alloc::{self, Allocator, DataPtr};
use oxten::{Device, DeviceType, Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

/// Storage token → the node holding the storage's contents (absent: zeros, as a fresh storage).
fn table() -> MutexGuard<'static, HashMap<usize, Arc<Node>>> {
    static TABLE: LazyLock<Mutex<HashMap<usize, Arc<Node>>>> = LazyLock::new(Default::default);
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The node bound to the storage with token `key`, if any.
pub(crate) fn bound(key: usize) -> Option<Arc<Node>> {
    table().get(&key).cloned()
}

/// Makes `node` the contents of the storage with token `key`.
pub(crate) fn bind(key: usize, node: Arc<Node>) {
    table().insert(key, node);
}

/// The nodes of every live storage.
pub(crate) fn bound_nodes() -> Vec<Arc<Node>> {
    table().values().cloned().collect()
}

/// Hands out tokens: 64-byte steps from a non-null start, never dereferenced.
struct LazyAllocator;

static NEXT_TOKEN: AtomicUsize = AtomicUsize::new(1 << 12);

/// Forgets a freed storage's binding.
///
/// # Safety
/// Called by `DataPtr`'s drop with the token it was made with; it reads no memory.
unsafe fn release(token: *mut u8, _nbytes: usize, _ctx: *mut ()) {
    table().remove(&(token as usize));
}

fn no_bytes(what: &str) -> Error {
    Error::device(format!(
        "lazy: {what} is not possible on lazy storages, which hold graph nodes rather than bytes (copy the tensor to the CPU)"
    ))
}

impl Allocator for LazyAllocator {
    fn allocate(&self, nbytes: usize, device: Device) -> Result<DataPtr> {
        let token = NEXT_TOKEN.fetch_add(nbytes.div_ceil(64).max(1) * 64, Ordering::Relaxed);
        // SAFETY: the deleter only removes the token's entry from the table, from any thread;
        // the token is never dereferenced, so there is no memory to keep valid.
        Ok(unsafe { DataPtr::new(token as *mut u8, nbytes, device, std::ptr::null_mut(), Some(release)) })
    }
    fn allocate_zeroed(&self, nbytes: usize, device: Device) -> Result<DataPtr> {
        // An unbound storage reads as zeros.
        self.allocate(nbytes, device)
    }
    unsafe fn memset(&self, dst: *mut u8, value: u8, _nbytes: usize) -> Result<()> {
        if value != 0 {
            return Err(no_bytes("setting bytes"));
        }
        // Zero-filling (a storage's first use) leaves it unbound: zeros.
        table().remove(&(dst as usize));
        Ok(())
    }
    unsafe fn copy_from_host(&self, _dst: *mut u8, _src: *const u8, _nbytes: usize) -> Result<()> {
        Err(no_bytes("copying raw bytes in"))
    }
    unsafe fn copy_to_host(&self, _dst: *mut u8, _src: *const u8, _nbytes: usize) -> Result<()> {
        Err(no_bytes("copying raw bytes out"))
    }
    unsafe fn copy_on_device(&self, _dst: *mut u8, _src: *const u8, _nbytes: usize) -> Result<()> {
        Err(no_bytes("growing a storage"))
    }
}

static ALLOCATOR: LazyAllocator = LazyAllocator;

/// Registers the allocator and the copies between the lazy device and the CPU.
pub(crate) fn register() {
    alloc::register_allocator(DeviceType::PrivateUse1, &ALLOCATOR);
    alloc::register_copy(DeviceType::Cpu, DeviceType::PrivateUse1, crate::kernels::copy_between);
    alloc::register_copy(DeviceType::PrivateUse1, DeviceType::Cpu, crate::kernels::copy_between);
}
