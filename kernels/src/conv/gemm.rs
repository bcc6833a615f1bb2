//! The matrix products of the convolution kernels (f32 and f64; f16/bf16 operands are converted
//! to f32 blocks by the callers), through the matrix-product engine's `gemm_call`.

use super::elem::Real;
use crate::linalg::engine::{gemm_call, Dims, Mat as EngineMat};
use gemm::Parallelism;

/// A matrix operand: the address of element (0, 0) and its row and column strides, in elements.
#[derive(Clone, Copy)]
pub(crate) struct Mat<T> {
    pub ptr: *const T,
    pub rs: usize,
    pub cs: usize,
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
    // The product itself, split over the thread pool when `parallel`, is the matrix products'
    // own (`dst = 1 * a @ b (+ dst)`).
    let mat = |ptr: *const T, rs: usize, cs: usize| EngineMat { ptr: ptr.cast_mut(), rs: rs as isize, cs: cs as isize };
    let par = if parallel { Parallelism::Rayon(0) } else { Parallelism::None };
    // SAFETY: forwarded from the caller; the strides fit in isize since they address memory.
    unsafe {
        gemm_call(
            Dims { m, k, n },
            mat(dst, dst_rs, 1),
            mat(a.ptr, a.rs, a.cs),
            mat(b.ptr, b.rs, b.cs),
            T::ONE,
            accumulate.then_some(T::ONE),
            T::ZERO,
            par,
        );
    }
}
