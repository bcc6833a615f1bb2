//! `_embedding_bag_sum`: each bag's weighted sum of the `weight` rows it names, added row by row
//! into the bag's output row, so the rows are never gathered into a `[len(indices), dim]`
//! tensor (PyTorch's CPU `embedding_bag` works the same way). The bags are split between the
//! threads. f16/bf16 bags are summed in f32 and rounded once. Other backends get the
//! composite: an `index_select` of the rows and an `index_add` into the bags.

use crate::cpu::contiguous_slice;
use crate::generated::decls::{EmbeddingBagSumCompositeExplicit, EmbeddingBagSumCpu};
use crate::{Composite, Cpu};
use half::{bf16, f16};
use oxten_runtime::{ops, DType, Element, Error, MemoryFormat, Result, Scalar, Tensor};
use std::borrow::Cow;

/// The operator's name, for messages.
const OP: &str = "_embedding_bag_sum";

/// An element the bags sum in `Acc` (f32 for the half types).
trait BagElement: Element + Copy + Send + Sync {
    type Acc: Copy + Default + std::ops::AddAssign + std::ops::Mul<Output = Self::Acc> + Send;
    fn widen(self) -> Self::Acc;
    fn narrow(acc: Self::Acc) -> Self;
}

macro_rules! bag_element {
    ($t:ty, $acc:ty, $widen:expr, $narrow:expr) => {
        impl BagElement for $t {
            type Acc = $acc;
            #[inline(always)]
            fn widen(self) -> $acc {
                $widen(self)
            }
            #[inline(always)]
            fn narrow(acc: $acc) -> Self {
                $narrow(acc)
            }
        }
    };
}
bag_element!(f32, f32, |x| x, |a| a);
bag_element!(f64, f64, |x| x, |a| a);
bag_element!(f16, f32, f16::to_f32, f16::from_f32);
bag_element!(bf16, f32, bf16::to_f32, bf16::from_f32);

/// The values of an index tensor as i64, after a Long/Int check: borrowed when the tensor
/// is a contiguous CPU Long tensor, else converted on the host.
pub(super) fn host_indices<'t>(t: &'t Tensor, func: &str, name: &str) -> Result<Cow<'t, [i64]>> {
    if !matches!(t.dtype(), DType::I64 | DType::I32) {
        return Err(Error::dtype(format!(
            "{func}: expected {name} to be a Long or Int tensor, but got {}",
            crate::support::type_meta_name(t.dtype())
        )));
    }
    if t.dtype() == DType::I64 && t.device() == oxten_runtime::Device::Cpu && t.is_contiguous() {
        return Ok(Cow::Borrowed(contiguous_slice(func, t)?));
    }
    let host = t.try_to_device(oxten_runtime::Device::Cpu)?;
    Ok(Cow::Owned(ops::to_dtype::call(&host, DType::I64, false, false, None)?.to_vec::<i64>()?))
}

/// The checks every backend makes; returns the bag count and the row length.
fn check(weight: &Tensor, indices: &Tensor, offsets: &Tensor, psw: Option<&Tensor>) -> Result<(i64, i64)> {
    if weight.dim() != 2 || !weight.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "_embedding_bag_sum: weight must be a 2-D floating-point tensor, but got a {}-D {} tensor",
            weight.dim(),
            crate::support::type_meta_name(weight.dtype())
        )));
    }
    for (t, name) in [(indices, "indices"), (offsets, "offsets")] {
        if t.dim() != 1 {
            return Err(Error::runtime(format!(
                "_embedding_bag_sum: {name} must be 1-D, but got a {}-D tensor",
                t.dim()
            )));
        }
    }
    if let Some(w) = psw {
        if w.dim() != 1 || w.numel() != indices.numel() || w.dtype() != weight.dtype() {
            return Err(Error::runtime(format!(
                "_embedding_bag_sum: per_sample_weights must be a 1-D {} tensor of {} entries (one per index), but \
                 got a {} tensor of shape {:?}",
                crate::support::type_meta_name(weight.dtype()),
                indices.numel(),
                crate::support::type_meta_name(w.dtype()),
                &w.sizes()[..]
            )));
        }
    }
    Ok((offsets.numel(), weight.sizes()[1]))
}

/// The bags' bounds checked: `offsets` starts at 0, never decreases and stays within
/// `indices`; every index names a row of `weight`.
fn check_bags(idx: &[i64], offs: &[i64], rows: i64) -> Result<()> {
    if offs.first().is_some_and(|&o| o != 0) {
        return Err(Error::runtime(format!("_embedding_bag_sum: offsets[0] must be 0, but got {}", offs[0])));
    }
    if offs.windows(2).any(|w| w[1] < w[0]) || offs.last().is_some_and(|&o| o > idx.len() as i64) {
        return Err(Error::runtime(format!(
            "_embedding_bag_sum: offsets must be non-decreasing and at most the number of indices ({})",
            idx.len()
        )));
    }
    if let Some(bad) = idx.iter().find(|&&v| !(0..rows).contains(&v)) {
        return Err(Error::index(format!(
            "_embedding_bag_sum: index {bad} is out of bounds for a weight of {rows} rows"
        )));
    }
    Ok(())
}

/// The checked arguments every backend starts from: the bag count, the row length and the
/// host values of `indices` and `offsets`.
struct Bags<'t> {
    bags: i64,
    dims: i64,
    idx: Cow<'t, [i64]>,
    offs: Cow<'t, [i64]>,
}

impl<'t> Bags<'t> {
    fn checked(weight: &Tensor, indices: &'t Tensor, offsets: &'t Tensor, psw: Option<&Tensor>) -> Result<Self> {
        let (bags, dims) = check(weight, indices, offsets, psw)?;
        let idx = host_indices(indices, "_embedding_bag_sum", "indices")?;
        let offs = host_indices(offsets, "_embedding_bag_sum", "offsets")?;
        check_bags(&idx, &offs, weight.sizes()[0])?;
        Ok(Bags { bags, dims, idx, offs })
    }
}

/// Bags per task: about sixteen tasks per thread (the rows cost unevenly: misses), and no split below ~32k multiply-adds.
fn bags_per_task(bags: usize, work: usize) -> usize {
    let threads = oxten_runtime::parallel::threads_now();
    if threads == 1 || work < 1 << 15 {
        return bags.max(1);
    }
    bags.div_ceil(threads * 16).max(16)
}

/// How many rows ahead the loop asks for a row: the rows are scattered over a table that is
/// usually far larger than the caches, and without a prefetch each one costs a full miss
/// (7x slower on a 25 MB table, `nn/embedding_bag_sum`).
const PREFETCH_ROWS: usize = 16;

/// Asks the CPU to start loading `row`'s cache lines.
#[inline(always)]
fn prefetch_row<T>(row: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = std::mem::size_of_val(row);
        let base = row.as_ptr().cast::<i8>();
        for line in (0..bytes).step_by(64) {
            // SAFETY: a prefetch is a hint that never faults, and `sse` (all `_mm_prefetch`
            // needs) is part of every x86_64 CPU.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(line)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// Columns summed at a time: their accumulators stay in vector registers (four AVX-512
/// registers of f32) for the whole bag.
const BLOCK: usize = 64;

/// The bags `first..first + out.len() / dims`, compiled per instruction-set level.
struct BagRange<'a, T> {
    weight: &'a [T],
    dims: usize,
    idx: &'a [i64],
    offs: &'a [i64],
    psw: Option<&'a [T]>,
    first: usize,
    out: &'a mut [T],
}

impl<T: BagElement> BagRange<'_, T> {
    /// Adds the bag's rows (columns `cols`) into `acc`, each times its per-sample weight.
    #[inline(always)]
    fn add_rows<const W: usize>(&self, rows: std::ops::Range<usize>, col: usize, acc: &mut [T::Acc; W], ahead: bool) {
        for j in rows {
            if ahead {
                if let Some(&next) = self.idx.get(j + PREFETCH_ROWS) {
                    prefetch_row(&self.weight[next as usize * self.dims..][..self.dims]);
                }
            }
            let row: &[T; W] =
                self.weight[self.idx[j] as usize * self.dims + col..][..W].try_into().expect("W columns");
            match self.psw {
                Some(p) => {
                    let p = p[j].widen();
                    for (a, &x) in acc.iter_mut().zip(row) {
                        *a += p * x.widen();
                    }
                }
                None => {
                    for (a, &x) in acc.iter_mut().zip(row) {
                        *a += x.widen();
                    }
                }
            }
        }
    }
}

impl<T: BagElement> crate::cpu::simd::InnerLoop for BagRange<'_, T> {
    #[inline(always)]
    unsafe fn run(mut self) {
        let dims = self.dims;
        let out = std::mem::take(&mut self.out);
        for (i, row_out) in out.chunks_mut(dims).enumerate() {
            let b = self.first + i;
            let rows = self.offs[b] as usize..self.offs.get(b + 1).map_or(self.idx.len(), |&e| e as usize);
            let mut col = 0;
            while col + BLOCK <= dims {
                let mut acc = [T::Acc::default(); BLOCK];
                self.add_rows(rows.clone(), col, &mut acc, col == 0);
                for (o, &a) in row_out[col..col + BLOCK].iter_mut().zip(&acc) {
                    *o = T::narrow(a);
                }
                col += BLOCK;
            }
            // The last columns, one at a time.
            while col < dims {
                let mut acc = [T::Acc::default(); 1];
                self.add_rows(rows.clone(), col, &mut acc, col == 0);
                row_out[col] = T::narrow(acc[0]);
                col += 1;
            }
        }
    }
}

fn sum_bags<T: BagElement>(weight: &[T], dims: usize, idx: &[i64], offs: &[i64], psw: Option<&[T]>, out: &mut [T]) {
    let bags = offs.len();
    let per_task = bags_per_task(bags, idx.len() * dims);
    oxten_runtime::parallel::chunks_mut(out, per_task * dims, |task, out| {
        let range = BagRange { weight, dims, idx, offs, psw, first: task * per_task, out };
        // SAFETY: `BagRange::run` only indexes slices (bounds-checked); the caller has
        // checked that every index names a row and that the offsets lie within `idx`.
        unsafe { crate::cpu::simd::run(range) };
    });
}

impl EmbeddingBagSumCpu for Cpu {
    fn embedding_bag_sum(
        weight: &Tensor,
        indices: &Tensor,
        offsets: &Tensor,
        per_sample_weights: Option<&Tensor>,
    ) -> Result<Tensor> {
        let Bags { bags, dims, idx, offs } = Bags::checked(weight, indices, offsets, per_sample_weights)?;
        let weight = ops::contiguous::call(weight, MemoryFormat::Contiguous)?;
        let psw = per_sample_weights.map(|p| ops::contiguous::call(p, MemoryFormat::Contiguous)).transpose()?;
        let out =
            ops::empty::call(&[bags, dims], Some(weight.dtype()), None, Some(oxten_runtime::Device::Cpu), None, None)?;
        let len = out.numel() as usize;
        // SAFETY: `out` is a fresh contiguous tensor that nothing else holds; `sum_bags`
        // writes each of its `len` elements (every bag's row) before it is read, and then
        // the storage is marked written.
        let (ptr, fresh) = unsafe { out.data_ptr_for_overwrite() };
        macro_rules! run {
            ($t:ty) => {{
                // SAFETY: as above; `ptr` addresses `len` elements of the weight's dtype `$t`.
                let slice = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<$t>(), len) };
                sum_bags::<$t>(
                    contiguous_slice(OP, &weight)?,
                    dims as usize,
                    &idx,
                    &offs,
                    psw.as_ref().map(|p| contiguous_slice(OP, p)).transpose()?,
                    slice,
                )
            }};
        }
        match weight.dtype() {
            DType::F32 => run!(f32),
            DType::F64 => run!(f64),
            DType::F16 => run!(f16),
            DType::BF16 => run!(bf16),
            other => return Err(Error::dtype(format!("_embedding_bag_sum: unsupported weight dtype {other}"))),
        }
        if fresh {
            // SAFETY: every element was written above.
            unsafe { out.storage().assume_init() };
        }
        Ok(out)
    }
}

impl EmbeddingBagSumCompositeExplicit for Composite {
    fn embedding_bag_sum(
        weight: &Tensor,
        indices: &Tensor,
        offsets: &Tensor,
        per_sample_weights: Option<&Tensor>,
    ) -> Result<Tensor> {
        let Bags { bags, dims, idx, offs } = Bags::checked(weight, indices, offsets, per_sample_weights)?;
        let zeros = ops::new_zeros::call(weight, &[bags, dims], None, None, None, None)?;
        if bags == 0 {
            return Ok(zeros);
        }
        let mut rows = ops::index_select::call(weight, 0, indices)?;
        if let Some(p) = per_sample_weights {
            rows = ops::mul::call(&rows, &ops::unsqueeze::call(p, 1)?)?;
        }
        let mut bag_of = Vec::with_capacity(idx.len());
        for (b, &start) in offs.iter().enumerate() {
            let end = offs.get(b + 1).map_or(idx.len() as i64, |&e| e);
            bag_of.extend(std::iter::repeat_n(b as i64, (end - start) as usize));
        }
        let bag_of = Tensor::from_vec(bag_of, &[idx.len() as i64])?.try_to_device(weight.device())?;
        ops::index_add::call(&zeros, 0, &bag_of, &rows, Scalar::Int(1))
    }
}
