//! The CPU backend's loops over a built [`TensorIterator`](oxten_runtime::iter::TensorIterator):
//! typed elementwise loops with contiguous, broadcast-scalar and strided paths ([`loops`]),
//! run-time SIMD dispatch ([`simd_level`]), dtype conversions and copies ([`copy_`], also the
//! CPU's copy stub), reductions ([`reduce_kernel`], [`sum_kernel`]) and arg-reductions
//! ([`reduce_with_index_kernel`]). The iterator's setup (shapes, strides, promotion, output
//! allocation) is device-agnostic and lives in `oxten_runtime::iter`; a CUDA backend puts its
//! own loops over the same iterator beside this folder.
//!
//! A structured `add.out` — one meta function, three variants:
//!
//! ```
//! use oxten_kernels::cpu::cpu_kernel_binary;
//! use oxten_runtime::iter::{binary_op_config, StructuredOutputs, TensorIterator};
//! use oxten_runtime::{Result, Scalar, Tensor};
//!
//! // meta: shapes, dtypes, overlap checks, and set_output for whichever variant runs.
//! fn add_meta(a: &Tensor, b: &Tensor, alpha: Scalar, outs: &mut StructuredOutputs) -> Result<TensorIterator> {
//!     let _ = alpha; // checked against the common dtype in a real op
//!     binary_op_config().add_input(a).add_input(b).build_structured(outs)
//! }
//! // impl: the kernel (dispatching on iter.common_dtype() in a real op), then cast back.
//! fn add_impl(iter: &TensorIterator, alpha: f32) -> Result<()> {
//!     cpu_kernel_binary::<f32, f32, f32>(iter, move |x, y| x + alpha * y);
//!     iter.cast_outputs()
//! }
//! oxten_kernels::cpu::register();
//! let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
//! let b = Tensor::from_vec(vec![10.0f32], &[1]).unwrap();
//! // functional: add(a, b)
//! let mut outs = StructuredOutputs::functional(1);
//! add_impl(&add_meta(&a, &b, Scalar::Int(1), &mut outs).unwrap(), 1.0).unwrap();
//! let c = outs.into_outputs().remove(0);
//! // inplace: a.add_(b)
//! let mut outs = StructuredOutputs::inplace(&a);
//! add_impl(&add_meta(&a, &b, Scalar::Int(1), &mut outs).unwrap(), 1.0).unwrap();
//! // out: add(a, b, out=o) with an f64 `o` of the wrong size (resized, computed via a temporary)
//! let o = Tensor::from_vec(vec![0.0f64; 5], &[5]).unwrap();
//! let mut outs = StructuredOutputs::out(&[&o]);
//! add_impl(&add_meta(&a, &c, Scalar::Int(1), &mut outs).unwrap(), 1.0).unwrap();
//! assert_eq!(c.to_vec::<f32>().unwrap(), [11.0, 12.0]);
//! assert_eq!(a.to_vec::<f32>().unwrap(), [11.0, 12.0]);
//! assert_eq!(o.to_vec::<f64>().unwrap(), [22.0, 24.0]);
//! ```

mod argreduce;
mod cast_loops;
mod copy;
mod loops;
mod opmath;
mod reduce;
mod reduce_plan;
pub(crate) mod simd;
mod slices;
mod sum;

pub use argreduce::reduce_with_index_kernel;
pub use cast_loops::{transpose_4byte, CastTo};
pub use copy::copy_;
pub use loops::{
    cpu_kernel_binary, cpu_kernel_binary_math, cpu_kernel_nullary, cpu_kernel_ternary, cpu_kernel_ternary_math,
    cpu_kernel_unary, cpu_kernel_unary_math,
};
pub use opmath::OpMath;
pub use reduce::reduce_kernel;
pub use simd::{detected_simd_level, set_simd_level, simd_level, SimdLevel};
pub(crate) use slices::contiguous_slice;
pub use sum::sum_kernel;

/// Registers what the device-agnostic runtime calls on the CPU: its copy stub. `oxten::init`
/// calls it with the kernels' registrations; calling it again changes nothing.
pub fn register() {
    oxten_runtime::iter::register_copy_stub(oxten_runtime::DeviceType::Cpu, copy_);
}
