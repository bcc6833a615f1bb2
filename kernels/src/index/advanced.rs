//! Advanced indexing: `index.Tensor` (`x[i, :, j]` with index tensors), its `out=` form, and
//! `index_put_` / `index_put` (`x[i, :, j] = v`, optionally accumulating).
//!
//! As in PyTorch (`make_info` / `AdvancedIndex`): bool and uint8 masks become the index tensors
//! of their nonzero positions; the index tensors broadcast together; when the indexed dims are
//! not adjacent they are moved to the front (so the indexed result dims come first), otherwise
//! the result dims replace the indexed ones in place. `self` is then restrided so that the
//! broadcast index shape sits where the indexed dims were, with stride 0, and a TensorIterator
//! over it and the index tensors gives the output's shape and layout; each element adds
//! `index_k * stride_k` over the indexed dims to its position.

use super::common::{assert_no_internal_overlap, assert_no_overlap, match_acc, match_size, Accumulate, FirstError};
use super::masked::{item_scalar, masked_fill_, masked_fill_iter};
use crate::generated::decls::{
    IndexCpu, IndexMeta, IndexOutCpu, IndexOutMeta, IndexPutCompositeExplicit, IndexPutInplaceCpu, IndexPutInplaceMeta,
};
use crate::iter::{infer_size, scalar_type_name, to_dtype, StructuredOutputs, TensorIterator, TensorIteratorConfig};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::{ops, DType, Error, MemoryFormat, Result, Tensor};

/// `self` restrided for indexing, the broadcast int64 index tensors, and the sizes and strides
/// (in elements) of the indexed dims.
struct AdvancedIndex {
    src: Tensor,
    indices: Vec<Tensor>,
    indexed_sizes: Vec<i64>,
    indexed_strides: Vec<i64>,
}

/// `checkIndexTensorTypes(indices, allow_int=true)`.
fn check_index_types(indices: &[Option<Tensor>]) -> Result<()> {
    for t in indices.iter().flatten() {
        if !matches!(t.dtype(), DType::I64 | DType::I32 | DType::U8 | DType::Bool) {
            return Err(Error::index("tensors used as indices must be long, int, byte or bool tensors"));
        }
    }
    Ok(())
}

/// The positions of the nonzero elements of `mask` (row-major order), one int64 tensor per dim.
fn nonzero(mask: &Tensor) -> Result<Vec<Tensor>> {
    if mask.is_meta() {
        return Err(Error::runtime(
            "indexing with a boolean mask needs the mask's values; it is not supported on meta tensors",
        ));
    }
    let (count, coords) = super::nonzero::nonzero_coords(mask)?;
    let nd = mask.dim();
    (0..nd).map(|d| Tensor::from_vec(coords.iter().skip(d).step_by(nd).copied().collect(), &[count as i64])).collect()
}

/// `expandTensors`: masks replaced by the index tensors of their nonzero positions, after
/// checking that their shape matches the dims of `self` they cover.
fn expand_masks(self_: &Tensor, indices: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
    let mut out: Vec<Option<Tensor>> = Vec::new();
    for idx in indices {
        match idx {
            None => out.push(None),
            Some(t) if matches!(t.dtype(), DType::Bool | DType::U8) => {
                let self_sizes = self_.sizes();
                for j in 0..t.dim() {
                    let src = out.len() + j;
                    let have = self_.size(src as i64)?;
                    if t.sizes()[j] != have {
                        return Err(Error::index(format!(
                            "The shape of the mask {:?} at index {j} does not match the shape of the indexed tensor {:?} \
                             at index {src}",
                            &t.sizes()[..],
                            &self_sizes[..]
                        )));
                    }
                }
                out.extend(nonzero(t)?.into_iter().map(Some));
            }
            Some(t) => out.push(Some(t.clone())),
        }
    }
    if out.len() > self_.dim() {
        return Err(Error::index(format!(
            "too many indices for tensor of dimension {} (got {})",
            self_.dim(),
            out.len()
        )));
    }
    Ok(out)
}

/// A view of `t` broadcast to `shape` (stride 0 on new and expanded dims).
fn expand_view(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let lead = shape.len() - sizes.len();
    let st: Vec<i64> =
        (0..shape.len()).map(|d| if d < lead || sizes[d - lead] != shape[d] { 0 } else { strides[d - lead] }).collect();
    t.alias_with_layout(shape, &st, t.storage_offset())
}

/// `make_info` + `AdvancedIndex`.
fn make_info(self_: &Tensor, indices: &[Option<Tensor>]) -> Result<AdvancedIndex> {
    check_index_types(indices)?;
    let mut idx = expand_masks(self_, indices)?;
    // Broadcast the index tensors together.
    let shapes: Vec<Vec<i64>> = idx.iter().flatten().map(|t| t.sizes().to_vec()).collect();
    let mut shape: Option<Vec<i64>> = None;
    for s in &shapes {
        shape = Some(match shape {
            None => s.clone(),
            Some(acc) => infer_size(&acc, s).map_err(|_| {
                let all: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
                Error::index(format!(
                    "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                    all.join(", ")
                ))
            })?,
        });
    }
    let Some(shape) = shape else {
        return Err(Error::index("at least one index must be provided"));
    };
    for t in idx.iter_mut().flatten() {
        if t.sizes() != shape[..] {
            *t = expand_view(t, &shape)?;
        }
    }
    while idx.len() < self_.dim() {
        idx.push(None);
    }
    // Non-adjacent indexed dims go to the front.
    let first = idx.iter().position(Option::is_some).unwrap_or(0);
    let last = idx.iter().rposition(Option::is_some).unwrap_or(0);
    let mut src = self_.clone();
    if idx[first..=last].iter().any(Option::is_none) {
        let order: Vec<usize> =
            (0..idx.len()).filter(|&i| idx[i].is_some()).chain((0..idx.len()).filter(|&i| idx[i].is_none())).collect();
        let (sizes, strides) = (self_.sizes(), self_.strides());
        let ps: Vec<i64> = order.iter().map(|&d| sizes[d]).collect();
        let pt: Vec<i64> = order.iter().map(|&d| strides[d]).collect();
        src = self_.alias_with_layout(&ps, &pt, self_.storage_offset())?;
        idx = order.iter().map(|&d| idx[d].clone()).collect();
    }
    // AdvancedIndex: sizes/strides of the indexed dims, and `self` restrided.
    let (sizes, strides) = (src.sizes(), src.strides());
    let (mut before, mut after, mut indexed) = (0usize, 0usize, 0usize);
    let mut indexed_sizes = Vec::new();
    let mut indexed_strides = Vec::new();
    for (d, t) in idx.iter().enumerate() {
        match t {
            None if indexed == 0 => before += 1,
            None => after += 1,
            Some(_) => {
                indexed += 1;
                indexed_sizes.push(sizes[d]);
                indexed_strides.push(strides[d]);
            }
        }
    }
    if indexed_sizes.contains(&0) && !shape.contains(&0) {
        return Err(Error::index("index is out of bounds for dimension with size 0"));
    }
    let end = before + indexed;
    let mut r_sizes: Vec<i64> = sizes[..before].to_vec();
    let mut r_strides: Vec<i64> = strides[..before].to_vec();
    r_sizes.extend_from_slice(&shape);
    r_strides.extend(vec![0; shape.len()]);
    r_sizes.extend_from_slice(&sizes[end..]);
    r_strides.extend_from_slice(&strides[end..]);
    let restrided = src.alias_with_layout(&r_sizes, &r_strides, src.storage_offset())?;
    // Index tensors: int64, reshaped to [1]*before + shape + [1]*after.
    let mut out_indices = Vec::new();
    for t in idx.into_iter().flatten() {
        let t = if t.dtype() == DType::I64 { t } else { to_dtype(&t, DType::I64)? };
        let mut ns = vec![1i64; before];
        let mut nt = vec![0i64; before];
        ns.extend_from_slice(&t.sizes());
        nt.extend_from_slice(&t.strides());
        ns.extend(vec![1; after]);
        nt.extend(vec![0; after]);
        out_indices.push(t.alias_with_layout(&ns, &nt, t.storage_offset())?);
    }
    Ok(AdvancedIndex { src: restrided, indices: out_indices, indexed_sizes, indexed_strides })
}

/// The element offset (in `src`'s elements) that the index values of one iteration element
/// select, or the out-of-bounds error.
///
/// # Safety
/// `ptrs[first..]` must point at valid int64 index elements.
#[inline(always)]
unsafe fn offset_of(info: &AdvancedIndex, ptrs: &[*const i64]) -> Result<isize> {
    let mut off = 0isize;
    for (k, &p) in ptrs.iter().enumerate() {
        // SAFETY: forwarded to the caller.
        let mut v = unsafe { *p };
        let size = info.indexed_sizes[k];
        if v < -size || v >= size {
            return Err(Error::index(format!("index {v} is out of bounds for dimension {k} with size {size}")));
        }
        if v < 0 {
            v += size;
        }
        off += (v * info.indexed_strides[k]) as isize;
    }
    Ok(off)
}

/// The iterator of `index`: the output (given or allocated), `src`, then the index tensors.
fn index_iter(info: &AdvancedIndex, out: Option<&Tensor>) -> Result<TensorIterator> {
    let mut config =
        TensorIteratorConfig::new().check_mem_overlap(false).check_all_same_dtype(false).check_all_same_device(false);
    if let Some(o) = out {
        config = config.add_output(o);
    }
    config = config.add_input(&info.src);
    for t in &info.indices {
        config = config.add_input(t);
    }
    match out {
        Some(_) => config.build(),
        None => {
            let mut outs = StructuredOutputs::functional(1);
            let iter = config.declare_static_dtype(info.src.dtype()).build_structured(&mut outs)?;
            Ok(iter)
        }
    }
}

/// Copies the selected elements into the iterator's output (host memory).
fn run_index(info: &AdvancedIndex, iter: &TensorIterator) -> Result<()> {
    if iter.numel() == 0 {
        return Ok(());
    }
    let es = info.src.dtype().size();
    let err = FirstError::new();
    let nidx = info.indices.len();
    match_size!(es, T => iter.for_each(
        |ptrs, s, n0, n1| {
            let nt = ptrs.len();
            let mut ip = [std::ptr::null::<i64>(); 16];
            for j in 0..n1 {
                if err.failed() {
                    return;
                }
                for i in 0..n0 as isize {
                    let at = |k: usize| ptrs[k].wrapping_offset(j as isize * s[nt + k] + i * s[k]);
                    for (k, p) in ip.iter_mut().enumerate().take(nidx) {
                        *p = at(2 + k) as *const i64;
                    }
                    // SAFETY: the iterator's pointers address valid elements of the output
                    // (dtype T), of the restrided `self` and of the int64 index tensors; the
                    // offset is bounds-checked against the indexed dims.
                    unsafe {
                        match offset_of(info, &ip[..nidx]) {
                            Ok(off) => *(at(0) as *mut T) = *(at(1) as *const T).offset(off),
                            Err(e) => {
                                err.set(e);
                                return;
                            }
                        }
                    }
                }
            }
        },
        crate::iter::GRAIN_SIZE,
    ));
    err.into_result()
}

fn check_too_many(self_: &Tensor, indices: &[Option<Tensor>]) -> Result<()> {
    if indices.len() > self_.dim() {
        return Err(Error::index(format!(
            "too many indices for tensor of dimension {} (got {})",
            self_.dim(),
            indices.len()
        )));
    }
    if indices.len() > 16 {
        return Err(Error::index("at most 16 index tensors are supported"));
    }
    Ok(())
}

/// `index`'s checks and plan: the restrided `self` and index tensors, and the iterator that
/// allocated (or checked and resized) the output. The Meta kernels stop here.
fn index_setup(
    self_: &Tensor,
    indices: &[Option<Tensor>],
    out: Option<&Tensor>,
) -> Result<(AdvancedIndex, TensorIterator)> {
    check_too_many(self_, indices)?;
    if let Some(out) = out {
        if self_.dtype() != out.dtype() {
            return Err(Error::dtype(format!(
                "index_out: self ({}) and result ({}) must have the same scalar type",
                scalar_type_name(self_.dtype()),
                scalar_type_name(out.dtype())
            )));
        }
        assert_no_internal_overlap(out)?;
        assert_no_overlap(out, self_)?;
        for t in indices.iter().flatten() {
            assert_no_overlap(out, t)?;
        }
    }
    let info = make_info(self_, indices)?;
    let iter = index_iter(&info, out)?;
    Ok((info, iter))
}

impl IndexCpu for Cpu {
    fn index(self_: &Tensor, indices: &[Option<Tensor>]) -> Result<Tensor> {
        let (info, iter) = index_setup(self_, indices, None)?;
        run_index(&info, &iter)?;
        Ok(iter.output(0).clone())
    }
}
impl IndexMeta for Meta {
    fn index(self_: &Tensor, indices: &[Option<Tensor>]) -> Result<Tensor> {
        let (_, iter) = index_setup(self_, indices, None)?;
        Ok(iter.output(0).clone())
    }
}
impl IndexOutCpu for Cpu {
    fn index_out(self_: &Tensor, indices: &[Option<Tensor>], out: &Tensor) -> Result<Tensor> {
        let (info, iter) = index_setup(self_, indices, Some(out))?;
        run_index(&info, &iter)?;
        Ok(out.clone())
    }
}
impl IndexOutMeta for Meta {
    fn index_out(self_: &Tensor, indices: &[Option<Tensor>], out: &Tensor) -> Result<Tensor> {
        index_setup(self_, indices, Some(out))?;
        Ok(out.clone())
    }
}

// ---------------------------------------------------------------------------------------------
// index_put
// ---------------------------------------------------------------------------------------------

/// `canDispatchToMaskedFill`: one bool/uint8 mask among the indices and a one-element value go
/// through `masked_fill_`, with the mask's dims checked and trailing dims added.
fn masked_fill_mask(self_: &Tensor, indices: &[Option<Tensor>], values: &Tensor) -> Result<Option<Tensor>> {
    if values.numel() != 1 {
        return Ok(None);
    }
    let mut num_ind = 0usize;
    let mut mask: Option<Tensor> = None;
    for i in indices {
        match i {
            None => num_ind += 1,
            Some(t) => {
                if !matches!(t.dtype(), DType::Bool | DType::U8) || mask.is_some() || t.device() != self_.device() {
                    return Ok(None);
                }
                for j in 0..t.dim() {
                    let src = num_ind + j;
                    if t.sizes()[j] != self_.size(src as i64)? {
                        return Err(Error::index(format!(
                            "The shape of the mask {:?} at index {j} does not match the shape of the indexed tensor {:?} \
                             at index {src}",
                            &t.sizes()[..],
                            &self_.sizes()[..]
                        )));
                    }
                }
                num_ind += t.dim();
                mask = Some(t.clone());
            }
        }
    }
    let Some(mut m) = mask else { return Ok(None) };
    for _ in num_ind..self_.dim() {
        m = ops::unsqueeze::call(&m, -1)?;
    }
    Ok(Some(m))
}

/// `is_expandable_to(shape, desired)`.
fn is_expandable_to(shape: &[i64], desired: &[i64]) -> bool {
    if shape.len() > desired.len() {
        return false;
    }
    shape.iter().rev().zip(desired.iter().rev()).all(|(&s, &d)| s == d || s == 1)
}

/// How `_index_put_impl_` writes: through `masked_fill_` (one mask, one value, no
/// accumulation), or element by element over the indexing iterator.
enum IndexPutPlan {
    MaskedFill(Tensor),
    /// One Long index into dim 0 of a contiguous `self`, and `values` of exactly the indexed
    /// rows' shape: whole rows are written or added (`index_add`/`index_copy` along dim 0,
    /// `embedding`'s gradient, `x[idx] += v`).
    Rows(Tensor),
    Scatter(Box<(AdvancedIndex, TensorIterator)>),
}

/// The index of an [`IndexPutPlan::Rows`] write, when `self[indices] = values` is one.
fn rows_plan(self_: &Tensor, indices: &[Option<Tensor>], values: &Tensor) -> Option<Tensor> {
    let [Some(index)] = indices else { return None };
    if index.dtype() != DType::I64
        || index.dim() != 1
        || self_.dim() == 0
        || [self_, index, values].iter().any(|t| t.device() != oxten_runtime::Device::Cpu)
        || !self_.is_contiguous()
        || !values.is_contiguous()
    {
        return None;
    }
    let sizes = self_.sizes();
    let rows_shape = std::iter::once(index.numel()).chain(sizes[1..].iter().copied());
    values.sizes().iter().copied().eq(rows_shape).then(|| index.clone())
}

/// Writes (or adds) row `j` of `values` into row `index[j]` of `self`, in index order, after
/// checking every index (so a bad one leaves `self` unchanged).
fn run_index_put_rows(self_: &Tensor, index: &Tensor, values: &Tensor, accumulate: bool) -> Result<()> {
    if index.numel() == 0 {
        return Ok(());
    }
    let index = ops::contiguous::call(index, MemoryFormat::Contiguous)?;
    let size = self_.sizes()[0];
    // SAFETY: `index` is a non-empty contiguous CPU Long tensor (`rows_plan`) of `numel`
    // elements.
    let idx =
        unsafe { std::slice::from_raw_parts(index.data_ptr().cast::<i64>().cast_const(), index.numel() as usize) };
    if let Some(v) = idx.iter().find(|&&v| v < -size || v >= size) {
        return Err(Error::index(format!("index {v} is out of bounds for dimension 0 with size {size}")));
    }
    if self_.numel() == 0 {
        return Ok(());
    }
    let row = (self_.numel() / size) as usize;
    let (dst, src) = (self_.data_ptr(), values.data_ptr());
    match_acc!(self_.dtype(), T => {
        // SAFETY: `self` and `values` are contiguous CPU tensors of dtype T (checked by the
        // setup) that do not overlap (`assert_no_overlap`); `self` holds `size` rows of `row`
        // elements and `values` `idx.len()` of them.
        let (dst, src) = unsafe {
            (
                std::slice::from_raw_parts_mut(dst.cast::<T>(), size as usize * row),
                std::slice::from_raw_parts(src.cast::<T>().cast_const(), idx.len() * row),
            )
        };
        for (&v, from) in idx.iter().zip(src.chunks_exact(row)) {
            let r = if v < 0 { v + size } else { v } as usize;
            let to = &mut dst[r * row..][..row];
            if accumulate {
                for (d, &x) in to.iter_mut().zip(from) {
                    *d = d.acc(x);
                }
            } else {
                to.copy_from_slice(from);
            }
        }
    });
    Ok(())
}

/// `_index_put_impl_`'s checks and plan; the Meta kernel stops here.
fn index_put_setup(
    self_: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<IndexPutPlan> {
    check_too_many(self_, indices)?;
    if !accumulate {
        if let Some(mask) = masked_fill_mask(self_, indices, values)? {
            return Ok(IndexPutPlan::MaskedFill(mask));
        }
    }
    assert_no_overlap(self_, values)?;
    for t in indices.iter().flatten() {
        assert_no_overlap(self_, t)?;
    }
    let info = make_info(self_, indices)?;
    let src_sizes = info.src.sizes();
    if !is_expandable_to(&values.sizes(), &src_sizes) {
        return Err(Error::shape(format!(
            "shape mismatch: value tensor of shape {:?} cannot be broadcast to indexing result of shape {:?}",
            &values.sizes()[..],
            &src_sizes[..]
        )));
    }
    if values.dtype() != info.src.dtype() {
        return Err(Error::dtype(format!(
            "Index put requires the source and destination dtypes match, got {} for the destination and {} for the \
             source.",
            scalar_type_name(info.src.dtype()),
            scalar_type_name(values.dtype())
        )));
    }
    if let Some(index) = rows_plan(self_, indices, values) {
        return Ok(IndexPutPlan::Rows(index));
    }
    let mut config = TensorIteratorConfig::new()
        .check_mem_overlap(false)
        .resize_outputs(false)
        .check_all_same_dtype(false)
        .check_all_same_device(false)
        .add_output(&info.src)
        .add_input(values);
    for t in &info.indices {
        config = config.add_input(t);
    }
    Ok(IndexPutPlan::Scatter(Box::new((info, config.build()?))))
}

/// Writes (or adds) `values`, broadcast to the indexing result, at the indexed positions of
/// `self` (host memory). Runs serially, so duplicate indices write in order (the last one wins)
/// or accumulate deterministically.
fn run_index_put(self_: &Tensor, info: &AdvancedIndex, iter: &TensorIterator, accumulate: bool) -> Result<()> {
    if iter.numel() == 0 {
        return Ok(());
    }
    let nidx = info.indices.len();
    let mut failure: Option<Error> = None;
    match_acc!(self_.dtype(), T => iter.serial_for_each(
        |ptrs, s, n0, n1| {
            let nt = ptrs.len();
            let mut ip = [std::ptr::null::<i64>(); 16];
            for j in 0..n1 {
                for i in 0..n0 as isize {
                    if failure.is_some() {
                        return;
                    }
                    let at = |k: usize| ptrs[k].wrapping_offset(j as isize * s[nt + k] + i * s[k]);
                    for (k, p) in ip.iter_mut().enumerate().take(nidx) {
                        *p = at(2 + k) as *const i64;
                    }
                    // SAFETY: the iterator's pointers address valid elements of the restrided
                    // `self` (dtype T), of `values` (same dtype, checked) and of the int64
                    // index tensors; the offset is bounds-checked against the indexed dims.
                    unsafe {
                        match offset_of(info, &ip[..nidx]) {
                            Ok(off) => {
                                let d = (at(0) as *mut T).offset(off);
                                let v = *(at(1) as *const T);
                                *d = if accumulate { (*d).acc(v) } else { v };
                            }
                            Err(e) => failure = Some(e),
                        }
                    }
                }
            }
        },
        0..iter.numel() as usize,
    ));
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

impl IndexPutInplaceCpu for Cpu {
    fn index_put_(self_: &Tensor, indices: &[Option<Tensor>], values: &Tensor, accumulate: bool) -> Result<Tensor> {
        match index_put_setup(self_, indices, values, accumulate)? {
            IndexPutPlan::MaskedFill(mask) => masked_fill_(self_, &mask, item_scalar(values)?)?,
            IndexPutPlan::Rows(index) => run_index_put_rows(self_, &index, values, accumulate)?,
            IndexPutPlan::Scatter(plan) => run_index_put(self_, &plan.0, &plan.1, accumulate)?,
        }
        Ok(self_.clone())
    }
}

impl IndexPutInplaceMeta for Meta {
    fn index_put_(self_: &Tensor, indices: &[Option<Tensor>], values: &Tensor, accumulate: bool) -> Result<Tensor> {
        if let IndexPutPlan::MaskedFill(mask) = index_put_setup(self_, indices, values, accumulate)? {
            masked_fill_iter(self_, &mask)?;
        }
        Ok(self_.clone())
    }
}

impl IndexPutCompositeExplicit for Composite {
    /// `self.clone(preserve_format).index_put_(indices, values, accumulate)`.
    fn index_put(self_: &Tensor, indices: &[Option<Tensor>], values: &Tensor, accumulate: bool) -> Result<Tensor> {
        let result = ops::deep_clone::call(self_, Some(MemoryFormat::Preserve))?;
        ops::index_put_::call(&result, indices, values, accumulate)
    }
}
