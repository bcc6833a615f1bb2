//! Building blocks shared by the index and shape kernels: PyTorch's overlap assertions, index
//! dtype checks, a strided row walker (serial or split over the thread pool), element copies by size and
//! the accumulation used by `scatter_add`, `index_put_(accumulate=True)` and
//! `embedding_dense_backward`.

use crate::iter::{get_overlap_status, has_internal_overlap, MemOverlap, MemOverlapStatus, GRAIN_SIZE};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{DType, Error, Result, Tensor};

const INTERNAL_OVERLAP: &str = "unsupported operation: more than one element of the written-to tensor refers to a \
     single memory location. Please clone() the tensor before performing the operation.";
const PARTIAL_OVERLAP: &str = "unsupported operation: some elements of the input tensor and the written-to tensor \
     refer to a single memory location. Please clone() the tensor before performing the operation.";

/// `at::assert_no_internal_overlap`: writing to `t` must not write an element twice.
pub(crate) fn assert_no_internal_overlap(t: &Tensor) -> Result<()> {
    if has_internal_overlap(t) == MemOverlap::Yes {
        return Err(Error::overlap(INTERNAL_OVERLAP));
    }
    Ok(())
}

/// `at::assert_no_overlap`: `a` and `b` share no element (full aliasing included).
pub(crate) fn assert_no_overlap(a: &Tensor, b: &Tensor) -> Result<()> {
    match get_overlap_status(a, b) {
        MemOverlapStatus::Partial | MemOverlapStatus::Full => Err(Error::overlap(PARTIAL_OVERLAP)),
        _ => Ok(()),
    }
}

/// `at::assert_no_partial_overlap`: `a` and `b` are the same elements or disjoint.
pub(crate) fn assert_no_partial_overlap(a: &Tensor, b: &Tensor) -> Result<()> {
    if get_overlap_status(a, b) == MemOverlapStatus::Partial {
        return Err(Error::overlap(PARTIAL_OVERLAP));
    }
    Ok(())
}

/// Whether `t` is an int32 or int64 tensor (the index dtypes of gather, scatter, index_select).
pub(crate) fn is_index_dtype(t: &Tensor) -> bool {
    matches!(t.dtype(), DType::I64 | DType::I32)
}

/// `ensure_nonempty_dim`: a 0-dim tensor counts as 1-dim.
pub(crate) fn nonempty_dim(t: &Tensor) -> usize {
    t.dim().max(1)
}

/// `ensure_nonempty_size`: the size of `d`, 1 for a 0-dim tensor (`d` must be valid otherwise,
/// else PyTorch's dimension error).
pub(crate) fn nonempty_size(t: &Tensor, d: usize) -> Result<i64> {
    if t.dim() == 0 {
        return Ok(1);
    }
    t.size(d as i64)
}

/// Sizes and strides of `t`, a 0-dim tensor seen as `[1]`.
pub(crate) fn nonempty_geometry(t: &Tensor) -> (Vec<i64>, Vec<i64>) {
    if t.dim() == 0 {
        (vec![1], vec![1])
    } else {
        (t.sizes().to_vec(), t.strides().to_vec())
    }
}

/// Reads index element `i` (in elements from `p`) of an int32 or int64 tensor.
///
/// # Safety
/// `p` offset by `i` elements of `dtype` must be a valid element.
#[inline(always)]
pub(crate) unsafe fn read_index(p: *const u8, i: isize, dtype: DType) -> i64 {
    // SAFETY: forwarded to the caller.
    unsafe {
        if dtype == DType::I64 {
            *(p as *const i64).offset(i)
        } else {
            *(p as *const i32).offset(i) as i64
        }
    }
}

/// A raw pointer that may be shared with the thread pool's workers; every use site explains why its
/// accesses do not race.
#[derive(Clone, Copy)]
pub(crate) struct Ptr(pub *mut u8);
// SAFETY: only an address; the kernels that share it write disjoint elements from each worker.
unsafe impl Send for Ptr {}
// SAFETY: as above.
unsafe impl Sync for Ptr {}

impl Ptr {
    #[inline(always)]
    pub(crate) fn get(self) -> *mut u8 {
        self.0
    }
}

/// Walks the rows of an iteration space: `shape` split into outer dims (all but the last) and
/// an inner dim of length `inner`. For every outer position `f` receives the element offset of
/// each operand (from `strides[k]`, one stride per dim of `shape`) and the outer coordinates.
/// With `parallel` and enough elements the outer positions are split over the thread pool; `f` must then
/// only write what its own rows own.
pub(crate) fn for_each_row<const N: usize>(
    shape: &[i64],
    strides: [&[i64]; N],
    parallel: bool,
    f: impl Fn([isize; N], &[i64]) + Sync,
) {
    if shape.contains(&0) {
        return;
    }
    let nd = shape.len();
    if nd == 0 {
        f([0; N], &[]);
        return;
    }
    let outer_shape = &shape[..nd - 1];
    let outer: usize = outer_shape.iter().product::<i64>() as usize;
    let inner = shape[nd - 1] as usize;
    let run = |lo: usize, hi: usize| {
        let mut coord = vec![0i64; nd - 1];
        // Coordinates of `lo`.
        let mut rem = lo;
        for d in (0..nd - 1).rev() {
            let s = outer_shape[d] as usize;
            coord[d] = (rem % s) as i64;
            rem /= s;
        }
        let mut offs = [0isize; N];
        for k in 0..N {
            offs[k] = (0..nd - 1).map(|d| coord[d] * strides[k][d]).sum::<i64>() as isize;
        }
        for _ in lo..hi {
            f(offs, &coord);
            // Advance the odometer.
            for d in (0..nd - 1).rev() {
                coord[d] += 1;
                for k in 0..N {
                    offs[k] += strides[k][d] as isize;
                }
                if coord[d] < outer_shape[d] {
                    break;
                }
                for k in 0..N {
                    offs[k] -= (outer_shape[d] * strides[k][d]) as isize;
                }
                coord[d] = 0;
            }
        }
    };
    let total = outer * inner;
    let threads = oxten_runtime::parallel::threads_now();
    if !parallel || total < GRAIN_SIZE || outer < 2 || threads <= 1 {
        run(0, outer);
        return;
    }
    let chunks = threads.min(outer).min(total.div_ceil(GRAIN_SIZE)).max(1);
    let step = outer.div_ceil(chunks);
    oxten_runtime::parallel::for_each(chunks, |c| {
        let lo = c * step;
        let hi = ((c + 1) * step).min(outer);
        if lo < hi {
            run(lo, hi);
        }
    });
}

/// Runs `$body` with `$T` an unsigned integer type of `$size` bytes (1, 2, 4 or 8): moving
/// elements of any dtype is moving bytes.
macro_rules! match_size {
    ($size:expr, $T:ident => $body:expr) => {{
        match $size {
            1 => {
                type $T = u8;
                $body
            }
            2 => {
                type $T = u16;
                $body
            }
            4 => {
                type $T = u32;
                $body
            }
            _ => {
                type $T = u64;
                $body
            }
        }
    }};
}
pub(crate) use match_size;

/// `dst += src` in an element type, as PyTorch's CPU kernels add: integers wrap, bool is `or`,
/// f16/bf16 are added in f32 and rounded after every addition; and the other reductions of
/// `scatter_reduce` (`prod`, `amax`, `amin`, NaN propagating) with their identities.
pub(crate) trait Accumulate: Copy + Send + Sync + 'static {
    fn acc(self, other: Self) -> Self;
    /// `self * other` (wrapping; bool is `and`).
    fn mul(self, other: Self) -> Self;
    /// The larger, NaN if either is NaN.
    fn max_nan(self, other: Self) -> Self;
    /// The smaller, NaN if either is NaN.
    fn min_nan(self, other: Self) -> Self;
    /// `amax`'s identity: -inf, or the type's lowest value.
    const LOWEST: Self;
    /// `amin`'s identity: +inf, or the type's highest value.
    const HIGHEST: Self;
    const ZERO: Self;
    const ONE: Self;
}

macro_rules! acc_int {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            #[inline(always)]
            fn acc(self, other: Self) -> Self { self.wrapping_add(other) }
            #[inline(always)]
            fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
            #[inline(always)]
            fn max_nan(self, other: Self) -> Self { self.max(other) }
            #[inline(always)]
            fn min_nan(self, other: Self) -> Self { self.min(other) }
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            const ZERO: Self = 0;
            const ONE: Self = 1;
        }
    )*};
}
acc_int!(u8, i8, i16, i32, i64);

impl Accumulate for bool {
    #[inline(always)]
    fn acc(self, other: Self) -> Self {
        self | other
    }
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        self & other
    }
    #[inline(always)]
    fn max_nan(self, other: Self) -> Self {
        self | other
    }
    #[inline(always)]
    fn min_nan(self, other: Self) -> Self {
        self & other
    }
    const LOWEST: Self = false;
    const HIGHEST: Self = true;
    const ZERO: Self = false;
    const ONE: Self = true;
}

macro_rules! acc_float {
    ($t:ty, $to:expr, $from:expr, $inf:expr, $zero:expr, $one:expr) => {
        impl Accumulate for $t {
            #[inline(always)]
            fn acc(self, other: Self) -> Self {
                $from($to(self) + $to(other))
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                $from($to(self) * $to(other))
            }
            #[inline(always)]
            fn max_nan(self, other: Self) -> Self {
                let (a, b) = ($to(self), $to(other));
                if b.is_nan() || a < b {
                    other
                } else {
                    self
                }
            }
            #[inline(always)]
            fn min_nan(self, other: Self) -> Self {
                let (a, b) = ($to(self), $to(other));
                if b.is_nan() || a > b {
                    other
                } else {
                    self
                }
            }
            const LOWEST: Self = $inf.0;
            const HIGHEST: Self = $inf.1;
            const ZERO: Self = $zero;
            const ONE: Self = $one;
        }
    };
}
acc_float!(f32, |x: f32| x, |x: f32| x, (f32::NEG_INFINITY, f32::INFINITY), 0.0, 1.0);
acc_float!(f64, |x: f64| x, |x: f64| x, (f64::NEG_INFINITY, f64::INFINITY), 0.0, 1.0);
acc_float!(f16, f16::to_f32, f16::from_f32, (f16::NEG_INFINITY, f16::INFINITY), f16::ZERO, f16::ONE);
acc_float!(bf16, bf16::to_f32, bf16::from_f32, (bf16::NEG_INFINITY, bf16::INFINITY), bf16::ZERO, bf16::ONE);

/// Runs `$body` with `$T` the element type of `$dtype`, for the [`Accumulate`] kernels.
macro_rules! match_acc {
    ($dtype:expr, $T:ident => $body:expr) => {
        oxten_runtime::match_dtype!($dtype, $T => $body)
    };
}
pub(crate) use match_acc;

/// Collects the first error raised by parallel workers.
pub(crate) struct FirstError(std::sync::Mutex<Option<Error>>, std::sync::atomic::AtomicBool);

impl FirstError {
    pub(crate) fn new() -> Self {
        FirstError(std::sync::Mutex::new(None), std::sync::atomic::AtomicBool::new(false))
    }
    /// Whether an error was recorded (workers stop early).
    #[inline(always)]
    pub(crate) fn failed(&self) -> bool {
        self.1.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub(crate) fn set(&self, e: Error) {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            *g = Some(e);
        }
        self.1.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    pub(crate) fn into_result(self) -> Result<()> {
        match self.0.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The check `set_output` makes of an `out=` tensor's dtype, with PyTorch's wording (C++ type
/// names: `Expected out tensor to have dtype float, but got double instead`), made first by the
/// meta functions of this family.
pub(crate) fn check_out_dtype(outs: &crate::iter::StructuredOutputs, dtype: DType) -> Result<()> {
    if outs.mode() != crate::iter::OutputMode::Out {
        return Ok(());
    }
    if let Some(o) = outs.maybe_get_output(0) {
        if o.dtype() != dtype {
            return Err(Error::dtype(format!(
                "Expected out tensor to have dtype {}, but got {} instead",
                crate::support::type_meta_name(dtype),
                crate::support::type_meta_name(o.dtype())
            )));
        }
    }
    Ok(())
}
