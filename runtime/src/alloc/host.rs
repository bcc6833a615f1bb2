//! The host allocator: heap memory with a cache of large freed buffers and huge-page advice.

use super::{Allocator, DataPtr};
use crate::device::Device;
use crate::error::{Error, Result};
use std::alloc::{self, Layout};
use std::sync::Mutex;

/// Buffers from this size on are 64-byte aligned so vector loads never split cache lines at the
/// start. Smaller ones ask for no more than the allocator's natural alignment (16 bytes, and at
/// most their size, which still covers every element type: sizes are multiples of the element
/// size, a power of two): an over-aligned request makes glibc take its slower `memalign` path,
/// which would dominate tiny-tensor ops.
const ALIGN: usize = 64;
const SMALL: usize = 256;

#[inline(always)]
fn align_for(nbytes: usize) -> usize {
    if nbytes >= SMALL {
        ALIGN
    } else if nbytes >= 16 {
        16
    } else {
        // The largest power of two not above `nbytes` (1 for an empty buffer, never allocated).
        1 << (usize::BITS - 1 - (nbytes | 1).leading_zeros())
    }
}

/// Buffers from this size on ask for transparent huge pages.
const HUGE_MIN: usize = 4 << 20;

/// Freed host buffers from this size on are kept for reuse. glibc hands blocks from 128 KiB
/// (its default `M_MMAP_THRESHOLD`) back to the kernel, so they are faulted in again on each
/// first touch; and freeing a block from 64 KiB (its `FASTBIN_CONSOLIDATION_THRESHOLD`) makes it
/// consolidate its whole free lists. An 800 KB weight gradient freed and made again every step
/// spent a sixth of a small MLP's training step in page faults when this was 1 MiB; its 64 KiB
/// activations spent about 5% of each elementwise op in `malloc_consolidate` at 128 KiB.
pub(crate) const CACHE_MIN: usize = 64 << 10;
/// At most this many bytes …
pub(crate) const CACHE_MAX_BYTES: usize = 256 << 20;
/// … in at most this many buffers are kept (a training step frees dozens of activation-sized
/// buffers at once).
const CACHE_MAX_BUFFERS: usize = 64;

/// A raw heap block: no destructor, freed by [`free_block`] or kept in the cache.
struct Block {
    ptr: *mut u8,
    nbytes: usize,
}

// SAFETY: a Block is a uniquely owned heap allocation; ownership can move between threads.
unsafe impl Send for Block {}

/// Large freed buffers, most recent last. Allocating and freeing the same large sizes over and
/// over (every elementwise op allocates its output; a training step repeats the same shapes)
/// would otherwise hand the pages back to the kernel and fault them in again, zero-filled, on
/// each first touch: as much memory traffic as the op itself. Reused buffers hold stale bytes,
/// which is fine: zeroed allocations are filled again, and deferred storages are filled or
/// overwritten before anyone reads them. Bounded by [`CACHE_MAX_BYTES`] and
/// [`CACHE_MAX_BUFFERS`] (the oldest go first); [`HostAllocator::empty_cache`] frees everything.
struct BufferCache {
    blocks: Vec<Block>,
    bytes: usize,
}

static CACHE: Mutex<BufferCache> = Mutex::new(BufferCache { blocks: Vec::new(), bytes: 0 });

fn cache_lock() -> std::sync::MutexGuard<'static, BufferCache> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A cached block of exactly `nbytes`, the most recently freed first.
fn cache_take(nbytes: usize) -> Option<Block> {
    let mut c = cache_lock();
    let i = c.blocks.iter().rposition(|b| b.nbytes == nbytes)?;
    c.bytes -= nbytes;
    Some(c.blocks.remove(i))
}

/// Keeps `b` for reuse, evicting the oldest blocks over the bounds (freed after the lock is
/// released).
fn cache_put(b: Block) {
    if b.nbytes > CACHE_MAX_BYTES {
        free_block(b);
        return;
    }
    let mut evicted = Vec::new();
    {
        let mut c = cache_lock();
        c.bytes += b.nbytes;
        c.blocks.push(b);
        while c.bytes > CACHE_MAX_BYTES || c.blocks.len() > CACHE_MAX_BUFFERS {
            let old = c.blocks.remove(0);
            c.bytes -= old.nbytes;
            evicted.push(old);
        }
    }
    evicted.into_iter().for_each(free_block);
}

/// Frees a block's memory without going through the cache.
fn free_block(b: Block) {
    if b.nbytes != 0 {
        // SAFETY: allocated in `HostAllocator::block` with this exact size and `align_for` it,
        // and owned by `b`, which is consumed.
        unsafe { alloc::dealloc(b.ptr, Layout::from_size_align_unchecked(b.nbytes, align_for(b.nbytes))) }
    }
}

/// The deleter of every host allocation: large blocks go to the cache, small ones back to the
/// heap.
///
/// # Safety
/// `(ptr, nbytes)` is a block from `HostAllocator::block`, freed once.
unsafe fn host_delete(ptr: *mut u8, nbytes: usize, _ctx: *mut ()) {
    let b = Block { ptr, nbytes };
    if nbytes >= CACHE_MIN {
        cache_put(b)
    } else {
        free_block(b)
    }
}

/// Bytes currently kept by the host buffer cache.
pub fn cached_bytes() -> usize {
    cache_lock().bytes
}

/// Whether a freed block of exactly `nbytes` is in the cache (for tests).
#[cfg(test)]
pub(crate) fn cache_holds(nbytes: usize) -> bool {
    cache_lock().blocks.iter().any(|b| b.nbytes == nbytes)
}

/// Heap memory for CPU tensors, and for out-of-tree backends whose memory is host memory.
pub struct HostAllocator;

impl HostAllocator {
    fn oom(nbytes: usize) -> Error {
        Error::out_of_memory(nbytes as u128, "host memory")
    }

    fn layout(nbytes: usize) -> Result<Layout> {
        Layout::from_size_align(nbytes, align_for(nbytes))
            .map_err(|_| Error::out_of_memory(nbytes as u128, "host memory"))
    }

    fn wrap(ptr: *mut u8, nbytes: usize, device: Device) -> DataPtr {
        // SAFETY: `ptr` is a live block of `nbytes` bytes from `block`/`alloc_zeroed`, which
        // `host_delete` frees once, from any thread.
        unsafe { DataPtr::new(ptr, nbytes, device, std::ptr::null_mut(), Some(host_delete)) }
    }

    /// An uninitialised block: a cached one, or a fresh one advised to use huge pages before its
    /// first touch.
    fn block(nbytes: usize) -> Result<*mut u8> {
        if nbytes >= CACHE_MIN {
            if let Some(b) = cache_take(nbytes) {
                return Ok(b.ptr);
            }
        }
        let layout = Self::layout(nbytes)?;
        // SAFETY: `layout` has a non-zero size (the callers return early for 0).
        let ptr = unsafe { alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(Self::oom(nbytes));
        }
        if nbytes >= HUGE_MIN {
            advise_huge_pages(ptr, nbytes);
        }
        Ok(ptr)
    }
}

impl Allocator for HostAllocator {
    fn allocate(&self, nbytes: usize, device: Device) -> Result<DataPtr> {
        if nbytes == 0 {
            return Ok(DataPtr::without_data(std::ptr::NonNull::dangling().as_ptr(), 0, device));
        }
        Ok(Self::wrap(Self::block(nbytes)?, nbytes, device))
    }

    fn allocate_zeroed(&self, nbytes: usize, device: Device) -> Result<DataPtr> {
        if nbytes == 0 || nbytes >= CACHE_MIN {
            // A cached or huge-page-advised block, then zero-filled (what `alloc_zeroed` does
            // anyway for this alignment).
            let p = self.allocate(nbytes, device)?;
            // SAFETY: the block owns `nbytes` writable bytes.
            unsafe { std::ptr::write_bytes(p.get(), 0, nbytes) };
            return Ok(p);
        }
        let layout = Self::layout(nbytes)?;
        // SAFETY: `layout` has a non-zero size (checked above).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(Self::oom(nbytes));
        }
        Ok(Self::wrap(ptr, nbytes, device))
    }

    unsafe fn memset(&self, dst: *mut u8, value: u8, nbytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees `nbytes` writable host bytes at `dst`.
        unsafe { std::ptr::write_bytes(dst, value, nbytes) };
        Ok(())
    }

    unsafe fn copy_from_host(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees both ranges are valid and do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, nbytes) };
        Ok(())
    }

    unsafe fn copy_to_host(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, nbytes) };
        Ok(())
    }

    unsafe fn copy_on_device(&self, dst: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, nbytes) };
        Ok(())
    }

    fn inline_bytes(&self) -> usize {
        super::INLINE_BYTES
    }

    fn empty_cache(&self) -> usize {
        let blocks = {
            let mut c = cache_lock();
            c.bytes = 0;
            std::mem::take(&mut c.blocks)
        };
        let n = blocks.iter().map(|b| b.nbytes).sum();
        blocks.into_iter().for_each(free_block);
        n
    }
}

/// Asks the kernel to back the 2 MiB-aligned interior of a fresh, untouched buffer with
/// transparent huge pages (Linux, where THP is in `madvise` mode by default): one page fault per
/// 2 MiB instead of 512 when a kernel first writes the buffer, and far fewer TLB misses for
/// strided and tiled access. A hint only: failure changes nothing.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, nbytes: usize) {
    const HUGE: usize = 2 << 20;
    const MADV_HUGEPAGE: i32 = 14;
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + nbytes) / HUGE * HUGE;
    if end > start {
        // SAFETY: [start, end) lies inside the caller's allocation and is page-aligned;
        // MADV_HUGEPAGE changes only how the range is backed, never its contents, and the
        // return value is ignored (the advice is optional).
        unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _nbytes: usize) {}
