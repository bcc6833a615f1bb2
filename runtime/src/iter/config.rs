//! `TensorIteratorConfig`: the builder that describes a kernel's operands and rules, and the
//! presets PyTorch's `build_*_op` helpers use.

use super::build;
use super::iterator::TensorIterator;
use super::outputs::StructuredOutputs;
use super::small::SmallVec;
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// Describes the operands of an elementwise or reduction kernel and how to treat them.
/// Outputs are added before inputs. See the [module docs](super) for the build order.
///
/// ```
/// use oxten_runtime::iter::{binary_op_config, StructuredOutputs};
/// use oxten_runtime::Tensor;
/// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let b = Tensor::from_vec(vec![10.0f32], &[1]).unwrap();
/// let mut outs = StructuredOutputs::functional(1);
/// let iter = binary_op_config().add_input(&a).add_input(&b).build_structured(&mut outs).unwrap();
/// // A backend's loop then runs over it (`oxten_kernels::cpu::cpu_kernel_binary` on the CPU).
/// assert_eq!((iter.ninputs(), iter.noutputs(), outs.output(0).sizes()[..].to_vec()), (2, 1, vec![3]));
/// ```
#[derive(Clone)]
pub struct TensorIteratorConfig {
    pub(crate) outputs: Vec<Tensor>,
    /// Inputs with their wrapped-number flag.
    pub(crate) inputs: SmallVec<(Tensor, bool), 4>,
    /// An output was added after an input (reported by `build`).
    pub(crate) misordered: bool,
    pub(crate) check_mem_overlap: bool,
    pub(crate) check_all_same_dtype: bool,
    pub(crate) check_all_same_device: bool,
    pub(crate) promote_inputs_to_common_dtype: bool,
    pub(crate) promote_integer_inputs_to_float: bool,
    pub(crate) cast_common_dtype_to_outputs: bool,
    pub(crate) enforce_safe_casting_to_output: bool,
    pub(crate) allow_cpu_scalars: bool,
    pub(crate) resize_outputs: bool,
    pub(crate) is_reduction: bool,
    pub(crate) enforce_linear_iteration: bool,
    pub(crate) static_dtype: Option<DType>,
    pub(crate) static_shape: Option<Vec<i64>>,
}

impl Default for TensorIteratorConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl TensorIteratorConfig {
    /// A config with PyTorch's defaults: overlap checks on, same-dtype check on, outputs resized.
    #[inline]
    pub fn new() -> Self {
        TensorIteratorConfig {
            outputs: Vec::new(),
            inputs: SmallVec::new(),
            misordered: false,
            check_mem_overlap: true,
            check_all_same_dtype: true,
            check_all_same_device: true,
            promote_inputs_to_common_dtype: false,
            promote_integer_inputs_to_float: false,
            cast_common_dtype_to_outputs: false,
            enforce_safe_casting_to_output: false,
            allow_cpu_scalars: false,
            resize_outputs: true,
            is_reduction: false,
            enforce_linear_iteration: false,
            static_dtype: None,
            static_shape: None,
        }
    }

    /// Adds an existing output tensor (for callers that are not structured kernels, e.g.
    /// `copy_`). Outputs must come before inputs.
    #[inline]
    pub fn add_output(mut self, t: &Tensor) -> Self {
        if !self.inputs.is_empty() {
            self.misordered = true;
        }
        self.outputs.push(t.clone());
        self
    }

    #[inline]
    pub fn add_input(mut self, t: &Tensor) -> Self {
        self.inputs.push((t.clone(), false));
        self
    }

    /// Adds a Rust scalar as a 0-dim "wrapped number" input: it takes part in type promotion only
    /// through its category (`i32_tensor + 2.5` is f32, `f16_tensor + 2.5` stays f16), and it is
    /// allowed whatever the iteration's device.
    #[inline]
    pub fn add_input_scalar(self, s: Scalar) -> Self {
        self.add_wrapped_input(&wrapped_scalar_tensor(s))
    }

    /// Adds a 0-dim tensor that stands for a scalar (see [`add_input_scalar`](Self::add_input_scalar)).
    #[inline]
    pub fn add_wrapped_input(mut self, t: &Tensor) -> Self {
        self.inputs.push((t.clone(), true));
        self
    }

    /// Outputs may not overlap themselves or partially overlap an input (default true).
    #[inline]
    pub fn check_mem_overlap(mut self, v: bool) -> Self {
        self.check_mem_overlap = v;
        self
    }

    /// All inputs and given outputs must share one dtype (default true).
    #[inline]
    pub fn check_all_same_dtype(mut self, v: bool) -> Self {
        self.check_all_same_dtype = v;
        self
    }

    /// All operands must be on one device (default true; wrapped scalars are exempt, and 0-dim
    /// CPU inputs too when [`allow_cpu_scalars`](Self::allow_cpu_scalars) is set).
    #[inline]
    pub fn check_all_same_device(mut self, v: bool) -> Self {
        self.check_all_same_device = v;
        self
    }

    /// The common dtype is the promotion of the inputs; on CPU, inputs of another dtype are
    /// copied to it. Turns off the same-dtype check.
    #[inline]
    pub fn promote_inputs_to_common_dtype(mut self, v: bool) -> Self {
        self.promote_inputs_to_common_dtype = v;
        if v {
            self.check_all_same_dtype = false;
        }
        self
    }

    /// An integral or bool common dtype becomes the default float dtype (`div`, `sqrt` …).
    #[inline]
    pub fn promote_integer_inputs_to_float(mut self, v: bool) -> Self {
        self.promote_integer_inputs_to_float = v;
        self
    }

    /// A given output of another dtype is computed into a temporary of the common dtype, which
    /// [`TensorIterator::cast_outputs`] copies back. Turns off the same-dtype check.
    #[inline]
    pub fn cast_common_dtype_to_outputs(mut self, v: bool) -> Self {
        self.cast_common_dtype_to_outputs = v;
        if v {
            self.check_all_same_dtype = false;
        }
        self
    }

    /// Error unless `can_cast(common dtype, output dtype)` for every given output.
    #[inline]
    pub fn enforce_safe_casting_to_output(mut self, v: bool) -> Self {
        self.enforce_safe_casting_to_output = v;
        self
    }

    /// 0-dim CPU inputs are allowed in a non-CPU (e.g. meta) iteration.
    #[inline]
    pub fn allow_cpu_scalars(mut self, v: bool) -> Self {
        self.allow_cpu_scalars = v;
        self
    }

    /// Given, write-only outputs of the wrong shape are resized (default true). When false,
    /// outputs take part in broadcasting and must have the broadcast shape.
    #[inline]
    pub fn resize_outputs(mut self, v: bool) -> Self {
        self.resize_outputs = v;
        self
    }

    /// Outputs have size 1 on reduced dims and are iterated with stride 0 there.
    #[inline]
    pub fn is_reduction(mut self, v: bool) -> Self {
        self.is_reduction = v;
        self
    }

    /// Iterate in row-major order of the broadcast shape, never permuting dims.
    #[inline]
    pub fn enforce_linear_iteration(mut self, v: bool) -> Self {
        self.enforce_linear_iteration = v;
        self
    }

    /// The dtype of allocated outputs (e.g. bool for comparisons). Turns off the same-dtype
    /// check (PyTorch requires that to be done first; here it is implied).
    #[inline]
    pub fn declare_static_dtype(mut self, d: DType) -> Self {
        self.static_dtype = Some(d);
        self.check_all_same_dtype = false;
        self
    }

    /// The iteration shape, instead of broadcasting the operands (inputs must broadcast to it).
    #[inline]
    pub fn declare_static_shape(mut self, shape: &[i64]) -> Self {
        self.static_shape = Some(shape.to_vec());
        self
    }

    /// Builds with the outputs given by [`add_output`](Self::add_output) (PyTorch's own
    /// `set_output`: given outputs are checked like `out=` tensors and resized when allowed).
    #[inline]
    pub fn build(mut self) -> Result<TensorIterator> {
        let mut outs = StructuredOutputs::from_given(std::mem::take(&mut self.outputs).into_iter().map(Some));
        build::build(self, &mut outs)
    }

    /// Builds for a structured kernel: output `i` is `outs.maybe_get_output(i)` for the overlap,
    /// shape and dtype checks, and `outs.set_output(i, ..)` is called with the computed sizes,
    /// strides, dtype and device; the kernel then writes `outs.output(i)` (or a temporary that
    /// [`TensorIterator::cast_outputs`] copies back). Do not call `add_output` as well.
    #[inline]
    pub fn build_structured(self, outs: &mut StructuredOutputs) -> Result<TensorIterator> {
        if !self.outputs.is_empty() {
            return Err(crate::Error::value(
                "build_structured: the outputs come from StructuredOutputs; do not also call add_output",
            ));
        }
        build::build(self, outs)
    }
}

/// A 0-dim CPU tensor holding `s` (bool, i64 or f64), to pass as a wrapped number through
/// [`TensorIteratorConfig::add_wrapped_input`].
#[inline]
pub fn wrapped_scalar_tensor(s: Scalar) -> Tensor {
    match s {
        Scalar::Bool(b) => Tensor::scalar(b),
        Scalar::Int(i) => Tensor::scalar(i),
        Scalar::Float(f) => Tensor::scalar(f),
    }
}

/// `build_binary_op`: overlap checks, CPU scalars, promotion, casting to outputs, safe casting.
#[inline]
pub fn binary_op_config() -> TensorIteratorConfig {
    TensorIteratorConfig::new()
        .check_mem_overlap(true)
        .allow_cpu_scalars(true)
        .promote_inputs_to_common_dtype(true)
        .cast_common_dtype_to_outputs(true)
        .enforce_safe_casting_to_output(true)
}

/// `build_binary_float_op`: [`binary_op_config`] with integer inputs promoted to float (`div`).
#[inline]
pub fn binary_float_op_config() -> TensorIteratorConfig {
    binary_op_config().promote_integer_inputs_to_float(true)
}

/// `build_ternary_op` (`addcmul`, `addcdiv`).
#[inline]
pub fn ternary_op_config() -> TensorIteratorConfig {
    TensorIteratorConfig::new()
        .check_mem_overlap(true)
        .promote_inputs_to_common_dtype(true)
        .cast_common_dtype_to_outputs(true)
        .enforce_safe_casting_to_output(true)
}

/// `build_unary_op`: overlap checks and one dtype for everything, no casting.
#[inline]
pub fn unary_op_config() -> TensorIteratorConfig {
    TensorIteratorConfig::new().check_mem_overlap(true).check_all_same_dtype(true)
}

/// `build_unary_float_op` (`sqrt`, `exp` on integers): promotion, casting, safe casting,
/// integers to the default float.
#[inline]
pub fn unary_float_op_config() -> TensorIteratorConfig {
    TensorIteratorConfig::new()
        .check_mem_overlap(true)
        .promote_inputs_to_common_dtype(true)
        .cast_common_dtype_to_outputs(true)
        .enforce_safe_casting_to_output(true)
        .promote_integer_inputs_to_float(true)
}

/// `build_comparison_op`. `out_given_and_not_bool`: an `out=`/`self` output is given and is not
/// bool. Its dtype is then kept: the kernel writes 0/1 in the common dtype into a temporary that
/// [`TensorIterator::cast_outputs`] copies back. Otherwise the output is bool (allocated with a
/// static bool dtype, or the given bool tensor) and the kernel maps two common-dtype inputs to
/// bool.
#[inline]
pub fn comparison_op_config(out_given_and_not_bool: bool) -> TensorIteratorConfig {
    let c = TensorIteratorConfig::new()
        .check_mem_overlap(true)
        .allow_cpu_scalars(true)
        .promote_inputs_to_common_dtype(true);
    if out_given_and_not_bool {
        c.cast_common_dtype_to_outputs(true)
    } else {
        c.declare_static_dtype(DType::Bool)
    }
}

/// `nullary_op` (random fills): the output is given and never resized.
#[inline]
pub fn nullary_op_config() -> TensorIteratorConfig {
    TensorIteratorConfig::new().check_mem_overlap(true).check_all_same_dtype(false).resize_outputs(false)
}

/// `reduce_op`: no overlap check, outputs not resized, reduction, inputs promoted. Add the
/// output viewed by [`review_reduce_result`](super::review_reduce_result), or use
/// [`make_reduction`](super::make_reduction) which does all of it.
#[inline]
pub fn reduce_op_config() -> TensorIteratorConfig {
    TensorIteratorConfig::new()
        .check_mem_overlap(false)
        .resize_outputs(false)
        .is_reduction(true)
        .promote_inputs_to_common_dtype(true)
}
