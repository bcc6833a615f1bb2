//! Storage: the reference-counted buffer that tensors and their views share.
//!
//! A storage is either zero-filled when it is made ([`Storage::new`], what `empty` uses), or
//! *deferred* ([`Storage::new_deferred`]): its bytes are not written when allocated, and the first
//! [`Storage::data_ptr`] zero-fills them. Reading a storage therefore always gives initialised
//! memory, while a kernel that is about to overwrite every byte (a TensorIterator output) can skip
//! the zero-fill with [`Storage::data_ptr_for_overwrite`] and [`Storage::assume_init`].

use crate::device::Device;
use crate::error::{Error, Result};
use std::alloc::{self, Layout};
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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

/// One heap allocation.
struct Buffer {
    ptr: NonNull<u8>,
    nbytes: usize,
}

impl Buffer {
    const EMPTY: Buffer = Buffer { ptr: NonNull::dangling(), nbytes: 0 };

    fn layout(nbytes: usize) -> Result<Layout> {
        Layout::from_size_align(nbytes, align_for(nbytes))
            .map_err(|_| Error::value(format!("cannot allocate {nbytes} bytes")))
    }

    fn oom(nbytes: usize) -> Error {
        Error::runtime(format!("out of memory: tried to allocate {nbytes} bytes"))
    }

    fn zeroed(nbytes: usize) -> Result<Buffer> {
        if nbytes == 0 {
            return Ok(Buffer::EMPTY);
        }
        if nbytes >= CACHE_MIN {
            // A cached buffer, or a fresh one advised to use huge pages before its first touch;
            // then zero-filled (what `alloc_zeroed` does anyway for this alignment).
            let b = Buffer::uninit(nbytes)?;
            // SAFETY: the buffer owns `nbytes` writable bytes.
            unsafe { std::ptr::write_bytes(b.ptr.as_ptr(), 0, nbytes) };
            return Ok(b);
        }
        let layout = Buffer::layout(nbytes)?;
        // SAFETY: `layout` has a non-zero size (checked above).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or_else(|| Buffer::oom(nbytes))?;
        Ok(Buffer { ptr, nbytes })
    }

    /// A buffer whose bytes are not initialised (see [`Storage::new_deferred`]).
    fn uninit(nbytes: usize) -> Result<Buffer> {
        if nbytes == 0 {
            return Ok(Buffer::EMPTY);
        }
        if nbytes >= CACHE_MIN {
            if let Some(b) = cache_take(nbytes) {
                return Ok(b);
            }
        }
        let layout = Buffer::layout(nbytes)?;
        // SAFETY: `layout` has a non-zero size (checked above).
        let ptr = unsafe { alloc::alloc(layout) };
        let ptr = NonNull::new(ptr).ok_or_else(|| Buffer::oom(nbytes))?;
        if nbytes >= HUGE_MIN {
            advise_huge_pages(ptr.as_ptr(), nbytes);
        }
        Ok(Buffer { ptr, nbytes })
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
const CACHE_MIN: usize = 64 << 10;
/// At most this many bytes …
const CACHE_MAX_BYTES: usize = 256 << 20;
/// … in at most this many buffers are kept (a training step frees dozens of activation-sized
/// buffers at once).
const CACHE_MAX_BUFFERS: usize = 64;

/// Large freed buffers, most recent last. Allocating and freeing the same large sizes over and
/// over (every elementwise op allocates its output; a training step repeats the same shapes)
/// would otherwise hand the pages back to the kernel and fault them in again, zero-filled, on
/// each first touch: as much memory traffic as the op itself. Reused buffers hold stale bytes,
/// which is fine: zeroed storages are filled again, and deferred ones are filled or overwritten
/// before anyone reads them. Bounded by [`CACHE_MAX_BYTES`] and [`CACHE_MAX_BUFFERS`] (the
/// oldest go first); [`empty_cache`] frees everything.
struct BufferCache {
    buffers: Vec<Buffer>,
    bytes: usize,
}

static CACHE: Mutex<BufferCache> = Mutex::new(BufferCache { buffers: Vec::new(), bytes: 0 });

fn cache_lock() -> std::sync::MutexGuard<'static, BufferCache> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A cached buffer of exactly `nbytes`, the most recently freed first.
fn cache_take(nbytes: usize) -> Option<Buffer> {
    let mut c = cache_lock();
    let i = c.buffers.iter().rposition(|b| b.nbytes == nbytes)?;
    c.bytes -= nbytes;
    Some(c.buffers.remove(i))
}

/// Keeps `b` for reuse, evicting the oldest buffers over the bounds (freed after the lock is
/// released).
fn cache_put(b: Buffer) {
    if b.nbytes > CACHE_MAX_BYTES {
        free_buffer(b);
        return;
    }
    let mut evicted = Vec::new();
    {
        let mut c = cache_lock();
        c.bytes += b.nbytes;
        c.buffers.push(b);
        while c.bytes > CACHE_MAX_BYTES || c.buffers.len() > CACHE_MAX_BUFFERS {
            let old = c.buffers.remove(0);
            c.bytes -= old.nbytes;
            evicted.push(old);
        }
    }
    evicted.into_iter().for_each(free_buffer);
}

/// Frees a buffer's memory without going through the cache.
fn free_buffer(mut b: Buffer) {
    let nbytes = std::mem::replace(&mut b.nbytes, 0);
    if nbytes != 0 {
        // SAFETY: allocated in `zeroed`/`uninit` with this exact size and `align_for` it;
        // `b` no longer owns it (its size is now 0, so its Drop does nothing).
        unsafe { alloc::dealloc(b.ptr.as_ptr(), Layout::from_size_align_unchecked(nbytes, align_for(nbytes))) }
    }
}

/// Frees the large host buffers kept for reuse (like `torch.cuda.empty_cache()`); returns the
/// number of bytes released.
pub fn empty_cache() -> usize {
    let buffers = {
        let mut c = cache_lock();
        c.bytes = 0;
        std::mem::take(&mut c.buffers)
    };
    let n = buffers.iter().map(|b| b.nbytes).sum();
    buffers.into_iter().for_each(free_buffer);
    n
}

/// Bytes currently kept by the buffer cache.
pub fn cached_bytes() -> usize {
    cache_lock().bytes
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

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.nbytes >= CACHE_MIN {
            let b = std::mem::replace(self, Buffer::EMPTY);
            cache_put(b);
            return;
        }
        if self.nbytes != 0 {
            // SAFETY: allocated in `zeroed`/`uninit` with this exact size and `align_for` it.
            unsafe {
                alloc::dealloc(
                    self.ptr.as_ptr(),
                    Layout::from_size_align_unchecked(self.nbytes, align_for(self.nbytes)),
                )
            }
        }
    }
}

// SAFETY: a Buffer is a uniquely owned heap allocation; ownership can move between threads.
unsafe impl Send for Buffer {}
// SAFETY: the buffer itself hands out only raw pointers; synchronising element access is the
// caller's business, exactly as with PyTorch storages.
unsafe impl Sync for Buffer {}

/// Bytes of host storage kept inside the storage's own allocation instead of a separate buffer
/// (one-element tensors and other tiny ones: one allocation less per tensor).
const INLINE_BYTES: usize = 32;

/// The inline buffer: 16-byte aligned, like a small heap buffer.
#[repr(C, align(16))]
struct InlineBuf(UnsafeCell<[u8; INLINE_BYTES]>);

struct StorageImpl {
    device: Device,
    data: AtomicPtr<u8>,
    nbytes: AtomicUsize,
    /// The buffer the storage was made with (empty on meta); owned here so that it is freed
    /// with the storage.
    #[allow(dead_code)]
    first: Buffer,
    /// Every buffer that replaced it on a resize. Old buffers are kept until the storage dies so
    /// that a pointer obtained before a resize never dangles. (Empty, so not allocated, unless a
    /// resize happened.)
    grown: Mutex<Vec<Buffer>>,
    /// The version counter shared by every tensor viewing this storage; bumped by in-place ops.
    version: AtomicU64,
    /// The live buffer's bytes have not been written yet (a deferred storage): the next
    /// `data_ptr` zero-fills them.
    deferred: AtomicBool,
    /// The bytes of a tiny host storage (`first` is then empty); always zero-initialised.
    inline: InlineBuf,
}

// SAFETY: the only non-Sync part is the inline buffer, raw bytes handed out as pointers exactly
// like a heap `Buffer`'s (synchronising element access is the caller's business).
unsafe impl Sync for StorageImpl {}

/// A shared, resizable byte buffer on a device. Meta storages track a size but own no memory.
#[derive(Clone)]
pub struct Storage(Arc<StorageImpl>);

impl Storage {
    /// Allocates `nbytes` zeroed bytes on `device` (no memory for [`Device::Meta`]).
    pub fn new(nbytes: usize, device: Device) -> Result<Storage> {
        Storage::make(nbytes, device, false)
    }

    /// Allocates `nbytes` bytes on `device` without writing them now. The storage reads as zeros
    /// like one from [`Storage::new`]: the first [`data_ptr`](Self::data_ptr) zero-fills it. A
    /// kernel that overwrites every byte first uses [`data_ptr_for_overwrite`](Self::data_ptr_for_overwrite)
    /// and [`assume_init`](Self::assume_init) instead, and the memory is written only once.
    pub fn new_deferred(nbytes: usize, device: Device) -> Result<Storage> {
        Storage::make(nbytes, device, true)
    }

    fn make(nbytes: usize, device: Device, deferred: bool) -> Result<Storage> {
        let host = matches!(device, Device::Cpu | Device::PrivateUse1(_));
        if host && nbytes != 0 && nbytes <= INLINE_BYTES {
            let s = Storage(Arc::new(StorageImpl {
                device,
                data: AtomicPtr::new(std::ptr::null_mut()),
                nbytes: AtomicUsize::new(nbytes),
                first: Buffer::EMPTY,
                grown: Mutex::new(Vec::new()),
                version: AtomicU64::new(0),
                // Zeroing 32 bytes costs nothing: never deferred.
                deferred: AtomicBool::new(false),
                inline: InlineBuf(UnsafeCell::new([0; INLINE_BYTES])),
            }));
            // The inline bytes live as long as the storage and never move (they are inside the
            // Arc's allocation).
            s.0.data.store(s.0.inline.0.get() as *mut u8, Ordering::Release);
            return Ok(s);
        }
        let first = match device {
            // Out-of-tree backends registered under PrivateUse1 get host memory, so a backend
            // written in Rust can run its kernels on it.
            Device::Cpu | Device::PrivateUse1(_) if deferred => Buffer::uninit(nbytes)?,
            Device::Cpu | Device::PrivateUse1(_) => Buffer::zeroed(nbytes)?,
            Device::Meta => Buffer::EMPTY,
            other => return Err(Error::device(format!("no allocator for device {other}; register a backend for it"))),
        };
        let ptr = if device == Device::Meta { std::ptr::null_mut() } else { first.ptr.as_ptr() };
        Ok(Storage(Arc::new(StorageImpl {
            device,
            data: AtomicPtr::new(ptr),
            nbytes: AtomicUsize::new(nbytes),
            first,
            grown: Mutex::new(Vec::new()),
            version: AtomicU64::new(0),
            deferred: AtomicBool::new(deferred && nbytes != 0 && device != Device::Meta),
            inline: InlineBuf(UnsafeCell::new([0; INLINE_BYTES])),
        })))
    }

    pub fn device(&self) -> Device {
        self.0.device
    }
    pub fn nbytes(&self) -> usize {
        self.0.nbytes.load(Ordering::Acquire)
    }
    /// The base address (null on meta). A deferred storage is zero-filled first.
    #[inline]
    pub fn data_ptr(&self) -> *mut u8 {
        if self.0.deferred.load(Ordering::Acquire) {
            self.fill_deferred();
        }
        self.0.data.load(Ordering::Acquire)
    }

    #[cold]
    fn fill_deferred(&self) {
        let _g = self.0.grown.lock().unwrap_or_else(|e| e.into_inner());
        if self.0.deferred.load(Ordering::Acquire) {
            // SAFETY: the live buffer owns `nbytes` bytes (a deferred storage is never meta);
            // holding the lock, no other thread fills or replaces it meanwhile.
            unsafe { std::ptr::write_bytes(self.0.data.load(Ordering::Acquire), 0, self.nbytes()) };
            self.0.deferred.store(false, Ordering::Release);
        }
    }

    /// Whether the bytes are still unwritten (a deferred storage nobody has read or written).
    pub fn is_deferred(&self) -> bool {
        self.0.deferred.load(Ordering::Acquire)
    }

    /// The base address, without zero-filling a deferred storage.
    ///
    /// # Safety
    /// If [`is_deferred`](Self::is_deferred), the bytes behind the pointer are uninitialised: the
    /// caller must not read any of them, must write every one of the storage's `nbytes` bytes,
    /// and then call [`assume_init`](Self::assume_init), with no other handle reading or writing
    /// the storage in between (in practice: the storage was just allocated for a kernel output
    /// that is not visible to anyone else yet).
    #[inline]
    pub unsafe fn data_ptr_for_overwrite(&self) -> *mut u8 {
        self.0.data.load(Ordering::Acquire)
    }

    /// Marks a deferred storage as written.
    ///
    /// # Safety
    /// Every byte of the storage has been written since it was allocated (see
    /// [`data_ptr_for_overwrite`](Self::data_ptr_for_overwrite)).
    #[inline]
    pub unsafe fn assume_init(&self) {
        if self.0.deferred.load(Ordering::Relaxed) {
            self.0.deferred.store(false, Ordering::Release);
        }
    }

    /// Whether two storages are the same allocation.
    pub fn is_alias_of(&self, other: &Storage) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// Grows the storage to at least `nbytes`, keeping its contents (shrinking never happens, as
    /// in PyTorch). Every tensor sharing the storage sees the new buffer.
    pub fn grow(&self, nbytes: usize) -> Result<()> {
        let old = self.nbytes();
        if nbytes <= old {
            return Ok(());
        }
        if self.0.device == Device::Meta {
            let _g = self.0.grown.lock().unwrap_or_else(|e| e.into_inner());
            self.0.nbytes.store(nbytes.max(self.nbytes()), Ordering::Release);
            return Ok(());
        }
        // Zero-fill a deferred storage before its contents are copied (before taking the lock,
        // which `data_ptr` takes to fill).
        let _ = self.data_ptr();
        let mut bufs = self.0.grown.lock().unwrap_or_else(|e| e.into_inner());
        let old = self.nbytes();
        if nbytes <= old {
            return Ok(());
        }
        let b = Buffer::zeroed(nbytes)?;
        // SAFETY: both buffers are live for this call; `old` bytes fit in both.
        unsafe { std::ptr::copy_nonoverlapping(self.0.data.load(Ordering::Acquire), b.ptr.as_ptr(), old) };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deferred_storage_reads_as_zeros() {
        let s = Storage::new_deferred(1000, Device::Cpu).unwrap();
        assert!(s.is_deferred());
        let p = s.data_ptr();
        assert!(!s.is_deferred());
        // SAFETY: `data_ptr` zero-filled the 1000 bytes.
        let bytes = unsafe { std::slice::from_raw_parts(p, 1000) };
        assert!(bytes.iter().all(|&b| b == 0));
    }

    #[test]
    fn overwritten_storage_keeps_its_contents() {
        let s = Storage::new_deferred(64, Device::Cpu).unwrap();
        // SAFETY: all 64 bytes are written before `assume_init`, and nothing else sees `s`.
        unsafe {
            let p = s.data_ptr_for_overwrite();
            std::ptr::write_bytes(p, 7, 64);
            s.assume_init();
        }
        assert!(!s.is_deferred());
        // SAFETY: the 64 bytes were written above.
        let bytes = unsafe { std::slice::from_raw_parts(s.data_ptr(), 64) };
        assert!(bytes.iter().all(|&b| b == 7));
    }

    /// Serialises the tests that look into the cache (one of them empties it).
    static CACHE_TESTS: Mutex<()> = Mutex::new(());

    #[test]
    fn large_buffers_are_reused_and_still_read_as_zeros() {
        let _serial = CACHE_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let n = CACHE_MIN + 4096;
        let s = Storage::new_deferred(n, Device::Cpu).unwrap();
        // SAFETY: all `n` bytes are written before `assume_init`; nothing else sees `s`.
        unsafe {
            std::ptr::write_bytes(s.data_ptr_for_overwrite(), 0xab, n);
            s.assume_init();
        }
        drop(s);
        // Whether or not the same buffer comes back (other tests allocate concurrently), a new
        // storage reads as zeros, deferred or not.
        for deferred in [true, false] {
            let s = if deferred { Storage::new_deferred(n, Device::Cpu) } else { Storage::new(n, Device::Cpu) };
            let s = s.unwrap();
            // SAFETY: `data_ptr` returns `n` initialised bytes.
            let bytes = unsafe { std::slice::from_raw_parts(s.data_ptr(), n) };
            assert!(bytes.iter().all(|&b| b == 0));
        }
        assert!(cached_bytes() <= CACHE_MAX_BYTES);
        empty_cache();
    }

    #[test]
    fn buffers_from_glibc_thresholds_are_reused() {
        // Sizes no other test allocates, past glibc's free-list consolidation threshold (64 KiB:
        // a 64 x 256 f32 activation) and its mmap threshold (128 KiB: an 800 KB weight gradient
        // made every training step went back to the kernel on each free when only buffers from
        // 1 MiB were kept).
        for n in [(64 << 10) + 2 * 4096 + 64, (128 << 10) + 3 * 4096 + 64] {
            let _serial = CACHE_TESTS.lock().unwrap_or_else(|e| e.into_inner());
            let first = Storage::new_deferred(n, Device::Cpu).unwrap();
            // SAFETY: only the address is read.
            let p = unsafe { first.data_ptr_for_overwrite() };
            drop(first);
            assert!(cache_lock().buffers.iter().any(|b| b.nbytes == n), "a freed {n}-byte buffer is kept");
            let again = Storage::new_deferred(n, Device::Cpu).unwrap();
            // SAFETY: as above.
            assert_eq!(unsafe { again.data_ptr_for_overwrite() }, p);
            // Reused bytes still read as zeros.
            // SAFETY: `data_ptr` returns `n` initialised bytes.
            let bytes = unsafe { std::slice::from_raw_parts(again.data_ptr(), n) };
            assert!(bytes.iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn growing_a_deferred_storage_gives_zeros() {
        let s = Storage::new_deferred(16, Device::Cpu).unwrap();
        s.grow(4096).unwrap();
        assert_eq!(s.nbytes(), 4096);
        // SAFETY: grow zero-filled the old bytes and allocated the rest zeroed.
        let bytes = unsafe { std::slice::from_raw_parts(s.data_ptr(), 4096) };
        assert!(bytes.iter().all(|&b| b == 0));
        let m = Storage::new_deferred(16, Device::Meta).unwrap();
        assert!(!m.is_deferred() && m.data_ptr().is_null());
    }
}
