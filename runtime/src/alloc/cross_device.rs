//! Copy kernels between device types, one per (source, destination) pair.
//!
//! `copy_` runs on the backend of the highest dispatch key among its tensors; when the two
//! tensors are on different devices, that kernel hands the copy to the kernel registered here
//! for the pair, so moving data between devices is one function per pair instead of a branch in
//! every backend's `copy_`.

use crate::device::DeviceType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use std::sync::RwLock;

/// Copies `src` into `dst` (same sizes after broadcasting, any dtypes), the two on different
/// devices; `non_blocking` as in `copy_`.
pub type CopyFn = fn(dst: &Tensor, src: &Tensor, non_blocking: bool) -> Result<()>;

static COPIES: RwLock<Vec<(DeviceType, DeviceType, CopyFn)>> = RwLock::new(Vec::new());

/// Registers the copy kernel from `src` devices to `dst` devices (replacing any before it).
pub fn register_copy(src: DeviceType, dst: DeviceType, f: CopyFn) {
    let mut copies = COPIES.write().unwrap_or_else(|e| e.into_inner());
    copies.retain(|(s, d, _)| (*s, *d) != (src, dst));
    copies.push((src, dst, f));
}

/// The copy kernel registered from `src` to `dst`, if any.
pub fn find_copy(src: DeviceType, dst: DeviceType) -> Option<CopyFn> {
    let copies = COPIES.read().unwrap_or_else(|e| e.into_inner());
    copies.iter().find(|(s, d, _)| (*s, *d) == (src, dst)).map(|(_, _, f)| *f)
}

/// Copies `src` into `dst` across devices through the registered kernel; an error naming both
/// devices when there is none.
pub fn copy_between(dst: &Tensor, src: &Tensor, non_blocking: bool) -> Result<()> {
    let (s, d) = (src.device(), dst.device());
    let f = find_copy(s.device_type(), d.device_type()).ok_or_else(|| {
        Error::device(format!(
            "copy_: no copy kernel from {s} to {d} is registered (a backend registers one with \
             oxten_runtime::alloc::register_copy)"
        ))
    })?;
    f(dst, src, non_blocking)
}
