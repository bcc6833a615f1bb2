//! A CPU tensor's elements borrowed as a slice, for the hand-written kernels that loop over
//! plain slices. (Its own file: it calls no operator, so the selective build's file-level
//! search gains nothing by reaching it.)

use oxten_runtime::{Error, Result, Tensor};

/// The elements of a contiguous CPU tensor of element type `T`, borrowed; an error naming `op`
/// for any other tensor. Empty for an empty tensor (whose data pointer may be null).
pub(crate) fn contiguous_slice<'t, T: oxten_runtime::Element>(op: &str, t: &'t Tensor) -> Result<&'t [T]> {
    if t.dtype() != T::DTYPE || t.device() != oxten_runtime::Device::Cpu || !t.is_contiguous() {
        return Err(Error::runtime(format!(
            "{op}: expected a contiguous CPU {} tensor, got a {} tensor on {}",
            T::DTYPE,
            t.dtype(),
            t.device()
        )));
    }
    if t.numel() == 0 {
        return Ok(&[]);
    }
    // SAFETY: checked above: a contiguous CPU tensor of element type `T`, whose `numel`
    // elements start at `data_ptr` and stay alive (and unwritten) while `t` is borrowed.
    Ok(unsafe { std::slice::from_raw_parts(t.data_ptr().cast::<T>().cast_const(), t.numel() as usize) })
}
