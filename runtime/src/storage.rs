//! Storage: the reference-counted buffer that tensors and their views share. Its memory comes
//! from the [`Allocator`] registered for its device ([`crate::alloc`]), as a [`DataPtr`] that
//! knows how to free itself; the storage never looks at the device.
//!
//! A storage is either zero-filled when it is made ([`Storage::new`], what `empty` uses), or
//! *deferred* ([`Storage::new_deferred`]): its bytes are not written when allocated, and the first
//! [`Storage::data_ptr`] zero-fills them. Reading a storage therefore always gives initialised
//! memory, while a kernel that is about to overwrite every byte (a TensorIterator output) can skip
//! the zero-fill with [`Storage::data_ptr_for_overwrite`] and [`Storage::assume_init`].

use crate::alloc::{allocator_for, Allocator, DataPtr, INLINE_BYTES};
use crate::device::Device;
use crate::error::Result;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The inline buffer: 16-byte aligned, like a small heap buffer.
#[repr(C, align(16))]
struct InlineBuf(UnsafeCell<[u8; INLINE_BYTES]>);

struct StorageImpl {
    device: Device,
    /// Where the memory came from: grows and deferred zero-fills go through it.
    allocator: &'static dyn Allocator,
    data: AtomicPtr<u8>,
    nbytes: AtomicUsize,
    /// The allocation the storage was made with (without data on meta and for inline bytes);
    /// owned here so that it is freed with the storage.
    #[allow(dead_code)]
    first: DataPtr,
    /// Every allocation that replaced it on a resize. Old ones are kept until the storage dies so
    /// that a pointer obtained before a resize never dangles. (Empty, so not allocated, unless a
    /// resize happened.)
    grown: Mutex<Vec<DataPtr>>,
    /// The version counter shared by every tensor viewing this storage; bumped by in-place ops.
    version: AtomicU64,
    /// The live buffer's bytes have not been written yet (a deferred storage): the next
    /// `data_ptr` zero-fills them.
    deferred: AtomicBool,
    /// The bytes of a tiny storage whose allocator allows it ([`Allocator::inline_bytes`];
    /// `first` is then empty); always zero-initialised.
    inline: InlineBuf,
}

// SAFETY: the only non-Sync part is the inline buffer, raw bytes handed out as pointers exactly
// like a heap allocation's (synchronising element access is the caller's business).
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
        let allocator = allocator_for(device)?;
        if nbytes != 0 && nbytes <= allocator.inline_bytes() {
            let s = Storage(Arc::new(StorageImpl {
                device,
                allocator,
                data: AtomicPtr::new(std::ptr::null_mut()),
                nbytes: AtomicUsize::new(nbytes),
                first: DataPtr::without_data(std::ptr::null_mut(), 0, device),
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
        let first =
            if deferred { allocator.allocate(nbytes, device)? } else { allocator.allocate_zeroed(nbytes, device)? };
        Ok(Storage(Arc::new(StorageImpl {
            device,
            allocator,
            data: AtomicPtr::new(first.get()),
            nbytes: AtomicUsize::new(nbytes),
            first,
            grown: Mutex::new(Vec::new()),
            version: AtomicU64::new(0),
            deferred: AtomicBool::new(deferred && nbytes != 0 && allocator.has_data()),
            inline: InlineBuf(UnsafeCell::new([0; INLINE_BYTES])),
        })))
    }

    /// A storage over memory that something else allocated (a memory-mapped file, a buffer from
    /// another library): `data` frees it, through its deleter, when the storage dies. Resizes
    /// allocate from `device`'s allocator as usual.
    ///
    /// # Safety
    /// The `data.nbytes()` bytes at `data.get()` must be initialised and writable (tensors read
    /// and write them as elements), and nothing else may write them while the storage lives.
    pub unsafe fn from_data_ptr(data: DataPtr, device: Device) -> Result<Storage> {
        let allocator = allocator_for(device)?;
        Ok(Storage(Arc::new(StorageImpl {
            device,
            allocator,
            data: AtomicPtr::new(data.get()),
            nbytes: AtomicUsize::new(data.nbytes()),
            first: data,
            grown: Mutex::new(Vec::new()),
            version: AtomicU64::new(0),
            deferred: AtomicBool::new(false),
            inline: InlineBuf(UnsafeCell::new([0; INLINE_BYTES])),
        })))
    }

    /// The allocator the storage's memory comes from.
    pub fn allocator(&self) -> &'static dyn Allocator {
        self.0.allocator
    }
    #[inline]
    pub fn device(&self) -> Device {
        self.0.device
    }
    #[inline]
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
            // SAFETY: the live allocation owns `nbytes` bytes of the allocator's memory (a
            // deferred storage always has data); holding the lock, no other thread fills or
            // replaces it meanwhile.
            let filled = unsafe { self.0.allocator.memset(self.0.data.load(Ordering::Acquire), 0, self.nbytes()) };
            // A device whose memset fails leaves the storage deferred, to be tried again.
            if filled.is_ok() {
                self.0.deferred.store(false, Ordering::Release);
            }
        }
    }

    /// Whether the bytes are still unwritten (a deferred storage nobody has read or written).
    #[inline]
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
    #[inline]
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
        if !self.0.allocator.has_data() {
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
        let b = self.0.allocator.allocate_zeroed(nbytes, self.0.device)?;
        // SAFETY: both allocations are live for this call and distinct; `old` bytes fit in both.
        unsafe { self.0.allocator.copy_on_device(b.get(), self.0.data.load(Ordering::Acquire), old)? };
        self.0.data.store(b.get(), Ordering::Release);
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

    use crate::alloc::{cache_holds, cached_bytes, empty_cache, CACHE_MAX_BYTES, CACHE_MIN};

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
            assert!(cache_holds(n), "a freed {n}-byte buffer is kept");
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
