//! Copies and conversions: `copy_` (the kernel), `_to_copy`, `to.dtype`, `clone`,
//! `contiguous`.
//!
//! Only `copy_` touches data; the rest allocate with the factories and copy, as in PyTorch, so
//! the same code serves meta tensors. "Preserve format" allocations share
//! [`crate::factory::empty_preserving`] with `empty_like`.

mod clone;
mod copy;
pub(crate) use copy::copy_iter;
#[cfg(feature = "cuda")]
pub(crate) mod cuda;
mod scalar_value;
mod to;
