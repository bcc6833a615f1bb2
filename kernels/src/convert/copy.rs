//! `copy_`: broadcasting, dtype-converting copy into `self`.

use crate::generated::decls::{CopyInplaceCpu, CopyInplaceMeta};
use crate::iter;
use oxten_runtime::iter::{TensorIterator, TensorIteratorConfig};
use oxten_runtime::{alloc, Device, Error, Result, Tensor};

impl CopyInplaceCpu for crate::Cpu {
    /// Copies `src` (broadcast to `self`'s shape, converted to its dtype) into `self`. A `self`
    /// whose elements overlap is an error, and a `src` sharing memory with it is read through a
    /// temporary. A `src` on another device (other than a 0-dim CPU scalar, which any device
    /// reads) goes through the copy kernel registered for the pair ([`alloc::copy_between`]).
    /// The CPU has no asynchronous copies, so `non_blocking` changes nothing here.
    fn copy_(self_: &Tensor, src: &Tensor, non_blocking: bool) -> Result<Tensor> {
        if self_.device() != src.device() && !(src.dim() == 0 && src.device() == Device::Cpu) {
            alloc::copy_between(self_, src, non_blocking)?;
        } else {
            iter::copy_(self_, src)?;
        }
        Ok(self_.clone())
    }
}

impl CopyInplaceMeta for crate::Meta {
    /// Runs when either tensor is meta: into a meta `self` only the shapes are checked; out of a
    /// meta `src` into real memory is an error ("no data").
    fn copy_(self_: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<Tensor> {
        if !self_.is_meta() {
            return Err(Error::runtime("Cannot copy out of meta tensor; no data!"));
        }
        if !self_.is_same(src) {
            iter::assert_no_internal_overlap(self_)?;
            copy_iter(self_, src)?;
        }
        Ok(self_.clone())
    }
}

/// The iteration of `dst.copy_(src)`: `src` broadcast to `dst`'s shape (which is never
/// resized), any two dtypes and devices. Building it is all the Meta kernel does.
pub fn copy_iter(dst: &Tensor, src: &Tensor) -> Result<TensorIterator> {
    TensorIteratorConfig::new()
        .add_output(dst)
        .resize_outputs(false)
        .check_all_same_dtype(false)
        .check_all_same_device(false)
        .check_mem_overlap(false)
        .add_input(src)
        .build()
}
