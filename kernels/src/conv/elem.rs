//! Element types of the convolution and pooling kernels: the storage type of a tensor and the
//! type its arithmetic runs in (f32 for f16/bf16, as PyTorch's CPU kernels accumulate), with
//! slice conversions between them, and raw pointers that may cross the thread pool's threads.

use half::slice::HalfFloatSliceExt;
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::Element;
use std::ops::{Add, AddAssign, Div, Mul};

/// The arithmetic types: f32 and f64.
pub(crate) trait Real:
    Copy
    + Send
    + Sync
    + 'static
    + PartialOrd
    + Add<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + AddAssign
    + std::fmt::Debug
{
    const ZERO: Self;
    const ONE: Self;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
}

/// bf16 as a block element of the native bf16 kernels (`vdpbf16ps`, see
/// `linalg::bf16_gemm`), which take bf16 operands and accumulate in f32 themselves: the
/// receptive-field blocks and packed weights stay bf16.
impl Real for bf16 {
    const ZERO: bf16 = bf16::ZERO;
    const ONE: bf16 = bf16::ONE;
}

/// A floating element type and the type `T` its arithmetic runs in.
pub(crate) trait FloatElem: Element + Copy + Send + Sync + 'static {
    type T: Real;
    /// Whether `Self` is `T` itself (no conversion: kernels may read and write it in place).
    const SAME: bool;
    fn to_t(self) -> Self::T;
    fn from_t(v: Self::T) -> Self;
    /// `dst[i] = src[i]` converted (equal lengths).
    #[inline]
    fn load(src: &[Self], dst: &mut [Self::T]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.to_t();
        }
    }
    /// `dst[i] = src[i]` rounded to `Self` (equal lengths).
    #[inline]
    fn store(src: &[Self::T], dst: &mut [Self]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = Self::from_t(*s);
        }
    }
}

impl FloatElem for f32 {
    type T = f32;
    const SAME: bool = true;
    #[inline(always)]
    fn to_t(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_t(v: f32) -> f32 {
        v
    }
    #[inline]
    fn load(src: &[f32], dst: &mut [f32]) {
        dst.copy_from_slice(src);
    }
    #[inline]
    fn store(src: &[f32], dst: &mut [f32]) {
        dst.copy_from_slice(src);
    }
}

impl FloatElem for f64 {
    type T = f64;
    const SAME: bool = true;
    #[inline(always)]
    fn to_t(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_t(v: f64) -> f64 {
        v
    }
    #[inline]
    fn load(src: &[f64], dst: &mut [f64]) {
        dst.copy_from_slice(src);
    }
    #[inline]
    fn store(src: &[f64], dst: &mut [f64]) {
        dst.copy_from_slice(src);
    }
}

macro_rules! reduced_float {
    ($t:ty) => {
        impl FloatElem for $t {
            type T = f32;
            const SAME: bool = false;
            #[inline(always)]
            fn to_t(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn from_t(v: f32) -> $t {
                <$t>::from_f32(v)
            }
            #[inline]
            fn load(src: &[$t], dst: &mut [f32]) {
                src.convert_to_f32_slice(dst);
            }
            #[inline]
            fn store(src: &[f32], dst: &mut [$t]) {
                dst.convert_from_f32_slice(src);
            }
        }
    };
}
reduced_float!(f16);
reduced_float!(bf16);

/// bf16 storage read as bf16 blocks (no widening): the element type the native bf16
/// convolution gives `im2col` and the weight packing.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bf16Block(pub bf16);

impl Element for Bf16Block {
    const DTYPE: oxten_runtime::DType = oxten_runtime::DType::BF16;
    fn to_f64(self) -> f64 {
        self.0.to_f64()
    }
    fn from_f64(v: f64) -> Self {
        Bf16Block(bf16::from_f64(v))
    }
}

impl FloatElem for Bf16Block {
    type T = bf16;
    const SAME: bool = true;
    #[inline(always)]
    fn to_t(self) -> bf16 {
        self.0
    }
    #[inline(always)]
    fn from_t(v: bf16) -> Bf16Block {
        Bf16Block(v)
    }
    #[inline]
    fn load(src: &[Bf16Block], dst: &mut [bf16]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.0;
        }
    }
}

/// A raw pointer that may be shared with the thread pool's workers: each worker writes a disjoint part of
/// what it points to (the kernels using it say why, at each `SAFETY:`).
///
/// Read it through [`get`](Self::get): a closure that names the field would capture the bare
/// (non-`Send`) pointer instead of the wrapper.
#[derive(Clone, Copy)]
pub(crate) struct SharedPtr<T>(*mut T);

// SAFETY: the wrapper only carries the address; every dereference is an `unsafe` block of a
// kernel whose workers touch disjoint elements (or only read).
unsafe impl<T> Send for SharedPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    pub(crate) fn new(p: *mut T) -> Self {
        SharedPtr(p)
    }
    pub(crate) fn from_const(p: *const T) -> Self {
        SharedPtr(p.cast_mut())
    }
    #[inline(always)]
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}

/// A kernel output that is written whole before anything reads it: its address (without the
/// zero-fill of a freshly allocated deferred storage) and the bookkeeping to mark it written.
pub(crate) struct Overwrite<'a> {
    t: &'a oxten_runtime::Tensor,
    ptr: *mut u8,
    init: bool,
}

impl<'a> Overwrite<'a> {
    /// # Safety
    /// The caller writes every element of `t` through [`ptr`](Self::ptr) before anything reads
    /// it, then calls [`finish`](Self::finish); `t` is not visible to anyone else meanwhile.
    pub(crate) unsafe fn new(t: &'a oxten_runtime::Tensor) -> Self {
        // SAFETY: forwarded to the caller.
        let (ptr, init) = unsafe { t.data_ptr_for_overwrite() };
        Overwrite { t, ptr, init }
    }
    pub(crate) fn ptr<S>(&self) -> *mut S {
        self.ptr.cast()
    }
    /// # Safety
    /// Every element has been written.
    pub(crate) unsafe fn finish(self) {
        if self.init {
            // SAFETY: forwarded to the caller.
            unsafe { self.t.storage().assume_init() }
        }
    }
}
