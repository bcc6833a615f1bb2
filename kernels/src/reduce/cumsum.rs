//! `cumsum` (structured: functional, `cumsum_` and `out=`).
//!
//! The result has the input's shape (contiguous when allocated) and the dtype `dtype`, else the
//! `out=` / in-place tensor's, else i64 for integral and bool inputs (as `sum`). The input is
//! converted to that dtype and scanned with the CPU accumulation types PyTorch uses for
//! `cumsum` (`acc_type<T, /*is_cuda=*/false>`): f64 for f32 and f64, f32 for f16/bf16, i64 for
//! integers (the running sum is rounded to the output dtype at every element, as PyTorch stores
//! it). A bool output is rejected, as PyTorch's CPU kernel has no bool instantiation.
//!
//! The scan works on a contiguous view `[outer, n, inner]` (`n` the scanned dim): each outer
//! block keeps `inner` running sums and adds one contiguous row of `inner` elements at a time,
//! so scans along any dim stream through memory. Outer blocks run in parallel.

use crate::generated::decls::{CumsumOutCpu, CumsumOutMetaFn};
use crate::iter::{copy_, to_dtype, StructuredOutputs, GRAIN_SIZE};
use crate::{Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{match_dtype, wrap_dim, DType, Element, Error, MemoryFormat, Result, Tensor};

/// An element type with its scan accumulator.
trait CumElem: Element {
    type Acc: Copy + Send + Sync;
    const ZERO: Self::Acc;
    fn add(acc: Self::Acc, x: Self) -> Self::Acc;
    fn store(acc: Self::Acc) -> Self;
}

macro_rules! cum_int {
    ($($t:ty),*) => {$(
        impl CumElem for $t {
            type Acc = i64;
            const ZERO: i64 = 0;
            #[inline(always)]
            fn add(acc: i64, x: $t) -> i64 { acc.wrapping_add(x as i64) }
            #[inline(always)]
            fn store(acc: i64) -> $t { acc as $t }
        }
    )*};
}
cum_int!(u8, i8, i16, i32, i64);

impl CumElem for f32 {
    type Acc = f64;
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn add(acc: f64, x: f32) -> f64 {
        acc + x as f64
    }
    #[inline(always)]
    fn store(acc: f64) -> f32 {
        acc as f32
    }
}

impl CumElem for f64 {
    type Acc = f64;
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn add(acc: f64, x: f64) -> f64 {
        acc + x
    }
    #[inline(always)]
    fn store(acc: f64) -> f64 {
        acc
    }
}

macro_rules! cum_reduced {
    ($($t:ty),*) => {$(
        impl CumElem for $t {
            type Acc = f32;
            const ZERO: f32 = 0.0;
            #[inline(always)]
            fn add(acc: f32, x: $t) -> f32 { acc + x.to_f32() }
            #[inline(always)]
            fn store(acc: f32) -> $t { <$t>::from_f32(acc) }
        }
    )*};
}
cum_reduced!(f16, bf16);

/// Scans one outer block: `inp` and `out` hold `n` rows of `inner` contiguous elements.
fn scan_block<T: CumElem>(inp: &[T], out: &mut [T], inner: usize, acc: &mut [T::Acc]) {
    if inner == 1 {
        let mut a = T::ZERO;
        for (o, &x) in out.iter_mut().zip(inp) {
            a = T::add(a, x);
            *o = T::store(a);
        }
        return;
    }
    acc.iter_mut().for_each(|a| *a = T::ZERO);
    for (orow, irow) in out.chunks_exact_mut(inner).zip(inp.chunks_exact(inner)) {
        for ((o, &x), a) in orow.iter_mut().zip(irow).zip(acc.iter_mut()) {
            *a = T::add(*a, x);
            *o = T::store(*a);
        }
    }
}

/// The scan of contiguous `inp` into contiguous `out` (same shape `[outer, n, inner]`).
fn scan_contiguous<T: CumElem>(inp: &[T], out: &mut [T], n: usize, inner: usize) {
    let block = n * inner;
    if block == 0 {
        return;
    }
    if inp.len() < GRAIN_SIZE || inp.len() == block {
        let mut acc = vec![T::ZERO; inner];
        for (o, i) in out.chunks_exact_mut(block).zip(inp.chunks_exact(block)) {
            scan_block(i, o, inner, &mut acc);
        }
        return;
    }
    let per_task = (GRAIN_SIZE / block).max(1) * block;
    oxten_runtime::parallel::chunks_mut(out, per_task, |c, o| {
        let i = &inp[c * per_task..c * per_task + o.len()];
        let mut acc = vec![T::ZERO; inner];
        for (ob, ib) in o.chunks_exact_mut(block).zip(i.chunks_exact(block)) {
            scan_block(ib, ob, inner, &mut acc);
        }
    });
}

/// Runs the typed scan of `input` (contiguous, `out`'s dtype) into contiguous `out`.
fn scan_typed<T: CumElem>(input: &Tensor, out: &Tensor, n: usize, inner: usize) {
    let len = out.numel() as usize;
    // SAFETY: both tensors are contiguous CPU tensors of dtype T with `len` elements starting at
    // `data_ptr()`; `out` is a distinct fresh or user tensor that does not overlap `input` (the
    // caller copies the input otherwise), and nothing else accesses them during the call.
    let (inp, outs) = unsafe {
        (
            std::slice::from_raw_parts(input.data_ptr() as *const T, len),
            std::slice::from_raw_parts_mut(out.data_ptr() as *mut T, len),
        )
    };
    scan_contiguous(inp, outs, n, inner);
}

/// `cumsum`'s meta function: `dim` must be valid; the output has the input's shape.
impl CumsumOutMetaFn for Meta {
    fn cumsum_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: i64, dtype: Option<DType>) -> Result<()> {
        wrap_dim(dim, self_.dim())?;
        let out_dtype = match outs.maybe_get_output(0) {
            Some(o) => dtype.unwrap_or(o.dtype()),
            None if self_.dtype().is_integral(true) => dtype.unwrap_or(DType::I64),
            None => dtype.unwrap_or(self_.dtype()),
        };
        outs.set_output(0, &self_.sizes(), None, out_dtype, self_.device())
    }
}

impl CumsumOutCpu for Cpu {
    fn cumsum_out(self_: &Tensor, dim: i64, _dtype: Option<DType>, out: &Tensor) -> Result<()> {
        if self_.dim() == 0 {
            return copy_(out, self_);
        }
        if self_.numel() == 0 {
            return Ok(());
        }
        let dtype = out.dtype();
        if dtype == DType::Bool {
            return Err(Error::dtype("\"cumsum_out_cpu\" not implemented for 'Bool'"));
        }
        let d = wrap_dim(dim, self_.dim())?;
        let sizes = self_.sizes();
        let n = sizes[d] as usize;
        let inner: usize = sizes[d + 1..].iter().product::<i64>() as usize;
        // A contiguous input that does not share memory with `out` is read in place; otherwise
        // (strided, converted, or aliasing `out`, as in `x.cumsum_(0)`) from a contiguous copy.
        let converted = to_dtype(self_, dtype)?;
        let shares = converted.storage().is_alias_of(out.storage());
        let input = if converted.is_contiguous() && !shares {
            converted
        } else {
            let c = Tensor::empty(&sizes, dtype, out.device(), MemoryFormat::Contiguous)?;
            copy_(&c, &converted)?;
            c
        };
        let target = if out.is_contiguous() {
            out.clone()
        } else {
            Tensor::empty(&sizes, dtype, out.device(), MemoryFormat::Contiguous)?
        };
        match_dtype!(dtype, T => scan_dispatch::<T>(&input, &target, n, inner));
        if !target.is_same(out) {
            copy_(out, &target)?;
        }
        Ok(())
    }
}

/// `scan_typed` for the element types that have an accumulator (every dtype but bool, which
/// the caller rejected).
fn scan_dispatch<T: Element>(input: &Tensor, out: &Tensor, n: usize, inner: usize) {
    macro_rules! typed {
        ($($t:ty),*) => {$(
            if T::DTYPE == <$t as Element>::DTYPE {
                return scan_typed::<$t>(input, out, n, inner);
            }
        )*};
    }
    typed!(u8, i8, i16, i32, i64, f32, f64, f16, bf16);
}
