//! `cat` (structured, as in PyTorch), and the composites over it: `stack` (`unsqueeze` and
//! `cat`) and `_chunk_cat` (pad, reshape to `[.., num_chunks, -1]` and `cat`).
//!
//! `cat`'s meta function follows PyTorch's `TORCH_PRECOMPUTE_META_FUNC(cat)`: no 0-dim inputs,
//! the legacy skipping of 1-d empty tensors (`torch.cat([x, torch.empty(0)])` works for any `x`),
//! type promotion across all inputs (an `out=` tensor may have any dtype the result can be cast
//! to), and the memory format of the output: channels-last when every input suggests the same
//! channels-last format, contiguous otherwise. The CPU impl copies block by block when every
//! input and the output are contiguous and of one dtype, and otherwise copies each input into
//! its slice of the output with the runtime's converting `copy_`.

use crate::generated::decls::{
    CatOutCpuCpu, CatOutMetaFn, CatOutPrecomputed, ChunkCatCompositeImplicit, StackCompositeExplicit,
    StackOutCompositeExplicit,
};
use crate::index::common::{assert_no_internal_overlap, assert_no_overlap, Ptr};
use crate::iter::{copy_, scalar_type_name, StructuredOutputs, GRAIN_SIZE};
use crate::{Composite, Cpu, Meta};
use oxten_runtime::tensor::strides_for_format;
use oxten_runtime::{can_cast, ops, result_type, wrap_dim, Error, MemoryFormat, Result, Scalar, Tensor};

/// `cat_should_skip_tensor`: 1-d empty tensors are skipped (legacy behaviour).
pub(crate) fn cat_should_skip(t: &Tensor) -> bool {
    t.dim() == 1 && t.numel() == 0
}

/// `legacy_cat_wrap_dim`: `dim` wrapped against the first input that is not skipped (or left
/// as is when every input is skipped).
pub(crate) fn legacy_cat_wrap_dim(dim: i64, tensors: &[Tensor]) -> Result<i64> {
    match tensors.iter().find(|t| !cat_should_skip(t)) {
        Some(t) => Ok(wrap_dim(dim, t.dim())? as i64),
        None => Ok(dim),
    }
}

/// `cat_compute_output_memory_format`: the format every input suggests, else contiguous.
fn output_memory_format(tensors: &[Tensor]) -> MemoryFormat {
    let mut format: Option<MemoryFormat> = None;
    for t in tensors {
        let f = t.suggest_memory_format();
        if f == MemoryFormat::Contiguous {
            return f;
        }
        if format.is_some_and(|g| g != f) {
            return MemoryFormat::Contiguous;
        }
        format = Some(f);
    }
    format.unwrap_or(MemoryFormat::Contiguous)
}

/// `check_cat_shape_except_dim`.
fn check_shape_except_dim(first: &Tensor, second: &Tensor, dim: i64, index: usize) -> Result<()> {
    let (a, b) = (first.sizes(), second.sizes());
    if a.len() != b.len() {
        return Err(Error::shape(format!(
            "Tensors must have same number of dimensions: got {} and {}",
            a.len(),
            b.len()
        )));
    }
    for d in 0..a.len() {
        if d as i64 == dim {
            continue;
        }
        if a[d] != b[d] {
            return Err(Error::shape(format!(
                "Sizes of tensors must match except in dimension {dim}. Expected size {} but got size {} for tensor \
                 number {index} in the list.",
                a[d], b[d]
            )));
        }
    }
    Ok(())
}

impl CatOutMetaFn for Meta {
    fn cat_out(outs: &mut StructuredOutputs, tensors: &[Tensor], dim: i64) -> Result<CatOutPrecomputed> {
        for (i, t) in tensors.iter().enumerate() {
            if t.dim() == 0 {
                return Err(Error::runtime(format!(
                    "zero-dimensional tensor (at position {i}) cannot be concatenated"
                )));
            }
        }
        let dim = legacy_cat_wrap_dim(dim, tensors)?;
        if tensors.is_empty() {
            return Err(Error::value("torch.cat(): expected a non-empty list of Tensors"));
        }
        let valid = tensors.iter().position(|t| !cat_should_skip(t)).unwrap_or(tensors.len());
        let memory_format = output_memory_format(tensors);
        let refs: Vec<&Tensor> = tensors.iter().collect();
        let mut out_dtype = result_type(&refs, &[])?;
        let mut all_contiguous = true;
        let mut all_same_dtype = true;
        let mut all_same_sizes_and_stride = true;
        let out = outs.maybe_get_output(0).cloned();
        if let Some(o) = &out {
            if !can_cast(out_dtype, o.dtype()) {
                return Err(Error::dtype(format!(
                    "torch.cat(): input types can't be cast to the desired output type {}",
                    scalar_type_name(o.dtype())
                )));
            }
            out_dtype = o.dtype();
            all_contiguous = o.is_contiguous_as(memory_format);
        }
        let mut sizes = vec![0i64];
        let mut device = tensors[0].device();
        let found_valid = valid < tensors.len();
        if found_valid {
            let first = &tensors[valid];
            let mut size_at_dim = 0;
            for (i, t) in tensors.iter().enumerate() {
                all_same_dtype = all_same_dtype && out_dtype == t.dtype();
                if !cat_should_skip(t) {
                    check_shape_except_dim(first, t, dim, i)?;
                    size_at_dim += t.sizes()[dim as usize];
                    all_contiguous = all_contiguous && t.is_contiguous_as(memory_format);
                    all_same_sizes_and_stride =
                        all_same_sizes_and_stride && t.sizes() == first.sizes() && t.strides() == first.strides();
                } else {
                    all_contiguous = false;
                }
            }
            sizes = first.sizes().to_vec();
            sizes[dim as usize] = size_at_dim;
            device = first.device();
        }
        let strides = strides_for_format(&sizes, memory_format);
        outs.set_output(0, &sizes, Some(&strides), out_dtype, device)?;
        if let (Some(o), true) = (&out, found_valid) {
            assert_no_internal_overlap(o)?;
            for t in tensors {
                assert_no_overlap(o, t)?;
            }
        }
        Ok(CatOutPrecomputed {
            dim,
            valid: valid as i64,
            all_contiguous,
            all_same_dtype,
            all_same_sizes_and_stride,
            memory_format,
        })
    }
}

impl CatOutCpuCpu for Cpu {
    #[allow(clippy::too_many_arguments)]
    fn cat_out_cpu(
        tensors: &[Tensor],
        dim: i64,
        _valid: i64,
        all_contiguous: bool,
        all_same_dtype: bool,
        _all_same_sizes_and_stride: bool,
        memory_format: MemoryFormat,
        out: &Tensor,
    ) -> Result<()> {
        if out.numel() == 0 {
            return Ok(());
        }
        let dim = dim as usize;
        if all_contiguous && all_same_dtype && memory_format == MemoryFormat::Contiguous {
            cat_contiguous(tensors, dim, out);
            return Ok(());
        }
        let mut offset = 0;
        for t in tensors.iter().filter(|t| !cat_should_skip(t)) {
            let n = t.sizes()[dim];
            let slice = narrow_view(out, dim, offset, n)?;
            copy_(&slice, t)?;
            offset += n;
        }
        Ok(())
    }
}

/// The view `out[..., start:start+len, ...]` along `dim`, made directly (no dispatch).
pub(crate) fn narrow_view(t: &Tensor, dim: usize, start: i64, len: i64) -> Result<Tensor> {
    let l = t.layout();
    let mut sizes = l.sizes.to_vec();
    sizes[dim] = len;
    t.alias_with_layout(&sizes, &l.strides, l.offset + start * l.strides[dim])
}

/// Every input and the output contiguous and of one dtype: the output is `outer` rows, each the
/// concatenation of one contiguous block of every input.
fn cat_contiguous(tensors: &[Tensor], dim: usize, out: &Tensor) {
    let sizes = out.sizes();
    let outer: usize = sizes[..dim].iter().product::<i64>() as usize;
    let es = out.dtype().size();
    let row_bytes = out.numel() as usize / outer.max(1) * es;
    // (source pointer, bytes per row, offset within an output row)
    let mut parts: Vec<(Ptr, usize, usize)> = Vec::new();
    let mut at = 0;
    for t in tensors.iter().filter(|t| !cat_should_skip(t)) {
        let bytes = t.numel() as usize / outer.max(1) * es;
        if bytes > 0 {
            parts.push((Ptr(t.data_ptr()), bytes, at));
        }
        at += bytes;
    }
    let dst = Ptr(out.data_ptr());
    let copy_rows = |lo: usize, hi: usize| {
        for r in lo..hi {
            for &(src, bytes, off) in &parts {
                // SAFETY: every input is contiguous with `outer` rows of `bytes` bytes, and the
                // output is contiguous with rows of `row_bytes` bytes of which this input owns
                // `off..off + bytes`; the meta function checked that the output overlaps no input.
                unsafe {
                    std::ptr::copy_nonoverlapping(src.get().add(r * bytes), dst.get().add(r * row_bytes + off), bytes);
                }
            }
        }
    };
    let total = out.numel() as usize;
    let threads = oxten_runtime::parallel::threads_now();
    if total < GRAIN_SIZE * 4 || outer < 2 || threads <= 1 {
        copy_rows(0, outer);
    } else {
        let chunks = threads.min(outer);
        let step = outer.div_ceil(chunks);
        oxten_runtime::parallel::for_each(chunks, |c| copy_rows(c * step, ((c + 1) * step).min(outer)));
    }
}

// ---------------------------------------------------------------------------------------------
// stack
// ---------------------------------------------------------------------------------------------

/// `check_stack_inputs`: every input has the first one's shape.
fn check_stack_inputs(tensors: &[Tensor]) -> Result<()> {
    let entry = tensors[0].sizes();
    for (i, t) in tensors.iter().enumerate().skip(1) {
        if t.sizes() != entry {
            return Err(Error::shape(format!(
                "stack expects each tensor to be equal size, but got {:?} at entry 0 and {:?} at entry {i}",
                &entry[..],
                &t.sizes()[..]
            )));
        }
    }
    Ok(())
}

/// The inputs of `stack` unsqueezed at `dim`.
fn unsqueezed(tensors: &[Tensor], dim: i64) -> Result<Vec<Tensor>> {
    tensors.iter().map(|t| ops::unsqueeze::call(t, dim)).collect()
}

/// `stack`'s dim, wrapped against one more dim than the inputs have.
fn stack_dim(tensors: &[Tensor], dim: i64) -> Result<i64> {
    if tensors.is_empty() {
        return Err(Error::value("stack expects a non-empty TensorList"));
    }
    Ok(wrap_dim(dim, tensors[0].dim() + 1)? as i64)
}

/// The result shape of `stack` at (wrapped) `dim`.
fn stack_sizes(tensors: &[Tensor], dim: i64) -> Vec<i64> {
    let mut sizes = tensors[0].sizes().to_vec();
    sizes.insert(dim as usize, tensors.len() as i64);
    sizes
}

impl StackCompositeExplicit for Composite {
    /// As PyTorch: a new dim before the last one is `cat` along that dim viewed with the new
    /// dim split off (so the result takes `cat`'s promotion and memory format); a new last dim
    /// is a `cat` of the inputs unsqueezed there.
    fn stack(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
        let d = stack_dim(tensors, dim)?;
        check_stack_inputs(tensors)?;
        if (d as usize) < tensors[0].dim() {
            let out = ops::cat::call(tensors, d)?;
            return ops::view::call(&out, &stack_sizes(tensors, d));
        }
        ops::cat::call(&unsqueezed(tensors, d)?, dim)
    }
}

impl StackOutCompositeExplicit for Composite {
    /// `out` is resized to the result shape; when it can be viewed with the concatenated shape
    /// the inputs are concatenated into that view, otherwise the unsqueezed inputs into `out`.
    fn stack_out(tensors: &[Tensor], dim: i64, out: &Tensor) -> Result<Tensor> {
        let d = stack_dim(tensors, dim)?;
        check_stack_inputs(tensors)?;
        if (d as usize) < tensors[0].dim() {
            let sizes = stack_sizes(tensors, d);
            if out.sizes() != sizes[..] {
                out.resize_(&sizes, MemoryFormat::Contiguous)?;
            }
            let mut cat_sizes = tensors[0].sizes().to_vec();
            cat_sizes[d as usize] *= tensors.len() as i64;
            if crate::views::compute_stride(&out.sizes(), &out.strides(), &cat_sizes).is_some() {
                let view = ops::view::call(out, &cat_sizes)?;
                ops::cat_out::call(tensors, d, &view)?;
                return Ok(out.clone());
            }
        }
        ops::cat_out::call(&unsqueezed(tensors, d)?, dim, out)
    }
}

/// `_chunk_cat`, with PyTorch's `preprocess_chunk_cat_inputs` checks: each tensor is padded with
/// zeros along `dim` to a multiple of `num_chunks`, viewed as `[sizes[..dim], num_chunks, -1]`,
/// and the views are concatenated along `dim + 1`.
impl ChunkCatCompositeImplicit for Composite {
    fn chunk_cat(tensors: &[Tensor], dim: i64, num_chunks: i64) -> Result<Tensor> {
        if num_chunks < 1 {
            return Err(Error::runtime("_chunk_cat expects positive num_chunks"));
        }
        let Some(first) = tensors.first() else {
            return Err(Error::runtime("_chunk_cat expects a non-empty input tensor list"));
        };
        for t in tensors {
            if t.numel() == 0 {
                return Err(Error::runtime("_chunk_cat expects non-empty tensor"));
            }
            if t.dtype() != first.dtype() {
                return Err(Error::runtime("_chunk_cat expects all input tensors with the same dtype"));
            }
            if t.device() != first.device() {
                return Err(Error::runtime("_chunk_cat expects all inputs tensors on the same device"));
            }
        }
        let dim = if tensors.iter().all(|t| t.dim() == first.dim()) {
            let d = wrap_dim(dim, first.dim())?;
            if first.dim() == 0 {
                return Err(Error::index("_chunk_cat: dimension specified as 0 but tensor has no dimensions"));
            }
            d
        } else {
            if dim < 0 {
                return Err(Error::runtime(
                    "_chunk_cat expects non-negative dim when input tensors have different ndims",
                ));
            }
            if tensors.iter().any(|t| dim as usize >= t.dim()) {
                return Err(Error::runtime("_chunk_cat expects dim < ndim for all input tensors"));
            }
            dim as usize
        };
        let lead = &first.sizes()[..dim];
        if tensors.iter().any(|t| &t.sizes()[..dim] != lead) {
            return Err(Error::runtime("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors"));
        }
        let parts = tensors
            .iter()
            .map(|t| {
                let size = t.sizes()[dim];
                // Rounded up to a multiple of `num_chunks` (an error, not a wrap, past i64).
                let padded = size
                    .checked_add(num_chunks - 1)
                    .map(|v| v / num_chunks * num_chunks)
                    .ok_or_else(|| Error::runtime(format!("_chunk_cat: num_chunks {num_chunks} is too large")))?;
                let t = if padded == size {
                    t.clone()
                } else {
                    // `constant_pad_nd` lists (before, after) pairs from the last dim backwards.
                    let mut pad = vec![0; 2 * (t.dim() - dim)];
                    pad[2 * (t.dim() - dim) - 1] = padded - size;
                    ops::constant_pad_nd::call(t, &pad, Scalar::Int(0))?
                };
                let mut view = lead.to_vec();
                view.extend([num_chunks, -1]);
                ops::reshape::call(&t, &view)
            })
            .collect::<Result<Vec<_>>>()?;
        ops::cat::call(&parts, dim as i64 + 1)
    }
}
