//! `copy_`: PyTorch's dtype-converting, broadcasting copy on the CPU, registered as the CPU's
//! copy stub (`oxten_runtime::iter::to_dtype` and the iterator's casts run it).

use super::cast_loops::{cast_elem, cast_kernel};
use crate::convert::copy_iter;
use oxten_runtime::device::{Device, MemoryFormat};
use oxten_runtime::error::{Error, Result};
use oxten_runtime::iter::GRAIN_SIZE;
use oxten_runtime::iter::{assert_no_internal_overlap, get_overlap_status, MemOverlapStatus};
use oxten_runtime::iter::{parallel_chunks, SendPtr};
use oxten_runtime::match_dtype;
use oxten_runtime::tensor::Tensor;

/// `dst.copy_(src)`: `src` is broadcast to `dst`'s shape and converted to `dst`'s dtype (any pair
/// of dtypes; see [`CastTo`](super::cast_loops::CastTo) for the rules), over arbitrary strides on both sides.
///
/// * same dtype and same dense layout: one `memcpy` (split across threads when large);
/// * `dst` must not overlap itself (e.g. an expanded tensor); if `src` shares memory with `dst`
///   without being the same elements, `src` is first copied to a temporary.
///
/// ```
/// use oxten_kernels::cpu::copy_;
/// use oxten_runtime::{DType, Device, Tensor};
/// let dst = Tensor::empty_strided(&[2, 2], &[2, 1], DType::I32, Device::Cpu).unwrap();
/// copy_(&dst, &Tensor::from_vec(vec![2.7f32, -2.7], &[2]).unwrap()).unwrap();
/// assert_eq!(dst.to_vec::<i32>().unwrap(), [2, -2, 2, -2]);
/// ```
pub fn copy_(dst: &Tensor, src: &Tensor) -> Result<()> {
    if dst.is_same(src) {
        return Ok(());
    }
    if dst.dim() == 0 && src.dim() == 0 && dst.device() == Device::Cpu && src.device() == Device::Cpu {
        // A CPU scalar (the wrapped number of `x + 2.5`, a threshold, converted to an op's
        // common dtype): converted directly, not through an iterator, which would cost several
        // times the element-wise op itself.
        match_dtype!(src.dtype(), S => match_dtype!(dst.dtype(), D => {
            // SAFETY: a 0-dim CPU tensor's data pointer addresses its one element, of its dtype;
            // the two are distinct tensors (checked above) with one element each, so even
            // sharing a storage they are the same element or none.
            unsafe {
                let v = *(src.data_ptr() as *const S);
                *(dst.data_ptr() as *mut D) = cast_elem::<S, D>(v);
            }
        }));
        return Ok(());
    }
    match (dst.device(), src.device()) {
        (Device::Cpu, Device::Cpu) => {}
        (Device::Cpu, Device::Meta) => return Err(Error::runtime("Cannot copy out of meta tensor; no data!")),
        (d, s) => return Err(Error::device(format!("copy_: cannot copy from {s} to {d}"))),
    }
    assert_no_internal_overlap(dst)?;
    let tmp;
    let src = match get_overlap_status(dst, src) {
        MemOverlapStatus::No => src,
        MemOverlapStatus::Full if dst.dtype() == src.dtype() && dst.sizes() == src.sizes() => return Ok(()),
        _ => {
            tmp = Tensor::empty_deferred(&src.sizes(), src.dtype(), Device::Cpu, MemoryFormat::Contiguous)?;
            copy_(&tmp, src)?;
            &tmp
        }
    };
    if dst.dtype() == src.dtype()
        && dst.sizes() == src.sizes()
        && dst.strides() == src.strides()
        && dst.is_non_overlapping_and_dense()
    {
        memcpy_dense(dst, src);
        return Ok(());
    }
    let iter = copy_iter(dst, src)?;
    cast_kernel(&iter);
    Ok(())
}

/// Copies the dense block of `src` over the one of `dst` (same dtype, sizes and strides).
fn memcpy_dense(dst: &Tensor, src: &Tensor) {
    let nbytes = dst.numel() as usize * dst.dtype().size();
    if nbytes == 0 {
        return;
    }
    // SAFETY: the copy below writes every element of `dst` (all of its dense block), and `dst`
    // is not read meanwhile; `assume_init` follows it.
    let (d, deferred) = unsafe { dst.data_ptr_for_overwrite() };
    let (d, s) = (SendPtr(d), SendPtr(src.data_ptr()));
    let chunk_bytes = GRAIN_SIZE * 8;
    let chunks = parallel_chunks(nbytes, chunk_bytes);
    let step = nbytes.div_ceil(chunks);
    let run = |c: usize| {
        let lo = c * step;
        let len = step.min(nbytes - lo);
        // SAFETY: both tensors are dense with identical strides, so their elements fill
        // `nbytes` bytes from element 0 (strides are non-negative); the ranges do not overlap
        // (checked by copy_), and chunks are disjoint.
        unsafe { std::ptr::copy_nonoverlapping(s.get().add(lo), d.get().add(lo), len) }
    };
    if chunks <= 1 {
        run(0);
    } else {
        oxten_runtime::parallel::for_each(chunks, run);
    }
    if deferred {
        // SAFETY: every element of `dst`, which is all of its storage, was written above.
        unsafe { dst.storage().assume_init() };
    }
}
