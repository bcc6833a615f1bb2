//! The softmax family: `_softmax`, `_log_softmax`, their backward kernels
//! (`_softmax_backward_data`, `_log_softmax_backward_data`), the `softmax.int` /
//! `log_softmax.int` composites and `logsumexp`.
//!
//! The structured kernels follow PyTorch's CPU implementation:
//!
//! * the meta functions wrap `dim`, check it, and set a contiguous output of the input's sizes
//!   (`half_to_float` asks for an f32 output, which the CPU impl then rejects, as PyTorch's
//!   does);
//! * the input is made contiguous and viewed as `[outer, dim, inner]`. The max along `dim` is
//!   subtracted before `exp`, so large inputs do not overflow (a row whose max is infinite gives
//!   NaN, as in PyTorch). f16/bf16 values are converted to f32 once, every sum is accumulated
//!   in f32 (f64 for f64), and results are rounded once;
//! * the last-dim case (`inner == 1`) works row by row on contiguous slices with eight
//!   independent accumulators, so the max, `exp` and sum loops vectorize; other dims work on
//!   blocks of up to [`BLOCK`] columns, with the loop over columns innermost;
//! * rows (or blocks) are split over the thread pool once the work reaches
//!   [`GRAIN_SIZE`](crate::iter::GRAIN_SIZE) elements;
//! * an output that is not contiguous or overlaps an input is computed into a temporary and
//!   copied back.

use super::expect_dtype;
use crate::generated::decls::{
    LogSoftmaxBackwardCpuOutCpu, LogSoftmaxBackwardDataOutMetaFn, LogSoftmaxCompositeImplicit, LogSoftmaxCpuOutCpu,
    LogSoftmaxOutCompositeExplicit, LogSoftmaxOutMetaFn, LogsumexpCompositeExplicit, LogsumexpOutCompositeExplicit,
    SoftmaxBackwardCpuOutCpu, SoftmaxBackwardDataOutMetaFn, SoftmaxCompositeImplicit, SoftmaxCpuOutCpu,
    SoftmaxOutCompositeExplicit, SoftmaxOutMetaFn,
};
use crate::iter::{copy_, get_overlap_status, scalar_type_name, MemOverlapStatus, OpMath, StructuredOutputs};
use crate::math::Float;
use crate::{Composite, Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16, DEFAULT_FLOAT};
use oxten_runtime::{ops, wrap_dim, DType, Error, MemoryFormat, Result, Scalar, Tensor};
use std::ops::Range;

/// Columns per block of the non-last-dim kernels.
const BLOCK: usize = 64;
/// Independent accumulators of the row reductions (enough for 8-lane f32 vectors).
const LANES: usize = 8;

// ---------------------------------------------------------------------------------------------
// element types
// ---------------------------------------------------------------------------------------------

/// A floating storage type and its math type `M` (f32 for f16/bf16).
trait Elem<M: Float>: OpMath<Math = M> {
    /// The values themselves when the storage type is the math type (f32, f64): no conversion
    /// pass is needed.
    fn direct(s: &[Self]) -> Option<&[M]>;
    fn direct_mut(s: &mut [Self]) -> Option<&mut [M]>;
}

macro_rules! direct_elem {
    ($($t:ty),*) => {$(
        impl Elem<$t> for $t {
            #[inline(always)]
            fn direct(s: &[$t]) -> Option<&[$t]> { Some(s) }
            #[inline(always)]
            fn direct_mut(s: &mut [$t]) -> Option<&mut [$t]> { Some(s) }
        }
    )*};
}
direct_elem!(f32, f64);

macro_rules! reduced_elem {
    ($($t:ty),*) => {$(
        impl Elem<f32> for $t {
            #[inline(always)]
            fn direct(_: &[$t]) -> Option<&[f32]> { None }
            #[inline(always)]
            fn direct_mut(_: &mut [$t]) -> Option<&mut [f32]> { None }
        }
    )*};
}
reduced_elem!(f16, bf16);

fn load<S: Elem<M>, M: Float>(src: &[S], dst: &mut [M]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.to_math();
    }
}

fn store<S: Elem<M>, M: Float>(src: &[M], dst: &mut [S]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = S::from_math(s);
    }
}

// ---------------------------------------------------------------------------------------------
// row kernels (last dim): contiguous slices, lane-split reductions
// ---------------------------------------------------------------------------------------------

/// The largest value (NaNs are skipped here; they reach the result through `exp`).
#[inline(always)]
fn row_max<M: Float>(x: &[M]) -> M {
    let mut acc = [M::from_f64(f64::NEG_INFINITY); LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] = if c[i] > acc[i] { c[i] } else { acc[i] };
        }
    }
    let mut m = acc[0];
    for &v in acc[1..].iter().chain(tail) {
        m = if v > m { v } else { m };
    }
    m
}

/// `sum_i f(a[i], b[i])` with [`LANES`] independent accumulators.
#[inline(always)]
fn row_sum2<M: Float>(a: &[M], b: &[M], f: impl Fn(M, M) -> M) -> M {
    let mut acc = [M::zero(); LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] = acc[i] + f(x[i], y[i]);
        }
    }
    let mut s = M::zero();
    for (&x, &y) in ta.iter().zip(tb) {
        s = s + f(x, y);
    }
    acc.iter().fold(M::zero(), |t, &v| t + v) + s
}

/// `y = exp(x - max) / sum exp(x - max)` (as PyTorch: multiplied by the reciprocal of the sum).
fn softmax_row<M: Float>(x: &[M], y: &mut [M]) {
    let max = row_max(x);
    for (o, &v) in y.iter_mut().zip(x) {
        *o = (v - max).exp();
    }
    let sum = row_sum2(y, y, |e, _| e);
    let inv = M::one() / sum;
    for o in y.iter_mut() {
        *o = *o * inv;
    }
}

/// `y = (x - max) - log(sum exp(x - max))`, in PyTorch's order: `x - max` is exact where `x` is
/// near `max`, and adding `max` to the log first would round it at `max`'s magnitude.
fn log_softmax_row<M: Float>(x: &[M], y: &mut [M]) {
    let max = row_max(x);
    let sum = row_sum2(x, x, |v, _| (v - max).exp());
    let log_sum = sum.ln();
    for (o, &v) in y.iter_mut().zip(x) {
        *o = (v - max) - log_sum;
    }
}

/// `gi = y * (g - sum(g * y))`.
fn softmax_backward_row<M: Float>(g: &[M], y: &[M], gi: &mut [M]) {
    let dot = row_sum2(g, y, |a, b| a * b);
    for ((o, &a), &b) in gi.iter_mut().zip(g).zip(y) {
        *o = (a - dot) * b;
    }
}

/// `gi = g - exp(y) * sum(g)`.
fn log_softmax_backward_row<M: Float>(g: &[M], y: &[M], gi: &mut [M]) {
    let sum = row_sum2(g, g, |a, _| a);
    for ((o, &a), &b) in gi.iter_mut().zip(g).zip(y) {
        *o = a - b.exp() * sum;
    }
}

// ---------------------------------------------------------------------------------------------
// block kernels (other dims): `dim` rows of `w` columns, `stride` apart; columns innermost
// ---------------------------------------------------------------------------------------------

/// Per-column scratch of the block kernels.
struct Cols<M> {
    a: Vec<M>,
    b: Vec<M>,
}

impl<M: Float> Cols<M> {
    fn new() -> Self {
        Cols { a: vec![M::zero(); BLOCK], b: vec![M::zero(); BLOCK] }
    }
}

/// Row `d` of a block (its first `w` columns).
#[inline(always)]
fn at<M>(s: &[M], d: usize, stride: usize, w: usize) -> &[M] {
    &s[d * stride..d * stride + w]
}

#[inline(always)]
fn at_mut<M>(s: &mut [M], d: usize, stride: usize, w: usize) -> &mut [M] {
    &mut s[d * stride..d * stride + w]
}

fn softmax_block<M: Float>(x: &[M], y: &mut [M], n: usize, stride: usize, w: usize, log: bool, c: &mut Cols<M>) {
    let (max, sum) = (&mut c.a[..w], &mut c.b[..w]);
    max.fill(M::from_f64(f64::NEG_INFINITY));
    for d in 0..n {
        for (m, &v) in max.iter_mut().zip(at(x, d, stride, w)) {
            *m = if v > *m { v } else { *m };
        }
    }
    sum.fill(M::zero());
    if log {
        for d in 0..n {
            for ((s, &m), &v) in sum.iter_mut().zip(max.iter()).zip(at(x, d, stride, w)) {
                *s = *s + (v - m).exp();
            }
        }
        for s in sum.iter_mut() {
            *s = s.ln();
        }
        // As in `log_softmax_row`: `(x - max) - log(sum)`.
        for d in 0..n {
            let xs = at(x, d, stride, w).iter().zip(max.iter()).zip(sum.iter());
            for (o, ((&v, &m), &log_sum)) in at_mut(y, d, stride, w).iter_mut().zip(xs) {
                *o = (v - m) - log_sum;
            }
        }
    } else {
        for d in 0..n {
            let row = at_mut(y, d, stride, w);
            for (((o, &v), &m), s) in row.iter_mut().zip(at(x, d, stride, w)).zip(max.iter()).zip(sum.iter_mut()) {
                *o = (v - m).exp();
                *s = *s + *o;
            }
        }
        for s in sum.iter_mut() {
            *s = M::one() / *s;
        }
        for d in 0..n {
            for (o, &inv) in at_mut(y, d, stride, w).iter_mut().zip(sum.iter()) {
                *o = *o * inv;
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn softmax_backward_block<M: Float>(
    g: &[M],
    y: &[M],
    gi: &mut [M],
    n: usize,
    stride: usize,
    w: usize,
    log: bool,
    c: &mut Cols<M>,
) {
    let acc = &mut c.a[..w];
    acc.fill(M::zero());
    for d in 0..n {
        let (gr, yr) = (at(g, d, stride, w), at(y, d, stride, w));
        for ((s, &a), &b) in acc.iter_mut().zip(gr).zip(yr) {
            *s = if log { *s + a } else { *s + a * b };
        }
    }
    for d in 0..n {
        let (gr, yr) = (at(g, d, stride, w), at(y, d, stride, w));
        for (((o, &a), &b), &s) in at_mut(gi, d, stride, w).iter_mut().zip(gr).zip(yr).zip(acc.iter()) {
            *o = if log { a - b.exp() * s } else { (a - s) * b };
        }
    }
}

// ---------------------------------------------------------------------------------------------
// drivers: contiguous [outer, n, inner] buffers, split over the thread pool
// ---------------------------------------------------------------------------------------------

/// `outer x n x inner`: the shape a softmax over one dim sees.
#[derive(Clone, Copy)]
struct Shape {
    outer: usize,
    n: usize,
    inner: usize,
}

impl Shape {
    fn of(sizes: &[i64], dim: usize) -> Shape {
        if sizes.is_empty() {
            return Shape { outer: 1, n: 1, inner: 1 };
        }
        let p = |r: &[i64]| r.iter().product::<i64>() as usize;
        Shape { outer: p(&sizes[..dim]), n: sizes[dim] as usize, inner: p(&sizes[dim + 1..]) }
    }
    fn blocks_per_outer(&self) -> usize {
        self.inner.div_ceil(BLOCK)
    }
    /// Units of parallel work: rows (last dim) or `(outer, column block)` pairs.
    fn tasks(&self) -> usize {
        if self.inner == 1 {
            self.outer
        } else {
            self.outer * self.blocks_per_outer()
        }
    }
    /// Elements one task touches.
    fn task_len(&self) -> usize {
        if self.inner == 1 {
            self.n
        } else {
            self.n * BLOCK.min(self.inner)
        }
    }
}

/// A raw pointer that may cross threads: tasks write disjoint parts of the buffer.
#[derive(Clone, Copy)]
struct SharedPtr<T>(*mut T);
// SAFETY: only used to hand disjoint regions of one buffer to parallel tasks (see `run_tasks`).
unsafe impl<T> Send for SharedPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SharedPtr<T> {}

/// Runs `f` over `0..tasks`, split into ranges over the thread pool when the work (`tasks *
/// task_len` elements) is large enough.
fn run_tasks(tasks: usize, task_len: usize, f: impl Fn(Range<usize>) + Sync) {
    let work = tasks.saturating_mul(task_len.max(1));
    let threads = oxten_runtime::parallel::threads_now();
    if tasks <= 1 || threads <= 1 || work < crate::iter::GRAIN_SIZE {
        f(0..tasks);
        return;
    }
    let parts = (threads * 4).min(tasks).min(work / crate::iter::GRAIN_SIZE).max(2);
    let chunk = tasks.div_ceil(parts);
    oxten_runtime::parallel::for_each(parts, |p| {
        let start = p * chunk;
        let end = (start + chunk).min(tasks);
        if start < end {
            f(start..end);
        }
    });
}

/// The elements of task `t` within one `[outer, n, inner]` buffer: start offset, length, and
/// (for blocks) the column count.
fn task_span(s: Shape, t: usize) -> (usize, usize, usize) {
    if s.inner == 1 {
        (t * s.n, s.n, s.n)
    } else {
        let bpo = s.blocks_per_outer();
        let (o, b) = (t / bpo, t % bpo);
        let j0 = b * BLOCK;
        let w = BLOCK.min(s.inner - j0);
        (o * s.n * s.inner + j0, (s.n - 1) * s.inner + w, w)
    }
}

/// Softmax or log-softmax of the contiguous `x` into the contiguous `y` (`len` elements each).
///
/// # Safety
/// `x` and `y` must address `s.outer * s.n * s.inner` elements of `S` each, and must not
/// overlap.
unsafe fn forward<S: Elem<M>, M: Float>(x: *const S, y: *mut S, s: Shape, log: bool) {
    let (xp, yp) = (SharedPtr(x as *mut S), SharedPtr(y));
    run_tasks(s.tasks(), s.task_len(), move |range| {
        let (xp, yp) = (xp, yp);
        let mut cols = Cols::<M>::new();
        let mut buf_x: Vec<M> = Vec::new();
        let mut buf_y: Vec<M> = Vec::new();
        for t in range {
            let (off, len, w) = task_span(s, t);
            // SAFETY: tasks cover disjoint spans inside the two buffers (the caller's contract).
            let (xs, ys) = unsafe {
                (std::slice::from_raw_parts(xp.0.add(off), len), std::slice::from_raw_parts_mut(yp.0.add(off), len))
            };
            let stride = if s.inner == 1 { s.n } else { s.inner };
            match (S::direct(xs), S::direct_mut(ys)) {
                (Some(xm), Some(ym)) => forward_span(xm, ym, s, stride, w, log, &mut cols),
                _ => {
                    // Gather the task's rows into compact f32 buffers (`w` apart).
                    let rows = if s.inner == 1 { 1 } else { s.n };
                    buf_x.resize(rows * w, M::zero());
                    buf_y.resize(rows * w, M::zero());
                    for d in 0..rows {
                        load(&xs[d * stride..d * stride + w], &mut buf_x[d * w..(d + 1) * w]);
                    }
                    forward_span(&buf_x, &mut buf_y, s, w, w, log, &mut cols);
                    for d in 0..rows {
                        store(&buf_y[d * w..(d + 1) * w], &mut ys[d * stride..d * stride + w]);
                    }
                }
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
fn forward_span<M: Float>(x: &[M], y: &mut [M], s: Shape, stride: usize, w: usize, log: bool, c: &mut Cols<M>) {
    if s.inner == 1 {
        if log {
            log_softmax_row(x, y)
        } else {
            softmax_row(x, y)
        }
    } else {
        softmax_block(x, y, s.n, stride, w, log, c)
    }
}

/// The backward of softmax (`log == false`) or log-softmax from the contiguous `g` and `y` into
/// the contiguous `gi`.
///
/// # Safety
/// The three pointers must address `s.outer * s.n * s.inner` elements of `S` each, and `gi`
/// must not overlap `g` or `y`.
unsafe fn backward<S: Elem<M>, M: Float>(g: *const S, y: *const S, gi: *mut S, s: Shape, log: bool) {
    let (gp, yp, op) = (SharedPtr(g as *mut S), SharedPtr(y as *mut S), SharedPtr(gi));
    run_tasks(s.tasks(), s.task_len(), move |range| {
        let (gp, yp, op) = (gp, yp, op);
        let mut cols = Cols::<M>::new();
        let (mut bg, mut by, mut bo): (Vec<M>, Vec<M>, Vec<M>) = (Vec::new(), Vec::new(), Vec::new());
        for t in range {
            let (off, len, w) = task_span(s, t);
            // SAFETY: tasks cover disjoint spans inside the buffers (the caller's contract).
            let (gs, ys, os) = unsafe {
                (
                    std::slice::from_raw_parts(gp.0.add(off), len),
                    std::slice::from_raw_parts(yp.0.add(off), len),
                    std::slice::from_raw_parts_mut(op.0.add(off), len),
                )
            };
            let stride = if s.inner == 1 { s.n } else { s.inner };
            match (S::direct(gs), S::direct(ys), S::direct_mut(os)) {
                (Some(g), Some(y), Some(o)) => backward_span(g, y, o, s, stride, w, log, &mut cols),
                _ => {
                    // Gather the task's rows into compact f32 buffers (`w` apart).
                    let rows = if s.inner == 1 { 1 } else { s.n };
                    for b in [&mut bg, &mut by, &mut bo] {
                        b.resize(rows * w, M::zero());
                    }
                    for d in 0..rows {
                        let (src, dst) = (d * stride..d * stride + w, d * w..(d + 1) * w);
                        load(&gs[src.clone()], &mut bg[dst.clone()]);
                        load(&ys[src], &mut by[dst]);
                    }
                    backward_span(&bg, &by, &mut bo, s, w, w, log, &mut cols);
                    for d in 0..rows {
                        store(&bo[d * w..(d + 1) * w], &mut os[d * stride..d * stride + w]);
                    }
                }
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
fn backward_span<M: Float>(
    g: &[M],
    y: &[M],
    gi: &mut [M],
    s: Shape,
    stride: usize,
    w: usize,
    log: bool,
    c: &mut Cols<M>,
) {
    if s.inner == 1 {
        if log {
            log_softmax_backward_row(g, y, gi)
        } else {
            softmax_backward_row(g, y, gi)
        }
    } else {
        softmax_backward_block(g, y, gi, s.n, stride, w, log, c)
    }
}

// ---------------------------------------------------------------------------------------------
// tensors in, tensors out
// ---------------------------------------------------------------------------------------------

/// Whether `out` can be written directly: contiguous and disjoint from every input.
fn writable_in_place(out: &Tensor, inputs: &[&Tensor]) -> bool {
    out.is_contiguous() && inputs.iter().all(|t| get_overlap_status(out, t) == MemOverlapStatus::No)
}

/// Runs `kernel` with a contiguous destination: `out` itself when possible, else a temporary
/// copied into `out` afterwards.
fn with_contiguous_out(out: &Tensor, inputs: &[&Tensor], kernel: impl FnOnce(&Tensor) -> Result<()>) -> Result<()> {
    if writable_in_place(out, inputs) {
        kernel(out)
    } else {
        let tmp = Tensor::empty(&out.sizes(), out.dtype(), out.device(), MemoryFormat::Contiguous)?;
        kernel(&tmp)?;
        copy_(out, &tmp)
    }
}

fn contiguous(t: &Tensor) -> Result<Tensor> {
    ops::contiguous::call(t, MemoryFormat::Contiguous)
}

/// The name of PyTorch's loop for the dtype error: `softmax_lastdim_kernel_impl` or
/// `softmax_kernel_impl`, with a `log_` prefix and a `_backward` infix as needed.
fn kernel_name(log: bool, backward: bool, lastdim: bool) -> String {
    format!(
        "{}softmax{}{}_kernel_impl",
        if log { "log_" } else { "" },
        if backward { "_backward" } else { "" },
        if lastdim { "_lastdim" } else { "" }
    )
}

/// Shared meta function of `_softmax` / `_log_softmax`.
fn forward_meta(outs: &mut StructuredOutputs, self_: &Tensor, dim: i64, half_to_float: bool) -> Result<()> {
    wrap_dim(dim, self_.dim())?;
    let dtype = if half_to_float { DType::F32 } else { self_.dtype() };
    outs.set_output(0, &self_.sizes(), None, dtype, self_.device())
}

/// Shared CPU impl of `_softmax` / `_log_softmax`.
fn forward_cpu(self_: &Tensor, dim: i64, half_to_float: bool, out: &Tensor, log: bool) -> Result<()> {
    if half_to_float {
        return Err(Error::runtime("softmax with half to float conversion is not supported on CPU"));
    }
    if self_.numel() == 0 {
        return Ok(());
    }
    let d = wrap_dim(dim, self_.dim())?;
    let s = Shape::of(&self_.sizes(), d);
    let name = kernel_name(log, false, s.inner == 1);
    let x = contiguous(self_)?;
    with_contiguous_out(out, &[&x], |o| {
        let (xp, dtype) = (x.data_ptr(), x.dtype());
        // SAFETY: the kernel writes every element of `o` (contiguous, `numel` elements of the
        // input's dtype) before anything reads it, and `o` does not overlap `x`.
        let (op, fresh) = unsafe { o.data_ptr_for_overwrite() };
        macro_rules! run {
            ($S:ty, $M:ty) => {
                // SAFETY: `x` and `o` are contiguous with `outer * n * inner` elements of
                // `dtype` and do not overlap (`with_contiguous_out`).
                unsafe { forward::<$S, $M>(xp.cast(), op.cast(), s, log) }
            };
        }
        match dtype {
            DType::F32 => run!(f32, f32),
            DType::F64 => run!(f64, f64),
            DType::F16 => run!(f16, f32),
            DType::BF16 => run!(bf16, f32),
            other => return Err(super::not_implemented(&name, other)),
        }
        if fresh {
            // SAFETY: every element was written above.
            unsafe { o.storage().assume_init() };
        }
        Ok(())
    })
}

impl SoftmaxOutMetaFn for Meta {
    fn _softmax_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: i64, half_to_float: bool) -> Result<()> {
        forward_meta(outs, self_, dim, half_to_float)
    }
}

impl SoftmaxCpuOutCpu for Cpu {
    fn softmax_cpu_out(self_: &Tensor, dim: i64, half_to_float: bool, out: &Tensor) -> Result<()> {
        forward_cpu(self_, dim, half_to_float, out, false)
    }
}

impl LogSoftmaxOutMetaFn for Meta {
    fn _log_softmax_out(outs: &mut StructuredOutputs, self_: &Tensor, dim: i64, half_to_float: bool) -> Result<()> {
        forward_meta(outs, self_, dim, half_to_float)
    }
}

impl LogSoftmaxCpuOutCpu for Cpu {
    fn log_softmax_cpu_out(self_: &Tensor, dim: i64, half_to_float: bool, out: &Tensor) -> Result<()> {
        forward_cpu(self_, dim, half_to_float, out, true)
    }
}

/// Shared meta function of the backward kernels. The gradient's dtype is the result's, except
/// for PyTorch's CUDA half-to-float case (an f32 gradient of an f16 input gives an f16 result,
/// which the CPU impl then rejects). Unlike PyTorch's `_log_softmax_backward_data`, both check
/// that the gradient and the output have the same sizes (PyTorch reads out of bounds).
fn backward_meta(
    outs: &mut StructuredOutputs,
    grad: &Tensor,
    output: &Tensor,
    dim: i64,
    input_dtype: DType,
    what: &str,
) -> Result<()> {
    if grad.sizes() != output.sizes() {
        return Err(Error::shape(format!(
            "Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but {:?} \
             does not equal {:?} (while checking arguments for {what})",
            &grad.sizes()[..],
            &output.sizes()[..]
        )));
    }
    wrap_dim(dim, grad.dim())?;
    let dtype = if grad.dtype() == DType::F32 && input_dtype == DType::F16 { DType::F16 } else { grad.dtype() };
    outs.set_output(0, &grad.sizes(), None, dtype, grad.device())
}

/// Shared CPU impl of the backward kernels.
fn backward_cpu(grad: &Tensor, output: &Tensor, dim: i64, grad_input: &Tensor, log: bool) -> Result<()> {
    if output.numel() == 0 {
        return Ok(());
    }
    let d = wrap_dim(dim, grad.dim())?;
    let s = Shape::of(&grad.sizes(), d);
    let name = kernel_name(log, true, s.inner == 1);
    let dtype = grad.dtype();
    if !dtype.is_floating_point() {
        return Err(super::not_implemented(&name, dtype));
    }
    expect_dtype(dtype, grad_input.dtype())?;
    expect_dtype(dtype, output.dtype())?;
    let (g, y) = (contiguous(grad)?, contiguous(output)?);
    with_contiguous_out(grad_input, &[&g, &y], |o| {
        let (gp, yp) = (g.data_ptr(), y.data_ptr());
        // SAFETY: the kernel writes every element of `o` before anything reads it.
        let (op, fresh) = unsafe { o.data_ptr_for_overwrite() };
        macro_rules! run {
            ($S:ty, $M:ty) => {
                // SAFETY: the three tensors are contiguous with `outer * n * inner` elements of
                // `dtype`, and `o` overlaps neither input (`with_contiguous_out`).
                unsafe { backward::<$S, $M>(gp.cast(), yp.cast(), op.cast(), s, log) }
            };
        }
        match dtype {
            DType::F32 => run!(f32, f32),
            DType::F64 => run!(f64, f64),
            DType::F16 => run!(f16, f32),
            DType::BF16 => run!(bf16, f32),
            other => return Err(super::not_implemented(&name, other)),
        }
        if fresh {
            // SAFETY: every element was written above.
            unsafe { o.storage().assume_init() };
        }
        Ok(())
    })
}

impl SoftmaxBackwardDataOutMetaFn for Meta {
    fn _softmax_backward_data_out(
        outs: &mut StructuredOutputs,
        grad_output: &Tensor,
        output: &Tensor,
        dim: i64,
        input_dtype: DType,
    ) -> Result<()> {
        backward_meta(outs, grad_output, output, dim, input_dtype, "softmax_backward")
    }
}

impl SoftmaxBackwardCpuOutCpu for Cpu {
    fn softmax_backward_cpu_out(
        grad_output: &Tensor,
        output: &Tensor,
        dim: i64,
        _input_dtype: DType,
        grad_input: &Tensor,
    ) -> Result<()> {
        backward_cpu(grad_output, output, dim, grad_input, false)
    }
}

impl LogSoftmaxBackwardDataOutMetaFn for Meta {
    fn _log_softmax_backward_data_out(
        outs: &mut StructuredOutputs,
        grad_output: &Tensor,
        output: &Tensor,
        dim: i64,
        input_dtype: DType,
    ) -> Result<()> {
        backward_meta(outs, grad_output, output, dim, input_dtype, "log_softmax_backward")
    }
}

impl LogSoftmaxBackwardCpuOutCpu for Cpu {
    fn log_softmax_backward_cpu_out(
        grad_output: &Tensor,
        output: &Tensor,
        dim: i64,
        _input_dtype: DType,
        out: &Tensor,
    ) -> Result<()> {
        backward_cpu(grad_output, output, dim, out, true)
    }
}

// ---------------------------------------------------------------------------------------------
// softmax.int / log_softmax.int: the dtype argument converts the input first
// ---------------------------------------------------------------------------------------------

fn converted(self_: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    match dtype {
        Some(d) => ops::to_dtype::call(self_, d, false, false, None),
        None => Ok(self_.clone()),
    }
}

impl SoftmaxCompositeImplicit for Composite {
    fn softmax(self_: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        ops::_softmax::call(&converted(self_, dtype)?, dim, false)
    }
}

impl SoftmaxOutCompositeExplicit for Composite {
    fn softmax_out(self_: &Tensor, dim: i64, dtype: Option<DType>, out: &Tensor) -> Result<Tensor> {
        ops::_softmax_out::call(&converted(self_, dtype)?, dim, false, out)
    }
}

impl LogSoftmaxCompositeImplicit for Composite {
    fn log_softmax(self_: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        ops::_log_softmax::call(&converted(self_, dtype)?, dim, false)
    }
}

impl LogSoftmaxOutCompositeExplicit for Composite {
    fn log_softmax_out(self_: &Tensor, dim: i64, dtype: Option<DType>, out: &Tensor) -> Result<Tensor> {
        ops::_log_softmax_out::call(&converted(self_, dtype)?, dim, false, out)
    }
}

// ---------------------------------------------------------------------------------------------
// logsumexp
// ---------------------------------------------------------------------------------------------

/// PyTorch's `logsumexp_out_impl`: `log(sum(exp(x - max))) + max`, with an infinite max
/// replaced by 0 (so rows of `-inf` give `-inf` and rows holding `+inf` give `+inf` instead of
/// NaN). Every step runs in `self`'s dtype, like PyTorch's, and the sum accumulates in f32 for
/// f16/bf16. An empty input is `log(sum(exp(x)))`.
fn logsumexp_into(self_: &Tensor, dims: &[i64], keepdim: bool, result: &Tensor) -> Result<Tensor> {
    let one = Scalar::Int(1);
    if self_.numel() != 0 {
        let maxes = ops::amax::call(self_, dims, true)?;
        let infinite = ops::eq_scalar::call(&ops::abs::call(&maxes)?, Scalar::Float(f64::INFINITY))?;
        let maxes =
            ops::where_self::call(&infinite, &ops::zeros_like::call(&maxes, None, None, None, None, None)?, &maxes)?;
        let maxes_squeezed = if keepdim { maxes.clone() } else { squeeze_dims(&maxes, dims)? };
        let shifted = ops::exp::call(&ops::sub::call(self_, &maxes, one)?)?;
        ops::sum_intlist_out::call(&shifted, Some(dims), keepdim, None, result)?;
        ops::log_::call(result)?;
        ops::add_::call(result, &maxes_squeezed, one)
    } else {
        ops::sum_intlist_out::call(&ops::exp::call(self_)?, Some(dims), keepdim, None, result)?;
        ops::log_::call(result)
    }
}

/// `squeeze_multiple`: removes the (size-1) reduced dims, highest first.
fn squeeze_dims(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let ndim = t.dim();
    let mut ds: Vec<usize> = dims.iter().map(|&d| wrap_dim(d, ndim)).collect::<Result<_>>()?;
    ds.sort_unstable();
    ds.dedup();
    let mut out = t.clone();
    for &d in ds.iter().rev() {
        out = ops::squeeze_dim::call(&out, d as i64)?;
    }
    Ok(out)
}

fn logsumexp_out_impl(self_: &Tensor, dims: &[i64], keepdim: bool, out: &Tensor) -> Result<Tensor> {
    if !out.dtype().is_floating_point() {
        return Err(Error::dtype(format!(
            "logsumexp(): Expected floating point type for result tensor, but got: {}",
            scalar_type_name(out.dtype())
        )));
    }
    if self_.dtype().is_integral(true) {
        logsumexp_into(&ops::to_dtype::call(self_, DEFAULT_FLOAT, false, false, None)?, dims, keepdim, out)
    } else {
        logsumexp_into(self_, dims, keepdim, out)
    }
}

impl LogsumexpCompositeExplicit for Composite {
    fn logsumexp(self_: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
        // Integral inputs give the default float dtype.
        let dtype = if self_.dtype().is_integral(true) { DEFAULT_FLOAT } else { self_.dtype() };
        let result = Tensor::empty(&[0], dtype, self_.device(), MemoryFormat::Contiguous)?;
        logsumexp_out_impl(self_, dim, keepdim, &result)
    }
}

impl LogsumexpOutCompositeExplicit for Composite {
    fn logsumexp_out(self_: &Tensor, dim: &[i64], keepdim: bool, out: &Tensor) -> Result<Tensor> {
        logsumexp_out_impl(self_, dim, keepdim, out)
    }
}
