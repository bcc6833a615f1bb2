//! Normalization: `native_batch_norm`, `native_layer_norm`, `native_group_norm`, their backward
//! operators, and the composites `batch_norm`, `layer_norm`, `group_norm` (`normalize` and
//! `local_response_norm` are in [`functional`]).
//!
//! Every kernel works on a dense copy of its input in one of two physical orders (see [`Ncs`]):
//!
//! - *channels first* (`[N, C, S]` with `S` the product of the trailing dims): a channel of one
//!   sample is one contiguous segment of `S` elements, so per-(n, c) statistics are segment sums
//!   and the elementwise pass is `y = a·x + b` over each segment;
//! - *channels last* (`[N, S, C]`, a `channels_last` tensor, or any `[N, C]` tensor): rows of `C`
//!   channels; statistics accumulate a vector of `C` partial sums row after row and the
//!   elementwise pass applies vectors of coefficients, so both loops run along `C` and vectorize.
//!
//! Statistics are two-pass (mean, then the sum of squared deviations from it). Sums run in the
//! element math type (f32 for f32, f16 and bf16; f64 for f64) over blocks of at most
//! [`BLOCK`] elements and eight lanes, and the block sums are added in f64, so long reductions
//! lose no accuracy. Work is split over the thread pool above [`GRAIN`] elements, in chunks whose
//! size does not depend on the number of threads: results are the same on every machine.
//!
//! Reduced-precision inputs are computed in f32 and rounded once. PyTorch's CPU mixed-type rule
//! is followed: a bf16/f16 input may come with f32 parameters (weight, bias, running stats),
//! and then the statistics outputs are f32 too.

mod batch_norm;
#[cfg(feature = "cuda")]
mod cuda;
mod functional;
mod group_norm;
mod instance_norm;
mod layer_norm;
mod rms_norm;

use crate::iter::{copy_, scalar_type_name};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{DType, Device, Error, MemoryFormat, Result, Tensor};
use std::mem::MaybeUninit;
use std::ops::{Add, AddAssign, Div, Mul, Sub};

/// Inputs with at least this many elements are processed on the thread pool.
pub(crate) const GRAIN: usize = 32768;
/// Elements summed in the math type before the partial sum is added in f64.
pub(crate) const BLOCK: usize = 1024;

// ---------------------------------------------------------------------------------------------
// element types
// ---------------------------------------------------------------------------------------------

/// The type element arithmetic runs in: f32 or f64.
pub(crate) trait Float:
    Copy
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + AddAssign
    + PartialOrd
{
    const ZERO: Self;
    fn of(v: f64) -> Self;
    fn f64(self) -> f64;
}

impl Float for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn of(v: f64) -> f32 {
        v as f32
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self as f64
    }
}

impl Float for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn of(v: f64) -> f64 {
        v
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self
    }
}

/// A floating element type and the type its arithmetic runs in.
pub(crate) trait NormElem: Copy + Send + Sync + 'static {
    type M: Float;
    fn m(self) -> Self::M;
    fn from_m(v: Self::M) -> Self;
}

impl NormElem for f32 {
    type M = f32;
    #[inline(always)]
    fn m(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_m(v: f32) -> f32 {
        v
    }
}

impl NormElem for f64 {
    type M = f64;
    #[inline(always)]
    fn m(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_m(v: f64) -> f64 {
        v
    }
}

impl NormElem for bf16 {
    type M = f32;
    #[inline(always)]
    fn m(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn from_m(v: f32) -> bf16 {
        bf16::from_f32(v)
    }
}

impl NormElem for f16 {
    type M = f32;
    #[inline(always)]
    fn m(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn from_m(v: f32) -> f16 {
        f16::from_f32(v)
    }
}

/// Runs `$body` with `$T` bound to the element type of a floating `$dtype`; other dtypes give
/// PyTorch's "not implemented" error naming `$kernel`.
macro_rules! dispatch_float {
    ($dtype:expr, $kernel:expr, $T:ident => $body:expr) => {{
        match $dtype {
            oxten_runtime::DType::F32 => {
                type $T = f32;
                $body
            }
            oxten_runtime::DType::F64 => {
                type $T = f64;
                $body
            }
            oxten_runtime::DType::BF16 => {
                type $T = oxten_runtime::dtype::bf16;
                $body
            }
            oxten_runtime::DType::F16 => {
                type $T = oxten_runtime::dtype::f16;
                $body
            }
            other => return Err($crate::norm::not_implemented($kernel, other)),
        }
    }};
}
pub(crate) use dispatch_float;

pub(crate) use crate::support::not_implemented;

/// Fails unless `dtype` is one the kernels handle.
pub(crate) fn check_floating(kernel: &str, dtype: DType) -> Result<()> {
    match dtype {
        DType::F32 | DType::F64 | DType::BF16 | DType::F16 => Ok(()),
        other => Err(not_implemented(kernel, other)),
    }
}

/// The dtype of the statistics and parameter gradients, with PyTorch's CPU mixed-type rules
/// (`is_mixed_type` / `check_mixed_data_type`): the parameters are mixed when the first defined
/// one has another dtype than `input`; then every parameter must be f32 and the input bf16 or
/// f16, and the statistics are f32. Otherwise every parameter must have the input's dtype.
pub(crate) fn param_dtype(input: &Tensor, params: &[Option<&Tensor>]) -> Result<DType> {
    let x = input.dtype();
    let Some(first) = params.iter().flatten().next() else { return Ok(x) };
    if first.dtype() == x {
        if let Some(p) = params.iter().flatten().find(|p| p.dtype() != x) {
            return Err(Error::dtype(format!(
                "expected scalar type {} but found {}",
                scalar_type_name(x),
                scalar_type_name(p.dtype())
            )));
        }
        return Ok(x);
    }
    if params.iter().flatten().any(|p| p.dtype() != DType::F32) {
        return Err(Error::dtype("mixed dtype (CPU): expect parameter to have scalar type of Float"));
    }
    if !matches!(x, DType::BF16 | DType::F16) {
        return Err(Error::dtype("mixed dtype (CPU): all inputs must share same datatype."));
    }
    Ok(DType::F32)
}

/// The values of an optional 1-d parameter in logical order, as f64.
pub(crate) fn values(t: Option<&Tensor>) -> Result<Option<Vec<f64>>> {
    t.map(Tensor::to_f64_vec).transpose()
}

/// A new tensor of `sizes` holding `vals` converted to `dtype`.
pub(crate) fn tensor_of(vals: Vec<f64>, sizes: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
    if device == Device::Meta {
        return Tensor::empty(sizes, dtype, device, MemoryFormat::Contiguous);
    }
    let t = Tensor::from_vec(vals, sizes)?;
    crate::iter::to_dtype(&t, dtype)
}

/// An empty (`[0]`) tensor: PyTorch's undefined outputs (eval-mode statistics, gradients the
/// output mask leaves out).
pub(crate) fn undefined(dtype: DType, device: Device) -> Result<Tensor> {
    Tensor::empty(&[0], dtype, device, MemoryFormat::Contiguous)
}

/// Writes `vals` (logical order) into `dst` (any dtype and strides), as a kernel's in-place
/// update of an argument (no version bump, as PyTorch's running-stat updates).
pub(crate) fn write_values(dst: &Tensor, vals: Vec<f64>) -> Result<()> {
    let src = Tensor::from_vec(vals, &dst.sizes())?;
    copy_(dst, &src)
}

// ---------------------------------------------------------------------------------------------
// layouts
// ---------------------------------------------------------------------------------------------

/// A dense `[N, C, S]` view of a tensor: channels first (`(n·C + c)·S + s`) or channels last
/// (`(n·S + s)·C + c`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ncs {
    pub n: usize,
    pub c: usize,
    pub s: usize,
    pub last: bool,
}

impl Ncs {
    pub(crate) fn numel(&self) -> usize {
        self.n * self.c * self.s
    }
}

/// The memory format a `[N, C, *]` input is processed in and its output is laid out in:
/// PyTorch's `suggest_memory_format` (contiguous wins when both apply).
pub(crate) fn suggest_format(x: &Tensor) -> MemoryFormat {
    if x.is_contiguous() {
        return MemoryFormat::Contiguous;
    }
    x.suggest_memory_format()
}

/// `x` made dense in `format` and its [`Ncs`] view; `[N, C]` and `[N, C, 1, …]` tensors are
/// viewed as rows of `C` channels.
pub(crate) fn dense(x: &Tensor, format: MemoryFormat) -> Result<(Tensor, Ncs)> {
    let sizes = x.sizes();
    let c = sizes[1] as usize;
    let (n, s) = if x.numel() == 0 {
        // No elements: no loop over N or S may run (the other dims can be huge), while the
        // per-channel statistics still have C entries, whose memory is asked for fallibly.
        drop(oxten_runtime::error::try_vec_with_capacity::<[f64; 4]>(c)?);
        (0, 0)
    } else {
        (sizes[0] as usize, sizes[2..].iter().product::<i64>() as usize)
    };
    let x = if x.is_contiguous_as(format) { x.clone() } else { oxten_runtime::ops::contiguous::call(x, format)? };
    let last = format != MemoryFormat::Contiguous || s == 1;
    Ok((x, Ncs { n, c, s, last }))
}

/// The elements of a dense tensor in physical order.
///
/// # Safety
/// `t` must be a CPU tensor whose elements are exactly `numel` consecutive `T`s from its data
/// pointer (contiguous in some memory format), not written while the slice lives.
pub(crate) unsafe fn elems<T>(t: &Tensor) -> &[T] {
    let n = t.numel() as usize;
    if n == 0 {
        return &[];
    }
    // SAFETY: guaranteed by the caller.
    unsafe { std::slice::from_raw_parts(t.data_ptr().cast::<T>(), n) }
}

/// A freshly allocated kernel output, written once through [`Out::slice`].
pub(crate) struct Out {
    pub t: Tensor,
    init: bool,
}

impl Out {
    /// Allocates `sizes` in `format` on `device` without zero-filling.
    pub(crate) fn new(sizes: &[i64], dtype: DType, device: Device, format: MemoryFormat) -> Result<Out> {
        let t = Tensor::empty_deferred(sizes, dtype, device, format)?;
        Ok(Out { t, init: false })
    }

    /// The output's elements in physical order, to be written in full.
    ///
    /// # Safety
    /// `T` must be the output's element type; every element must be written before
    /// [`Out::finish`] is called. Call at most once.
    pub(crate) unsafe fn slice<T>(&mut self) -> &mut [MaybeUninit<T>] {
        let n = self.t.numel() as usize;
        if n == 0 {
            return &mut [];
        }
        // SAFETY: a fresh, dense allocation of `n` elements visible to nobody else; the
        // deferred storage is not read before the caller writes it (see `finish`).
        let (ptr, init) = unsafe { self.t.data_ptr_for_overwrite() };
        self.init = init;
        // SAFETY: `ptr` addresses the tensor's `n` dense elements of type `T` (the caller's
        // contract); `MaybeUninit` makes no claim about their contents.
        unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), n) }
    }

    /// Marks the output written and returns it.
    ///
    /// # Safety
    /// Every element of the slice from [`Out::slice`] has been written.
    pub(crate) unsafe fn finish(self) -> Tensor {
        if self.init {
            // SAFETY: the caller wrote every element.
            unsafe { self.t.storage().assume_init() };
        }
        self.t
    }
}

// ---------------------------------------------------------------------------------------------
// reductions
// ---------------------------------------------------------------------------------------------

/// Σ f(i) over `0..n` in `M` with eight lanes (in blocks of at most [`BLOCK`]), added in f64.
#[inline(always)]
pub(crate) fn lanes_sum<M: Float>(n: usize, f: impl Fn(usize) -> M) -> f64 {
    let mut total = 0.0f64;
    let mut start = 0;
    while start < n {
        let end = (start + BLOCK).min(n);
        let mut acc = [M::ZERO; 8];
        let mut i = start;
        while i + 8 <= end {
            for (k, a) in acc.iter_mut().enumerate() {
                *a += f(i + k);
            }
            i += 8;
        }
        let mut tail = M::ZERO;
        while i < end {
            tail += f(i);
            i += 1;
        }
        let s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        total += (s + tail).f64();
        start = end;
    }
    total
}

/// Σ x.
pub(crate) fn seg_sum<T: NormElem>(x: &[T]) -> f64 {
    lanes_sum(x.len(), |i| x[i].m())
}

/// Σ (x - center)².
pub(crate) fn seg_sqdev<T: NormElem>(x: &[T], center: T::M) -> f64 {
    lanes_sum(x.len(), |i| {
        let d = x[i].m() - center;
        d * d
    })
}

/// Σ dy·(x - center).
pub(crate) fn seg_dot_centered<T: NormElem>(dy: &[T], x: &[T], center: T::M) -> f64 {
    let n = dy.len().min(x.len());
    lanes_sum(n, |i| dy[i].m() * (x[i].m() - center))
}

/// Rows of `c` elements summed per column (`out[j] += Σ_r f(row r, j)`) in `M`, flushing to
/// f64 every few rows.
#[inline(always)]
fn rows_into<M: Float>(rows: usize, c: usize, out: &mut [f64], f: impl Fn(usize, usize) -> M) {
    let per_flush = (BLOCK / c.max(1)).clamp(1, 64);
    let mut part = vec![M::ZERO; c];
    let mut r = 0;
    while r < rows {
        let end = (r + per_flush).min(rows);
        part.iter_mut().for_each(|p| *p = M::ZERO);
        for row in r..end {
            for (j, p) in part.iter_mut().enumerate() {
                *p += f(row, j);
            }
        }
        for (o, p) in out.iter_mut().zip(&part) {
            *o += p.f64();
        }
        r = end;
    }
}

/// Which statistic [`nc_reduce`] computes per (n, c).
#[derive(Clone, Copy)]
pub(crate) enum Stat<'a, T: NormElem> {
    /// Σ x.
    Sum,
    /// Σ (x - center[n·C + c])².
    SqDev(&'a [T::M]),
    /// Σ dy (first) and Σ dy·(x - center[n·C + c]) (second half of the result).
    Grad(&'a [T], &'a [T::M]),
}

/// Rows of one channels-last task: `[r0, r1)` of sample `n`.
fn row_tasks(l: Ncs) -> Vec<(usize, usize, usize)> {
    let rows_per_task = (GRAIN / l.c.max(1)).max(1);
    let mut tasks = Vec::new();
    for n in 0..l.n {
        let mut r = 0;
        while r < l.s {
            let end = (r + rows_per_task).min(l.s);
            tasks.push((n, r, end));
            r = end;
        }
    }
    tasks
}

/// The statistic per (n, c) over the `S` axis, in `n·C + c` order (twice as long for
/// [`Stat::Grad`]: the Σ dy values, then the centered dot products).
pub(crate) fn nc_reduce<T: NormElem>(x: &[T], l: Ncs, stat: Stat<'_, T>) -> Vec<f64> {
    let nc = l.n * l.c;
    let width = if matches!(stat, Stat::Grad(..)) { 2 } else { 1 };
    let parallel = l.numel() >= GRAIN;
    if !l.last {
        let s = l.s;
        let one = |i: usize| -> (f64, f64) {
            let seg = &x[i * s..(i + 1) * s];
            match stat {
                Stat::Sum => (seg_sum(seg), 0.0),
                Stat::SqDev(center) => (seg_sqdev(seg, center[i]), 0.0),
                Stat::Grad(dy, center) => {
                    let dseg = &dy[i * s..(i + 1) * s];
                    (seg_sum(dseg), seg_dot_centered(dseg, seg, center[i]))
                }
            }
        };
        let pairs: Vec<(f64, f64)> =
            if parallel { oxten_runtime::parallel::map(nc, one) } else { (0..nc).map(one).collect() };
        let mut out: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        if width == 2 {
            out.extend(pairs.iter().map(|p| p.1));
        }
        return out;
    }
    let c = l.c;
    let task = |&(n, r0, r1): &(usize, usize, usize)| -> Vec<f64> {
        let mut out = vec![0.0f64; width * c];
        let base = (n * l.s + r0) * c;
        let rows = r1 - r0;
        match stat {
            Stat::Sum => rows_into(rows, c, &mut out, |r, j| x[base + r * c + j].m()),
            Stat::SqDev(center) => {
                let ctr = &center[n * c..(n + 1) * c];
                rows_into(rows, c, &mut out, |r, j| {
                    let d = x[base + r * c + j].m() - ctr[j];
                    d * d
                })
            }
            Stat::Grad(dy, center) => {
                let ctr = &center[n * c..(n + 1) * c];
                let (sum_dy, dot) = out.split_at_mut(c);
                rows_into(rows, c, sum_dy, |r, j| dy[base + r * c + j].m());
                rows_into(rows, c, dot, |r, j| dy[base + r * c + j].m() * (x[base + r * c + j].m() - ctr[j]));
            }
        }
        out
    };
    let tasks = row_tasks(l);
    let parts: Vec<Vec<f64>> = if parallel {
        oxten_runtime::parallel::map(tasks.len(), |i| task(&tasks[i]))
    } else {
        tasks.iter().map(task).collect()
    };
    let mut out = vec![0.0f64; width * nc];
    for (&(n, _, _), p) in tasks.iter().zip(&parts) {
        for w in 0..width {
            let dst = &mut out[w * nc + n * c..w * nc + (n + 1) * c];
            for (d, v) in dst.iter_mut().zip(&p[w * c..(w + 1) * c]) {
                *d += v;
            }
        }
    }
    out
}

/// `out = k1[nc]·dy + k2[nc]·x + k3[nc]` elementwise, with coefficients per (n, c) in
/// `n·C + c` order (`dy` and `k1` absent in the forward pass: `out = k2·x + k3`).
pub(crate) fn nc_apply<T: NormElem>(
    out: &mut [MaybeUninit<T>],
    x: &[T],
    dy: Option<(&[T], &[T::M])>,
    k2: &[T::M],
    k3: &[T::M],
    l: Ncs,
) {
    let parallel = l.numel() >= GRAIN;
    if !l.last {
        let s = l.s.max(1);
        let segs_per_task = (GRAIN / s).max(1);
        let run = |(t, chunk): (usize, &mut [MaybeUninit<T>])| {
            for (k, seg) in chunk.chunks_mut(s).enumerate() {
                let i = t * segs_per_task + k;
                let xs = &x[i * s..i * s + seg.len()];
                let (a, b) = (k2[i], k3[i]);
                match dy {
                    None => {
                        for (o, &v) in seg.iter_mut().zip(xs) {
                            o.write(T::from_m(v.m() * a + b));
                        }
                    }
                    Some((dy, k1)) => {
                        let ds = &dy[i * s..i * s + seg.len()];
                        let g = k1[i];
                        for ((o, &v), &d) in seg.iter_mut().zip(xs).zip(ds) {
                            o.write(T::from_m(d.m() * g + v.m() * a + b));
                        }
                    }
                }
            }
        };
        let task_len = segs_per_task * s;
        if parallel {
            oxten_runtime::parallel::chunks_mut(out, task_len, |t, c| run((t, c)));
        } else {
            out.chunks_mut(task_len).enumerate().for_each(run);
        }
        return;
    }
    let c = l.c.max(1);
    let rows_per_task = (GRAIN / c).max(1);
    let run = |(t, chunk): (usize, &mut [MaybeUninit<T>])| {
        for (k, row) in chunk.chunks_mut(c).enumerate() {
            let r = t * rows_per_task + k;
            let n = r / l.s.max(1);
            let xs = &x[r * c..r * c + row.len()];
            let (a, b) = (&k2[n * c..n * c + row.len()], &k3[n * c..n * c + row.len()]);
            match dy {
                None => {
                    for (((o, &v), &a), &b) in row.iter_mut().zip(xs).zip(a).zip(b) {
                        o.write(T::from_m(v.m() * a + b));
                    }
                }
                Some((dy, k1)) => {
                    let ds = &dy[r * c..r * c + row.len()];
                    let g = &k1[n * c..n * c + row.len()];
                    for (((((o, &v), &d), &a), &b), &g) in row.iter_mut().zip(xs).zip(ds).zip(a).zip(b).zip(g) {
                        o.write(T::from_m(d.m() * g + v.m() * a + b));
                    }
                }
            }
        }
    };
    let task_len = rows_per_task * c;
    if parallel {
        oxten_runtime::parallel::chunks_mut(out, task_len, |t, c| run((t, c)));
    } else {
        out.chunks_mut(task_len).enumerate().for_each(run);
    }
}

/// `v` converted to the math type.
pub(crate) fn to_m<M: Float>(v: &[f64]) -> Vec<M> {
    v.iter().map(|&x| M::of(x)).collect()
}
