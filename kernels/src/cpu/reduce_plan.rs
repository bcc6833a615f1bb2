//! The geometry of a built reduction iterator (reduced dims vs kept dims) and the parallel
//! driver the reduction kernels share.
//!
//! A dim of the iteration is *reduced* when output 0 has stride 0 on it (the reduction view
//! made by `review_reduce_result`). Each output element ("unit" below, or a group of them) folds
//! the flattened reduced index range `0..nred`; the driver either splits the units across
//! threads, or, when there are few units and a long reduction, splits each unit's range and
//! combines the partial results in order (deterministic for a fixed thread count).

use oxten_runtime::iter::GRAIN_SIZE;
use oxten_runtime::iter::{parallel_chunks, SendPtr, TensorIterator};
use std::ops::Range;

pub(crate) struct ReducePlan {
    /// Reduced dims of size > 1, fastest first: (size, input byte stride).
    pub red: Vec<(usize, isize)>,
    /// Kept dims of size > 1, fastest first: (size, input byte stride).
    pub kept: Vec<(usize, isize)>,
    /// For each kept dim, the byte stride of every output.
    pub kept_out: Vec<Vec<isize>>,
    /// Number of reduced elements per output element.
    pub nred: usize,
    /// Number of output elements.
    pub nout: usize,
    in_base: SendPtr,
    out_base: Vec<SendPtr>,
}

impl ReducePlan {
    /// The plan for `iter`, whose first input is the tensor being reduced.
    pub fn new(iter: &TensorIterator) -> ReducePlan {
        let no = iter.noutputs();
        let (mut red, mut kept, mut kept_out) = (Vec::new(), Vec::new(), Vec::new());
        for (d, &size) in iter.shape().iter().enumerate() {
            let size = size as usize;
            if size == 1 {
                continue;
            }
            let in_stride = iter.strides(no)[d] as isize;
            if iter.strides(0)[d] == 0 {
                red.push((size, in_stride));
            } else {
                kept.push((size, in_stride));
                kept_out.push((0..no).map(|k| iter.strides(k)[d] as isize).collect());
            }
        }
        // An empty output has nothing to compute (its strides need not tell its dims apart
        // from the reduced ones, so the products below could be anything).
        let empty_out = iter.output(0).numel() == 0;
        ReducePlan {
            nred: if empty_out { 0 } else { red.iter().map(|r| r.0).product() },
            nout: if empty_out { 0 } else { kept.iter().map(|k| k.0).product() },
            red,
            kept,
            kept_out,
            in_base: SendPtr(iter.data_ptr(no)),
            out_base: (0..no).map(|k| SendPtr(iter.data_ptr(k))).collect(),
        }
    }

    /// Output pointers of output element `o` (flat over the kept dims, fastest first) written
    /// into `outs`; returns the input address of its first reduced element.
    pub fn locate(&self, mut o: usize, outs: &mut [*mut u8]) -> *const u8 {
        let mut in_off = 0isize;
        for (k, p) in outs.iter_mut().enumerate() {
            *p = self.out_base[k].get();
        }
        for (d, &(size, ist)) in self.kept.iter().enumerate() {
            let i = (o % size) as isize;
            o /= size;
            in_off += i * ist;
            for (k, p) in outs.iter_mut().enumerate() {
                *p = p.wrapping_offset(i * self.kept_out[d][k]);
            }
        }
        self.in_base.get().wrapping_offset(in_off)
    }

    /// Calls `f(ptr, stride, len, first_flat_index)` for each run of the flattened reduced
    /// `range` along the fastest reduced dim, starting at input address `base`.
    pub fn walk(&self, base: *const u8, range: Range<usize>, f: &mut dyn FnMut(*const u8, isize, usize, usize)) {
        if range.is_empty() {
            return;
        }
        let Some(&(n0, s0)) = self.red.first() else {
            f(base, 0, 1, 0);
            return;
        };
        let nd = self.red.len();
        // The index over the reduced dims: on the stack for up to 8 of them (this runs once per
        // output element of small reductions, where an allocation would be a good part of it).
        let (mut inline, mut heap) = ([0usize; 8], Vec::new());
        let idx: &mut [usize] = if nd <= inline.len() {
            &mut inline[..nd]
        } else {
            heap.resize(nd, 0);
            &mut heap
        };
        let mut rem = range.start;
        for (d, &(size, _)) in self.red.iter().enumerate() {
            idx[d] = rem % size;
            rem /= size;
        }
        let mut pos = range.start;
        while pos < range.end {
            let off: isize = idx.iter().zip(&self.red).map(|(&i, &(_, st))| i as isize * st).sum();
            let len = (n0 - idx[0]).min(range.end - pos);
            f(base.wrapping_offset(off), s0, len, pos);
            pos += len;
            idx[0] += len;
            let mut d = 0;
            while d + 1 < nd && idx[d] >= self.red[d].0 {
                idx[d] = 0;
                idx[d + 1] += 1;
                d += 1;
            }
        }
    }
}

/// Reduces `nunits` independent units of `nred` elements each: `partial(unit, range)` folds a
/// sub-range, `combine` merges partials of consecutive sub-ranges (left to right), `finish`
/// stores a unit's result.
pub(crate) fn drive<Acc: Send>(
    nunits: usize,
    nred: usize,
    partial: &(dyn Fn(usize, Range<usize>) -> Acc + Sync),
    combine: &(dyn Fn(Acc, Acc) -> Acc + Sync),
    finish: &(dyn Fn(usize, Acc) + Sync),
) {
    if nunits == 0 {
        return;
    }
    let total = nunits.saturating_mul(nred.max(1));
    let threads = oxten_runtime::parallel::threads_now();
    let serial = parallel_chunks(total, GRAIN_SIZE) <= 1;
    if serial || nunits >= threads || nred < GRAIN_SIZE {
        let chunks = if serial { 1 } else { parallel_chunks(nunits, (GRAIN_SIZE / nred.max(1)).max(1)) };
        let step = nunits.div_ceil(chunks);
        let run = |c: usize| {
            for u in c * step..((c + 1) * step).min(nunits) {
                finish(u, partial(u, 0..nred));
            }
        };
        if chunks <= 1 {
            run(0);
        } else {
            oxten_runtime::parallel::for_each(chunks, run);
        }
        return;
    }
    // Few units, long reductions: split each unit's range across threads.
    let chunks = parallel_chunks(nred, GRAIN_SIZE);
    let step = nred.div_ceil(chunks);
    for u in 0..nunits {
        let parts: Vec<Acc> =
            oxten_runtime::parallel::map(chunks, |c| partial(u, c * step..((c + 1) * step).min(nred)));
        let acc = parts.into_iter().reduce(combine).expect("at least one chunk");
        finish(u, acc);
    }
}
