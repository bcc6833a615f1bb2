//! Memory-overlap checks (PyTorch's `MemoryOverlap.cpp`). Exact detection is a Diophantine
//! problem, so both checks may answer "too hard", which callers treat as "no error".

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Whether a tensor has two indices that address the same element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemOverlap {
    No,
    Yes,
    TooHard,
}

/// How the memory of two tensors relates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemOverlapStatus {
    /// The same elements in the same order (in-place aliasing: legal).
    Full,
    /// Some but not all elements shared, or shared in another order.
    Partial,
    TooHard,
    No,
}

const INTERNAL_OVERLAP_MSG: &str = "unsupported operation: more than one element of the written-to tensor refers to a \
     single memory location. Please clone() the tensor before performing the operation.";

const PARTIAL_OVERLAP_MSG: &str = "unsupported operation: some elements of the input tensor and the written-to tensor \
     refer to a single memory location. Please clone() the tensor before performing the operation.";

/// `has_internal_overlap`: dense tensors never overlap; a stride-0 dim of size > 1 always does;
/// otherwise dims sorted by stride must each step past everything the smaller dims span.
pub fn has_internal_overlap(t: &Tensor) -> MemOverlap {
    let l = t.layout();
    if l.is_non_overlapping_and_dense() {
        return MemOverlap::No;
    }
    let mut dims: Vec<(i64, i64)> =
        l.sizes.iter().zip(l.strides.iter()).filter(|(&s, _)| s > 1).map(|(&s, &st)| (st.abs(), s)).collect();
    if dims.iter().any(|&(st, _)| st == 0) {
        return MemOverlap::Yes;
    }
    dims.sort_unstable();
    let mut span = 0i64; // max offset reachable with the dims seen so far
    for (st, s) in dims {
        if st <= span {
            return MemOverlap::TooHard;
        }
        span += (s - 1) * st;
    }
    MemOverlap::No
}

/// Errors if writing to `t` would write some element twice.
pub fn assert_no_internal_overlap(t: &Tensor) -> Result<()> {
    if has_internal_overlap(t) == MemOverlap::Yes {
        return Err(Error::overlap(INTERNAL_OVERLAP_MSG));
    }
    Ok(())
}

/// Byte range `[begin, end)` of the storage that a tensor's elements touch.
fn byte_range(t: &Tensor) -> (i64, i64) {
    let l = t.layout();
    let es = t.dtype().size() as i64;
    let (mut lo, mut hi) = (l.offset, l.offset);
    for (&s, &st) in l.sizes.iter().zip(l.strides.iter()) {
        let ext = (s - 1) * st;
        if ext < 0 {
            lo += ext;
        } else {
            hi += ext;
        }
    }
    (lo * es, (hi + 1) * es)
}

/// `get_overlap_status(a, b)`.
pub fn get_overlap_status(a: &Tensor, b: &Tensor) -> MemOverlapStatus {
    if a.is_same(b) {
        return MemOverlapStatus::Full;
    }
    if a.numel() == 0 || b.numel() == 0 || !a.storage().is_alias_of(b.storage()) {
        return MemOverlapStatus::No;
    }
    let (ab, ae) = byte_range(a);
    let (bb, be) = byte_range(b);
    if ae <= bb || be <= ab {
        return MemOverlapStatus::No;
    }
    if !a.is_non_overlapping_and_dense() || !b.is_non_overlapping_and_dense() {
        return MemOverlapStatus::TooHard;
    }
    if ab == bb && ae == be && a.dtype().size() == b.dtype().size() && a.strides() == b.strides() {
        return MemOverlapStatus::Full;
    }
    MemOverlapStatus::Partial
}

/// Errors if `a` and `b` share some, but not all, of their elements.
pub fn assert_no_partial_overlap(a: &Tensor, b: &Tensor) -> Result<()> {
    if get_overlap_status(a, b) == MemOverlapStatus::Partial {
        return Err(Error::overlap(PARTIAL_OVERLAP_MSG));
    }
    Ok(())
}

/// Errors if `a` and `b` share any element (full aliasing included).
pub fn assert_no_overlap(a: &Tensor, b: &Tensor) -> Result<()> {
    match get_overlap_status(a, b) {
        MemOverlapStatus::Partial | MemOverlapStatus::Full => Err(Error::overlap(PARTIAL_OVERLAP_MSG)),
        _ => Ok(()),
    }
}
