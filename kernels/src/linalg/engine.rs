//! The product engine behind `mm`, `addmm`, `bmm` and `mv`:
//! `dst[b] = alpha * (lhs[b] @ rhs[b]) + beta * dst[b]` for a batch of matrices, every operand
//! given by an address and element strides (row, column, batch), for every dtype.
//!
//! - f32, f64 and f16 go to the `gemm` crate (run-time SIMD dispatch, cache blocking, packing;
//!   f16 is packed to f32 panels and accumulated in f32). `gemm` reads any row/column strides, so
//!   transposed and sliced operands are never copied here. Small f32 products with one side
//!   under 16 and both operands contiguous along `k` (a classifier layer) are dot products of
//!   rows instead ([`super::dot_rows`]), where the CPU has AVX-512.
//! - bf16 goes to [`super::bf16_gemm`]: a native `vdpbf16ps` kernel where the CPU has AVX-512
//!   BF16, else operands widened to f32 for the f32 kernel; f32 accumulation, one rounding.
//! - Integer dtypes use a plain loop with wrapping arithmetic, as C++ integer arithmetic wraps.
//!
//! The scalars follow PyTorch: they are converted to the dtype's compute type first (integers
//! truncate, so `beta=2.5` is 2 for an int64 product); when `beta` is zero `dst` is not read (NaN
//! in it does not propagate), and when `alpha` is zero or the inner dim is empty the product is
//! not computed (`0 * inf` does not appear).
//!
//! Batches of small products are spread over oxten's thread pool (`oxten_runtime::parallel`) one
//! product per task; a single large product is cut into one block of columns (or rows) per
//! thread, plus small spare parts for whichever thread finishes first, each a single-threaded
//! `gemm` call (see [`gemm_call`] and [`Split`]).

use super::{bf16_gemm, dot_rows};
use crate::iter::scalar_type_name;
use crate::math::Element;
use gemm::Parallelism;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{DType, Error, Result, Scalar, Tensor};
use std::cell::Cell;

/// Products with at least this many multiply-adds (`m * n * k`) may run on the thread pool (`gemm`
/// itself stays on one thread below its own, larger threshold).
const PARALLEL_WORK: usize = 64 * 64 * 64;

/// Batched products of at least this many multiply-adds each run one after the other, each
/// split by `gemm`; smaller ones run one product per parallel task.
const SPLIT_EACH_WORK: usize = 256 * 256 * 256;

/// The sizes of a product: `[m, k] x [k, n]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

impl Dims {
    pub(super) fn work(&self) -> usize {
        self.m.saturating_mul(self.n).saturating_mul(self.k)
    }

    /// How `gemm` may split one product of these sizes.
    pub(super) fn parallelism(&self) -> Parallelism {
        if self.work() >= PARALLEL_WORK && oxten_runtime::parallel::threads_now() > 1 {
            Parallelism::Rayon(oxten_runtime::parallel::threads_now())
        } else {
            Parallelism::None
        }
    }
}

/// A matrix: the address of element (0, 0) and its strides in elements.
#[derive(Clone, Copy)]
pub(crate) struct Mat<T> {
    pub ptr: *mut T,
    pub rs: isize,
    pub cs: isize,
}

impl<T> Mat<T> {
    /// Address of element (i, j).
    #[inline(always)]
    pub fn at(&self, i: usize, j: usize) -> *mut T {
        self.ptr.wrapping_offset(i as isize * self.rs + j as isize * self.cs)
    }
}

/// One operand of a batch of products, type-erased: the address of element (0, 0) of the first
/// matrix, and the row, column and batch strides in elements.
#[derive(Clone, Copy, Debug)]
pub(super) struct Operand {
    pub ptr: *mut u8,
    pub rs: isize,
    pub cs: isize,
    pub bs: isize,
}

// SAFETY: an `Operand` is an address plus strides. The engine hands operands to parallel tasks that
// read the inputs and write pairwise-disjoint matrices of `dst` (the callers check that `dst` has
// no internal overlap and overlaps no input), so sharing them across threads is sound.
unsafe impl Send for Operand {}
// SAFETY: as above.
unsafe impl Sync for Operand {}

impl Operand {
    /// A 2-D tensor (one matrix) or a 3-D tensor (a batch of matrices along dim 0).
    pub(super) fn of(t: &Tensor) -> Operand {
        Operand::at(t, t.data_ptr())
    }

    /// Like [`of`](Self::of), with the data at `ptr` (see `data_ptr_for_overwrite`).
    pub(super) fn at(t: &Tensor, ptr: *mut u8) -> Operand {
        let st = t.strides();
        match st.len() {
            3 => Operand { ptr, rs: st[1] as isize, cs: st[2] as isize, bs: st[0] as isize },
            _ => Operand { ptr, rs: st[0] as isize, cs: st[1] as isize, bs: 0 },
        }
    }

    /// Matrix `b` of the batch, typed.
    #[inline]
    fn mat<T>(&self, b: usize) -> Mat<T> {
        Mat { ptr: self.ptr.cast::<T>().wrapping_offset(b as isize * self.bs), rs: self.rs, cs: self.cs }
    }

    /// Whether rows are contiguous (unit column stride), counting a single column as such.
    pub(super) fn row_major(&self, cols: usize) -> bool {
        self.cs == 1 || cols <= 1
    }

    /// Whether columns are contiguous (unit row stride), counting a single row as such.
    pub(super) fn column_major(&self, rows: usize) -> bool {
        self.rs == 1 || rows <= 1
    }
}

/// Computes `dst[b] = alpha * (lhs[b] @ rhs[b]) + beta * dst[b]` for `b` in `0..batch`, in
/// `dtype`. With `beta == None` (or a `beta` that is zero in `dtype`) `dst` is only written.
///
/// # Safety
/// For every `b`, `lhs`, `rhs` and `dst` must address `m x k`, `k x n` and `m x n` valid
/// elements of `dtype` with their strides; no element of `dst` may be addressed twice, and `dst`
/// must not overlap `lhs` or `rhs`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn product(
    dtype: DType,
    batch: usize,
    d: Dims,
    dst: Operand,
    lhs: Operand,
    rhs: Operand,
    alpha: Scalar,
    beta: Option<Scalar>,
) -> Result<()> {
    match dtype {
        DType::F32 => run::<f32>(batch, d, dst, lhs, rhs, alpha, beta)?,
        DType::F64 => run::<f64>(batch, d, dst, lhs, rhs, alpha, beta)?,
        DType::F16 => run::<f16>(batch, d, dst, lhs, rhs, alpha, beta)?,
        DType::BF16 => run::<bf16>(batch, d, dst, lhs, rhs, alpha, beta)?,
        DType::U8 => run::<u8>(batch, d, dst, lhs, rhs, alpha, beta)?,
        DType::I8 => run::<i8>(batch, d, dst, lhs, rhs, alpha, beta)?,
        DType::I16 => run::<i16>(batch, d, dst, lhs, rhs, alpha, beta)?,
        DType::I32 => run::<i32>(batch, d, dst, lhs, rhs, alpha, beta)?,
        DType::I64 => run::<i64>(batch, d, dst, lhs, rhs, alpha, beta)?,
        DType::Bool => {
            return Err(Error::dtype(format!("matrix products are not implemented for '{}'", scalar_type_name(dtype))))
        }
    }
    Ok(())
}

/// [`product`] for one element type.
///
/// # Safety
/// As for [`product`], with `T` the element type of `dtype`.
#[allow(clippy::too_many_arguments)]
unsafe fn run<T: Product>(
    batch: usize,
    d: Dims,
    dst: Operand,
    lhs: Operand,
    rhs: Operand,
    alpha: Scalar,
    beta: Option<Scalar>,
) -> Result<()> {
    if batch == 0 || d.m == 0 || d.n == 0 {
        return Ok(());
    }
    let beta = beta.filter(|b| !T::is_zero(*b));
    if d.k == 0 || T::is_zero(alpha) {
        // The product is all zeros: only `beta * dst` (or zeros) is left.
        for b in 0..batch {
            T::scale(d.m, d.n, dst.mat(b), beta);
        }
        return Ok(());
    }
    if batch == 1
        && std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
        && dot_rows::applies(d, lhs.mat(0), rhs.mat(0))
    {
        let cast = |s: Scalar| s.to_f64() as f32;
        // SAFETY: `T` is f32, so the operands address f32 elements; the rest is forwarded from
        // the caller, and `applies` checked the layout the kernel needs.
        unsafe { dot_rows::product(d, dst.mat(0), lhs.mat(0), rhs.mat(0), cast(alpha), beta.map(cast)) };
        return Ok(());
    }
    let work = d.work();
    if batch == 1
        || work >= SPLIT_EACH_WORK
        || batch.saturating_mul(work) < PARALLEL_WORK
        || oxten_runtime::parallel::threads_now() == 1
    {
        let par = d.parallelism();
        for b in 0..batch {
            T::product(d, dst.mat(b), lhs.mat(b), rhs.mat(b), alpha, beta, par)?;
        }
        Ok(())
    } else {
        let failed = std::sync::Mutex::new(None);
        oxten_runtime::parallel::for_each(batch, |b| {
            // SAFETY: forwarded from the caller; tasks write disjoint matrices of `dst`.
            let r = unsafe { T::product(d, dst.mat(b), lhs.mat(b), rhs.mat(b), alpha, beta, Parallelism::None) };
            if let Err(e) = r {
                failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
            }
        });
        failed.into_inner().unwrap_or_else(|e| e.into_inner()).map_or(Ok(()), Err)
    }
}

/// One element type's product kernel.
trait Product: Copy + Send + Sync + 'static {
    /// Whether `s` converted to this type (as PyTorch's `Scalar::to<scalar_t>()`) is zero.
    fn is_zero(s: Scalar) -> bool;

    /// `dst = beta * dst`, or zeros when `beta` is `None`.
    ///
    /// # Safety
    /// `dst` addresses `m x n` valid elements.
    unsafe fn scale(m: usize, n: usize, dst: Mat<Self>, beta: Option<Scalar>);

    /// `dst = alpha * lhs @ rhs + beta * dst` (`dst` not read when `beta` is `None`), with
    /// `d.k > 0` and a nonzero `alpha`. Fails only when scratch memory cannot be allocated.
    ///
    /// # Safety
    /// As for [`product`].
    unsafe fn product(
        d: Dims,
        dst: Mat<Self>,
        lhs: Mat<Self>,
        rhs: Mat<Self>,
        alpha: Scalar,
        beta: Option<Scalar>,
        par: Parallelism,
    ) -> Result<()>;
}

/// Applies `f` to every element of an `m x n` matrix.
///
/// # Safety
/// `dst` addresses `m x n` valid elements.
#[inline]
unsafe fn for_each_element<T>(m: usize, n: usize, dst: Mat<T>, mut f: impl FnMut(*mut T)) {
    for i in 0..m {
        for j in 0..n {
            f(dst.at(i, j));
        }
    }
}

/// `gemm` computes `dst = a * dst + b * lhs @ rhs` (`dst` only written when `read_dst` is
/// false) and takes (column, row) stride pairs.
///
/// # Safety
/// As for [`product`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm_call<T: Copy + Send + Sync + 'static>(
    d: Dims,
    dst: Mat<T>,
    lhs: Mat<T>,
    rhs: Mat<T>,
    alpha: T,
    beta: Option<T>,
    zero: T,
    par: Parallelism,
) {
    let threads = oxten_runtime::parallel::threads_now();
    if !matches!(par, Parallelism::None) && threads > 1 {
        // Cut the product into blocks of `dst` (see `Split`), each a single-threaded `gemm` call,
        // on oxten's pool: `gemm`'s own splitting goes through rayon, whose sleeping workers
        // take longer to wake than a small product takes.
        let caller_copies = COLUMNS_DONE.with(|c| c.get().is_some());
        let split = Split::of(d, dst, threads, caller_copies);
        if split.parts > 1 {
            let (dst, lhs, rhs) = (SendMat(dst), SendMat(lhs), SendMat(rhs));
            oxten_runtime::parallel::for_each(split.parts, |p| {
                let ((r0, m), (c0, n)) = split.part(d, p);
                let (dst, lhs, rhs) = (dst.get(), lhs.get(), rhs.get());
                let at = |x: Mat<T>, i: usize, j: usize| Mat { ptr: x.at(i, j), ..x };
                // SAFETY: part `p` is the block of rows `r0..r0 + m` and columns `c0..c0 + n` of
                // `dst`, with the matching rows of `lhs` and columns of `rhs`; parts write
                // disjoint blocks.
                unsafe {
                    gemm_call(
                        Dims { m, n, ..d },
                        at(dst, r0, c0),
                        at(lhs, r0, 0),
                        at(rhs, 0, c0),
                        alpha,
                        beta,
                        zero,
                        Parallelism::None,
                    )
                };
                if m == d.m {
                    columns_done(c0, n);
                }
            });
            return;
        }
    }
    let read_dst = beta.is_some();
    gemm::gemm(
        d.m,
        d.n,
        d.k,
        dst.ptr,
        dst.cs,
        dst.rs,
        read_dst,
        lhs.ptr,
        lhs.cs,
        lhs.rs,
        rhs.ptr,
        rhs.cs,
        rhs.rs,
        beta.unwrap_or(zero),
        alpha,
        false,
        false,
        false,
        par,
    );
}

/// The work of copying one element of a block (the transposition `product_into` does during
/// the product), counted in multiply-adds of the product: 64 x 128 elements take about 3.1 µs
/// where their product over `k = 784` takes 88 µs.
const COPY_FMAS: usize = 28;

/// The calling thread's block is a multiple of this many columns when it is shortened for its
/// copy (a column-major destination shares no cache line between columns, so no 16-column unit
/// is needed). For the MLP's first layer this gives 126 columns, whole panels of `gemm`'s x86
/// f32 micro-kernel (6 wide).
const COPY_ALIGN: usize = 2;

/// How [`gemm_call`] cuts a product over the pool: one block per thread of whole units
/// (`align` columns or rows of `dst`, so that two threads never write one cache line of a
/// row-major `dst`) and, where the units do not divide evenly over the threads, the units left
/// over cut the other way into one spare part per thread.
///
/// The pool hands out parts in order, so each thread starts on a block of its own and the
/// spare parts go to whichever threads finish first: usually one each, and more to a thread
/// that ran faster (on virtual CPUs, two threads often run a block at speeds a few percent
/// apart). Without them one thread would get a whole extra unit, which in `gemm`'s backward
/// product of the MLP (784 columns, 49 units of 16) is 4% more work than the other's. Spare
/// parts are only cut where their own `gemm` calls add little: when the blocks lie along
/// `gemm`'s row dimension (the one along which `dst` is more nearly contiguous), each call
/// packs only its own rows of the left operand; along `gemm`'s columns every call would pack
/// the whole left operand.
#[derive(Clone, Copy, Debug)]
struct Split {
    /// Whether the blocks are of columns of `dst` (else of rows).
    split_n: bool,
    /// Length of the first block, in columns (rows).
    first: usize,
    /// Length of each other thread's block.
    per: usize,
    /// How many parts are such blocks; the spare parts come after them.
    blocks: usize,
    parts: usize,
}

impl Split {
    fn of<T>(d: Dims, dst: Mat<T>, threads: usize, caller_copies: bool) -> Split {
        let split_n = d.n >= d.m;
        let (len, align) = if split_n { (d.n, 16) } else { (d.m, 8) };
        let units = len.div_ceil(align);
        // `gemm` transposes the problem for a destination with rows closer together than columns.
        let gemm_rows_are_columns = dst.cs.unsigned_abs() < dst.rs.unsigned_abs();
        let spares_are_cheap = split_n == gemm_rows_are_columns;
        let other = if split_n { d.m } else { d.n };
        if spares_are_cheap && units > threads && units % threads != 0 && other >= threads {
            let per = units / threads * align;
            return Split { split_n, per, first: per, blocks: threads, parts: 2 * threads };
        }
        if split_n && caller_copies && len >= 2 * COPY_ALIGN * threads {
            // The calling thread also copies its block (see `with_columns_done`): it gets
            // fewer columns, so that both finish together.
            let first = (len * d.k / (threads * d.k + COPY_FMAS) + COPY_ALIGN / 2) / COPY_ALIGN * COPY_ALIGN;
            let per = (len - first).div_ceil(threads - 1);
            return Split { split_n, per, first, blocks: threads, parts: threads };
        }
        let per = units.div_ceil(threads) * align;
        let blocks = len.div_ceil(per);
        Split { split_n, per, first: per, blocks, parts: blocks }
    }

    /// Part `p` of a product of sizes `d`: its rows and its columns of `dst`, each as a first
    /// index and a length.
    fn part(&self, d: Dims, p: usize) -> ((usize, usize), (usize, usize)) {
        let (len, other) = if self.split_n { (d.n, d.m) } else { (d.m, d.n) };
        let (along, across) = if p == 0 {
            ((0, self.first.min(len)), (0, other))
        } else if p < self.blocks {
            let lo = self.first + (p - 1) * self.per;
            ((lo, self.per.min(len - lo)), (0, other))
        } else {
            // Spare part `q` of the units left after the blocks, cut across.
            let (q, spares) = (p - self.blocks, self.parts - self.blocks);
            let lo = self.first + (self.blocks - 1) * self.per;
            let (a, b) = (other * q / spares, other * (q + 1) / spares);
            ((lo, len - lo), (a, b - a))
        };
        if self.split_n {
            (across, along)
        } else {
            (along, across)
        }
    }
}

thread_local! {
    /// The hook [`with_columns_done`] installed on this thread.
    static COLUMNS_DONE: Cell<Option<*const dyn Fn(usize, usize)>> = const { Cell::new(None) };
}

/// Runs `f` with `hook` called, on this thread only, each time this thread finishes a block of
/// columns `lo..lo + n` of a product split by columns over the pool (see [`gemm_call`]). The
/// calling thread of a parallel product usually finishes its block before the pool's other
/// threads do; a caller that copies the product somewhere (`product_into`'s staging matrix)
/// copies that block in the meantime instead of waiting.
pub(super) fn with_columns_done<R>(hook: &dyn Fn(usize, usize), f: impl FnOnce() -> R) -> R {
    struct Reset(Option<*const dyn Fn(usize, usize)>);
    impl Drop for Reset {
        fn drop(&mut self) {
            COLUMNS_DONE.with(|c| c.set(self.0));
        }
    }
    // SAFETY: only the lifetime is erased: the pointer is removed from the thread-local (by
    // `Reset`, also on unwinding) before `hook` goes out of scope, and only this thread reads it.
    let ptr: *const (dyn Fn(usize, usize) + 'static) =
        unsafe { std::mem::transmute(hook as *const dyn Fn(usize, usize)) };
    let _reset = Reset(COLUMNS_DONE.with(|c| c.replace(Some(ptr))));
    f()
}

/// Calls this thread's [`with_columns_done`] hook, if any.
fn columns_done(lo: usize, n: usize) {
    if let Some(hook) = COLUMNS_DONE.with(|c| c.get()) {
        // SAFETY: installed by `with_columns_done`, whose `hook` is alive while it is set.
        unsafe { (*hook)(lo, n) }
    }
}

/// A [`Mat`] handed to the pool's threads.
#[derive(Clone, Copy)]
struct SendMat<T>(Mat<T>);
// SAFETY: an address and strides; the threads write disjoint blocks of the destination (see
// `gemm_call`) and only read the operands.
unsafe impl<T> Send for SendMat<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendMat<T> {}
impl<T> SendMat<T> {
    fn get(self) -> Mat<T> {
        self.0
    }
}

macro_rules! gemm_product {
    ($t:ty, $cast:expr, $to_acc:expr, $from_acc:expr) => {
        impl Product for $t {
            fn is_zero(s: Scalar) -> bool {
                s.to_f64() == 0.0
            }

            unsafe fn scale(m: usize, n: usize, dst: Mat<Self>, beta: Option<Scalar>) {
                match beta {
                    None => for_each_element(m, n, dst, |p| *p = $cast(0.0)),
                    Some(b) => {
                        let b = $to_acc($cast(b.to_f64()));
                        for_each_element(m, n, dst, |p| *p = $from_acc(b * $to_acc(*p)));
                    }
                }
            }

            unsafe fn product(
                d: Dims,
                dst: Mat<Self>,
                lhs: Mat<Self>,
                rhs: Mat<Self>,
                alpha: Scalar,
                beta: Option<Scalar>,
                par: Parallelism,
            ) -> Result<()> {
                let cast = |s: Scalar| -> $t { $cast(s.to_f64()) };
                gemm_call(d, dst, lhs, rhs, cast(alpha), beta.map(cast), $cast(0.0), par);
                Ok(())
            }
        }
    };
}

gemm_product!(f32, |v: f64| v as f32, |v: f32| v, |v: f32| v);
gemm_product!(f64, |v: f64| v, |v: f64| v, |v: f64| v);
gemm_product!(f16, f16::from_f64, f16::to_f32, f16::from_f32);

impl Product for bf16 {
    fn is_zero(s: Scalar) -> bool {
        s.to_f64() == 0.0
    }

    unsafe fn scale(m: usize, n: usize, dst: Mat<Self>, beta: Option<Scalar>) {
        match beta {
            None => for_each_element(m, n, dst, |p| *p = bf16::ZERO),
            Some(b) => {
                let b = bf16::from_f64(b.to_f64()).to_f32();
                for_each_element(m, n, dst, |p| *p = bf16::from_f32(b * (*p).to_f32()));
            }
        }
    }

    unsafe fn product(
        d: Dims,
        dst: Mat<Self>,
        lhs: Mat<Self>,
        rhs: Mat<Self>,
        alpha: Scalar,
        beta: Option<Scalar>,
        par: Parallelism,
    ) -> Result<()> {
        // PyTorch converts the scalars to bf16, then computes in f32.
        let to_f32 = |s: Scalar| bf16::from_f64(s.to_f64()).to_f32();
        bf16_gemm::product(d, dst, lhs, rhs, to_f32(alpha), beta.map(to_f32), par)
    }
}

macro_rules! int_product {
    ($($t:ty),*) => {$(
        impl Product for $t {
            fn is_zero(s: Scalar) -> bool {
                <$t as Element>::from_i64(s.to_i64()) == 0
            }

            unsafe fn scale(m: usize, n: usize, dst: Mat<Self>, beta: Option<Scalar>) {
                match beta {
                    None => for_each_element(m, n, dst, |p| *p = 0),
                    Some(b) => {
                        let b = <$t as Element>::from_i64(b.to_i64());
                        for_each_element(m, n, dst, |p| *p = b.mul_wrapping(*p));
                    }
                }
            }

            unsafe fn product(
                d: Dims,
                dst: Mat<Self>,
                lhs: Mat<Self>,
                rhs: Mat<Self>,
                alpha: Scalar,
                beta: Option<Scalar>,
                _par: Parallelism,
            ) -> Result<()> {
                let cast = |s: Scalar| <$t as Element>::from_i64(s.to_i64());
                int_into(d, dst, lhs, rhs, cast(alpha), beta.map(cast));
                Ok(())
            }
        }
    )*};
}

int_product!(u8, i8, i16, i32, i64);

/// Integer product: row `i` of `dst` accumulates `lhs[i, p] * rhs[p, :]` over `p` (walking
/// `rhs` by rows), with wrapping arithmetic; then `dst = alpha * acc + beta * dst`.
///
/// # Safety
/// As for [`product`].
unsafe fn int_into<T: Element>(d: Dims, dst: Mat<T>, lhs: Mat<T>, rhs: Mat<T>, alpha: T, beta: Option<T>) {
    let mut acc = vec![T::zero(); d.n];
    for i in 0..d.m {
        acc.fill(T::zero());
        for p in 0..d.k {
            let a = *lhs.at(i, p);
            for (j, c) in acc.iter_mut().enumerate() {
                *c = c.add_wrapping(a.mul_wrapping(*rhs.at(p, j)));
            }
        }
        for (j, c) in acc.iter().enumerate() {
            let v = alpha.mul_wrapping(*c);
            let o = dst.at(i, j);
            *o = match beta {
                Some(b) => v.add_wrapping(b.mul_wrapping(*o)),
                None => v,
            };
        }
    }
}

// These check the split arithmetic (safe code, null destinations); under Miri they only cost time.
#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    /// Every element of an `m x n` destination lies in exactly one part of the split.
    fn assert_covers(d: Dims, dst: Mat<f32>, threads: usize, caller_copies: bool) -> Split {
        let s = Split::of(d, dst, threads, caller_copies);
        let mut hits = vec![0u8; d.m * d.n];
        for p in 0..s.parts {
            let ((r0, m), (c0, n)) = s.part(d, p);
            assert!(m > 0 && n > 0, "{d:?} {s:?}: part {p} is empty");
            for i in r0..r0 + m {
                for j in c0..c0 + n {
                    hits[i * d.n + j] += 1;
                }
            }
        }
        assert!(hits.iter().all(|&h| h == 1), "{d:?} on {threads} threads: {s:?}");
        s
    }

    #[test]
    fn splits_cover_the_destination_once() {
        let row_major = |n: usize| Mat { ptr: std::ptr::null_mut(), rs: n as isize, cs: 1 };
        let col_major = |m: usize| Mat { ptr: std::ptr::null_mut(), rs: 1, cs: m as isize };
        for threads in 2..=5 {
            for (m, n) in [(256, 784), (64, 256), (70, 101), (75, 40), (33, 17), (200, 9), (8, 800)] {
                let d = Dims { m, k: 64, n };
                for dst in [row_major(n), col_major(m)] {
                    for caller_copies in [false, true] {
                        assert_covers(d, dst, threads, caller_copies);
                    }
                }
            }
        }
    }

    #[test]
    fn spare_parts_go_where_they_pack_little() {
        // The MLP's weight gradient: 784 columns of a row-major destination are 49 units of 16,
        // one block of 24 units per thread and the last unit cut into two halves of rows.
        let d = Dims { m: 256, k: 64, n: 784 };
        let s = assert_covers(d, Mat { ptr: std::ptr::null_mut(), rs: 784, cs: 1 }, 2, false);
        assert_eq!(s.parts, 4);
        assert_eq!([s.part(d, 0), s.part(d, 1)], [((0, 256), (0, 384)), ((0, 256), (384, 384))]);
        assert_eq!([s.part(d, 2), s.part(d, 3)], [((0, 128), (768, 16)), ((128, 128), (768, 16))]);
        // A column-major destination cut by columns: a spare would pack all of `lhs` again.
        let s = assert_covers(d, Mat { ptr: std::ptr::null_mut(), rs: 1, cs: 256 }, 2, false);
        assert_eq!((s.parts, s.part(d, 1)), (2, ((0, 256), (400, 384))));
    }

    #[test]
    fn the_copying_caller_gets_fewer_columns() {
        // The MLP's forward product into the staging matrix: the calling thread also transposes
        // its block, so it takes 126 of the 256 columns.
        let d = Dims { m: 64, k: 784, n: 256 };
        let dst = Mat { ptr: std::ptr::null_mut(), rs: 1, cs: 64 };
        let s = assert_covers(d, dst, 2, true);
        assert_eq!([s.part(d, 0), s.part(d, 1)], [((0, 64), (0, 126)), ((0, 64), (126, 130))]);
        assert_eq!(assert_covers(d, dst, 2, false).part(d, 0), ((0, 64), (0, 128)));
    }
}
