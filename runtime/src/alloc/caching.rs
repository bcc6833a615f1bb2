//! The bookkeeping of a caching device allocator, modelled on PyTorch's
//! `CUDACachingAllocator`: device memory is reserved in segments from a [`SegmentProvider`],
//! handed out as blocks, and kept for reuse when freed.
//!
//! - Requests are rounded up to 512 bytes. Requests up to 1 MiB come from the **small pool**,
//!   whose segments are 2 MiB; larger ones from the **large pool** (20 MiB segments for requests
//!   under 10 MiB, else the request rounded up to 2 MiB).
//! - A free block larger than the request is **split** (small pool: when at least 512 bytes are
//!   left; large pool: when more than 1 MiB is left), and a freed block is **coalesced** with
//!   free neighbours of its segment.
//! - Blocks are reused **per stream**: a segment belongs to the stream it was allocated on. A
//!   block used on another stream ([`record_stream`](CachingAllocator::record_stream)) is
//!   reused only once events recorded on those streams at free time have completed.
//! - When the provider is out of memory, the cached free segments are released and the request
//!   retried; if it still fails the error says how much was requested, allocated, reserved and
//!   free.
//!
//! Nothing here touches a device: the CUDA backend plugs in the driver, and the unit tests an
//! in-memory provider.

use crate::error::{Error, ErrorKind, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// Requests are rounded up to a multiple of this.
pub const MIN_BLOCK: usize = 512;
/// Largest request served from the small pool.
pub const SMALL_SIZE: usize = 1 << 20;
/// The event of a stream whose event could not be recorded: never complete.
const NEVER: u64 = u64::MAX;
/// Segment size of the small pool.
pub const SMALL_SEGMENT: usize = 2 << 20;
/// Segment size for large requests under [`MIN_LARGE_ALLOC`].
pub const LARGE_SEGMENT: usize = 20 << 20;
/// Large requests from this size get a segment of their own, rounded to [`ROUND_LARGE`].
pub const MIN_LARGE_ALLOC: usize = 10 << 20;
/// Rounding of large segments.
pub const ROUND_LARGE: usize = 2 << 20;

/// Where segments come from: the device driver, or memory in a test.
pub trait SegmentProvider: Send + Sync {
    /// Reserves `nbytes` of device memory; `None` when the device is out of memory.
    fn alloc(&self, nbytes: usize) -> Result<Option<u64>>;
    /// Returns a segment to the device.
    fn free(&self, ptr: u64, nbytes: usize);
    /// Records an event on `stream`; returns its handle.
    fn record_event(&self, stream: u64) -> Result<u64>;
    /// Whether the work before event `event` has completed.
    fn event_done(&self, event: u64) -> bool;
    /// Destroys an event.
    fn destroy_event(&self, event: u64);
    /// Device memory free and total, for the out-of-memory message.
    fn mem_info(&self) -> Option<(usize, usize)>;
}

#[derive(Clone, Debug)]
struct Block {
    size: usize,
    /// Base address of the segment the block belongs to.
    segment: u64,
    stream: u64,
    small: bool,
    allocated: bool,
    /// Other streams the block was used on since it was allocated.
    stream_uses: Vec<u64>,
}

/// Byte counts of the allocator (`torch.cuda.memory_stats` subset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes in blocks handed out and not yet freed.
    pub allocated: usize,
    /// Bytes in segments reserved from the device.
    pub reserved: usize,
    /// The most `allocated` has been since the last reset.
    pub peak_allocated: usize,
    /// The most `reserved` has been since the last reset.
    pub peak_reserved: usize,
    /// Segments reserved from the device.
    pub segments: usize,
    /// Times an allocation was retried after releasing the cache.
    pub retries: usize,
}

#[derive(Default)]
struct State {
    /// Every block, keyed by address.
    blocks: BTreeMap<u64, Block>,
    /// Free blocks by pool: (stream, size, address).
    free_small: BTreeSet<(u64, usize, u64)>,
    free_large: BTreeSet<(u64, usize, u64)>,
    /// Segment base → size.
    segments: BTreeMap<u64, usize>,
    /// Freed blocks waiting for events on the streams that used them.
    pending: Vec<(u64, Vec<u64>)>,
    stats: MemoryStats,
}

/// A caching allocator over a [`SegmentProvider`]. See the [module docs](self).
pub struct CachingAllocator<P: SegmentProvider> {
    provider: P,
    state: Mutex<State>,
}

/// `nbytes` rounded up to [`MIN_BLOCK`].
pub fn round_size(nbytes: usize) -> Result<usize> {
    nbytes.max(1).checked_next_multiple_of(MIN_BLOCK).ok_or_else(|| {
        Error::new(ErrorKind::OutOfMemory, format!("cannot allocate {nbytes} bytes: the size overflows"))
    })
}

/// The segment size reserved for a rounded request.
pub fn segment_size(size: usize) -> Result<usize> {
    if size <= SMALL_SIZE {
        Ok(SMALL_SEGMENT)
    } else if size < MIN_LARGE_ALLOC {
        Ok(LARGE_SEGMENT)
    } else {
        size.checked_next_multiple_of(ROUND_LARGE).ok_or_else(|| {
            Error::new(ErrorKind::OutOfMemory, format!("cannot allocate {size} bytes: the size overflows"))
        })
    }
}

/// `1.50 GiB`-style byte counts for messages.
pub fn format_bytes(n: usize) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} bytes")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

impl<P: SegmentProvider> CachingAllocator<P> {
    /// An empty allocator over `provider`.
    pub fn new(provider: P) -> Self {
        CachingAllocator { provider, state: Mutex::new(State::default()) }
    }

    /// The provider (the driver binding of a device, or a test's).
    pub fn provider(&self) -> &P {
        &self.provider
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A block of at least `nbytes` for use on `stream`; returns its address.
    pub fn malloc(&self, nbytes: usize, stream: u64) -> Result<u64> {
        let size = round_size(nbytes)?;
        let mut st = self.lock();
        self.process_pending(&mut st);
        let small = size <= SMALL_SIZE;
        let found = {
            let pool = if small { &st.free_small } else { &st.free_large };
            pool.range((stream, size, 0)..(stream, usize::MAX, u64::MAX)).next().copied()
        };
        let ptr = match found {
            Some(key) => {
                if small {
                    st.free_small.remove(&key);
                } else {
                    st.free_large.remove(&key);
                }
                key.2
            }
            None => self.new_segment(&mut st, size, stream, small, nbytes)?,
        };
        // Split off the rest when it is worth keeping apart.
        let lost = || Error::runtime(format!("caching allocator: block {ptr:#x} is missing from its block map"));
        let block = st.blocks.get_mut(&ptr).ok_or_else(lost)?;
        let rest = block.size - size;
        let split = if small { rest >= MIN_BLOCK } else { rest > SMALL_SIZE };
        if split {
            block.size = size;
            let rem =
                Block { size: rest, segment: block.segment, stream, small, allocated: false, stream_uses: Vec::new() };
            let rem_ptr = ptr + size as u64;
            st.blocks.insert(rem_ptr, rem);
            Self::pool(&mut st, small).insert((stream, rest, rem_ptr));
        }
        let block = st.blocks.get_mut(&ptr).ok_or_else(lost)?;
        block.allocated = true;
        block.stream_uses.clear();
        let got = block.size;
        st.stats.allocated += got;
        st.stats.peak_allocated = st.stats.peak_allocated.max(st.stats.allocated);
        Ok(ptr)
    }

    fn pool(st: &mut State, small: bool) -> &mut BTreeSet<(u64, usize, u64)> {
        if small {
            &mut st.free_small
        } else {
            &mut st.free_large
        }
    }

    fn new_segment(&self, st: &mut State, size: usize, stream: u64, small: bool, requested: usize) -> Result<u64> {
        let seg = segment_size(size)?;
        let ptr = match self.provider.alloc(seg)? {
            Some(p) => p,
            None => {
                // Release every cached segment and try once more.
                st.stats.retries += 1;
                self.release_cached(st);
                match self.provider.alloc(seg)? {
                    Some(p) => p,
                    None => return Err(self.oom(st, requested)),
                }
            }
        };
        st.segments.insert(ptr, seg);
        st.blocks
            .insert(ptr, Block { size: seg, segment: ptr, stream, small, allocated: false, stream_uses: Vec::new() });
        st.stats.reserved += seg;
        st.stats.segments += 1;
        st.stats.peak_reserved = st.stats.peak_reserved.max(st.stats.reserved);
        Ok(ptr)
    }

    fn oom(&self, st: &State, requested: usize) -> Error {
        let (free, total) = self.provider.mem_info().unwrap_or((0, 0));
        let cached = st.stats.reserved - st.stats.allocated;
        Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "CUDA out of memory. Tried to allocate {}. The GPU has a total capacity of {} of which {} is \
                 free. Of the memory in use, {} is allocated by tensors and {} is reserved by oxten but \
                 unallocated (oxten::cuda::empty_cache releases it).",
                format_bytes(requested),
                format_bytes(total),
                format_bytes(free),
                format_bytes(st.stats.allocated),
                format_bytes(cached)
            ),
        )
    }

    /// Marks the block at `ptr` as used on `stream` as well (`Tensor::record_stream`): it is not
    /// reused before the work queued there when it is freed has finished.
    pub fn record_stream(&self, ptr: u64, stream: u64) {
        let mut st = self.lock();
        if let Some(b) = st.blocks.get_mut(&ptr) {
            if b.allocated && b.stream != stream && !b.stream_uses.contains(&stream) {
                b.stream_uses.push(stream);
            }
        }
    }

    /// Frees the block at `ptr` (from [`malloc`](Self::malloc)). Unknown addresses are ignored.
    pub fn free(&self, ptr: u64) {
        let mut st = self.lock();
        let Some(b) = st.blocks.get_mut(&ptr) else { return };
        if !b.allocated {
            return;
        }
        b.allocated = false;
        let size = b.size;
        let uses = std::mem::take(&mut b.stream_uses);
        st.stats.allocated -= size;
        if uses.is_empty() {
            self.insert_free(&mut st, ptr);
        } else {
            // Reusable once every stream that used it has passed this point. A stream whose event
            // cannot be recorded keeps the block out of use for good: a leak, not a reuse while
            // that stream may still read it.
            let events: Vec<u64> = uses.iter().map(|s| self.provider.record_event(*s).unwrap_or(NEVER)).collect();
            st.pending.push((ptr, events));
        }
    }

    /// Puts a freed block back in its pool, merged with free neighbours in its segment.
    fn insert_free(&self, st: &mut State, mut ptr: u64) {
        let Some(b) = st.blocks.get(&ptr).cloned() else { return };
        let mut size = b.size;
        let free_neighbour = |st: &State, p: u64| {
            st.blocks.get(&p).filter(|n| !n.allocated && n.segment == b.segment && !Self::is_pending(st, p)).cloned()
        };
        // Next block.
        let next = ptr + size as u64;
        if let Some(n) = free_neighbour(st, next) {
            Self::pool(st, b.small).remove(&(n.stream, n.size, next));
            st.blocks.remove(&next);
            size += n.size;
        }
        // Previous block.
        if let Some((&pp, _)) = st.blocks.range(..ptr).next_back() {
            if let Some(p) = free_neighbour(st, pp) {
                if pp + p.size as u64 == ptr {
                    Self::pool(st, b.small).remove(&(p.stream, p.size, pp));
                    st.blocks.remove(&ptr);
                    ptr = pp;
                    size += p.size;
                }
            }
        }
        // `ptr` is the block itself or the free neighbour it merged into, both in the map.
        if let Some(blk) = st.blocks.get_mut(&ptr) {
            blk.size = size;
            blk.allocated = false;
            Self::pool(st, b.small).insert((b.stream, size, ptr));
        }
    }

    fn is_pending(st: &State, ptr: u64) -> bool {
        st.pending.iter().any(|(p, _)| *p == ptr)
    }

    /// Returns to the pools the freed blocks whose streams have passed their events.
    fn process_pending(&self, st: &mut State) {
        if st.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut st.pending);
        let mut ready = Vec::new();
        for (ptr, events) in pending {
            if events.iter().all(|e| *e != NEVER && self.provider.event_done(*e)) {
                for e in events {
                    self.provider.destroy_event(e);
                }
                ready.push(ptr);
            } else {
                st.pending.push((ptr, events));
            }
        }
        for p in ready {
            self.insert_free(st, p);
        }
    }

    /// Releases every segment with no allocated block; returns the bytes released.
    fn release_cached(&self, st: &mut State) -> usize {
        self.process_pending(st);
        let whole: Vec<(u64, usize)> = st
            .segments
            .iter()
            .filter(|(p, sz)| {
                st.blocks.get(p).is_some_and(|b| !b.allocated && b.size == **sz && !Self::is_pending(st, **p))
            })
            .map(|(p, s)| (*p, *s))
            .collect();
        let mut released = 0;
        for (p, sz) in whole {
            let Some(b) = st.blocks.remove(&p) else { continue };
            Self::pool(st, b.small).remove(&(b.stream, b.size, p));
            st.segments.remove(&p);
            self.provider.free(p, sz);
            st.stats.reserved -= sz;
            st.stats.segments -= 1;
            released += sz;
        }
        released
    }

    /// Releases every cached segment that holds no live block (`torch.cuda.empty_cache()`).
    pub fn empty_cache(&self) -> usize {
        let mut st = self.lock();
        self.release_cached(&mut st)
    }

    /// The current byte counts.
    pub fn stats(&self) -> MemoryStats {
        self.lock().stats
    }

    /// Resets the peaks to the current values.
    pub fn reset_peak_stats(&self) {
        let mut st = self.lock();
        st.stats.peak_allocated = st.stats.allocated;
        st.stats.peak_reserved = st.stats.reserved;
    }

    /// The size of the block at `ptr` as handed out (rounded), if allocated.
    pub fn block_size(&self, ptr: u64) -> Option<usize> {
        self.lock().blocks.get(&ptr).filter(|b| b.allocated).map(|b| b.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

    /// Device memory as address ranges: a capacity, a bump pointer, and events that complete
    /// when the test says so.
    #[derive(Default)]
    struct FakeDevice {
        capacity: usize,
        used: AtomicUsize,
        next: AtomicU64,
        frees: AtomicUsize,
        events_done: AtomicBool,
        events: AtomicU64,
    }

    impl FakeDevice {
        fn with_capacity(capacity: usize) -> Self {
            FakeDevice { capacity, next: AtomicU64::new(1 << 32), ..Default::default() }
        }
    }

    impl SegmentProvider for FakeDevice {
        fn alloc(&self, n: usize) -> Result<Option<u64>> {
            if self.used.load(Ordering::SeqCst) + n > self.capacity {
                return Ok(None);
            }
            self.used.fetch_add(n, Ordering::SeqCst);
            Ok(Some(self.next.fetch_add(n as u64 + 4096, Ordering::SeqCst)))
        }
        fn free(&self, _p: u64, n: usize) {
            self.used.fetch_sub(n, Ordering::SeqCst);
            self.frees.fetch_add(1, Ordering::SeqCst);
        }
        fn record_event(&self, _s: u64) -> Result<u64> {
            Ok(self.events.fetch_add(1, Ordering::SeqCst))
        }
        fn event_done(&self, _e: u64) -> bool {
            self.events_done.load(Ordering::SeqCst)
        }
        fn destroy_event(&self, _e: u64) {}
        fn mem_info(&self) -> Option<(usize, usize)> {
            Some((self.capacity - self.used.load(Ordering::SeqCst), self.capacity))
        }
    }

    const MIB: usize = 1 << 20;

    #[test]
    fn rounds_requests_and_picks_pools() {
        assert_eq!(round_size(0).unwrap(), 512);
        assert_eq!(round_size(1).unwrap(), 512);
        assert_eq!(round_size(513).unwrap(), 1024);
        assert!(round_size(usize::MAX).is_err());
        assert_eq!(segment_size(512).unwrap(), SMALL_SEGMENT);
        assert_eq!(segment_size(MIB).unwrap(), SMALL_SEGMENT);
        assert_eq!(segment_size(MIB + 512).unwrap(), LARGE_SEGMENT);
        assert_eq!(segment_size(10 * MIB).unwrap(), 10 * MIB);
        assert_eq!(segment_size(11 * MIB).unwrap(), 12 * MIB);
    }

    #[test]
    fn small_blocks_share_a_segment_and_are_reused() {
        let a = CachingAllocator::new(FakeDevice::with_capacity(64 * MIB));
        let p1 = a.malloc(100, 0).unwrap();
        let p2 = a.malloc(1000, 0).unwrap();
        assert_eq!(p2, p1 + 512, "the second block is split off the first one's segment");
        let s = a.stats();
        assert_eq!((s.allocated, s.reserved, s.segments), (512 + 1024, SMALL_SEGMENT, 1));
        a.free(p1);
        assert_eq!(a.stats().allocated, 1024);
        // Same size again: the freed block comes back.
        assert_eq!(a.malloc(200, 0).unwrap(), p1);
    }

    #[test]
    fn freed_neighbours_coalesce_into_the_whole_segment() {
        let a = CachingAllocator::new(FakeDevice::with_capacity(64 * MIB));
        let ps: Vec<u64> = (0..4).map(|_| a.malloc(4096, 0).unwrap()).collect();
        // Free out of order: middle ones, then the ends.
        a.free(ps[1]);
        a.free(ps[2]);
        a.free(ps[0]);
        a.free(ps[3]);
        assert_eq!(a.stats().allocated, 0);
        // Everything merged back: one free block of the segment size, which empty_cache releases.
        assert_eq!(a.empty_cache(), SMALL_SEGMENT);
        let s = a.stats();
        assert_eq!((s.reserved, s.segments), (0, 0));
    }

    #[test]
    fn large_blocks_split_only_when_more_than_a_mebibyte_is_left() {
        let a = CachingAllocator::new(FakeDevice::with_capacity(256 * MIB));
        let p = a.malloc(2 * MIB, 0).unwrap();
        assert_eq!(a.block_size(p), Some(2 * MIB));
        assert_eq!(a.stats().reserved, LARGE_SEGMENT);
        let q = a.malloc(17 * MIB + MIB / 2, 0).unwrap();
        // 18 MiB left after the first block: the second (17.5 MiB) takes the rest whole, as
        // splitting would leave only 0.5 MiB.
        assert_eq!(q, p + 2 * MIB as u64);
        assert_eq!(a.block_size(q), Some(18 * MIB));
        assert_eq!(a.stats().segments, 1);
    }

    #[test]
    fn streams_do_not_share_blocks() {
        let a = CachingAllocator::new(FakeDevice::with_capacity(64 * MIB));
        let p = a.malloc(4096, 1).unwrap();
        a.free(p);
        let q = a.malloc(4096, 2).unwrap();
        assert_ne!(p, q);
        assert_eq!(a.stats().segments, 2);
        assert_eq!(a.malloc(4096, 1).unwrap(), p);
    }

    #[test]
    fn record_stream_delays_reuse_until_the_event_completes() {
        let a = CachingAllocator::new(FakeDevice::with_capacity(64 * MIB));
        let p = a.malloc(4096, 1).unwrap();
        a.record_stream(p, 7);
        a.free(p);
        assert_eq!(a.stats().allocated, 0);
        let q = a.malloc(4096, 1).unwrap();
        assert_ne!(p, q, "still in use on stream 7");
        a.provider().events_done.store(true, Ordering::SeqCst);
        a.free(q);
        assert_eq!(a.malloc(4096, 1).unwrap(), p);
    }

    #[test]
    fn a_block_whose_event_cannot_be_recorded_is_never_reused() {
        struct NoEvents(FakeDevice);
        impl SegmentProvider for NoEvents {
            fn alloc(&self, n: usize) -> Result<Option<u64>> {
                self.0.alloc(n)
            }
            fn free(&self, p: u64, n: usize) {
                self.0.free(p, n)
            }
            fn record_event(&self, _s: u64) -> Result<u64> {
                Err(Error::runtime("no events"))
            }
            fn event_done(&self, _e: u64) -> bool {
                true
            }
            fn destroy_event(&self, _e: u64) {}
            fn mem_info(&self) -> Option<(usize, usize)> {
                self.0.mem_info()
            }
        }
        let a = CachingAllocator::new(NoEvents(FakeDevice::with_capacity(64 * MIB)));
        let p = a.malloc(4096, 1).unwrap();
        a.record_stream(p, 7);
        a.free(p);
        for _ in 0..3 {
            assert_ne!(a.malloc(4096, 1).unwrap(), p);
        }
    }

    #[test]
    fn out_of_memory_releases_the_cache_then_reports() {
        let a = CachingAllocator::new(FakeDevice::with_capacity(40 * MIB));
        let p = a.malloc(20 * MIB, 0).unwrap();
        a.free(p);
        assert_eq!(a.stats().reserved, 20 * MIB);
        // 30 MiB does not fit next to the cached 20 MiB segment: the cache is released first.
        let q = a.malloc(30 * MIB, 0).unwrap();
        let s = a.stats();
        assert_eq!((s.reserved, s.retries, a.provider().frees.load(Ordering::SeqCst)), (30 * MIB, 1, 1));
        let e = a.malloc(30 * MIB, 0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfMemory);
        let m = e.to_string();
        assert!(m.contains("Tried to allocate 30.00 MiB"), "{m}");
        assert!(m.contains("30.00 MiB is allocated by tensors"), "{m}");
        assert!(m.contains("total capacity of 40.00 MiB of which 10.00 MiB is free"), "{m}");
        a.free(q);
    }

    #[test]
    fn peaks_follow_and_reset() {
        let a = CachingAllocator::new(FakeDevice::with_capacity(64 * MIB));
        let p = a.malloc(3 * MIB, 0).unwrap();
        a.free(p);
        let s = a.stats();
        assert_eq!((s.allocated, s.peak_allocated), (0, 3 * MIB));
        a.reset_peak_stats();
        assert_eq!(a.stats().peak_allocated, 0);
    }
}
