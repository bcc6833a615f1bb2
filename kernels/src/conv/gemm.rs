//! The matrix products of the convolution kernels, on the `gemm` crate (f32 and f64; f16/bf16
//! operands are converted to f32 blocks by the callers).

use super::elem::Real;
use gemm::Parallelism;

/// A matrix operand: the address of element (0, 0) and its row and column strides, in elements.
#[derive(Clone, Copy)]
pub(crate) struct Mat<T> {
    pub ptr: *const T,
    pub rs: usize,
    pub cs: usize,
}

/// An address handed to the pool's threads.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: the threads write disjoint blocks of the destination and only read the operands.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}
impl<T> Shared<T> {
    fn get(self) -> *mut T {
        self.0
    }
}

impl<T> Mat<T> {
    /// A row-major matrix whose rows are `rs` elements apart.
    pub(crate) fn rows(ptr: *const T, rs: usize) -> Self {
        Mat { ptr, rs, cs: 1 }
    }
    /// The transpose (a view: the strides swap).
    pub(crate) fn t(self) -> Self {
        Mat { ptr: self.ptr, rs: self.cs, cs: self.rs }
    }
}

/// `dst[m, n] = a[m, k] · b[k, n]`, or `dst += a · b` when `accumulate`; `dst` is row-major with
/// rows `dst_rs` elements apart.
///
/// # Safety
/// `a`, `b` and `dst` must address `m x k`, `k x n` and `m x n` valid elements with their
/// strides, and `dst` must not overlap `a`, `b` or itself.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm<T: Real>(
    m: usize,
    n: usize,
    k: usize,
    dst: *mut T,
    dst_rs: usize,
    accumulate: bool,
    a: Mat<T>,
    b: Mat<T>,
    parallel: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for i in 0..m {
                // SAFETY: row `i` of `dst` has `n` valid elements (caller's contract).
                unsafe { std::slice::from_raw_parts_mut(dst.add(i * dst_rs), n) }.fill(T::ZERO);
            }
        }
        return;
    }
    let threads = if parallel { oxten_runtime::parallel::threads_now() } else { 1 };
    if threads > 1 {
        // One block of columns (or rows) of `dst` per thread, each a single-threaded call, on
        // oxten's pool (see `linalg::engine::gemm_call`).
        let split_n = n >= m;
        let (len, align) = if split_n { (n, 16) } else { (m, 8) };
        let per = len.div_ceil(threads).div_ceil(align) * align;
        let parts = len.div_ceil(per);
        if parts > 1 {
            let (a_s, b_s) = ((a.rs, a.cs), (b.rs, b.cs));
            let (dst, a, b) = (Shared(dst), Shared(a.ptr as *mut T), Shared(b.ptr as *mut T));
            oxten_runtime::parallel::for_each(parts, |p| {
                let (lo, len) = (p * per, per.min(len - p * per));
                let (d, pa, pb) = (dst.get(), a.get() as *const T, b.get() as *const T);
                let am = Mat { ptr: pa, rs: a_s.0, cs: a_s.1 };
                let bm = Mat { ptr: pb, rs: b_s.0, cs: b_s.1 };
                // SAFETY: part `p` is columns (rows) `lo..lo + len` of `dst` with the matching
                // columns of `b` (rows of `a`); parts write disjoint blocks.
                unsafe {
                    if split_n {
                        let bm = Mat { ptr: bm.ptr.add(lo * bm.cs), ..bm };
                        gemm(m, len, k, d.add(lo), dst_rs, accumulate, am, bm, false)
                    } else {
                        let am = Mat { ptr: am.ptr.add(lo * am.rs), ..am };
                        gemm(len, n, k, d.add(lo * dst_rs), dst_rs, accumulate, am, bm, false)
                    }
                }
            });
            return;
        }
    }
    let parallelism = Parallelism::None;
    // `gemm` computes dst = alpha * dst + beta * a * b and takes (column, row) stride pairs;
    // with read_dst = false alpha is ignored and dst is only written.
    // SAFETY: forwarded from the caller; the strides fit in isize since they address memory.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            1,
            dst_rs as isize,
            accumulate,
            a.ptr,
            a.cs as isize,
            a.rs as isize,
            b.ptr,
            b.cs as isize,
            b.rs as isize,
            T::ONE,
            T::ONE,
            false,
            false,
            false,
            parallelism,
        );
    }
}
