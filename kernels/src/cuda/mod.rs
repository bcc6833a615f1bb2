//! The CUDA backend's shared machinery: the CUDA C prelude every kernel is compiled with,
//! run-time compilation and its caches ([`nvrtc`]), kernel instances and launches
//! ([`launch`]), and the loops of generated pointwise kernels ([`pointwise`]). The kernels of
//! each operator family live beside their CPU kernels (`factory/cuda.rs`, `convert/cuda.rs`,
//! `reduce/cuda.rs`, `linalg/cuda.rs`).

pub mod launch;
pub mod nvrtc;
pub mod pointwise;
pub mod reduce;

pub use crate::linalg::cuda::{allow_tf32, set_allow_tf32};
pub use crate::random::cuda::{default_generator, manual_seed};
pub use nvrtc::{compile_stats, CompileStats};

use oxten_runtime::{alloc, iter, DeviceType};

/// The CUDA C every kernel starts with: storage types of the half dtypes and bool, conversions,
/// and the math functions of pointwise expressions with the CPU kernels' semantics.
pub const PRELUDE: &str = include_str!("prelude.cu");

/// Registers what the runtime calls on CUDA tensors: the caching allocator, the copies to and
/// from the CPU, and the copy stub. `oxten::init` calls it; it needs no GPU (allocating one
/// then reports that CUDA is not available).
pub fn register() {
    alloc::register_allocator(DeviceType::Cuda, &oxten_runtime::cuda::ALLOCATOR);
    alloc::register_copy(DeviceType::Cpu, DeviceType::Cuda, crate::convert::cuda::copy_from_cpu);
    alloc::register_copy(DeviceType::Cuda, DeviceType::Cpu, crate::convert::cuda::copy_to_cpu);
    iter::register_copy_stub(DeviceType::Cuda, crate::convert::cuda::copy_same_device);
}
