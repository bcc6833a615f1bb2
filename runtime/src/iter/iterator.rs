//! `TensorIterator`: the built iteration (operands, coalesced shape, byte strides) and the
//! drivers that walk it in 2-D chunks, serially or in parallel.

use super::copy::copy_;
use super::operand::Operand;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::Tensor;
use rayon::prelude::*;
use std::ops::Range;

/// The signature of a 2-D inner loop: data pointers (outputs first), byte strides (every
/// operand's inner stride, then every operand's outer stride), inner size, outer size.
pub(crate) type Loop2d<'a> = dyn FnMut(&[*mut u8], &[isize], usize, usize) + 'a;

/// [`Loop2d`] shared between threads.
type SyncLoop2d<'a> = dyn Fn(&[*mut u8], &[isize], usize, usize) + Sync + 'a;

/// A built iteration over broadcast operands. See the [module docs](super).
pub struct TensorIterator {
    pub(crate) operands: Vec<Operand>,
    pub(crate) noutputs: usize,
    /// Iteration shape after reordering (fastest dim first) and coalescing.
    pub(crate) shape: Vec<i64>,
    /// The broadcast shape, in the operands' dim order.
    pub(crate) full_shape: Vec<i64>,
    pub(crate) common_dtype: Option<DType>,
    pub(crate) device: Device,
    pub(crate) is_reduction: bool,
}

/// A raw pointer that may cross threads.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr(pub *mut u8);
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
/// when already on a rayon worker (nested parallelism runs serially, as in PyTorch).
pub(crate) fn parallel_chunks(n: usize, grain: usize) -> usize {
    let threads = rayon::current_num_threads();
    if n < grain.max(1) || threads <= 1 || rayon::current_thread_index().is_some() {
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

    fn base_ptrs(&self) -> Vec<SendPtr> {
        self.operands
            .iter()
            .map(|o| SendPtr(o.tensor.as_ref().map_or(std::ptr::null_mut(), Tensor::data_ptr)))
            .collect()
    }

    /// Runs `loop2d` over the whole iteration space; in parallel chunks of the flattened index
    /// range when `numel >= grain` (see [`GRAIN_SIZE`](super::GRAIN_SIZE)). Does nothing on
    /// meta or when empty. The closure is called through `&dyn`, so the driver is compiled
    /// once, not once per kernel.
    pub fn for_each<F>(&self, loop2d: F, grain: usize)
    where
        F: Fn(&[*mut u8], &[isize], usize, usize) + Sync,
    {
        self.for_each_dyn(&loop2d, grain)
    }

    fn for_each_dyn(&self, f: &SyncLoop2d<'_>, grain: usize) {
        let n = self.numel() as usize;
        if n == 0 || self.is_meta() {
            return;
        }
        let base = self.base_ptrs();
        let chunks = parallel_chunks(n, grain);
        if chunks <= 1 {
            self.serial_dyn(&base, &mut |p, s, a, b| f(p, s, a, b), 0..n);
            return;
        }
        let step = n.div_ceil(chunks);
        (0..chunks).into_par_iter().for_each(|c| {
            let r = c * step..((c + 1) * step).min(n);
            self.serial_dyn(&base, &mut |p, s, a, b| f(p, s, a, b), r);
        });
    }

    /// Runs `loop2d` over the flattened index `range` on this thread.
    pub fn serial_for_each(&self, mut loop2d: impl FnMut(&[*mut u8], &[isize], usize, usize), range: Range<usize>) {
        if self.is_meta() {
            return;
        }
        let base = self.base_ptrs();
        let end = range.end.min(self.numel() as usize);
        self.serial_dyn(&base, &mut loop2d, range.start..end);
    }

    /// Walks `range` in the largest 2-D steps the position allows.
    fn serial_dyn(&self, base: &[SendPtr], f: &mut Loop2d<'_>, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        let nt = self.operands.len();
        let shape: Vec<usize> = self.shape.iter().map(|&s| s as usize).collect();
        let ndim = shape.len();
        let mut strides = vec![0isize; 2 * nt];
        for (k, o) in self.operands.iter().enumerate() {
            if ndim >= 1 {
                strides[k] = o.stride_bytes[0] as isize;
            }
            if ndim >= 2 {
                strides[nt + k] = o.stride_bytes[1] as isize;
            }
        }
        let mut ptrs = vec![std::ptr::null_mut::<u8>(); nt];
        if ndim <= 1 {
            for k in 0..nt {
                ptrs[k] = base[k].get().wrapping_offset(range.start as isize * strides[k]);
            }
            f(&ptrs, &strides, range.len(), 1);
            return;
        }
        // Multi-index of range.start, fastest dim first.
        let mut idx = vec![0usize; ndim];
        let mut rem = range.start;
        for d in 0..ndim {
            idx[d] = rem % shape[d];
            rem /= shape[d];
        }
        let mut pos = range.start;
        while pos < range.end {
            for (k, o) in self.operands.iter().enumerate() {
                let off: i64 = idx.iter().zip(&o.stride_bytes).map(|(&i, &s)| i as i64 * s).sum();
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
                copy_(user, tmp)?;
            }
        }
        Ok(())
    }
}
