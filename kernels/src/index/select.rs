//! Whole slices picked by a vector of indices: `index_select` (and its `out=` form),
//! `embedding` (an `index_select` of rows) and `embedding_dense_backward` (rows summed back).

use super::common::{
    assert_no_internal_overlap, assert_no_overlap, for_each_row, is_index_dtype, match_size, read_index, Ptr,
};
use crate::generated::decls::{
    EmbeddingCompositeExplicit, EmbeddingDenseBackwardCpu, EmbeddingDenseBackwardMeta, IndexSelectCpu, IndexSelectMeta,
    IndexSelectOutCpu, IndexSelectOutMeta,
};
use crate::iter::GRAIN_SIZE;
use crate::views::type_string;
use crate::{Composite, Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::{match_dtype, ops, wrap_dim, DType, Error, MemoryFormat, Result, Tensor};

/// The values of a 0- or 1-dim int32/int64 index tensor, in order.
pub(crate) fn index_values(index: &Tensor) -> Vec<i64> {
    let n = index.numel();
    let stride = if index.dim() == 0 { 1 } else { index.strides()[0] } as isize;
    let p = index.data_ptr() as *const u8;
    // SAFETY: `index` is a CPU int32/int64 tensor of at most one dim with `n` elements at `stride`.
    (0..n as isize).map(|i| unsafe { read_index(p, i * stride, index.dtype()) }).collect()
}

/// `index_select_out_cpu_`'s checks in PyTorch's order, then `out` resized to `self`'s shape
/// with `numel(index)` at `dim` (all the Meta kernels do); returns the wrapped dim.
pub(super) fn index_select_meta(self_: &Tensor, dim: i64, index: &Tensor, out: &Tensor) -> Result<usize> {
    let d = wrap_dim(dim, self_.dim())?;
    let numel = index.numel();
    if index.dim() > 1 {
        return Err(Error::index("index_select(): Index is supposed to be a vector"));
    }
    if self_.dim() == 0 && numel != 1 {
        return Err(Error::index(format!(
            "index_select(): Index to scalar can have only 1 value, got {numel} value(s)"
        )));
    }
    if !is_index_dtype(index) {
        return Err(Error::dtype("index_select(): Expected dtype int32 or int64 for index"));
    }
    if self_.dtype() != out.dtype() {
        return Err(Error::dtype("index_select(): self and result must have the same scalar type"));
    }
    assert_no_internal_overlap(out)?;
    assert_no_overlap(out, self_)?;
    assert_no_overlap(out, index)?;
    let mut sizes = self_.sizes().to_vec();
    if self_.dim() > 0 {
        sizes[d] = numel;
    }
    if out.sizes() != sizes[..] {
        out.resize_(&sizes, MemoryFormat::Contiguous)?;
    }
    Ok(d)
}

/// `index_select_out_cpu_`: the checks and the resize, then the selected slices copied.
fn index_select_into(self_: &Tensor, dim: i64, index: &Tensor, out: &Tensor) -> Result<()> {
    let d = index_select_meta(self_, dim, index, out)?;
    if index.numel() == 0 {
        return Ok(());
    }
    let idx = index_values(index);
    let bound = if self_.dim() <= 1 { self_.numel() } else { self_.sizes()[d] };
    if self_.dim() > 1 && self_.numel() == 0 && bound == 0 {
        return Err(Error::index("index_select(): self indexing axis dim should be positive"));
    }
    if let Some(&bad) = idx.iter().find(|&&i| i < 0 || i >= bound) {
        if d == 1 && self_.dim() > 1 {
            return Err(Error::index(format!("INDICES element is out of DATA bounds, id={bad} axis_dim={bound}")));
        }
        return Err(Error::index("index out of range in self"));
    }
    if self_.numel() == 0 {
        return Ok(());
    }
    select_slices(self_, d, &idx, out);
    Ok(())
}

/// `out.select(d, k) = self.select(d, idx[k])` for every `k` (indices already checked).
pub(crate) fn select_slices(self_: &Tensor, d: usize, idx: &[i64], out: &Tensor) {
    let es = self_.dtype().size();
    if self_.dim() == 0 {
        // SAFETY: one element each; `idx == [0]` was checked.
        unsafe { std::ptr::copy_nonoverlapping(self_.data_ptr(), out.data_ptr(), es) };
        return;
    }
    let (ss, os) = (self_.strides(), out.strides());
    let sizes = out.sizes();
    let (src, dst) = (Ptr(self_.data_ptr()), Ptr(out.data_ptr()));
    if self_.is_contiguous() && out.is_contiguous() {
        // Blocks of `inner` contiguous elements: `outer` × `idx.len()` of them.
        let outer: usize = sizes[..d].iter().product::<i64>() as usize;
        let inner: usize = sizes[d + 1..].iter().product::<i64>() as usize;
        let n = idx.len();
        let src_rows = self_.sizes()[d] as usize;
        let bytes = inner * es;
        let copy = |b: usize| {
            let (o, k) = (b / n, b % n);
            let from = (o * src_rows + idx[k] as usize) * bytes;
            // SAFETY: both tensors are contiguous; block `(o, idx[k])` of `self` and block
            // `(o, k)` of `out` are `bytes` bytes inside them, and `out` overlaps no input.
            unsafe { std::ptr::copy_nonoverlapping(src.get().add(from), dst.get().add(b * bytes), bytes) };
        };
        let blocks = outer * n;
        if blocks * inner >= GRAIN_SIZE && blocks > 1 {
            let per = (GRAIN_SIZE / inner.max(1)).max(1);
            oxten_runtime::parallel::for_each(blocks.div_ceil(per), |c| {
                (c * per..((c + 1) * per).min(blocks)).for_each(copy)
            });
        } else {
            (0..blocks).for_each(copy);
        }
        return;
    }
    // General strides: walk `out`, reading `self` with the selected index at `d`.
    let nd = sizes.len();
    let mut src_walk: Vec<i64> = ss.to_vec();
    src_walk[d] = 0;
    let (n, od, sd) = (sizes[nd - 1] as usize, os[nd - 1] as isize, ss[nd - 1] as isize);
    let sdim = ss[d] as isize;
    match_size!(es, T => for_each_row(&sizes, [&os, &src_walk], true, |[o, s], coord| {
        // SAFETY: `o` and `s` address row starts of `out` and `self` (with `self`'s offset at
        // `d` added from the checked indices); rows of `out` are disjoint.
        unsafe {
            let dp = (dst.get() as *mut T).offset(o);
            if d == nd - 1 {
                let sp = (src.get() as *const T).offset(s);
                for (i, &k) in idx.iter().enumerate().take(n) {
                    *dp.offset(i as isize * od) = *sp.offset(k as isize * sdim);
                }
            } else {
                let sp = (src.get() as *const T).offset(s + idx[coord[d] as usize] as isize * sdim);
                for i in 0..n as isize {
                    *dp.offset(i * od) = *sp.offset(i * sd);
                }
            }
        }
    }));
}

/// The functional `index_select`'s result before the resize.
fn index_select_output(self_: &Tensor) -> Result<Tensor> {
    Tensor::empty(&[0], self_.dtype(), self_.device(), MemoryFormat::Contiguous)
}

impl IndexSelectCpu for Cpu {
    fn index_select(self_: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
        let out = index_select_output(self_)?;
        index_select_into(self_, dim, index, &out)?;
        Ok(out)
    }
}

impl IndexSelectMeta for Meta {
    fn index_select(self_: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
        let out = index_select_output(self_)?;
        index_select_meta(self_, dim, index, &out)?;
        Ok(out)
    }
}

impl IndexSelectOutCpu for Cpu {
    fn index_select_out(self_: &Tensor, dim: i64, index: &Tensor, out: &Tensor) -> Result<Tensor> {
        index_select_into(self_, dim, index, out)?;
        Ok(out.clone())
    }
}

impl IndexSelectOutMeta for Meta {
    fn index_select_out(self_: &Tensor, dim: i64, index: &Tensor, out: &Tensor) -> Result<Tensor> {
        index_select_meta(self_, dim, index, out)?;
        Ok(out.clone())
    }
}

// ---------------------------------------------------------------------------------------------
// embedding
// ---------------------------------------------------------------------------------------------

/// `checkScalarTypes(fn, indices, {Long, Int})`.
pub(super) fn check_indices(t: &Tensor, pos: usize, name: &str, func: &str) -> Result<()> {
    if !is_index_dtype(t) {
        return Err(Error::dtype(format!(
            "Expected tensor for argument #{pos} '{name}' to have one of the following scalar types: Long, Int; but got \
             {} instead (while checking arguments for {func})",
            type_string(t.dtype(), t.device())
        )));
    }
    Ok(())
}

impl EmbeddingCompositeExplicit for Composite {
    /// Rows of `weight` picked by `indices`: `weight.index_select(0, indices.reshape(-1))` viewed
    /// as `indices.shape + [embedding_dim]`. `padding_idx`, `scale_grad_by_freq` and `sparse`
    /// only matter to the backward.
    fn embedding(
        weight: &Tensor,
        indices: &Tensor,
        _padding_idx: i64,
        _scale_grad_by_freq: bool,
        _sparse: bool,
    ) -> Result<Tensor> {
        if weight.dim() != 2 {
            return Err(Error::value("'weight' must be 2-D"));
        }
        check_indices(indices, 1, "indices", "embedding")?;
        if indices.dim() == 1 {
            return ops::index_select::call(weight, 0, indices);
        }
        let mut sizes = indices.sizes().to_vec();
        sizes.extend_from_slice(&weight.sizes()[1..]);
        let flat = ops::reshape::call(indices, &[-1])?;
        ops::view::call(&ops::index_select::call(weight, 0, &flat)?, &sizes)
    }
}

/// `grad_weight[k] += scale * grad[i]` for one row of `d` elements, as PyTorch's `add_stub`
/// computes it: in f32 for f16/bf16 (rounded after each row addition), and with the scale
/// truncated to an integer for integer dtypes.
trait AddScaled: Copy {
    fn add_scaled(self, g: Self, scale: f64) -> Self;
}
macro_rules! add_scaled_int {
    ($($t:ty),*) => {$(
        impl AddScaled for $t {
            #[inline(always)]
            fn add_scaled(self, g: Self, scale: f64) -> Self { self.wrapping_add(g.wrapping_mul(scale as $t)) }
        }
    )*};
}
add_scaled_int!(u8, i8, i16, i32, i64);
impl AddScaled for bool {
    fn add_scaled(self, g: Self, scale: f64) -> Self {
        self || (g && scale != 0.0)
    }
}
impl AddScaled for f32 {
    #[inline(always)]
    fn add_scaled(self, g: Self, scale: f64) -> Self {
        self + scale as f32 * g
    }
}
impl AddScaled for f64 {
    #[inline(always)]
    fn add_scaled(self, g: Self, scale: f64) -> Self {
        self + scale * g
    }
}
impl AddScaled for f16 {
    #[inline(always)]
    fn add_scaled(self, g: Self, scale: f64) -> Self {
        f16::from_f32(self.to_f32() + scale as f32 * g.to_f32())
    }
}
impl AddScaled for bf16 {
    #[inline(always)]
    fn add_scaled(self, g: Self, scale: f64) -> Self {
        bf16::from_f32(self.to_f32() + scale as f32 * g.to_f32())
    }
}

/// `embedding_dense_backward`'s checks and its zeroed `[num_weights, d]` result (all the Meta
/// kernel does); returns `d` too.
pub(super) fn embedding_dense_backward_output(
    grad_output: &Tensor,
    indices: &Tensor,
    num_weights: i64,
) -> Result<(Tensor, i64)> {
    check_indices(indices, 2, "indices", "embedding_backward")?;
    let d = if grad_output.dim() == 0 { 1 } else { grad_output.size(-1)? };
    let out = ops::zeros::call(&[num_weights, d], Some(grad_output.dtype()), None, Some(grad_output.device()), None)?;
    Ok((out, d))
}

/// The rows `first..first + out.len() / d` of `embedding_dense_backward`'s result: every index
/// naming one of them adds its row of `grad` (times its scale) there, in index order.
struct DenseBackwardRows<'a, T> {
    grad: &'a [T],
    idx: &'a [i64],
    /// Each index's scale (`1 / count` under `scale_grad_by_freq`), or 1 for all.
    scales: Option<&'a [f64]>,
    padding_idx: i64,
    d: usize,
    first: usize,
    out: &'a mut [T],
}

impl<T: AddScaled> crate::cpu::simd::InnerLoop for DenseBackwardRows<'_, T> {
    #[inline(always)]
    unsafe fn run(self) {
        let d = self.d;
        let rows = self.first..self.first + self.out.len() / d;
        for (i, &k) in self.idx.iter().enumerate() {
            if k == self.padding_idx || !rows.contains(&(k as usize)) {
                continue;
            }
            let scale = self.scales.map_or(1.0, |s| s[i]);
            let dst = &mut self.out[(k as usize - rows.start) * d..][..d];
            let src = &self.grad[i * d..][..d];
            for (o, &g) in dst.iter_mut().zip(src) {
                *o = o.add_scaled(g, scale);
            }
        }
    }
}

/// Sums each index's row of `grad` into the weight row it names. The weight rows are split over
/// the threads (each thread scans every index and keeps the ones in its rows), so the sums
/// keep their index order and need no atomics, as in PyTorch's CPU kernel.
fn embedding_dense_backward(
    grad_output: &Tensor,
    indices: &Tensor,
    num_weights: i64,
    padding_idx: i64,
    scale_grad_by_freq: bool,
) -> Result<Tensor> {
    let (out, d) = embedding_dense_backward_output(grad_output, indices, num_weights)?;
    let numel = indices.numel();
    let idx = index_values(&ops::reshape::call(indices, &[-1])?);
    let grad = ops::contiguous::call(grad_output, MemoryFormat::Contiguous)?;
    if grad.numel() != numel * d {
        return Err(Error::shape(format!(
            "embedding_dense_backward: grad_output of shape {:?} does not match indices of shape {:?}",
            &grad_output.sizes()[..],
            &indices.sizes()[..]
        )));
    }
    // PyTorch's `index_add_` check, after the padding index is dropped.
    if let Some(&k) = idx.iter().find(|&&k| k != padding_idx && !(0..num_weights).contains(&k)) {
        return Err(Error::index(format!(
            "embedding_dense_backward: index {k} is out of range for {num_weights} rows"
        )));
    }
    if out.numel() == 0 || idx.is_empty() {
        return Ok(out);
    }
    let scales: Option<Vec<f64>> = scale_grad_by_freq.then(|| {
        let mut counts = std::collections::HashMap::new();
        for &k in &idx {
            *counts.entry(k).or_insert(0i64) += 1;
        }
        idx.iter().map(|k| 1.0 / counts[k] as f64).collect()
    });
    let (rows, du) = (num_weights as usize, d as usize);
    // One task per thread, unless the work is small.
    let work = idx.len().saturating_mul(du);
    let tasks = if work < GRAIN_SIZE { 1 } else { oxten_runtime::parallel::threads_now().max(1) };
    let rows_per_task = rows.div_ceil(tasks);
    match_dtype!(out.dtype(), T => {
        let grad = crate::cpu::contiguous_slice::<T>("embedding_dense_backward", &grad)?;
        // SAFETY: `out` is a fresh, zero-filled, contiguous CPU tensor of `rows * du` elements of
        // `T` that nothing else holds while this slice lives.
        let out_s = unsafe { std::slice::from_raw_parts_mut(out.data_ptr().cast::<T>(), rows * du) };
        oxten_runtime::parallel::chunks_mut(out_s, rows_per_task * du, |task, chunk| {
            let part = DenseBackwardRows {
                grad,
                idx: &idx,
                scales: scales.as_deref(),
                padding_idx,
                d: du,
                first: task * rows_per_task,
                out: chunk,
            };
            // SAFETY: `DenseBackwardRows::run` only indexes slices (bounds-checked).
            unsafe { crate::cpu::simd::run(part) };
        });
    });
    Ok(out)
}

impl EmbeddingDenseBackwardCpu for Cpu {
    fn embedding_dense_backward(
        grad_output: &Tensor,
        indices: &Tensor,
        num_weights: i64,
        padding_idx: i64,
        scale_grad_by_freq: bool,
    ) -> Result<Tensor> {
        embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
    }
}

impl EmbeddingDenseBackwardMeta for Meta {
    fn embedding_dense_backward(
        grad_output: &Tensor,
        indices: &Tensor,
        num_weights: i64,
        _padding_idx: i64,
        _scale_grad_by_freq: bool,
    ) -> Result<Tensor> {
        Ok(embedding_dense_backward_output(grad_output, indices, num_weights)?.0)
    }
}

/// The index dtype of a tensor, or an error naming the operator (shared with gather/scatter).
pub(crate) fn require_index_dtype(op: &str, index: &Tensor) -> Result<DType> {
    if index.numel() != 0 && !is_index_dtype(index) {
        return Err(Error::dtype(format!("{op}(): Expected dtype int32/int64 for index")));
    }
    Ok(index.dtype())
}
