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
//! Kernels then run loops over the built iterator: the CPU's are in `oxten_kernels::cpu` (typed
//! elementwise loops, SIMD dispatch, casts and copies, reductions and arg-reductions), and
//! another backend brings its own. This module is device-agnostic except for two things that
//! PyTorch's TensorIterator also does: the 2-D drivers [`TensorIterator::for_each`] and
//! [`TensorIterator::serial_for_each`] that host loops are run by (parallel through
//! [`crate::parallel`]), and the CPU temporaries that carry a common dtype into kernels that
//! compute in one dtype.
//!
//! A structured op's meta function builds the iterator; the kernel of each backend then runs
//! over it, and the wrapper casts the results back:
//!
//! ```
//! use oxten_runtime::iter::{binary_op_config, StructuredOutputs};
//! use oxten_runtime::Tensor;
//! let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
//! let b = Tensor::from_vec(vec![10.0f32], &[1]).unwrap();
//! // add(a, b): [2] and [1] broadcast to [2]. (Mixed dtypes would be converted to the common
//! // one here, by the device's registered copy stub.)
//! let mut outs = StructuredOutputs::functional(1);
//! let iter = binary_op_config().add_input(&a).add_input(&b).build_structured(&mut outs).unwrap();
//! assert_eq!((iter.shape(), iter.common_dtype()), (&[2i64][..], oxten_runtime::DType::F32));
//! assert_eq!(outs.output(0).sizes()[..], [2]);
//! ```

mod build;
mod config;
mod copy_stub;
mod dtypes;
mod iterator;
mod operand;
mod outputs;
mod overlap;
mod reduce_setup;
mod small;
mod strides;

pub use config::{
    binary_float_op_config, binary_op_config, comparison_op_config, nullary_op_config, reduce_op_config,
    ternary_op_config, unary_float_op_config, unary_op_config, wrapped_scalar_tensor, TensorIteratorConfig,
};
pub use copy_stub::{copy_stub, register_copy_stub, to_dtype, CopyStub};
pub(crate) use dtypes::result_type as result_type_raw;
pub use dtypes::{infer_size, scalar_type_name};
pub use iterator::{parallel_chunks, SendPtr, TensorIterator};
pub use outputs::{check_out_input_keeps_sizes, OutputMode, StructuredOutputs};
pub use overlap::{
    assert_no_internal_overlap, assert_no_overlap, assert_no_partial_overlap, get_overlap_status, has_internal_overlap,
    MemOverlap, MemOverlapStatus,
};
pub use reduce_setup::{check_reduction_nonempty, make_reduction, reduction_output_shape, review_reduce_result};

/// Below this many elements a loop runs on the calling thread (PyTorch's `GRAIN_SIZE`).
pub const GRAIN_SIZE: usize = 32768;
