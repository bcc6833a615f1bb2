//! `TensorIterator`: the built iteration (operands, coalesced shape, byte strides) and the
//! drivers that walk it in 2-D chunks, serially or in parallel.

use super::copy_stub::copy_stub;
use super::operand::Operand;
use super::small::{Small, SmallVec};
use crate::device::Device;
use crate::dimvec::DimVec;
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::Tensor;
use std::ops::Range;

/// The signature of a 2-D inner loop: data pointers (outputs first), byte strides (every
/// operand's inner stride, then every operand's outer stride), inner size, outer size.
pub(crate) type Loop2d<'a> = dyn FnMut(&[*mut u8], &[isize], usize, usize) + 'a;

/// Side of the tiles of [`TensorIterator::tiled_2d`] (elements of up to 4 bytes; half for wider).
const TILE: usize = 64;
/// Iterations smaller than this are not worth tiling.
const TILED_MIN: usize = 4 * TILE * TILE;

/// Copies the `ti × tj` tile at `src` (element `(i, j)` at `src + i·s0 + j·e`) into `dst` with
/// `(i, j)` at `dst + (j·ti + i)·e`: contiguous along `i`.
///
/// # Safety
/// Every source element addressed is valid to read, `dst` has room for `ti·tj` elements of `e`
/// bytes and is suitably aligned, and `e` is 1, 2, 4 or 8.
unsafe fn transpose_tile(src: *const u8, s0: isize, dst: *mut u8, ti: usize, tj: usize, e: isize) {
    #[inline(always)]
    unsafe fn go<W: Copy>(src: *const u8, s0: isize, dst: *mut W, ti: usize, tj: usize) {
        for i in 0..ti {
            let row = src.wrapping_offset(i as isize * s0) as *const W;
            for j in 0..tj {
                // SAFETY: forwarded from `transpose_tile`: (i, j) lies in the tile.
                unsafe { *dst.add(j * ti + i) = std::ptr::read_unaligned(row.add(j)) };
            }
        }
    }
    // SAFETY: forwarded to `go`, with the word type of the element size.
    unsafe {
        match e {
            1 => go::<u8>(src, s0, dst, ti, tj),
            2 => go::<u16>(src, s0, dst as *mut u16, ti, tj),
            4 => go::<u32>(src, s0, dst as *mut u32, ti, tj),
            _ => go::<u64>(src, s0, dst as *mut u64, ti, tj),
        }
    }
}

/// Operands whose per-call scratch arrays live on the stack.
pub(crate) const MAX_INLINE_OPERANDS: usize = 4;

/// [`Loop2d`] shared between threads.
type SyncLoop2d<'a> = dyn Fn(&[*mut u8], &[isize], usize, usize) + Sync + 'a;

/// A built iteration over broadcast operands. See the [module docs](super).
pub struct TensorIterator {
    pub(crate) operands: SmallVec<Operand, MAX_INLINE_OPERANDS>,
    pub(crate) noutputs: usize,
    /// Iteration shape after reordering (fastest dim first) and coalescing.
    pub(crate) shape: DimVec,
    /// The broadcast shape, in the operands' dim order.
    pub(crate) full_shape: DimVec,
    pub(crate) common_dtype: Option<DType>,
    pub(crate) device: Device,
    pub(crate) is_reduction: bool,
}

/// A raw pointer that may cross threads (an operand's base address, handed to parallel loops).
#[derive(Clone, Copy)]
pub struct SendPtr(pub *mut u8);
impl SendPtr {
    /// The pointer (a method, so closures capture the whole `SendPtr`, not the raw field).
    #[inline(always)]
    pub fn get(self) -> *mut u8 {
        self.0
    }
}
// SAFETY: the pointer is only an address; each parallel chunk dereferences disjoint elements of
// the outputs (chunks partition the iteration range) and only reads the inputs.
unsafe impl Send for SendPtr {}
// SAFETY: as above; sharing the address itself is harmless.
unsafe impl Sync for SendPtr {}

/// How many chunks to split `n` elements into: 1 (serial) below `grain`, with one thread, or
/// when already inside a parallel loop (nested parallelism runs serially, as in PyTorch); see
/// [`crate::parallel`].
pub fn parallel_chunks(n: usize, grain: usize) -> usize {
    // Small loops never touch the pool.
    if n < grain.max(1) {
        return 1;
    }
    let threads = crate::parallel::threads_now();
    if threads <= 1 {
        return 1;
    }
    threads.min(n.div_ceil(grain.max(1)))
}

impl TensorIterator {
    pub fn ntensors(&self) -> usize {
        self.operands.len()
    }
    pub fn noutputs(&self) -> usize {
        self.noutputs
    }
    pub fn ninputs(&self) -> usize {
        self.operands.len() - self.noutputs
    }
    /// The iteration shape after reordering and coalescing (fastest dim first).
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// The broadcast shape, in the operands' dim order.
    pub fn broadcast_shape(&self) -> &[i64] {
        &self.full_shape
    }
    pub fn numel(&self) -> i64 {
        self.shape.iter().product()
    }
    /// The dtype computations run in: the promoted input dtype (the output's when there are no
    /// inputs).
    pub fn common_dtype(&self) -> DType {
        self.common_dtype.or_else(|| self.operands.first().and_then(|o| o.dtype)).unwrap_or(DType::F32)
    }
    /// The dtype the kernel sees for operand `arg` (outputs first).
    pub fn dtype(&self, arg: usize) -> DType {
        self.operands[arg].dtype.expect("every operand has a dtype after build")
    }
    pub fn device(&self) -> Device {
        self.device
    }
    pub fn is_meta(&self) -> bool {
        self.device == Device::Meta
    }
    pub fn is_reduction(&self) -> bool {
        self.is_reduction
    }
    /// The user-visible output `i` (not a cast temporary).
    pub fn output(&self, i: usize) -> &Tensor {
        assert!(i < self.noutputs, "output index {i} out of range");
        self.operands[i].user_tensor().expect("outputs are defined after build")
    }
    /// The user's input `i` (not a dtype-converted copy).
    pub fn input(&self, i: usize) -> &Tensor {
        self.operands[self.noutputs + i].user_tensor().expect("inputs are defined")
    }
    /// The tensor the kernel actually reads or writes for operand `arg` (outputs first): a cast
    /// temporary, a converted input, or a reduction view when those exist.
    pub fn operand(&self, arg: usize) -> &Tensor {
        self.operands[arg].tensor.as_ref().expect("operands are defined after build")
    }
    /// Byte strides of operand `arg`, one per iteration dim.
    pub fn strides(&self, arg: usize) -> &[i64] {
        &self.operands[arg].stride_bytes
    }
    /// Address of operand `arg`'s first element (null on meta).
    pub fn data_ptr(&self, arg: usize) -> *mut u8 {
        self.operand(arg).data_ptr()
    }
    /// Whether `cast_outputs` has work to do.
    pub fn has_cast_outputs(&self) -> bool {
        self.operands.iter().any(|o| o.needs_cast_back)
    }
    /// One dim after coalescing, with every operand at its element size.
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 1 {
            return true;
        }
        self.shape.len() == 1
            && self
                .operands
                .iter()
                .all(|o| o.stride_bytes[0] == o.tensor.as_ref().map_or(0, |t| t.dtype().size() as i64))
    }

    /// The operands' base addresses. With `overwrite`, outputs that the kernel writes in full
    /// (write-only, not a reduction) and whose storage is deferred are not zero-filled; the
    /// returned flag says whether any was, and [`finish_overwrite`](Self::finish_overwrite) must
    /// then be called once every output element has been written.
    #[inline]
    fn base_ptrs(&self, overwrite: bool) -> (Small<SendPtr, MAX_INLINE_OPERANDS>, bool) {
        let mut ptrs = Small::filled(self.operands.len(), SendPtr(std::ptr::null_mut()));
        let mut deferred = false;
        for (k, o) in self.operands.iter().enumerate() {
            let Some(t) = o.tensor.as_ref() else { continue };
            let writes_all = overwrite && o.is_output && !o.is_read_write && !self.is_reduction;
            ptrs[k] = if writes_all && o.fresh {
                let st = t.storage();
                deferred |= st.is_deferred();
                // SAFETY: the caller (`for_each_writing`) runs a loop that writes every element
                // of every output over the whole iteration, which for a write-only output of a
                // non-reduction is every element of the tensor, here all of its storage (a
                // fresh output); it was allocated by this iterator's build and is not visible
                // to anyone else while the kernel runs; `finish_overwrite` marks the storage
                // written afterwards.
                SendPtr(unsafe { st.data_ptr_for_overwrite() })
            } else if writes_all {
                // SAFETY: as above; `data_ptr_for_overwrite` checks that the output covers its
                // storage before leaving it unfilled.
                let (p, d) = unsafe { t.data_ptr_for_overwrite() };
                deferred |= d;
                SendPtr(p)
            } else if let Some(off) = o.offset_bytes {
                SendPtr(t.storage().data_ptr().wrapping_offset(off))
            } else {
                SendPtr(t.data_ptr())
            };
        }
        (ptrs, deferred)
    }

    /// The operands' base addresses (outputs first) for a device kernel that writes every
    /// element of every output: fresh outputs are not zero-filled first, and are marked written.
    ///
    /// # Safety
    /// The caller queues a kernel that writes every element of every output of this (non-
    /// reduction) iteration before anything else reads them (on a stream-ordered device, before
    /// any later work on the stream).
    pub unsafe fn device_ptrs_for_overwrite(&self) -> Vec<*mut u8> {
        let (ptrs, deferred) = self.base_ptrs(!self.is_reduction);
        if deferred {
            self.finish_overwrite();
        }
        ptrs.iter().map(|p| p.get()).collect()
    }

    /// Marks the outputs' deferred storages as written (after a `for_each_writing` loop).
    fn finish_overwrite(&self) {
        for o in self.operands[..self.noutputs].iter() {
            if let Some(t) = o.tensor.as_ref() {
                // SAFETY: called only after a loop that wrote every element of the outputs whose
                // storages `base_ptrs` left deferred; for any other storage this is a no-op
                // (it is no longer deferred: `data_ptr` zero-filled it).
                unsafe { t.storage().assume_init() };
            }
        }
    }

    /// Runs `loop2d` over the whole iteration space; in parallel chunks of the flattened index
    /// range when `numel >= grain` (see [`GRAIN_SIZE`](super::GRAIN_SIZE)). Does nothing on
    /// meta or when empty. The closure is called through `&dyn`, so the driver is compiled
    /// once, not once per kernel.
    pub fn for_each<F>(&self, loop2d: F, grain: usize)
    where
        F: Fn(&[*mut u8], &[isize], usize, usize) + Sync,
    {
        self.for_each_dyn(&loop2d, grain, false)
    }

    /// [`for_each`](Self::for_each) for a loop that writes every element of every output (the
    /// typed elementwise loops and the copy loops of a host backend): outputs the iterator allocated are then
    /// written once, never zero-filled first.
    pub fn for_each_writing<F>(&self, loop2d: F, grain: usize)
    where
        F: Fn(&[*mut u8], &[isize], usize, usize) + Sync,
    {
        self.for_each_dyn(&loop2d, grain, true)
    }

    fn for_each_dyn(&self, f: &SyncLoop2d<'_>, grain: usize, overwrite: bool) {
        let n = self.numel() as usize;
        if n == 0 || self.is_meta() {
            return;
        }
        let (base, deferred) = self.base_ptrs(overwrite);
        let chunks = parallel_chunks(n, grain);
        if overwrite && n >= TILED_MIN && self.tiled_2d(&base, f, chunks) {
            // Done tile by tile (an input transposed relative to the outputs).
        } else if chunks <= 1 && self.shape.len() <= 1 && self.operands.len() <= MAX_INLINE_OPERANDS {
            // One flat run on this thread (the usual case for small tensors): straight to the loop.
            let nt = self.operands.len();
            let mut ptrs = [std::ptr::null_mut(); MAX_INLINE_OPERANDS];
            let mut strides = [0isize; 2 * MAX_INLINE_OPERANDS];
            for (k, o) in self.operands.iter().enumerate() {
                ptrs[k] = base[k].get();
                strides[k] = o.stride_bytes.first().copied().unwrap_or(0) as isize;
            }
            // Outer strides (unused with one row) stay 0; the layout is [inner.., outer..].
            f(&ptrs[..nt], &strides[..2 * nt], n, 1);
        } else if chunks <= 1 {
            self.serial_dyn(&base, &mut |p, s, a, b| f(p, s, a, b), 0..n);
        } else {
            let step = n.div_ceil(chunks);
            crate::parallel::for_each(chunks, |c| {
                let r = c * step..((c + 1) * step).min(n);
                self.serial_dyn(&base, &mut |p, s, a, b| f(p, s, a, b), r);
            });
        }
        if deferred {
            self.finish_overwrite();
        }
    }

    /// A 2-D iteration where the outputs are contiguous along the inner dim but some inputs are
    /// contiguous along the outer one (`x.t() + y`): walking it row by row reads those inputs
    /// with a stride of a whole row, one cache line per element. Instead the iteration is cut
    /// into square tiles; each such input's tile is transposed into a small buffer (in L1), and
    /// `f` runs on the tile with every operand contiguous along the inner dim, so its vectorized
    /// path applies. Column bands of tiles are split across threads. Returns false (nothing
    /// done) when the iteration does not have that shape.
    // Never inlined: its tile buffers (64 kB of stack) would otherwise be reserved, page by
    // page, on every call of `for_each_dyn`, tiny tensors included.
    #[inline(never)]
    fn tiled_2d(&self, base: &[SendPtr], f: &SyncLoop2d<'_>, chunks: usize) -> bool {
        let nt = self.operands.len();
        if self.shape.len() != 2 || self.is_reduction || nt > MAX_INLINE_OPERANDS {
            return false;
        }
        let mut transposed = [false; MAX_INLINE_OPERANDS];
        let mut es = [0isize; MAX_INLINE_OPERANDS];
        let mut max_es = 1;
        for (k, o) in self.operands.iter().enumerate() {
            let Some(t) = o.tensor.as_ref() else { return false };
            let e = t.dtype().size() as isize;
            let (s0, s1) = (o.stride_bytes[0] as isize, o.stride_bytes[1] as isize);
            es[k] = e;
            max_es = max_es.max(e);
            if s0 == e || (s0 == 0 && !o.is_output) {
                continue;
            }
            if o.is_output || s1 != e {
                return false;
            }
            transposed[k] = true;
        }
        if !transposed.iter().any(|&t| t) {
            return false;
        }
        let tile = if max_es > 4 { TILE / 2 } else { TILE };
        let (n0, n1) = (self.shape[0] as usize, self.shape[1] as usize);
        let bands = n1.div_ceil(tile);
        let per = bands.div_ceil(chunks.clamp(1, bands));
        let run = |band_lo: usize| {
            let mut bufs = [[0u64; TILE * TILE / 2]; MAX_INLINE_OPERANDS];
            let mut ptrs = [std::ptr::null_mut::<u8>(); MAX_INLINE_OPERANDS];
            let mut strides = [0isize; 2 * MAX_INLINE_OPERANDS];
            for band in band_lo..(band_lo + per).min(bands) {
                let j0 = band * tile;
                let tj = tile.min(n1 - j0);
                for i0 in (0..n0).step_by(tile) {
                    let ti = tile.min(n0 - i0);
                    for (k, o) in self.operands.iter().enumerate() {
                        let (s0, s1) = (o.stride_bytes[0] as isize, o.stride_bytes[1] as isize);
                        let at = base[k].get().wrapping_offset(i0 as isize * s0 + j0 as isize * s1);
                        if transposed[k] {
                            let buf = bufs[k].as_mut_ptr() as *mut u8;
                            // SAFETY: the tile (i0..i0+ti, j0..j0+tj) lies in the iteration
                            // shape, so every source element is a valid element of input k; the
                            // buffer holds ti·tj ≤ tile² elements of es[k] <= 8 bytes (16 KiB
                            // for 4-byte elements and 64-wide tiles, 8 KiB for 8-byte ones).
                            unsafe { transpose_tile(at, s0, buf, ti, tj, es[k]) };
                            ptrs[k] = buf;
                            strides[k] = es[k];
                            strides[nt + k] = ti as isize * es[k];
                        } else {
                            ptrs[k] = at;
                            strides[k] = s0;
                            strides[nt + k] = s1;
                        }
                    }
                    f(&ptrs[..nt], &strides[..2 * nt], ti, tj);
                }
            }
        };
        if chunks <= 1 {
            run(0);
        } else {
            crate::parallel::for_each(bands.div_ceil(per), |c| run(c * per));
        }
        true
    }

    /// Runs `loop2d` over the flattened index `range` on this thread.
    pub fn serial_for_each(&self, mut loop2d: impl FnMut(&[*mut u8], &[isize], usize, usize), range: Range<usize>) {
        if self.is_meta() {
            return;
        }
        let (base, _) = self.base_ptrs(false);
        let end = range.end.min(self.numel() as usize);
        self.serial_dyn(&base, &mut loop2d, range.start..end);
    }

    /// Walks `range` in the largest 2-D steps the position allows.
    fn serial_dyn(&self, base: &[SendPtr], f: &mut Loop2d<'_>, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        let nt = self.operands.len();
        let ndim = self.shape.len();
        let mut strides = Small::<isize, { 2 * MAX_INLINE_OPERANDS }>::filled(2 * nt, 0);
        for (k, o) in self.operands.iter().enumerate() {
            if ndim >= 1 {
                strides[k] = o.stride_bytes[0] as isize;
            }
            if ndim >= 2 {
                strides[nt + k] = o.stride_bytes[1] as isize;
            }
        }
        let mut ptrs = Small::<*mut u8, MAX_INLINE_OPERANDS>::filled(nt, std::ptr::null_mut());
        if ndim <= 1 {
            for k in 0..nt {
                ptrs[k] = base[k].get().wrapping_offset(range.start as isize * strides[k]);
            }
            f(&ptrs, &strides, range.len(), 1);
            return;
        }
        let mut shape = Small::<usize, 8>::filled(ndim, 0);
        for (d, &v) in self.shape.iter().enumerate() {
            shape[d] = v as usize;
        }
        // Multi-index of range.start, fastest dim first.
        let mut idx = Small::<usize, 8>::filled(ndim, 0);
        let mut rem = range.start;
        for d in 0..ndim {
            idx[d] = rem % shape[d];
            rem /= shape[d];
        }
        let mut pos = range.start;
        while pos < range.end {
            for (k, o) in self.operands.iter().enumerate() {
                let off: i64 = idx.iter().zip(o.stride_bytes.iter()).map(|(&i, &s)| i as i64 * s).sum();
                ptrs[k] = base[k].get().wrapping_offset(off as isize);
            }
            let left = range.end - pos;
            let n0 = (shape[0] - idx[0]).min(left);
            let mut n1 = 1;
            if idx[0] == 0 && n0 == shape[0] {
                n1 = (shape[1] - idx[1]).min(left / shape[0]).max(1);
            }
            f(&ptrs, &strides, n0, n1);
            pos += n0 * n1;
            if idx[0] + n0 == shape[0] {
                idx[0] = 0;
                idx[1] += n1;
                let mut d = 1;
                while d + 1 < ndim && idx[d] >= shape[d] {
                    idx[d] = 0;
                    idx[d + 1] += 1;
                    d += 1;
                }
            } else {
                idx[0] += n0;
            }
        }
    }

    /// Copies cast temporaries back into the user's outputs (no-op when there are none, and on
    /// meta).
    pub fn cast_outputs(&self) -> Result<()> {
        for o in self.operands.iter().filter(|o| o.needs_cast_back) {
            if let (Some(user), Some(tmp)) = (&o.original, &o.tensor) {
                copy_stub(user, tmp)?;
            }
        }
        Ok(())
    }
}
