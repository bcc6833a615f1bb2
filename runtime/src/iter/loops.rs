//! Typed CPU loops over a [`TensorIterator`] (PyTorch's `cpu_kernel`).
//!
//! Each loop has three paths for the inner dim: every operand contiguous (a plain indexed loop
//! that LLVM vectorizes), exactly one input broadcast with stride 0 (its value is hoisted), and
//! a general byte-strided loop. The closure is generic over the element types only, and the
//! iteration driver is shared through `&dyn`, so one kernel × dtype is one instantiation.
//!
//! Operand dtypes must match the type parameters; a mismatch is a bug in the calling kernel
//! and panics with the operand index and both dtypes.

use super::iterator::TensorIterator;
use super::opmath::{OpMath, ReducedFloat};
use super::GRAIN_SIZE;
use crate::dtype::DType;
use crate::tensor::Element;
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
    iter.for_each(
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

/// `out = f(a)`.
pub fn cpu_kernel_unary<A: Element, O: Element>(iter: &TensorIterator, f: impl Fn(A) -> O + Sync) {
    check_signature(iter, "cpu_kernel_unary", &[O::DTYPE], &[A::DTYPE]);
    iter.for_each(
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
                        let (o, a) = (o as *mut O, a as *const A);
                        for i in 0..n0 {
                            *o.add(i) = f(*a.add(i));
                        }
                    } else if s[0] == eo && s[1] == 0 {
                        let v = f(*(a as *const A));
                        let o = o as *mut O;
                        for i in 0..n0 {
                            *o.add(i) = v;
                        }
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
    iter.for_each(
        |ptrs, s, n0, n1| {
            let (eo, ea, eb) = (size_of::<O>() as isize, size_of::<A>() as isize, size_of::<B>() as isize);
            for j in 0..n1 {
                let (o, a, b) = (row(ptrs, s, 0, j), row(ptrs, s, 1, j), row(ptrs, s, 2, j));
                // SAFETY: as in `cpu_kernel_unary`: the iterator's pointers and strides address
                // `n0` valid elements of each operand with the checked dtypes.
                unsafe {
                    let (po, pa, pb) = (o as *mut O, a as *const A, b as *const B);
                    if s[0] == eo && s[1] == ea && s[2] == eb {
                        for i in 0..n0 {
                            *po.add(i) = f(*pa.add(i), *pb.add(i));
                        }
                    } else if s[0] == eo && s[1] == 0 && s[2] == eb {
                        let av = *pa;
                        for i in 0..n0 {
                            *po.add(i) = f(av, *pb.add(i));
                        }
                    } else if s[0] == eo && s[1] == ea && s[2] == 0 {
                        let bv = *pb;
                        for i in 0..n0 {
                            *po.add(i) = f(*pa.add(i), bv);
                        }
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
    iter.for_each(
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
                        for i in 0..n0 {
                            *po.add(i) = f(*pa.add(i), *pb.add(i), *pc.add(i));
                        }
                    } else if contig(0) && s[1] == 0 && contig(2) && contig(3) {
                        let av = *pa;
                        for i in 0..n0 {
                            *po.add(i) = f(av, *pb.add(i), *pc.add(i));
                        }
                    } else if contig(0) && contig(1) && s[2] == 0 && contig(3) {
                        let bv = *pb;
                        for i in 0..n0 {
                            *po.add(i) = f(*pa.add(i), bv, *pc.add(i));
                        }
                    } else if contig(0) && contig(1) && contig(2) && s[3] == 0 {
                        let cv = *pc;
                        for i in 0..n0 {
                            *po.add(i) = f(*pa.add(i), *pb.add(i), cv);
                        }
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

/// The f16/bf16 unary loop: contiguous runs are converted to f32 in stack blocks.
pub(crate) fn unary_reduced<T: ReducedFloat>(iter: &TensorIterator, f: &(impl Fn(f32) -> f32 + Sync)) {
    check_signature(iter, "cpu_kernel_unary_math", &[T::DTYPE], &[T::DTYPE]);
    iter.for_each(
        |ptrs, s, n0, n1| {
            let e = size_of::<T>() as isize;
            let mut x = [0f32; BLOCK];
            for j in 0..n1 {
                let (o, a) = (row(ptrs, s, 0, j), row(ptrs, s, 1, j));
                // SAFETY: the iterator's pointers and strides address `n0` valid T elements of
                // each operand. In the blocked path the shared slice over the input ends before
                // the mutable slice over the output is made, so full aliasing (in-place) is fine;
                // partial overlap is excluded by the iterator.
                unsafe {
                    if s[0] == e && s[1] == e {
                        let mut i = 0;
                        while i < n0 {
                            let m = BLOCK.min(n0 - i);
                            T::block_to_f32(std::slice::from_raw_parts((a as *const T).add(i), m), &mut x[..m]);
                            for v in &mut x[..m] {
                                *v = f(*v);
                            }
                            T::block_from_f32(&x[..m], std::slice::from_raw_parts_mut((o as *mut T).add(i), m));
                            i += m;
                        }
                    } else if s[0] == e && s[1] == 0 {
                        let v = T::from_f32(f((*(a as *const T)).to_f32()));
                        let o = o as *mut T;
                        for i in 0..n0 {
                            *o.add(i) = v;
                        }
                    } else {
                        for i in 0..n0 {
                            *at::<T>(o, i, s[0]) = T::from_f32(f((*at::<T>(a, i, s[1])).to_f32()));
                        }
                    }
                }
            }
        },
        GRAIN_SIZE,
    );
}

/// The f16/bf16 binary loop: blocks of both inputs (or of one, with the other hoisted) are
/// converted to f32, computed, and rounded back once.
pub(crate) fn binary_reduced<T: ReducedFloat>(iter: &TensorIterator, f: &(impl Fn(f32, f32) -> f32 + Sync)) {
    check_signature(iter, "cpu_kernel_binary_math", &[T::DTYPE], &[T::DTYPE, T::DTYPE]);
    iter.for_each(
        |ptrs, s, n0, n1| {
            let e = size_of::<T>() as isize;
            let mut x = [0f32; BLOCK];
            let mut y = [0f32; BLOCK];
            for j in 0..n1 {
                let (o, a, b) = (row(ptrs, s, 0, j), row(ptrs, s, 1, j), row(ptrs, s, 2, j));
                let (pa, pb) = (a as *const T, b as *const T);
                // SAFETY: as in `unary_reduced`: input slices end before the output slice is
                // made; pointers and strides come from the iterator.
                unsafe {
                    let hoisted = if s[1] == 0 { Some((*pa).to_f32()) } else { None };
                    let hoisted_b = if s[2] == 0 { Some((*pb).to_f32()) } else { None };
                    let a_ok = s[1] == e || s[1] == 0;
                    let b_ok = s[2] == e || s[2] == 0;
                    if s[0] == e && a_ok && b_ok && !(s[1] == 0 && s[2] == 0) {
                        let mut i = 0;
                        while i < n0 {
                            let m = BLOCK.min(n0 - i);
                            match (hoisted, hoisted_b) {
                                (Some(av), None) => {
                                    T::block_to_f32(std::slice::from_raw_parts(pb.add(i), m), &mut y[..m]);
                                    for v in &mut y[..m] {
                                        *v = f(av, *v);
                                    }
                                }
                                (None, Some(bv)) => {
                                    T::block_to_f32(std::slice::from_raw_parts(pa.add(i), m), &mut y[..m]);
                                    for v in &mut y[..m] {
                                        *v = f(*v, bv);
                                    }
                                }
                                _ => {
                                    T::block_to_f32(std::slice::from_raw_parts(pa.add(i), m), &mut x[..m]);
                                    T::block_to_f32(std::slice::from_raw_parts(pb.add(i), m), &mut y[..m]);
                                    for (v, &u) in y[..m].iter_mut().zip(&x[..m]) {
                                        *v = f(u, *v);
                                    }
                                }
                            }
                            T::block_from_f32(&y[..m], std::slice::from_raw_parts_mut((o as *mut T).add(i), m));
                            i += m;
                        }
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
