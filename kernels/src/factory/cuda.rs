//! `empty`, `empty_strided` and `fill_` on CUDA.

use super::empty::{check_not_pinned, check_strided, empty_on, empty_strided_on};
use super::scalar_to;
use crate::cuda::pointwise::{launch_pointwise, PointwiseKernel};
use crate::generated::decls::{EmptyCuda, EmptyStridedCuda, FillInplaceCuda};
use oxten_runtime::{match_dtype, DType, Device, Layout, MemoryFormat, Result, Scalar, Tensor, TensorIteratorConfig};

fn cuda_device(device: Option<Device>) -> Device {
    match device {
        Some(d @ Device::Cuda(_)) => d,
        _ => Device::Cuda(0),
    }
}

impl EmptyCuda for crate::Cuda {
    /// Device memory from the caching allocator (read as zeros until written, like on the CPU).
    fn empty(
        size: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
        memory_format: Option<MemoryFormat>,
    ) -> Result<Tensor> {
        check_strided(layout)?;
        check_not_pinned(pin_memory)?;
        empty_on(size, dtype, memory_format, cuda_device(device))
    }
}

impl EmptyStridedCuda for crate::Cuda {
    fn empty_strided(
        size: &[i64],
        stride: &[i64],
        dtype: Option<DType>,
        layout: Option<Layout>,
        device: Option<Device>,
        pin_memory: Option<bool>,
    ) -> Result<Tensor> {
        check_strided(layout)?;
        check_not_pinned(pin_memory)?;
        empty_strided_on(size, stride, dtype, cuda_device(device))
    }
}

static FILL: PointwiseKernel =
    PointwiseKernel { op: "fill_.Scalar", expr: "a1", arity: 1, float_only: false, int_only: false, bool_ok: true };

impl FillInplaceCuda for crate::Cuda {
    /// The value, checked and converted like on the CPU, is passed to a kernel by value.
    fn fill_(self_: &Tensor, value: Scalar) -> Result<Tensor> {
        let v = match_dtype!(self_.dtype(), T => Tensor::scalar(scalar_to::<T>(value)?));
        let iter = TensorIteratorConfig::new()
            .add_output(self_)
            .add_input(&v)
            .resize_outputs(false)
            .check_mem_overlap(false)
            .check_all_same_device(false)
            .build()?;
        launch_pointwise(&iter, &FILL, &[])?;
        Ok(self_.clone())
    }
}
