//! Data movement that keeps every element: `repeat`, `roll`, `flip`.

use crate::generated::decls::{FlipCpu, FlipMeta, RepeatCompositeExplicit, RollCpu, RollMeta};
use crate::index::common::{for_each_row, match_size, Ptr};
use crate::views::check_sizes_nonnegative;
use crate::{Composite, Cpu, Meta};
use oxten_runtime::{ops, wrap_dim, Error, MemoryFormat, Result, Tensor};

// ---------------------------------------------------------------------------------------------
// repeat
// ---------------------------------------------------------------------------------------------

impl RepeatCompositeExplicit for Composite {
    /// Tiles `self` `repeats[d]` times along each dim (leading dims are added when `repeats` is
    /// longer). Like PyTorch, the result is written through a view of shape
    /// `[r0, s0, r1, s1, …]` that the source, broadcast along the `r` dims, is copied into.
    fn repeat(self_: &Tensor, repeats: &[i64]) -> Result<Tensor> {
        if repeats.len() < self_.dim() {
            return Err(Error::value(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
            ));
        }
        let new_dims = repeats.len() - self_.dim();
        let mut padded: Vec<i64> = vec![1; new_dims];
        padded.extend_from_slice(&self_.sizes());
        let target: Vec<i64> = padded.iter().zip(repeats).map(|(&p, &r)| p * r).collect();
        check_sizes_nonnegative(&target)?;
        let result = ops::empty::call(&target, Some(self_.dtype()), None, Some(self_.device()), None, None)?;
        if repeats.contains(&0) || result.numel() == 0 {
            return Ok(result);
        }
        let rs = result.strides();
        let mut src_strides: Vec<i64> = vec![0; new_dims];
        src_strides.extend_from_slice(&self_.strides());
        let (mut u_sizes, mut u_strides, mut x_strides) = (Vec::new(), Vec::new(), Vec::new());
        for d in 0..repeats.len() {
            u_sizes.extend([repeats[d], padded[d]]);
            u_strides.extend([padded[d] * rs[d], rs[d]]);
            x_strides.extend([0, src_strides[d]]);
        }
        let dst = result.alias_with_layout(&u_sizes, &u_strides, 0)?;
        let src = self_.alias_with_layout(&u_sizes, &x_strides, self_.storage_offset())?;
        // Through the dispatcher: a composite runs on every backend, each with its own copy_.
        ops::copy_::call(&dst, &src, false)?;
        Ok(result)
    }
}

// ---------------------------------------------------------------------------------------------
// roll
// ---------------------------------------------------------------------------------------------

/// PyTorch's `roll`: one dim is a `cat` of the two narrowed pieces (so the result takes `cat`'s
/// memory format), several dims roll one after the other, and no dims rolls the flattened
/// tensor.
fn roll(self_: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
    if dims.len() != 1 || shifts.len() != 1 {
        if shifts.is_empty() {
            return Err(Error::value("`shifts` required"));
        }
        if dims.is_empty() && shifts.len() == 1 {
            let flat = ops::view::call(&ops::contiguous::call(self_, MemoryFormat::Contiguous)?, &[self_.numel()])?;
            return ops::view::call(&roll(&flat, shifts, &[0])?, &self_.sizes());
        }
        if shifts.len() != dims.len() {
            return Err(Error::value(format!(
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            )));
        }
        let first = roll(self_, &shifts[..1], &dims[..1])?;
        return roll(&first, &shifts[1..], &dims[1..]);
    }
    if self_.numel() == 0 {
        return ops::deep_clone::call(self_, Some(MemoryFormat::Preserve));
    }
    let dim = dims[0];
    if self_.dim() == 0 {
        return Err(Error::index(format!("Dimension specified as {dim} but tensor has no dimensions")));
    }
    let size = self_.size(dim)?;
    let mut start = size.wrapping_sub(shifts[0]) % size;
    if start < 0 {
        start += size;
    }
    let t0 = ops::narrow::call(self_, dim, start, size - start)?;
    let t1 = ops::narrow::call(self_, dim, 0, start)?;
    ops::cat::call(&[t0, t1], dim)
}

impl RollCpu for Cpu {
    fn roll(self_: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
        roll(self_, shifts, dims)
    }
}

impl RollMeta for Meta {
    fn roll(self_: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
        roll(self_, shifts, dims)
    }
}

// ---------------------------------------------------------------------------------------------
// flip
// ---------------------------------------------------------------------------------------------

/// `dim_list_to_bitset`: the wrapped dims as flags, refusing repeats.
pub(crate) fn dims_to_flags(dims: &[i64], ndim: usize) -> Result<Vec<bool>> {
    let mut flags = vec![false; ndim.max(1)];
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if flags[w] {
            return Err(Error::value(format!("dim {w} appears multiple times in the list of dims")));
        }
        flags[w] = true;
    }
    Ok(flags)
}

/// `flip`'s checked dims (as flags) and its result, laid out like `self` (`empty_like`,
/// preserve): all the Meta kernel does.
fn flip_output(self_: &Tensor, dims: &[i64]) -> Result<(Vec<bool>, Tensor)> {
    let flags = dims_to_flags(dims, self_.dim())?;
    Ok((flags, ops::empty_like::call(self_, None, None, None, None, Some(MemoryFormat::Preserve))?))
}

/// Reverses `self` along `dims` on the CPU.
fn flip(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let (flags, out) = flip_output(self_, dims)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let (sizes, src_strides) = (self_.sizes(), self_.strides());
    let mut start = 0i64;
    let mut strides: Vec<i64> = src_strides.to_vec();
    for d in 0..self_.dim() {
        if flags[d] && sizes[d] > 1 {
            start += (sizes[d] - 1) * src_strides[d];
            strides[d] = -src_strides[d];
        }
    }
    let es = self_.dtype().size();
    // SAFETY: `start` plus the negated strides address exactly the elements of `self` (each
    // flipped dim starts at its last index and walks back to 0).
    let src = Ptr(unsafe { self_.data_ptr().offset(start as isize * es as isize) });
    strided_copy(&out, &sizes, &strides, src);
    Ok(out)
}

/// Copies the elements of a source with geometry (`sizes`, `src_strides`) starting at `src`
/// into `out` (same sizes, its own strides), row by row, in parallel for large tensors.
pub(crate) fn strided_copy(out: &Tensor, sizes: &[i64], src_strides: &[i64], src: Ptr) {
    let es = out.dtype().size();
    let out_strides = out.strides();
    let nd = sizes.len();
    let (ds, ss) = if nd == 0 { (1, 1) } else { (out_strides[nd - 1] as isize, src_strides[nd - 1] as isize) };
    let n = if nd == 0 { 1 } else { sizes[nd - 1] as usize };
    let dst = Ptr(out.data_ptr());
    match_size!(es, T => for_each_row(sizes, [&out_strides, src_strides], true, |[o, s], _| {
        // SAFETY: `o` and `s` are element offsets of row starts inside `out` and the source, and
        // the row has `n` elements at strides `ds` and `ss`; rows of `out` are disjoint.
        unsafe {
            let d = (dst.get() as *mut T).offset(o);
            let sp = (src.get() as *const T).offset(s);
            for i in 0..n as isize {
                *d.offset(i * ds) = *sp.offset(i * ss);
            }
        }
    }));
}

impl FlipCpu for Cpu {
    fn flip(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
        flip(self_, dims)
    }
}

impl FlipMeta for Meta {
    fn flip(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
        Ok(flip_output(self_, dims)?.1)
    }
}
