//! The product engine behind `mm`, `addmm`, `bmm` and `mv`:
//! `dst[b] = alpha * (lhs[b] @ rhs[b]) + beta * dst[b]` for a batch of matrices, every operand
//! given by an address and element strides (row, column, batch), for every dtype.
//!
//! - f32, f64 and f16 go to the `gemm` crate (run-time SIMD dispatch, cache blocking, packing;
//!   f16 is packed to f32 panels and accumulated in f32). `gemm` reads any row/column strides, so
//!   transposed and sliced operands are never copied here. Small f32 products with one side
//!   under 16 and both operands contiguous along `k` (a classifier layer) are dot products of
//!   rows instead ([`super::dot_rows`]), where the CPU has AVX-512.
//! - bf16 goes to [`super::bf16_gemm`]: whole operands widened to f32 in one vectorized pass,
//!   the f32 kernel, and one rounding pass (there is no AVX-512 BF16 dot-product kernel yet).
//! - Integer dtypes use a plain loop with wrapping arithmetic, as C++ integer arithmetic wraps.
//!
//! The scalars follow PyTorch: they are converted to the dtype's compute type first (integers
//! truncate, so `beta=2.5` is 2 for an int64 product); when `beta` is zero `dst` is not read (NaN
//! in it does not propagate), and when `alpha` is zero or the inner dim is empty the product is
//! not computed (`0 * inf` does not appear).
//!
//! Batches of small products are spread over oxten's thread pool (`oxten_runtime::parallel`) one
//! product per task; a single large product is cut into one block of columns (or rows) per
//! thread, each a single-threaded `gemm` call (see [`gemm_call`]).

use super::{bf16_gemm, dot_rows};
use crate::math::Element;
use gemm::Parallelism;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::iter::scalar_type_name;
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
            Parallelism::Rayon(0)
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
        DType::F32 => run::<f32>(batch, d, dst, lhs, rhs, alpha, beta),
        DType::F64 => run::<f64>(batch, d, dst, lhs, rhs, alpha, beta),
        DType::F16 => run::<f16>(batch, d, dst, lhs, rhs, alpha, beta),
        DType::BF16 => run::<bf16>(batch, d, dst, lhs, rhs, alpha, beta),
        DType::U8 => run::<u8>(batch, d, dst, lhs, rhs, alpha, beta),
        DType::I8 => run::<i8>(batch, d, dst, lhs, rhs, alpha, beta),
        DType::I16 => run::<i16>(batch, d, dst, lhs, rhs, alpha, beta),
        DType::I32 => run::<i32>(batch, d, dst, lhs, rhs, alpha, beta),
        DType::I64 => run::<i64>(batch, d, dst, lhs, rhs, alpha, beta),
        DType::Bool => {
            return Err(Error::dtype(format!("matrix products are not implemented for '{}'", scalar_type_name(dtype))))
        }
    }
    Ok(())
}

/// [`product`] for one element type.
#[allow(clippy::too_many_arguments)]
unsafe fn run<T: Product>(
    batch: usize,
    d: Dims,
    dst: Operand,
    lhs: Operand,
    rhs: Operand,
    alpha: Scalar,
    beta: Option<Scalar>,
) {
    if batch == 0 || d.m == 0 || d.n == 0 {
        return;
    }
    let beta = beta.filter(|b| !T::is_zero(*b));
    if d.k == 0 || T::is_zero(alpha) {
        // The product is all zeros: only `beta * dst` (or zeros) is left.
        for b in 0..batch {
            T::scale(d.m, d.n, dst.mat(b), beta);
        }
        return;
    }
    if batch == 1
        && std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
        && dot_rows::applies(d, lhs.mat(0), rhs.mat(0))
    {
        let cast = |s: Scalar| s.to_f64() as f32;
        // SAFETY: `T` is f32, so the operands address f32 elements; the rest is forwarded from
        // the caller, and `applies` checked the layout the kernel needs.
        unsafe { dot_rows::product(d, dst.mat(0), lhs.mat(0), rhs.mat(0), cast(alpha), beta.map(cast)) };
        return;
    }
    let work = d.work();
    if batch == 1
        || work >= SPLIT_EACH_WORK
        || batch.saturating_mul(work) < PARALLEL_WORK
        || oxten_runtime::parallel::threads_now() == 1
    {
        let par = d.parallelism();
        for b in 0..batch {
            T::product(d, dst.mat(b), lhs.mat(b), rhs.mat(b), alpha, beta, par);
        }
    } else {
        oxten_runtime::parallel::for_each(batch, |b| {
            // SAFETY: forwarded from the caller; tasks write disjoint matrices of `dst`.
            unsafe { T::product(d, dst.mat(b), lhs.mat(b), rhs.mat(b), alpha, beta, Parallelism::None) }
        });
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
    /// `d.k > 0` and a nonzero `alpha`.
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
    );
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
        // Cut the product into one block of columns (or rows) of `dst` per thread, each a
        // single-threaded `gemm` call, on oxten's pool: `gemm`'s own splitting goes through
        // rayon, whose sleeping workers take longer to wake than a small product takes.
        let split_n = d.n >= d.m;
        let (len, align) = if split_n { (d.n, 16) } else { (d.m, 8) };
        let per = len.div_ceil(threads).div_ceil(align) * align;
        let parts = len.div_ceil(per);
        if parts > 1 {
            let (dst, lhs, rhs) = (SendMat(dst), SendMat(lhs), SendMat(rhs));
            oxten_runtime::parallel::for_each(parts, |p| {
                let (lo, n) = (p * per, per.min(len - p * per));
                let (dst, lhs, rhs) = (dst.get(), lhs.get(), rhs.get());
                // SAFETY: part `p` is the block `lo..lo + n` of `dst`'s columns (rows) and the
                // matching columns of `rhs` (rows of `lhs`); parts write disjoint blocks.
                unsafe {
                    if split_n {
                        let sub = |m: Mat<T>| Mat { ptr: m.at(0, lo), ..m };
                        gemm_call(Dims { n, ..d }, sub(dst), lhs, sub(rhs), alpha, beta, zero, Parallelism::None);
                        columns_done(lo, n);
                    } else {
                        let sub = |m: Mat<T>| Mat { ptr: m.at(lo, 0), ..m };
                        gemm_call(Dims { m: n, ..d }, sub(dst), sub(lhs), rhs, alpha, beta, zero, Parallelism::None)
                    }
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
            ) {
                let cast = |s: Scalar| -> $t { $cast(s.to_f64()) };
                gemm_call(d, dst, lhs, rhs, cast(alpha), beta.map(cast), $cast(0.0), par);
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
    ) {
        // PyTorch converts the scalars to bf16, then computes in f32.
        let to_f32 = |s: Scalar| bf16::from_f64(s.to_f64()).to_f32();
        bf16_gemm::product(d, dst, lhs, rhs, to_f32(alpha), beta.map(to_f32), par);
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
            ) {
                let cast = |s: Scalar| <$t as Element>::from_i64(s.to_i64());
                int_into(d, dst, lhs, rhs, cast(alpha), beta.map(cast));
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
