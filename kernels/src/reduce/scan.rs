//! The scans: `cumsum`, `cumprod` and `logcumsumexp` (structured: functional, in-place and
//! `out=`).
//!
//! `cumsum`/`cumprod`'s result has the input's shape (contiguous when allocated) and the dtype
//! `dtype`, else the `out=` / in-place tensor's, else i64 for integral and bool inputs (as
//! `sum`). `logcumsumexp` keeps the input's dtype, which must be floating (an `out=` tensor must
//! have it too). The input is converted to the result dtype and scanned with the CPU
//! accumulation types PyTorch uses (`acc_type<T, /*is_cuda=*/false>`): f64 for f32 and f64,
//! f32 for f16/bf16, i64 for integers (the running value is rounded to the output dtype at
//! every element, as PyTorch stores it). A bool output is rejected, as PyTorch's CPU kernels
//! have no bool instantiation.
//!
//! The scan works on a contiguous view `[outer, n, inner]` (`n` the scanned dim): each outer
//! block keeps `inner` running values and folds in one contiguous row of `inner` elements at a
//! time, so scans along any dim stream through memory. Outer blocks run in parallel.

use crate::generated::decls::{
    CumprodOutCpu, CumprodOutMetaFn, CumsumOutCpu, CumsumOutMetaFn, LogcumsumexpOutCpu, LogcumsumexpOutMetaFn,
};
use crate::iter::{copy_, to_dtype, StructuredOutputs, GRAIN_SIZE};
use crate::support::not_implemented;
use crate::{Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{match_dtype, wrap_dim, DType, Element, Error, MemoryFormat, Result, Tensor};

/// A scan accumulator: i64, f32 or f64.
trait Acc: Copy + Send + Sync {
    fn zero() -> Self;
    fn one() -> Self;
    fn neg_inf() -> Self;
    fn add(self, x: Self) -> Self;
    fn mul(self, x: Self) -> Self;
    /// `log(exp(self) + exp(x))` (only reached for floats).
    fn log_add_exp(self, x: Self) -> Self;
}

impl Acc for i64 {
    fn zero() -> i64 {
        0
    }
    fn one() -> i64 {
        1
    }
    fn neg_inf() -> i64 {
        i64::MIN
    }
    #[inline(always)]
    fn add(self, x: i64) -> i64 {
        self.wrapping_add(x)
    }
    #[inline(always)]
    fn mul(self, x: i64) -> i64 {
        self.wrapping_mul(x)
    }
    /// Not reached: `logcumsumexp`'s meta function rejects integer dtypes.
    fn log_add_exp(self, x: i64) -> i64 {
        self.max(x)
    }
}

macro_rules! acc_float {
    ($($t:ty),*) => {$(
        impl Acc for $t {
            fn zero() -> $t { 0.0 }
            fn one() -> $t { 1.0 }
            fn neg_inf() -> $t { <$t>::NEG_INFINITY }
            #[inline(always)]
            fn add(self, x: $t) -> $t { self + x }
            #[inline(always)]
            fn mul(self, x: $t) -> $t { self * x }
            /// PyTorch's `_log_add_exp_helper`: NaN propagates from either side, and two equal
            /// infinities give that infinity (not `inf - inf`).
            #[inline(always)]
            fn log_add_exp(self, x: $t) -> $t {
                if self.is_nan() || x.is_nan() {
                    return <$t>::NAN;
                }
                let (lo, hi) = if self < x { (self, x) } else { (x, self) };
                if lo == hi && !lo.is_finite() {
                    return lo;
                }
                hi + (lo - hi).exp().ln_1p()
            }
        }
    )*};
}
acc_float!(f32, f64);

/// The scanned operation.
trait ScanOp: Copy + Send + Sync {
    fn init<A: Acc>() -> A;
    fn step<A: Acc>(acc: A, x: A) -> A;
}

#[derive(Clone, Copy)]
struct Sum;
impl ScanOp for Sum {
    fn init<A: Acc>() -> A {
        A::zero()
    }
    #[inline(always)]
    fn step<A: Acc>(acc: A, x: A) -> A {
        acc.add(x)
    }
}

#[derive(Clone, Copy)]
struct Prod;
impl ScanOp for Prod {
    fn init<A: Acc>() -> A {
        A::one()
    }
    #[inline(always)]
    fn step<A: Acc>(acc: A, x: A) -> A {
        acc.mul(x)
    }
}

#[derive(Clone, Copy)]
struct LogSumExp;
impl ScanOp for LogSumExp {
    fn init<A: Acc>() -> A {
        A::neg_inf()
    }
    #[inline(always)]
    fn step<A: Acc>(acc: A, x: A) -> A {
        acc.log_add_exp(x)
    }
}

/// An element type with its scan accumulator.
trait CumElem: Element {
    type Acc: Acc;
    fn load(x: Self) -> Self::Acc;
    fn store(acc: Self::Acc) -> Self;
}

macro_rules! cum_int {
    ($($t:ty),*) => {$(
        impl CumElem for $t {
            type Acc = i64;
            #[inline(always)]
            fn load(x: $t) -> i64 { x as i64 }
            #[inline(always)]
            fn store(acc: i64) -> $t { acc as $t }
        }
    )*};
}
cum_int!(u8, i8, i16, i32, i64);

impl CumElem for f32 {
    type Acc = f64;
    #[inline(always)]
    fn load(x: f32) -> f64 {
        x as f64
    }
    #[inline(always)]
    fn store(acc: f64) -> f32 {
        acc as f32
    }
}

impl CumElem for f64 {
    type Acc = f64;
    #[inline(always)]
    fn load(x: f64) -> f64 {
        x
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
            #[inline(always)]
            fn load(x: $t) -> f32 { x.to_f32() }
            #[inline(always)]
            fn store(acc: f32) -> $t { <$t>::from_f32(acc) }
        }
    )*};
}
cum_reduced!(f16, bf16);

/// Scans one outer block: `inp` and `out` hold `n` rows of `inner` contiguous elements.
fn scan_block<T: CumElem, O: ScanOp>(inp: &[T], out: &mut [T], inner: usize, acc: &mut [T::Acc]) {
    if inner == 1 {
        let mut a = O::init::<T::Acc>();
        for (o, &x) in out.iter_mut().zip(inp) {
            a = O::step(a, T::load(x));
            *o = T::store(a);
        }
        return;
    }
    acc.iter_mut().for_each(|a| *a = O::init());
    for (orow, irow) in out.chunks_exact_mut(inner).zip(inp.chunks_exact(inner)) {
        for ((o, &x), a) in orow.iter_mut().zip(irow).zip(acc.iter_mut()) {
            *a = O::step(*a, T::load(x));
            *o = T::store(*a);
        }
    }
}

/// The scan of contiguous `inp` into contiguous `out` (same shape `[outer, n, inner]`).
fn scan_contiguous<T: CumElem, O: ScanOp>(inp: &[T], out: &mut [T], n: usize, inner: usize) {
    let block = n * inner;
    if block == 0 {
        return;
    }
    if inp.len() < GRAIN_SIZE || inp.len() == block {
        let mut acc = vec![O::init::<T::Acc>(); inner];
        for (o, i) in out.chunks_exact_mut(block).zip(inp.chunks_exact(block)) {
            scan_block::<T, O>(i, o, inner, &mut acc);
        }
        return;
    }
    let per_task = (GRAIN_SIZE / block).max(1) * block;
    oxten_runtime::parallel::chunks_mut(out, per_task, |c, o| {
        let i = &inp[c * per_task..c * per_task + o.len()];
        let mut acc = vec![O::init::<T::Acc>(); inner];
        for (ob, ib) in o.chunks_exact_mut(block).zip(i.chunks_exact(block)) {
            scan_block::<T, O>(ib, ob, inner, &mut acc);
        }
    });
}

/// Runs the typed scan of `input` (contiguous, `out`'s dtype) into contiguous `out`.
fn scan_typed<T: CumElem, O: ScanOp>(input: &Tensor, out: &Tensor, n: usize, inner: usize) {
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
    scan_contiguous::<T, O>(inp, outs, n, inner);
}

/// The dtype of `cumsum`/`cumprod`'s result: `dtype`, else the `out=` tensor's, else i64 for
/// integral and bool inputs, else the input's.
fn accumulating_dtype(outs: &StructuredOutputs, self_: &Tensor, dtype: Option<DType>) -> DType {
    match outs.maybe_get_output(0) {
        Some(o) => dtype.unwrap_or(o.dtype()),
        None if self_.dtype().is_integral(true) => dtype.unwrap_or(DType::I64),
        None => dtype.unwrap_or(self_.dtype()),
    }
}

/// Scans `self_` along `dim` into `out` with `O`, after PyTorch's dtype check (`kernel` names
/// the kernel in its message).
fn scan_out<O: ScanOp>(self_: &Tensor, dim: i64, out: &Tensor, kernel: &str) -> Result<()> {
    if self_.dim() == 0 {
        return copy_(out, self_);
    }
    if self_.numel() == 0 {
        return Ok(());
    }
    let dtype = out.dtype();
    if dtype == DType::Bool {
        return Err(not_implemented(kernel, dtype));
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
    match_dtype!(dtype, T => scan_dispatch::<T, O>(&input, &target, n, inner));
    if !target.is_same(out) {
        copy_(out, &target)?;
    }
    Ok(())
}

/// `cumsum`'s meta function: `dim` must be valid; the output has the input's shape.
impl CumsumOutMetaFn for Meta {
    fn cumsum_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: i64, dtype: Option<DType>) -> Result<()> {
        wrap_dim(dim, self_.dim())?;
        let out_dtype = accumulating_dtype(outs, self_, dtype);
        outs.set_output(0, &self_.sizes(), None, out_dtype, self_.device())
    }
}

impl CumsumOutCpu for Cpu {
    fn cumsum_out(self_: &Tensor, dim: i64, _dtype: Option<DType>, out: &Tensor) -> Result<()> {
        scan_out::<Sum>(self_, dim, out, "cumsum_out_cpu")
    }
}

/// `cumprod`'s meta function: as `cumsum`'s.
impl CumprodOutMetaFn for Meta {
    fn cumprod_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: i64, dtype: Option<DType>) -> Result<()> {
        wrap_dim(dim, self_.dim())?;
        let out_dtype = accumulating_dtype(outs, self_, dtype);
        outs.set_output(0, &self_.sizes(), None, out_dtype, self_.device())
    }
}

impl CumprodOutCpu for Cpu {
    fn cumprod_out(self_: &Tensor, dim: i64, _dtype: Option<DType>, out: &Tensor) -> Result<()> {
        scan_out::<Prod>(self_, dim, out, "cumprod_out_cpu")
    }
}

/// `logcumsumexp`'s meta function: a floating input, and an `out=` tensor of its dtype.
impl LogcumsumexpOutMetaFn for Meta {
    fn logcumsumexp_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: i64) -> Result<()> {
        wrap_dim(dim, self_.dim())?;
        if let Some(o) = outs.maybe_get_output(0) {
            if o.dtype() != self_.dtype() {
                return Err(Error::runtime(format!(
                    "expected scalar_type {} but found {}",
                    crate::iter::scalar_type_name(self_.dtype()),
                    crate::iter::scalar_type_name(o.dtype())
                )));
            }
        }
        if !self_.dtype().is_floating_point() {
            return Err(not_implemented("logcumsumexp_out_cpu", self_.dtype()));
        }
        outs.set_output(0, &self_.sizes(), None, self_.dtype(), self_.device())
    }
}

impl LogcumsumexpOutCpu for Cpu {
    fn logcumsumexp_out(self_: &Tensor, dim: i64, out: &Tensor) -> Result<()> {
        scan_out::<LogSumExp>(self_, dim, out, "logcumsumexp_out_cpu")
    }
}

/// `scan_typed` for the element types that have an accumulator (every dtype but bool, which
/// the caller rejected).
fn scan_dispatch<T: Element, O: ScanOp>(input: &Tensor, out: &Tensor, n: usize, inner: usize) {
    macro_rules! typed {
        ($($t:ty),*) => {$(
            if T::DTYPE == <$t as Element>::DTYPE {
                return scan_typed::<$t, O>(input, out, n, inner);
            }
        )*};
    }
    typed!(u8, i8, i16, i32, i64, f32, f64, f16, bf16);
}
