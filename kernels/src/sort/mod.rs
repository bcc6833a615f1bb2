//! Sorting and selection along a dimension: `sort` (stable), `topk`, `kthvalue`, `median` and
//! `mode`, with PyTorch's ordering rules.
//!
//! Every kernel works on *rows*: `self` with `dim` moved last and made contiguous, so each row is
//! one slice to sort or select from. Rows run in parallel (rayon); a single long row is sorted
//! with rayon's parallel merge sort. Elements are compared as `(value, index)` pairs, so that
//! memory access during the sort is sequential rather than through an index array.
//!
//! Ordering: NaN compares larger than every number (ascending sorts put NaN last, descending
//! ones first, `topk(largest)` picks NaN first), `-0.0 == 0.0`, and all sorts are stable (equal
//! elements keep their order, also when descending). Which of several equal elements `topk`,
//! `kthvalue` and `median` report is unspecified, as in PyTorch; `mode` reports the smallest of
//! the most frequent values and the index of its last occurrence, as PyTorch's CPU kernel does.

use crate::generated::decls::{
    ArgsortCompositeImplicit, ArgsortStableCompositeImplicit, CummaxCpu, CumminCpu, KthvalueCpu, KthvalueMeta,
    MedianCpu, MedianDimCpu, MedianDimMeta, MedianMeta, ModeCpu, ModeMeta, SortCompositeImplicit, SortStableCpu,
    SortStableMeta, TopkCpu, TopkMeta,
};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::dtype::{bf16, f16};
use oxten_runtime::tensor::wrap_dim;
use oxten_runtime::{ops, DType, Device, Element, Error, MemoryFormat, Result, Tensor};
use rayon::prelude::*;
use std::cmp::Ordering;

/// An element type with PyTorch's sort order: a total order in which NaN is the largest value.
trait SortKey: Element + Copy + Send + Sync {
    fn order(self, other: Self) -> Ordering;
    fn is_nan(self) -> bool {
        false
    }
    /// `self >= other` with IEEE semantics (false if either is NaN), as C++'s operator.
    fn ieee_ge(self, other: Self) -> bool {
        self.order(other) != Ordering::Less
    }
    /// `self > other` with IEEE semantics.
    fn ieee_gt(self, other: Self) -> bool {
        self.order(other) == Ordering::Greater
    }
}

macro_rules! ord_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            #[inline]
            fn order(self, other: Self) -> Ordering {
                self.cmp(&other)
            }
        }
    )*};
}
ord_key!(bool, u8, i8, i16, i32, i64);

macro_rules! float_key {
    ($($t:ty => $to:expr),*) => {$(
        impl SortKey for $t {
            #[inline]
            fn order(self, other: Self) -> Ordering {
                let (a, b) = ($to(self), $to(other));
                match a.partial_cmp(&b) {
                    Some(o) => o,
                    // At least one NaN: NaN is the largest value and equal to itself.
                    None => a.is_nan().cmp(&b.is_nan()),
                }
            }
            #[inline]
            fn is_nan(self) -> bool {
                $to(self).is_nan()
            }
            #[inline]
            fn ieee_ge(self, other: Self) -> bool {
                $to(self) >= $to(other)
            }
            #[inline]
            fn ieee_gt(self, other: Self) -> bool {
                $to(self) > $to(other)
            }
        }
    )*};
}
float_key!(f32 => |x: f32| x, f64 => |x: f64| x, f16 => |x: f16| x.to_f32(), bf16 => |x: bf16| x.to_f32());

/// Runs `$body` with `$T` bound to the storage type of `$dtype`.
macro_rules! with_key_type {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::Bool => {
                type $T = bool;
                $body
            }
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::F16 => {
                type $T = f16;
                $body
            }
            DType::BF16 => {
                type $T = bf16;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

// After the macro, so that the submodules see it.
mod quantiles;
mod search;
mod unique;

/// `self`'s rows along `dim`: the elements with `dim` moved last, in row-major order, and the
/// length of a row. A 0-dim tensor is one row of one element.
fn rows<T: SortKey>(self_: &Tensor, dim: usize) -> Result<(Vec<T>, usize)> {
    let n = if self_.dim() == 0 { 1 } else { self_.sizes()[dim] as usize };
    let moved = if self_.dim() == 0 { self_.clone() } else { self_.try_transpose(dim as i64, -1)? };
    Ok((moved.to_vec::<T>()?, n))
}

/// The shape of `self` with `dim` moved last and its size replaced by `n`.
fn moved_shape(self_: &Tensor, dim: usize, n: usize) -> Vec<i64> {
    if self_.dim() == 0 {
        return vec![];
    }
    let mut s = self_.sizes().to_vec();
    let last = s.len() - 1;
    s.swap(dim, last);
    s[last] = n as i64;
    s
}

/// Row-major results with `dim` last, put back in `self`'s dimension order as fresh tensors:
/// `like` (same sizes as the result) gives the layout, as PyTorch's `empty_like` outputs.
fn unmove<T: SortKey>(
    values: Vec<T>,
    indices: Vec<i64>,
    self_: &Tensor,
    dim: usize,
    n: usize,
    keep_layout: bool,
) -> Result<(Tensor, Tensor)> {
    let shape = moved_shape(self_, dim, n);
    let back = |t: Tensor| if self_.dim() == 0 { Ok(t) } else { t.try_transpose(dim as i64, -1) };
    let v = back(Tensor::from_vec(values, &shape)?)?;
    let i = back(Tensor::from_vec(indices, &shape)?)?;
    if keep_layout && self_.sizes() == v.sizes() {
        let out_v = ops::empty_like::call(self_, None, None, None, None, None)?;
        let out_i = ops::empty_like::call(self_, Some(DType::I64), None, None, None, None)?;
        out_v.try_copy_(&v)?;
        out_i.try_copy_(&i)?;
        Ok((out_v, out_i))
    } else {
        Ok((v.try_contiguous()?, i.try_contiguous()?))
    }
}

/// Sorts one row's `(value, index)` pairs, stably.
fn sort_pairs<T: SortKey>(pairs: &mut [(T, i64)], descending: bool, parallel: bool) {
    let cmp = |a: &(T, i64), b: &(T, i64)| if descending { b.0.order(a.0) } else { a.0.order(b.0) };
    if parallel {
        pairs.par_sort_by(cmp);
    } else {
        pairs.sort_by(cmp);
    }
}

fn pairs_of<T: SortKey>(row: &[T]) -> Vec<(T, i64)> {
    row.iter().enumerate().map(|(i, &v)| (v, i as i64)).collect()
}

/// A single row longer than this is sorted with the parallel merge sort.
const PARALLEL_SORT_LEN: usize = 1 << 15;

fn sort_typed<T: SortKey>(self_: &Tensor, dim: usize, descending: bool) -> Result<(Tensor, Tensor)> {
    let (data, n) = rows::<T>(self_, dim)?;
    let mut values = data.clone();
    let mut indices = vec![0i64; data.len()];
    if let Some(rows) = data.len().checked_div(n) {
        let parallel_rows = rows > 1;
        data.par_chunks(n)
            .zip(values.par_chunks_mut(n))
            .zip(indices.par_chunks_mut(n))
            .with_min_len(if parallel_rows { 1 } else { usize::MAX })
            .for_each(|((row, vals), idx)| {
                let mut pairs = pairs_of(row);
                sort_pairs(&mut pairs, descending, !parallel_rows && n > PARALLEL_SORT_LEN);
                for (k, (v, i)) in pairs.into_iter().enumerate() {
                    vals[k] = v;
                    idx[k] = i;
                }
            });
    }
    unmove(values, indices, self_, dim, n, true)
}

/// The dim `self` is sorted or reduced along (0-dim tensors accept 0 and -1).
fn dim_of(self_: &Tensor, dim: i64) -> Result<usize> {
    wrap_dim(dim, self_.dim())
}

impl SortStableCpu for Cpu {
    fn sort_stable(self_: &Tensor, _stable: Option<bool>, dim: i64, descending: bool) -> Result<(Tensor, Tensor)> {
        let d = dim_of(self_, dim)?;
        with_key_type!(self_.dtype(), T => sort_typed::<T>(self_, d, descending))
    }
}

impl SortStableMeta for Meta {
    fn sort_stable(self_: &Tensor, _stable: Option<bool>, dim: i64, _descending: bool) -> Result<(Tensor, Tensor)> {
        dim_of(self_, dim)?;
        // The CPU kernel's outputs keep `self`'s layout (`empty_like`); so do these.
        Ok((
            ops::empty_like::call(self_, None, None, None, None, None)?,
            ops::empty_like::call(self_, Some(DType::I64), None, None, None, None)?,
        ))
    }
}

/// A meta output: the shape and dtype of a result, without data.
fn meta_empty(dtype: DType, sizes: &[i64]) -> Result<Tensor> {
    Tensor::empty(sizes, dtype, Device::Meta, MemoryFormat::Contiguous)
}

impl SortCompositeImplicit for Composite {
    fn sort(self_: &Tensor, dim: i64, descending: bool) -> Result<(Tensor, Tensor)> {
        ops::sort_stable::call(self_, None, dim, descending)
    }
}

impl ArgsortCompositeImplicit for Composite {
    fn argsort(self_: &Tensor, dim: i64, descending: bool) -> Result<Tensor> {
        Ok(ops::sort_stable::call(self_, None, dim, descending)?.1)
    }
}

impl ArgsortStableCompositeImplicit for Composite {
    fn argsort_stable(self_: &Tensor, stable: bool, dim: i64, descending: bool) -> Result<Tensor> {
        Ok(ops::sort_stable::call(self_, Some(stable), dim, descending)?.1)
    }
}

// ---------------------------------------------------------------------------------------------
// topk, kthvalue, median, mode: selections along a dim
// ---------------------------------------------------------------------------------------------

/// The size of a reduction over `dim` (kept as 1 or removed).
fn reduced_shape(self_: &Tensor, dim: usize, keepdim: bool) -> Vec<i64> {
    let mut s = self_.sizes().to_vec();
    if s.is_empty() {
        return s;
    }
    if keepdim {
        s[dim] = 1;
    } else {
        s.remove(dim);
    }
    s
}

/// The running maximum (`max`) or minimum of each row along `dim`, with the index each came
/// from: a later equal value takes over (as PyTorch's `>=`/`<=`), and a NaN stays once seen.
fn cum_extreme_typed<T: SortKey>(self_: &Tensor, dim: usize, max: bool) -> Result<(Tensor, Tensor)> {
    let (data, n) = rows::<T>(self_, dim)?;
    let mut values = oxten_runtime::error::try_vec_with_capacity(data.len())?;
    let mut indices = oxten_runtime::error::try_vec_with_capacity(data.len())?;
    let keep_going = if max { Ordering::Less } else { Ordering::Greater };
    for row in data.chunks(n.max(1)) {
        let (mut best, mut at) = (row[0], 0i64);
        for (i, &x) in row.iter().enumerate() {
            if x.is_nan() || (!best.is_nan() && x.order(best) != keep_going) {
                best = x;
                at = i as i64;
            }
            values.push(best);
            indices.push(at);
        }
    }
    unmove(values, indices, self_, dim, n, false)
}

fn cum_extreme(self_: &Tensor, dim: i64, max: bool) -> Result<(Tensor, Tensor)> {
    let d = dim_of(self_, dim)?;
    if self_.dtype() == DType::Bool {
        // Compared as bytes, then read back as bool.
        let (v, i) = cum_extreme(&self_.try_to_dtype(DType::U8)?, dim, max)?;
        return Ok((v.try_to_dtype(DType::Bool)?, i));
    }
    with_key_type!(self_.dtype(), T => cum_extreme_typed::<T>(self_, d, max))
}

impl CummaxCpu for Cpu {
    fn cummax(self_: &Tensor, dim: i64) -> Result<(Tensor, Tensor)> {
        cum_extreme(self_, dim, true)
    }
}

impl CumminCpu for Cpu {
    fn cummin(self_: &Tensor, dim: i64) -> Result<(Tensor, Tensor)> {
        cum_extreme(self_, dim, false)
    }
}

/// One value and index per row of [`rows`] (in its order: `dim` swapped with the last
/// dimension), as tensors in `self`'s dimension order with `dim` reduced.
fn picked_rows<T: SortKey>(
    values: Vec<T>,
    indices: Vec<i64>,
    self_: &Tensor,
    dim: usize,
    keepdim: bool,
) -> Result<(Tensor, Tensor)> {
    let shape = moved_shape(self_, dim, 1);
    let reduced = reduced_shape(self_, dim, keepdim);
    let back = |t: Tensor| -> Result<Tensor> {
        if self_.dim() == 0 {
            return Ok(t);
        }
        // Copied into a fresh tensor so the strides are the contiguous ones PyTorch reports
        // (a transposed view with a size-1 dim counts as contiguous but keeps odd strides).
        let t = t.try_transpose(dim as i64, -1)?.try_reshape(&reduced)?;
        let out = Tensor::empty(&reduced, t.dtype(), Device::Cpu, MemoryFormat::Contiguous)?;
        out.try_copy_(&t)?;
        Ok(out)
    };
    Ok((back(Tensor::from_vec(values, &shape)?)?, back(Tensor::from_vec(indices, &shape)?)?))
}

/// PyTorch's check that a selection has something to select from.
fn check_nonempty(op: &str, self_: &Tensor, dim: usize) -> Result<()> {
    if self_.dim() > 0 && self_.sizes()[dim] == 0 {
        return Err(Error::index(format!("{op}(): Expected reduction dim {dim} to have non-zero size.")));
    }
    Ok(())
}

use crate::support::not_implemented;

fn topk_check(self_: &Tensor, k: i64, dim: i64) -> Result<usize> {
    let d = dim_of(self_, dim)?;
    let n = if self_.dim() == 0 { 1 } else { self_.sizes()[d] };
    if k < 0 || k > n {
        return Err(Error::index("selected index k out of range"));
    }
    if self_.dtype() == DType::Bool {
        return Err(Error::dtype("topk does not support bool dtypes on CPU"));
    }
    Ok(d)
}

fn topk_typed<T: SortKey>(
    self_: &Tensor,
    k: usize,
    dim: usize,
    largest: bool,
    sorted: bool,
) -> Result<(Tensor, Tensor)> {
    let (data, n) = rows::<T>(self_, dim)?;
    let Some(&first) = data.first() else { return empty_topk(self_, dim, k) };
    let rows = data.len() / n;
    let mut values = vec![first; rows * k];
    let mut indices = vec![0i64; rows * k];
    // `better(a, b)`: `a` ranks before `b` in the result.
    let cmp = move |a: &(T, i64), b: &(T, i64)| if largest { b.0.order(a.0) } else { a.0.order(b.0) };
    if k > 0 {
        // One long row: its chunks' top k in parallel, then the best k of those candidates.
        let split = if rows == 1 && k * 64 <= n { oxten_runtime::parallel::num_threads().max(1) } else { 1 };
        data.par_chunks(n).zip(values.par_chunks_mut(k)).zip(indices.par_chunks_mut(k)).for_each(
            |((row, vals), idx)| {
                let chunk = n.div_ceil(split);
                let parts: Vec<Vec<(T, i64)>> = row
                    .par_chunks(chunk)
                    .enumerate()
                    .map(|(c, part)| best_k(part, (c * chunk) as i64, k, &cmp))
                    .collect();
                let mut pairs: Vec<(T, i64)> = parts.into_iter().flatten().collect();
                if pairs.len() > k {
                    pairs.select_nth_unstable_by(k - 1, cmp);
                    pairs.truncate(k);
                }
                if sorted {
                    pairs.sort_by(cmp);
                }
                for (j, (v, i)) in pairs.into_iter().enumerate() {
                    vals[j] = v;
                    idx[j] = i;
                }
            },
        );
    }
    unmove(values, indices, self_, dim, k, false)
}

/// The `k` best `(value, index)` pairs of `row` (indices from `base`), in no order. For a small
/// `k` a bounded heap whose root is the worst kept pair: most elements are rejected with one
/// comparison, and no pair array of the whole row is built. Otherwise a selection.
fn best_k<T: SortKey>(
    row: &[T],
    base: i64,
    k: usize,
    cmp: &(impl Fn(&(T, i64), &(T, i64)) -> Ordering + Sync),
) -> Vec<(T, i64)> {
    if k * 8 > row.len() {
        let mut pairs: Vec<(T, i64)> = row.iter().enumerate().map(|(i, &v)| (v, base + i as i64)).collect();
        if pairs.len() > k {
            pairs.select_nth_unstable_by(k - 1, cmp);
            pairs.truncate(k);
        }
        return pairs;
    }
    // A max-heap under `cmp` (the root ranks last among the kept pairs).
    let mut heap: Vec<(T, i64)> = Vec::with_capacity(k);
    let worse = |a: &(T, i64), b: &(T, i64)| cmp(a, b) == Ordering::Greater;
    for (i, &v) in row.iter().enumerate() {
        let item = (v, base + i as i64);
        if heap.len() < k {
            heap.push(item);
            let mut c = heap.len() - 1;
            while c > 0 {
                let p = (c - 1) / 2;
                if worse(&heap[c], &heap[p]) {
                    heap.swap(c, p);
                    c = p;
                } else {
                    break;
                }
            }
        } else if worse(&heap[0], &item) {
            heap[0] = item;
            let mut p = 0;
            loop {
                let (l, r) = (2 * p + 1, 2 * p + 2);
                let mut w = p;
                if l < k && worse(&heap[l], &heap[w]) {
                    w = l;
                }
                if r < k && worse(&heap[r], &heap[w]) {
                    w = r;
                }
                if w == p {
                    break;
                }
                heap.swap(p, w);
                p = w;
            }
        }
    }
    heap
}

/// `topk` of a tensor with no elements: empty outputs of the right shape.
fn empty_topk(self_: &Tensor, dim: usize, k: usize) -> Result<(Tensor, Tensor)> {
    let mut s = self_.sizes().to_vec();
    if !s.is_empty() {
        s[dim] = k as i64;
    }
    Ok((
        Tensor::empty(&s, self_.dtype(), Device::Cpu, MemoryFormat::Contiguous)?,
        Tensor::empty(&s, DType::I64, Device::Cpu, MemoryFormat::Contiguous)?,
    ))
}

impl TopkCpu for Cpu {
    fn topk(self_: &Tensor, k: i64, dim: i64, largest: bool, sorted: bool) -> Result<(Tensor, Tensor)> {
        let d = topk_check(self_, k, dim)?;
        with_key_type!(self_.dtype(), T => topk_typed::<T>(self_, k as usize, d, largest, sorted))
    }
}

impl TopkMeta for Meta {
    fn topk(self_: &Tensor, k: i64, dim: i64, _largest: bool, _sorted: bool) -> Result<(Tensor, Tensor)> {
        let d = topk_check(self_, k, dim)?;
        let mut s = self_.sizes().to_vec();
        if !s.is_empty() {
            s[d] = k;
        }
        Ok((meta_empty(self_.dtype(), &s)?, meta_empty(DType::I64, &s)?))
    }
}

/// Selects, in every row, the pair at rank `pick(row)` (0-based, ascending), or the first NaN
/// when `nan_wins` and the row has one (`median` propagates NaN).
fn select_typed<T: SortKey>(
    self_: &Tensor,
    dim: usize,
    keepdim: bool,
    rank: usize,
    nan_wins: bool,
) -> Result<(Tensor, Tensor)> {
    let (data, n) = rows::<T>(self_, dim)?;
    let rows = data.len() / n.max(1);
    let picked: Vec<(T, i64)> = data
        .par_chunks(n.max(1))
        .map(|row| {
            if nan_wins {
                if let Some(i) = row.iter().position(|v| v.is_nan()) {
                    return (row[i], i as i64);
                }
            }
            let mut pairs = pairs_of(row);
            let (_, &mut nth, _) = pairs.select_nth_unstable_by(rank, |a, b| a.0.order(b.0));
            nth
        })
        .collect();
    debug_assert_eq!(picked.len(), rows);
    let (values, indices): (Vec<T>, Vec<i64>) = picked.into_iter().unzip();
    picked_rows(values, indices, self_, dim, keepdim)
}

fn kthvalue_check(self_: &Tensor, k: i64, dim: i64) -> Result<usize> {
    let d = dim_of(self_, dim)?;
    check_nonempty("kthvalue", self_, d)?;
    let n = if self_.dim() == 0 { 1 } else { self_.sizes()[d] };
    if k < 1 || k > n {
        return Err(Error::index(format!("kthvalue(): selected number k out of range for dimension {d}")));
    }
    if self_.dtype() == DType::Bool {
        return Err(not_implemented("kthvalue_cpu", DType::Bool));
    }
    Ok(d)
}

impl KthvalueCpu for Cpu {
    fn kthvalue(self_: &Tensor, k: i64, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = kthvalue_check(self_, k, dim)?;
        with_key_type!(self_.dtype(), T => select_typed::<T>(self_, d, keepdim, k as usize - 1, false))
    }
}

impl KthvalueMeta for Meta {
    fn kthvalue(self_: &Tensor, k: i64, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = kthvalue_check(self_, k, dim)?;
        let s = reduced_shape(self_, d, keepdim);
        Ok((meta_empty(self_.dtype(), &s)?, meta_empty(DType::I64, &s)?))
    }
}

fn median_dim_check(self_: &Tensor, dim: i64) -> Result<usize> {
    let d = dim_of(self_, dim)?;
    check_nonempty("median", self_, d)?;
    if self_.dtype() == DType::Bool {
        return Err(not_implemented("median_cpu", DType::Bool));
    }
    Ok(d)
}

/// The rank of the lower median of `n` elements.
fn median_rank(n: usize) -> usize {
    (n.max(1) - 1) / 2
}

impl MedianDimCpu for Cpu {
    fn median_dim(self_: &Tensor, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = median_dim_check(self_, dim)?;
        let n = if self_.dim() == 0 { 1 } else { self_.sizes()[d] as usize };
        with_key_type!(self_.dtype(), T => select_typed::<T>(self_, d, keepdim, median_rank(n), true))
    }
}

impl MedianDimMeta for Meta {
    fn median_dim(self_: &Tensor, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = median_dim_check(self_, dim)?;
        let s = reduced_shape(self_, d, keepdim);
        Ok((meta_empty(self_.dtype(), &s)?, meta_empty(DType::I64, &s)?))
    }
}

impl MedianCpu for Cpu {
    /// The median of all elements: NaN for an empty tensor (as PyTorch).
    fn median(self_: &Tensor) -> Result<Tensor> {
        if self_.dtype() == DType::Bool {
            return Err(not_implemented("median_cpu", DType::Bool));
        }
        if self_.numel() == 0 {
            return ops::full::call(&[], oxten_runtime::Scalar::Float(f64::NAN), Some(self_.dtype()), None, None, None);
        }
        let flat = self_.try_reshape(&[-1])?;
        let n = flat.numel() as usize;
        let (v, _) = with_key_type!(self_.dtype(), T => select_typed::<T>(&flat, 0, false, median_rank(n), true))?;
        Ok(v)
    }
}

impl MedianMeta for Meta {
    fn median(self_: &Tensor) -> Result<Tensor> {
        if self_.dtype() == DType::Bool {
            return Err(not_implemented("median_cpu", DType::Bool));
        }
        meta_empty(self_.dtype(), &[])
    }
}

fn mode_typed<T: SortKey>(self_: &Tensor, dim: usize, keepdim: bool) -> Result<(Tensor, Tensor)> {
    let (data, n) = rows::<T>(self_, dim)?;
    let picked: Vec<(T, i64)> = data
        .par_chunks(n.max(1))
        .map(|row| {
            let mut pairs = pairs_of(row);
            // Ascending by value, ties by index: each run of equal values ends at its last
            // occurrence, and the first run of the maximum length is the smallest value.
            pairs.sort_by(|a, b| a.0.order(b.0).then(a.1.cmp(&b.1)));
            let (mut best, mut best_len) = (pairs[0], 0usize);
            let mut start = 0;
            for i in 1..=pairs.len() {
                if i == pairs.len() || pairs[i].0.order(pairs[start].0) != Ordering::Equal {
                    if i - start > best_len {
                        best_len = i - start;
                        best = pairs[i - 1];
                    }
                    start = i;
                }
            }
            best
        })
        .collect();
    let (values, indices): (Vec<T>, Vec<i64>) = picked.into_iter().unzip();
    picked_rows(values, indices, self_, dim, keepdim)
}

impl ModeCpu for Cpu {
    fn mode(self_: &Tensor, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = dim_of(self_, dim)?;
        check_nonempty("mode", self_, d)?;
        with_key_type!(self_.dtype(), T => mode_typed::<T>(self_, d, keepdim))
    }
}

impl ModeMeta for Meta {
    fn mode(self_: &Tensor, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = dim_of(self_, dim)?;
        check_nonempty("mode", self_, d)?;
        let s = reduced_shape(self_, d, keepdim);
        Ok((meta_empty(self_.dtype(), &s)?, meta_empty(DType::I64, &s)?))
    }
}
