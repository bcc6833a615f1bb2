//! TensorIterator: the shared setup behind every elementwise and reduction kernel.
//!
//! A kernel describes its operands with a [`TensorIteratorConfig`] (outputs first, then inputs)
//! and builds a [`TensorIterator`]. Building follows PyTorch's order:
//!
//! 1. operands (an output that is also an input is read-write; any meta operand makes the whole
//!    iteration meta, and then no data is ever touched);
//! 2. memory overlap checks (internal overlap of outputs, partial overlap output/input);
//! 3. the broadcast shape (sizes aligned from the right);
//! 4. which outputs get resized;
//! 5. dtypes: the common dtype with PyTorch's precedence (dimensioned tensors > 0-dim tensors >
//!    wrapped scalars), safe-casting checks, CPU temporaries for mismatched inputs/outputs;
//! 6. the fast path (all operands the same shape and one dense layout) or the general path:
//!    strides, stride-sorted dim order, output allocation, coalescing.
//!
//! Outputs are allocated through [`StructuredOutputs::set_output`], the hook that the
//! structured-kernel wrappers (functional / inplace / out) customise.
//!
//! Kernels then run typed loops ([`cpu_kernel_binary`] …) or reductions ([`reduce_kernel`],
//! [`sum_kernel`], [`reduce_with_index_kernel`]). [`copy_`] converts between any two dtypes.
//!
//! A structured `add.out` — one meta function, three variants:
//!
//! ```
//! use oxten_runtime::iter::{binary_op_config, cpu_kernel_binary, StructuredOutputs, TensorIterator};
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
mod build;
mod cast_loops;
mod config;
mod copy;
mod dtypes;
mod iterator;
mod loops;
mod operand;
mod opmath;
mod outputs;
mod overlap;
mod reduce;
mod reduce_plan;
mod simd;
mod small;
mod strides;
mod sum;

pub use argreduce::reduce_with_index_kernel;
pub use cast_loops::{transpose_4byte, CastTo};
pub use config::{
    binary_float_op_config, binary_op_config, comparison_op_config, nullary_op_config, reduce_op_config,
    ternary_op_config, unary_float_op_config, unary_op_config, wrapped_scalar_tensor, TensorIteratorConfig,
};
pub use copy::{copy_, to_dtype};
pub(crate) use dtypes::result_type as result_type_raw;
pub use dtypes::{infer_size, scalar_type_name};
pub use iterator::TensorIterator;
pub use loops::{
    cpu_kernel_binary, cpu_kernel_binary_math, cpu_kernel_nullary, cpu_kernel_ternary, cpu_kernel_ternary_math,
    cpu_kernel_unary, cpu_kernel_unary_math,
};
pub use opmath::OpMath;
pub use outputs::{OutputMode, StructuredOutputs};
pub use overlap::{get_overlap_status, has_internal_overlap, MemOverlap, MemOverlapStatus};
pub use reduce::{
    check_reduction_nonempty, make_reduction, reduce_kernel, reduction_output_shape, review_reduce_result,
};
pub use simd::{detected_simd_level, set_simd_level, simd_level, SimdLevel};
pub use sum::sum_kernel;

/// Below this many elements a loop runs on the calling thread (PyTorch's `GRAIN_SIZE`).
pub const GRAIN_SIZE: usize = 32768;
