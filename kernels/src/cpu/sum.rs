//! `sum_kernel`: a numerically careful sum.
//!
//! * accumulation in f32 for f16/bf16/f32, f64 for f64, i64 (wrapping) for integers and bool;
//! * contiguous runs are summed pairwise down to blocks of 1024 elements, each summed with 16
//!   independent lanes (vectorizable; the rounding error grows with the log of the length);
//! * runs of runs, and strided elements, go through a cascade (a binary counter of partial sums);
//! * when the reduced dim is strided but the kept dim is contiguous (e.g. `sum(dim=0)` of a
//!   row-major matrix) rows are added into blocks of column accumulators, cascaded every 64 rows;
//! * f16/bf16 are converted to f32 a block at a time.

use super::opmath::ReducedFloat;
use super::reduce_plan::{drive, ReducePlan};
use super::simd;
use half::{bf16, f16};
use oxten_runtime::iter::TensorIterator;
use oxten_runtime::match_dtype;
use oxten_runtime::tensor::Element;
use std::mem::size_of;
use std::ops::Range;

/// Lanes of the contiguous block sum: independent accumulators, so that the additions of
/// several vectors are in flight at once (four AVX-512 vectors of f32).
const LANES: usize = 64;
/// Contiguous runs up to this length are summed by one lane block; longer ones are split in two.
const PAIRWISE_BLOCK: usize = 1024;
/// Output columns per group in the column mode (1 KiB of f32 per row: long enough runs for
/// the hardware prefetcher).
const COLS: usize = 256;
/// Rows added into a column block before it is pushed into the cascade.
const ROWS_PER_PUSH: usize = 64;
/// Strided elements summed before a push into the cascade.
const STRIDED_PIECE: usize = 256;

/// An element type `sum_kernel` handles, with its accumulation type.
pub(crate) trait SumElem: Element {
    type Acc: Copy + Send + Sync + 'static;
    const ZERO: Self::Acc;
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    fn to_acc(self) -> Self::Acc;
    fn from_acc(a: Self::Acc) -> Self;

    /// Sum of a short contiguous run (≤ `PAIRWISE_BLOCK`) with `LANES` accumulators.
    #[inline(always)]
    fn block_sum(x: &[Self]) -> Self::Acc {
        lanes_sum::<Self>(x)
    }

    /// The `LANES` accumulators of a contiguous run (≤ `PAIRWISE_BLOCK`), not yet folded:
    /// element `i` goes to lane `i % LANES`.
    #[inline(always)]
    fn block_lanes(x: &[Self]) -> [Self::Acc; LANES] {
        lanes_by(x, Self::ZERO, Self::add, Self::to_acc)
    }

    /// `acc[j] += row[r][j]` for `rows` rows of `acc.len()` elements starting at `first`,
    /// `stride` bytes apart. Blocks of columns stay in registers across the rows; each column
    /// still adds its rows in order.
    ///
    /// # Safety
    /// Each row must hold `acc.len()` valid elements of type `Self`.
    #[inline(always)]
    unsafe fn add_rows(acc: &mut [Self::Acc], first: *const u8, stride: isize, rows: usize) {
        const B: usize = 64;
        let w = acc.len();
        let row = |r: usize| first.wrapping_offset(r as isize * stride) as *const Self;
        let mut j = 0;
        while j + B <= w {
            let mut a: [Self::Acc; B] = acc[j..j + B].try_into().expect("a block of B columns");
            for r in 0..rows {
                // SAFETY: row `r` holds `w` elements and `j + B <= w`.
                let x: &[Self; B] = unsafe { &*(row(r).add(j) as *const [Self; B]) };
                for k in 0..B {
                    a[k] = Self::add(a[k], x[k].to_acc());
                }
            }
            acc[j..j + B].copy_from_slice(&a);
            j += B;
        }
        if j < w {
            for r in 0..rows {
                // SAFETY: row `r` holds `w` elements.
                let x = unsafe { std::slice::from_raw_parts(row(r).add(j), w - j) };
                Self::add_row(&mut acc[j..], x);
            }
        }
    }

    /// `acc[j] += x[j]` (same lengths).
    #[inline(always)]
    fn add_row(acc: &mut [Self::Acc], x: &[Self]) {
        for (a, &v) in acc.iter_mut().zip(x) {
            *a = Self::add(*a, v.to_acc());
        }
    }
}

#[inline(always)]
fn lanes_sum<T: SumElem>(x: &[T]) -> T::Acc {
    lanes_sum_by(x, T::ZERO, T::add, T::to_acc)
}

/// `LANES` independent accumulators, folded, then the tail.
#[inline(always)]
fn lanes_sum_by<S: Copy, A: Copy>(x: &[S], zero: A, add: impl Fn(A, A) -> A, conv: impl Fn(S) -> A) -> A {
    let (acc, tail) = lanes_body(x, zero, &add, &conv);
    // A linear fold of the lanes keeps the loop above at full vector width (a tree here makes
    // LLVM split the accumulators into narrow vectors); 16 terms add no measurable error.
    let mut t = acc[0];
    for &a in &acc[1..] {
        t = add(t, a);
    }
    for &v in tail {
        t = add(t, conv(v));
    }
    t
}

/// `LANES` independent accumulators (element `i` into lane `i % LANES`), unfolded.
#[inline(always)]
fn lanes_by<S: Copy, A: Copy>(x: &[S], zero: A, add: impl Fn(A, A) -> A, conv: impl Fn(S) -> A) -> [A; LANES] {
    let (mut acc, tail) = lanes_body(x, zero, &add, &conv);
    for (a, &v) in acc.iter_mut().zip(tail) {
        *a = add(*a, conv(v));
    }
    acc
}

/// The lanes over `x`'s whole chunks of `LANES`, and the elements left over.
#[inline(always)]
fn lanes_body<'x, S: Copy, A: Copy>(
    x: &'x [S],
    zero: A,
    add: &impl Fn(A, A) -> A,
    conv: &impl Fn(S) -> A,
) -> ([A; LANES], &'x [S]) {
    let mut acc = [zero; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        let c: &[S; LANES] = c.try_into().expect("chunks_exact yields LANES elements");
        // A fresh array each step (not updates in place): LLVM then keeps the accumulators in
        // registers; updated in place, it kept them on the stack and reloaded them every step,
        // a store-to-load chain that halved the speed.
        acc = std::array::from_fn(|k| add(acc[k], conv(c[k])));
    }
    (acc, tail)
}

/// Pairwise sum of a contiguous run. A short run is one lane block. A long one runs under one
/// SIMD dispatch: its blocks' lane accumulators are combined lane by lane in a binary
/// cascade (a pairwise tree per lane), and the lanes are folded once at the end; folding each
/// block's 64 lanes (63 dependent additions) cost more than adding its 1024 elements.
fn pairwise_sum<T: SumElem>(x: &[T]) -> T::Acc {
    let mut acc = T::ZERO;
    // SAFETY: `RunSum` has no requirements beyond its (safe) fields.
    unsafe { simd::run(RunSum { x, out: &mut acc }) };
    acc
}

/// A contiguous run's pairwise sum, compiled per instruction-set level.
struct RunSum<'a, T: SumElem> {
    x: &'a [T],
    out: &'a mut T::Acc,
}

impl<T: SumElem> simd::InnerLoop for RunSum<'_, T> {
    #[inline(always)]
    unsafe fn run(self) {
        if self.x.len() <= PAIRWISE_BLOCK {
            *self.out = T::block_sum(self.x);
            return;
        }
        let mut cascade = Cascade::<T::Acc, LANES>::new();
        for block in self.x.chunks(PAIRWISE_BLOCK) {
            cascade.push(T::block_lanes(block), LANES, T::add);
        }
        let lanes = cascade.finish([T::ZERO; LANES], LANES, T::add);
        let mut t = lanes[0];
        for &a in &lanes[1..] {
            t = T::add(t, a);
        }
        *self.out = t;
    }
}

macro_rules! sum_direct {
    ($($t:ty => $acc:ty, $zero:expr, $add:expr);* $(;)?) => {$(
        impl SumElem for $t {
            type Acc = $acc;
            const ZERO: $acc = $zero;
            #[inline(always)]
            fn add(a: $acc, b: $acc) -> $acc { ($add)(a, b) }
            #[inline(always)]
            fn to_acc(self) -> $acc { self as $acc }
            #[inline(always)]
            fn from_acc(a: $acc) -> Self { a as $t }
        }
    )*};
}
sum_direct!(
    u8 => i64, 0, i64::wrapping_add;
    i8 => i64, 0, i64::wrapping_add;
    i16 => i64, 0, i64::wrapping_add;
    i32 => i64, 0, i64::wrapping_add;
    i64 => i64, 0, i64::wrapping_add;
    f32 => f32, 0.0, |a: f32, b: f32| a + b;
    f64 => f64, 0.0, |a: f64, b: f64| a + b;
);

impl SumElem for bool {
    type Acc = i64;
    const ZERO: i64 = 0;
    #[inline(always)]
    fn add(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn to_acc(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_acc(a: i64) -> Self {
        a != 0
    }
}

macro_rules! sum_reduced {
    ($($t:ty),*) => {$(
        impl SumElem for $t {
            type Acc = f32;
            const ZERO: f32 = 0.0;
            #[inline(always)]
            fn add(a: f32, b: f32) -> f32 { a + b }
            #[inline(always)]
            fn to_acc(self) -> f32 { self.to_f32() }
            #[inline(always)]
            fn from_acc(a: f32) -> Self { <$t>::from_f32(a) }
            #[inline(always)]
            fn block_sum(x: &[Self]) -> f32 {
                let mut buf = [0f32; PAIRWISE_BLOCK];
                let buf = &mut buf[..x.len()];
                <$t as ReducedFloat>::block_to_f32(x, buf);
                lanes_sum_by(buf, 0.0f32, |a, b| a + b, |v| v)
            }
            #[inline(always)]
            fn block_lanes(x: &[Self]) -> [f32; LANES] {
                let mut buf = [0f32; PAIRWISE_BLOCK];
                let buf = &mut buf[..x.len()];
                <$t as ReducedFloat>::block_to_f32(x, buf);
                lanes_by(buf, 0.0f32, |a, b| a + b, |v| v)
            }
            #[inline(always)]
            unsafe fn add_rows(acc: &mut [f32], first: *const u8, stride: isize, rows: usize) {
                let w = acc.len();
                for r in 0..rows {
                    // SAFETY: the caller guarantees `rows` rows of `w` elements.
                    let x = unsafe { std::slice::from_raw_parts(first.offset(r as isize * stride) as *const Self, w) };
                    Self::add_row(acc, x);
                }
            }
            #[inline(always)]
            fn add_row(acc: &mut [f32], x: &[Self]) {
                let mut buf = [0f32; COLS];
                let buf = &mut buf[..x.len()];
                <$t as ReducedFloat>::block_to_f32(x, buf);
                for (a, &v) in acc.iter_mut().zip(buf.iter()) {
                    *a += v;
                }
            }
        }
    )*};
}
sum_reduced!(f16, bf16);

/// A binary counter of partial sums: pushing n values costs O(n) and the rounding error grows
/// with log n.
struct Cascade<A: Copy, const W: usize> {
    levels: Vec<[A; W]>,
    occupied: u64,
}

impl<A: Copy, const W: usize> Cascade<A, W> {
    fn new() -> Self {
        Cascade { levels: Vec::new(), occupied: 0 }
    }
    /// Pushes `x`, of which only the first `w` entries are used.
    fn push(&mut self, mut x: [A; W], w: usize, add: impl Fn(A, A) -> A) {
        let mut i = 0;
        while self.occupied & (1 << i) != 0 {
            for (a, &l) in x[..w].iter_mut().zip(&self.levels[i]) {
                *a = add(l, *a);
            }
            self.occupied &= !(1 << i);
            i += 1;
        }
        if self.levels.len() <= i {
            self.levels.resize(i + 1, x);
        }
        self.levels[i] = x;
        self.occupied |= 1 << i;
    }
    fn finish(&self, mut total: [A; W], w: usize, add: impl Fn(A, A) -> A) -> [A; W] {
        for (i, l) in self.levels.iter().enumerate() {
            if self.occupied & (1 << i) != 0 {
                for (t, &v) in total[..w].iter_mut().zip(l) {
                    *t = add(*t, v);
                }
            }
        }
        total
    }
}

/// Sums each output element over its reduced elements (any strides).
fn sum_inner<T: SumElem>(plan: &ReducePlan) {
    let es = size_of::<T>() as isize;
    let partial = |u: usize, range: Range<usize>| -> T::Acc {
        let mut outs = [std::ptr::null_mut(); 1];
        let base = plan.locate(u, &mut outs);
        let mut cascade = Cascade::<T::Acc, 1>::new();
        plan.walk(base, range, &mut |p, st, len, _| {
            // SAFETY: the plan's addresses and strides come from the iterator and address `len`
            // valid input elements of dtype T; the input is not written during the reduction.
            unsafe {
                if st == es || len == 1 {
                    cascade.push([pairwise_sum(std::slice::from_raw_parts(p as *const T, len))], 1, T::add);
                } else {
                    let mut i = 0;
                    while i < len {
                        let m = STRIDED_PIECE.min(len - i);
                        let mut s = T::ZERO;
                        for k in i..i + m {
                            s = T::add(s, (*(p.offset(k as isize * st) as *const T)).to_acc());
                        }
                        cascade.push([s], 1, T::add);
                        i += m;
                    }
                }
            }
        });
        cascade.finish([T::ZERO], 1, T::add)[0]
    };
    let finish = |u: usize, acc: T::Acc| {
        let mut outs = [std::ptr::null_mut(); 1];
        plan.locate(u, &mut outs);
        // SAFETY: `outs[0]` addresses output element `u` of dtype T; one thread per unit.
        unsafe { *(outs[0] as *mut T) = T::from_acc(acc) };
    };
    drive(plan.nout, plan.nred, &partial, &T::add, &finish);
}

/// Column mode: the fastest kept dim is contiguous in the input; each unit is a group of up to
/// `COLS` adjacent outputs, and every reduced "row" is added into the group's accumulators.
fn sum_columns<T: SumElem>(plan: &ReducePlan) {
    let ncols = plan.kept[0].0;
    let col_out_stride = plan.kept_out[0][0];
    let groups_per_line = ncols.div_ceil(COLS);
    let nunits = plan.nout / ncols * groups_per_line;
    let unit_start = |u: usize| {
        (u / groups_per_line * ncols + u % groups_per_line * COLS, (ncols - u % groups_per_line * COLS).min(COLS))
    };
    let partial = |u: usize, range: Range<usize>| -> [T::Acc; COLS] {
        let (first, w) = unit_start(u);
        let mut outs = [std::ptr::null_mut(); 1];
        let base = plan.locate(first, &mut outs);
        let mut cascade = Cascade::<T::Acc, COLS>::new();
        let mut cur = [T::ZERO; COLS];
        let mut rows = 0;
        plan.walk(base, range, &mut |p, st, len, _| {
            let mut i = 0;
            while i < len {
                // A full block of rows goes to the cascade only when more rows follow, so that a
                // unit of at most `ROWS_PER_PUSH` rows (a batch of 64) never allocates a level.
                if rows == ROWS_PER_PUSH {
                    cascade.push(cur, w, T::add);
                    cur[..w].fill(T::ZERO);
                    rows = 0;
                }
                let m = (len - i).min(ROWS_PER_PUSH - rows);
                let add =
                    AddRows::<T> { acc: &mut cur[..w], first: p.wrapping_offset(i as isize * st), stride: st, rows: m };
                // SAFETY: rows `i .. i + m` of the run start at valid input elements, each
                // followed by the `w` contiguous elements of the group's kept columns.
                unsafe { simd::run(add) };
                i += m;
                rows += m;
            }
        });
        cascade.finish(cur, w, T::add)
    };
    let combine = |mut a: [T::Acc; COLS], b: [T::Acc; COLS]| {
        for (x, &y) in a.iter_mut().zip(&b) {
            *x = T::add(*x, y);
        }
        a
    };
    let finish = |u: usize, acc: [T::Acc; COLS]| {
        let (first, w) = unit_start(u);
        let mut outs = [std::ptr::null_mut(); 1];
        plan.locate(first, &mut outs);
        for (j, &a) in acc[..w].iter().enumerate() {
            // SAFETY: output elements `first .. first + w` lie along the fastest kept dim with
            // byte stride `col_out_stride`; each group is finished by one thread.
            unsafe { *(outs[0].offset(j as isize * col_out_stride) as *mut T) = T::from_acc(a) };
        }
    };
    drive(nunits, plan.nred, &partial, &combine, &finish);
}

/// The column mode's inner loop, [`SumElem::add_rows`] (`acc[j] += row[r][j]` for `rows` rows
/// of `acc.len()` contiguous elements, `stride` bytes apart), compiled per instruction-set level.
struct AddRows<'a, T: SumElem> {
    acc: &'a mut [T::Acc],
    first: *const u8,
    stride: isize,
    rows: usize,
}

impl<T: SumElem> simd::InnerLoop for AddRows<'_, T> {
    #[inline(always)]
    unsafe fn run(self) {
        // SAFETY: forwarded from the caller of `simd::run`.
        unsafe { T::add_rows(self.acc, self.first, self.stride, self.rows) }
    }
}

fn sum_typed<T: SumElem>(iter: &TensorIterator) {
    let plan = ReducePlan::new(iter);
    if plan.nout == 0 {
        // An empty output (a kept dim of size 0): nothing to write.
        return;
    }
    let es = size_of::<T>() as isize;
    let inner_contiguous = plan.red.first().is_some_and(|r| r.1 == es);
    let columns = !inner_contiguous && !plan.red.is_empty() && plan.kept.first().is_some_and(|k| k.1 == es);
    if columns {
        sum_columns::<T>(&plan)
    } else {
        sum_inner::<T>(&plan)
    }
}

/// Sums input 0 into output 0 of a reduction iterator (see [`make_reduction`](oxten_runtime::iter::make_reduction)).
/// Input and output must have the same dtype; empty reductions give 0.
///
/// # Panics
/// If the iterator does not have one output and one input of the same dtype.
pub fn sum_kernel(iter: &TensorIterator) {
    assert!(iter.noutputs() == 1 && iter.ninputs() == 1, "sum_kernel: needs one output and one input");
    assert!(
        iter.dtype(0) == iter.dtype(1),
        "sum_kernel: output dtype {} differs from input dtype {}; convert the input first",
        iter.dtype(0),
        iter.dtype(1)
    );
    if iter.is_meta() {
        return;
    }
    match_dtype!(iter.dtype(0), T => sum_typed::<T>(iter))
}
