//! The CUDA backend's user-facing controls (`torch.cuda`): availability, memory statistics of
//! the caching allocator, streams and events, TF32, and the kernel compiler's cache.
//!
//! Tensors move with `Tensor::to_device(Device::Cuda(0))`, `Tensor::cpu()`, or are made there by
//! factories with `device=`; every operator with a CUDA kernel then runs on the GPU, and autograd
//! works unchanged.

pub use oxten_kernels::cuda::{
    allow_tf32, compile_stats, default_generator, manual_seed, set_allow_tf32, CompileStats,
};
pub use oxten_runtime::alloc::caching::MemoryStats;
pub use oxten_runtime::cuda::{
    compute_capability, current_stream, device_count, device_name, empty_cache, is_available, max_memory_allocated,
    memory_allocated, memory_reserved, memory_stats, reset_peak_memory_stats, set_current_stream, synchronize,
    unavailable_because, Event, Stream, StreamGuard,
};

/// `tensor.record_stream(stream)`: the tensor's memory is not reused before the work queued on
/// `stream` up to the moment it is freed has run.
pub fn record_stream(t: &crate::Tensor, stream: Stream) {
    oxten_runtime::cuda::record_stream(t.storage().data_ptr(), t.device(), stream);
}
