//! Typed CPU loops over a [`TensorIterator`] (PyTorch's `cpu_kernel`).
//!
//! Each loop has three paths for the inner dim: every operand contiguous (a plain indexed loop
//! that LLVM vectorizes, compiled per instruction-set level by [`simd::run`]), exactly one input
//! broadcast with stride 0 (its value is hoisted, and the loop over the others is again a
//! dispatched contiguous map), and a general byte-strided loop. The closure is generic over the
//! element types only, and the iteration driver is shared through `&dyn`, so one kernel × dtype
//! is one instantiation (with up to three copies of its contiguous loops, one per level).
//!
//! Every loop here writes every output element, so outputs that the iterator allocated are
//! written once and never zero-filled first ([`TensorIterator::for_each_writing`]).
//!
//! Operand dtypes must match the type parameters; a mismatch is a bug in the calling kernel
//! and panics with the operand index and both dtypes.

use super::opmath::{OpMath, ReducedFloat};
use super::simd::{self, Map1, Map2, Map3};
use oxten_runtime::dtype::DType;
use oxten_runtime::iter::TensorIterator;
use oxten_runtime::iter::GRAIN_SIZE;
use oxten_runtime::tensor::Element;
use std::mem::size_of;

/// Elements per block when f16/bf16 are converted to f32 on the stack.
const BLOCK: usize = 256;

fn check_signature(iter: &TensorIterator, name: &str, outs: &[DType], ins: &[DType]) {
    assert!(
        iter.noutputs() == outs.len() && iter.ninputs() == ins.len(),
        "{name}: the kernel takes {} outputs and {} inputs, the iterator has {} and {}",
        outs.len(),
        ins.len(),
        iter.noutputs(),
        iter.ninputs()
    );
    for (k, d) in outs.iter().chain(ins).enumerate() {
        assert!(
            iter.dtype(k) == *d,
            "{name}: operand {k} has dtype {} but the kernel was instantiated for {d}",
            iter.dtype(k)
        );
    }
}

/// Pointer `k` advanced to row `j` of a 2-D chunk.
#[inline(always)]
fn row(ptrs: &[*mut u8], strides: &[isize], k: usize, j: usize) -> *mut u8 {
    let nt = ptrs.len();
    ptrs[k].wrapping_offset(j as isize * strides[nt + k])
}

/// Element `i` of a strided run.
///
/// # Safety
/// `p + i * stride` must address a valid, aligned `T`.
#[inline(always)]
unsafe fn at<T>(p: *mut u8, i: usize, stride: isize) -> *mut T {
    p.offset(i as isize * stride) as *mut T
}

/// `out = f()` for every element (fills, random generators).
pub fn cpu_kernel_nullary<O: Element>(iter: &TensorIterator, f: impl Fn() -> O + Sync) {
    check_signature(iter, "cpu_kernel_nullary", &[O::DTYPE], &[]);
    iter.for_each_writing(
        |ptrs, s, n0, n1| {
            for j in 0..n1 {
                let o = row(ptrs, s, 0, j);
                // SAFETY: the iterator hands out pointers and byte strides that address `n0`
                // valid elements of operand 0, whose dtype was checked to be O.
                unsafe {
                    if s[0] == size_of::<O>() as isize {
                        let o = o as *mut O;
                        for i in 0..n0 {
                            *o.add(i) = f();
                        }
                    } else {
                        for i in 0..n0 {
                            *at::<O>(o, i, s[0]) = f();
                        }
                    }
                }
            }
        },
        GRAIN_SIZE,
    );
}

/// `o[i] = v` for `i < n`.
///
/// # Safety
/// `o` addresses `n` valid elements.
#[inline(always)]
unsafe fn fill<O: Copy>(o: *mut O, n: usize, v: O) {
    for i in 0..n {
        // SAFETY: `i < n`.
        unsafe { *o.add(i) = v };
    }
}

/// `f` by reference, called through a closure that is always inlined: the element loops reach
/// the element function without a call, so LLVM vectorizes it even when it is too long for its
/// inlining heuristics (an out-of-line `erf` per element ran 12× slower than PyTorch's).
#[inline(always)]
fn inlined1<A, O, F: Fn(A) -> O>(f: &F) -> impl Fn(A) -> O + '_ {
    #[inline(always)]
    move |x| (*f)(x)
}

/// [`inlined1`] for two operands.
#[inline(always)]
fn inlined2<A, B, O, F: Fn(A, B) -> O>(f: &F) -> impl Fn(A, B) -> O + '_ {
    #[inline(always)]
    move |x, y| (*f)(x, y)
}

/// [`inlined1`] for three operands.
#[inline(always)]
fn inlined3<A, B, C, O, F: Fn(A, B, C) -> O>(f: &F) -> impl Fn(A, B, C) -> O + '_ {
    #[inline(always)]
    move |x, y, z| (*f)(x, y, z)
}

/// `f(a, ·)` for a broadcast first operand, always inlined (see [`inlined1`]).
#[inline(always)]
fn first_fixed<'f, A: Copy + 'f, B, O, F: Fn(A, B) -> O>(f: &'f F, a: A) -> impl Fn(B) -> O + 'f {
    #[inline(always)]
    move |y| (*f)(a, y)
}

/// `f(·, b)` for a broadcast second operand, always inlined (see [`inlined1`]).
#[inline(always)]
fn second_fixed<'f, A, B: Copy + 'f, O, F: Fn(A, B) -> O>(f: &'f F, b: B) -> impl Fn(A) -> O + 'f {
    #[inline(always)]
    move |x| (*f)(x, b)
}

/// `out = f(a)`.
pub fn cpu_kernel_unary<A: Element, O: Element>(iter: &TensorIterator, f: impl Fn(A) -> O + Sync) {
    check_signature(iter, "cpu_kernel_unary", &[O::DTYPE], &[A::DTYPE]);
    iter.for_each_writing(
        |ptrs, s, n0, n1| {
            let (eo, ea) = (size_of::<O>() as isize, size_of::<A>() as isize);
            for j in 0..n1 {
                let (o, a) = (row(ptrs, s, 0, j), row(ptrs, s, 1, j));
                // SAFETY: pointers and strides from the iterator address `n0` valid elements of
                // each operand, with dtypes checked against O and A; outputs never partially
                // overlap inputs (TensorIterator's overlap check), and raw-pointer accesses are
                // fine under full aliasing.
                unsafe {
                    if s[0] == eo && s[1] == ea {
                        simd::run(Map1 { o: o as *mut O, a: a as *const A, n: n0, f: inlined1(&f) });
                    } else if s[0] == eo && s[1] == 0 {
                        fill(o as *mut O, n0, f(*(a as *const A)));
                    } else {
                        for i in 0..n0 {
                            *at::<O>(o, i, s[0]) = f(*at::<A>(a, i, s[1]));
                        }
                    }
                }
            }
        },
        GRAIN_SIZE,
    );
}

/// `out = f(a, b)`, e.g. `cpu_kernel_binary::<f32, f32, f32>(&iter, |a, b| a + b)` or a
/// comparison `cpu_kernel_binary::<f32, f32, bool>(&iter, |a, b| a < b)`.
pub fn cpu_kernel_binary<A: Element, B: Element, O: Element>(iter: &TensorIterator, f: impl Fn(A, B) -> O + Sync) {
    check_signature(iter, "cpu_kernel_binary", &[O::DTYPE], &[A::DTYPE, B::DTYPE]);
    iter.for_each_writing(
        |ptrs, s, n0, n1| {
            let (eo, ea, eb) = (size_of::<O>() as isize, size_of::<A>() as isize, size_of::<B>() as isize);
            for j in 0..n1 {
                let (o, a, b) = (row(ptrs, s, 0, j), row(ptrs, s, 1, j), row(ptrs, s, 2, j));
                // SAFETY: as in `cpu_kernel_unary`: the iterator's pointers and strides address
                // `n0` valid elements of each operand with the checked dtypes.
                unsafe {
                    let (po, pa, pb) = (o as *mut O, a as *const A, b as *const B);
                    if s[0] == eo && s[1] == ea && s[2] == eb {
                        simd::run(Map2 { o: po, a: pa, b: pb, n: n0, f: inlined2(&f) });
                    } else if s[0] == eo && s[1] == 0 && s[2] == eb {
                        let av = *pa;
                        simd::run(Map1 { o: po, a: pb, n: n0, f: first_fixed(&f, av) });
                    } else if s[0] == eo && s[1] == ea && s[2] == 0 {
                        let bv = *pb;
                        simd::run(Map1 { o: po, a: pa, n: n0, f: second_fixed(&f, bv) });
                    } else {
                        for i in 0..n0 {
                            *at::<O>(o, i, s[0]) = f(*at::<A>(a, i, s[1]), *at::<B>(b, i, s[2]));
                        }
                    }
                }
            }
        },
        GRAIN_SIZE,
    );
}

/// `out = f(a, b, c)` (`addcmul`, `where`, `lerp` …).
pub fn cpu_kernel_ternary<A: Element, B: Element, C: Element, O: Element>(
    iter: &TensorIterator,
    f: impl Fn(A, B, C) -> O + Sync,
) {
    check_signature(iter, "cpu_kernel_ternary", &[O::DTYPE], &[A::DTYPE, B::DTYPE, C::DTYPE]);
    iter.for_each_writing(
        |ptrs, s, n0, n1| {
            let e = [size_of::<O>(), size_of::<A>(), size_of::<B>(), size_of::<C>()].map(|x| x as isize);
            let contig = |k: usize| s[k] == e[k];
            for j in 0..n1 {
                let (o, a, b, c) = (row(ptrs, s, 0, j), row(ptrs, s, 1, j), row(ptrs, s, 2, j), row(ptrs, s, 3, j));
                // SAFETY: as in `cpu_kernel_unary`: the iterator's pointers and strides address
                // `n0` valid elements of each operand with the checked dtypes.
                unsafe {
                    let (po, pa, pb, pc) = (o as *mut O, a as *const A, b as *const B, c as *const C);
                    if contig(0) && contig(1) && contig(2) && contig(3) {
                        simd::run(Map3 { o: po, a: pa, b: pb, c: pc, n: n0, f: inlined3(&f) });
                    } else if contig(0) && s[1] == 0 && contig(2) && contig(3) {
                        let av = *pa;
                        simd::run(Map2 { o: po, a: pb, b: pc, n: n0, f: inlined2(&|y, z| f(av, y, z)) });
                    } else if contig(0) && contig(1) && s[2] == 0 && contig(3) {
                        let bv = *pb;
                        simd::run(Map2 { o: po, a: pa, b: pc, n: n0, f: inlined2(&|x, z| f(x, bv, z)) });
                    } else if contig(0) && contig(1) && contig(2) && s[3] == 0 {
                        let cv = *pc;
                        simd::run(Map2 { o: po, a: pa, b: pb, n: n0, f: inlined2(&|x, y| f(x, y, cv)) });
                    } else {
                        for i in 0..n0 {
                            *at::<O>(o, i, s[0]) = f(*at::<A>(a, i, s[1]), *at::<B>(b, i, s[2]), *at::<C>(c, i, s[3]));
                        }
                    }
                }
            }
        },
        GRAIN_SIZE,
    );
}

/// `out = f(a)` computed in `T::Math` (f32 for f16/bf16, rounded once), e.g.
/// `cpu_kernel_unary_math::<f16>(&iter, |x| x.exp())`.
pub fn cpu_kernel_unary_math<T: OpMath>(iter: &TensorIterator, f: impl Fn(T::Math) -> T::Math + Sync) {
    T::unary_math_kernel(iter, f)
}

/// `out = f(a, b)` computed in `T::Math`, e.g. `cpu_kernel_binary_math::<bf16>(&iter, |a, b| a + b)`.
pub fn cpu_kernel_binary_math<T: OpMath>(iter: &TensorIterator, f: impl Fn(T::Math, T::Math) -> T::Math + Sync) {
    T::binary_math_kernel(iter, f)
}

/// `out = f(a, b, c)` computed in `T::Math` (the loop of three-operand `pointwise:` operators,
/// e.g. `softplus(self, beta, threshold)`).
pub fn cpu_kernel_ternary_math<T: OpMath>(
    iter: &TensorIterator,
    f: impl Fn(T::Math, T::Math, T::Math) -> T::Math + Sync,
) {
    cpu_kernel_ternary::<T, T, T, T>(iter, move |a, b, c| T::from_math(f(a.to_math(), b.to_math(), c.to_math())))
}

/// A contiguous f16/bf16 run `o[i] = f(a[i])` in f32: one fused vectorized loop when the
/// conversions are plain bit operations (bf16), else through f32 blocks on the stack (f16,
/// converted by `half`'s slice conversions).
struct ReducedUnary<'a, T, F> {
    o: *mut T,
    a: *const T,
    n: usize,
    f: &'a F,
}

impl<T: ReducedFloat, F: Fn(f32) -> f32> simd::InnerLoop for ReducedUnary<'_, T, F> {
    /// # Safety
    /// `o` and `a` address `n` valid elements; `o` may equal `a` but not partially overlap it.
    #[inline(always)]
    unsafe fn run(self) {
        let ReducedUnary { o, a, n, f } = self;
        if T::FUSED {
            for i in 0..n {
                // SAFETY: `i < n`.
                unsafe { *o.add(i) = T::from_f32(f((*a.add(i)).to_f32())) };
            }
            return;
        }
        let mut x = [0f32; BLOCK];
        let mut i = 0;
        while i < n {
            let m = BLOCK.min(n - i);
            // SAFETY: `i + m <= n`. The shared slice over the input ends before the mutable
            // slice over the output is made, so full aliasing (in-place) is fine.
            unsafe { T::block_to_f32(std::slice::from_raw_parts(a.add(i), m), &mut x[..m]) };
            for v in &mut x[..m] {
                *v = f(*v);
            }
            // SAFETY: as above.
            unsafe { T::block_from_f32(&x[..m], std::slice::from_raw_parts_mut(o.add(i), m)) };
            i += m;
        }
    }
}

/// A contiguous f16/bf16 run `o[i] = f(a[i], b[i])` in f32, fused or blocked as in
/// [`ReducedUnary`].
struct ReducedBinary<'a, T, F> {
    o: *mut T,
    a: *const T,
    b: *const T,
    n: usize,
    f: &'a F,
}

impl<T: ReducedFloat, F: Fn(f32, f32) -> f32> simd::InnerLoop for ReducedBinary<'_, T, F> {
    /// # Safety
    /// `o`, `a` and `b` address `n` valid elements; `o` may equal an input but not partially
    /// overlap one.
    #[inline(always)]
    unsafe fn run(self) {
        let ReducedBinary { o, a, b, n, f } = self;
        if T::FUSED {
            for i in 0..n {
                // SAFETY: `i < n`.
                unsafe { *o.add(i) = T::from_f32(f((*a.add(i)).to_f32(), (*b.add(i)).to_f32())) };
            }
            return;
        }
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut i = 0;
        while i < n {
            let m = BLOCK.min(n - i);
            // SAFETY: `i + m <= n`; input slices end before the output slice is made.
            unsafe {
                T::block_to_f32(std::slice::from_raw_parts(a.add(i), m), &mut x[..m]);
                T::block_to_f32(std::slice::from_raw_parts(b.add(i), m), &mut y[..m]);
            }
            for (v, &u) in y[..m].iter_mut().zip(&x[..m]) {
                *v = f(u, *v);
            }
            // SAFETY: as above.
            unsafe { T::block_from_f32(&y[..m], std::slice::from_raw_parts_mut(o.add(i), m)) };
            i += m;
        }
    }
}

/// The f16/bf16 unary loop: contiguous runs are computed in f32 (see [`ReducedUnary`]).
pub(crate) fn unary_reduced<T: ReducedFloat>(iter: &TensorIterator, f: &(impl Fn(f32) -> f32 + Sync)) {
    check_signature(iter, "cpu_kernel_unary_math", &[T::DTYPE], &[T::DTYPE]);
    iter.for_each_writing(
        |ptrs, s, n0, n1| {
            let e = size_of::<T>() as isize;
            for j in 0..n1 {
                let (o, a) = (row(ptrs, s, 0, j) as *mut T, row(ptrs, s, 1, j) as *const T);
                // SAFETY: the iterator's pointers and strides address `n0` valid T elements of
                // each operand; partial overlap is excluded by the iterator.
                unsafe {
                    if s[0] == e && s[1] == e {
                        simd::run(ReducedUnary { o, a, n: n0, f });
                    } else if s[0] == e && s[1] == 0 {
                        fill(o, n0, T::from_f32(f((*a).to_f32())));
                    } else {
                        for i in 0..n0 {
                            *at::<T>(o as *mut u8, i, s[0]) =
                                T::from_f32(f((*at::<T>(a as *mut u8, i, s[1])).to_f32()));
                        }
                    }
                }
            }
        },
        GRAIN_SIZE,
    );
}

/// The f16/bf16 binary loop: contiguous runs are computed in f32 (see [`ReducedBinary`]); with
/// one input broadcast, its value is converted once and the other goes through
/// [`ReducedUnary`].
pub(crate) fn binary_reduced<T: ReducedFloat>(iter: &TensorIterator, f: &(impl Fn(f32, f32) -> f32 + Sync)) {
    check_signature(iter, "cpu_kernel_binary_math", &[T::DTYPE], &[T::DTYPE, T::DTYPE]);
    iter.for_each_writing(
        |ptrs, s, n0, n1| {
            let e = size_of::<T>() as isize;
            for j in 0..n1 {
                let (o, a, b) = (row(ptrs, s, 0, j), row(ptrs, s, 1, j), row(ptrs, s, 2, j));
                let (po, pa, pb) = (o as *mut T, a as *const T, b as *const T);
                // SAFETY: pointers and strides come from the iterator and address `n0` valid T
                // elements of each operand; partial overlap is excluded by the iterator.
                unsafe {
                    if s[0] == e && s[1] == e && s[2] == e {
                        simd::run(ReducedBinary { o: po, a: pa, b: pb, n: n0, f });
                    } else if s[0] == e && s[1] == 0 && s[2] == e {
                        let av = (*pa).to_f32();
                        simd::run(ReducedUnary { o: po, a: pb, n: n0, f: &|y| f(av, y) });
                    } else if s[0] == e && s[1] == e && s[2] == 0 {
                        let bv = (*pb).to_f32();
                        simd::run(ReducedUnary { o: po, a: pa, n: n0, f: &|x| f(x, bv) });
                    } else {
                        for i in 0..n0 {
                            let r = f((*at::<T>(a, i, s[1])).to_f32(), (*at::<T>(b, i, s[2])).to_f32());
                            *at::<T>(o, i, s[0]) = T::from_f32(r);
                        }
                    }
                }
            }
        },
        GRAIN_SIZE,
    );
}
