//! Activation kernels: `elu`, `hardtanh`, their backward kernels, `softplus_backward`, and the
//! dtype checks of the `pointwise:` activations (`leaky_relu`, `softplus`, `mish`, `hardswish`,
//! `hardsigmoid`, `hardshrink`, `softshrink`, `threshold` and the backward kernels among them).
//!
//! Dtype rules are PyTorch's:
//!
//! * `elu`, `leaky_relu`, `softplus` are `build_unary_op`s with floating loops only: an integral
//!   or bool input is rejected with PyTorch's `"elu_cpu" not implemented for 'Long'`.
//! * Their backward kernels are `build_binary_op`s over the gradient and the saved tensor
//!   (promoted to a common dtype), again floating only.
//! * `hardtanh` is `clamp`, except that integral inputs truncate the bounds to integers first
//!   (PyTorch's "legacy behavior of boundaries not causing type promotion") and bool inputs are
//!   rejected.
//!
//! Scalars are converted to the math type once (f32 for f16/bf16, as PyTorch's `opmath_t`), and
//! every element is computed in it and rounded once.

use super::{float_dispatch, floating_only, not_implemented};
use crate::generated::decls::{
    EluBackwardGradInputMetaFn, EluBackwardOutCpu, EluOutCpu, EluOutMetaFn, HardshrinkCheck, HardsigmoidBackwardCheck,
    HardsigmoidCheck, HardswishBackwardCheck, HardswishCheck, HardtanhBackwardCpu, HardtanhBackwardMeta,
    HardtanhBackwardOutCpu, HardtanhBackwardOutMeta, HardtanhCpu, HardtanhInplaceCpu, HardtanhInplaceMeta,
    HardtanhMeta, HardtanhOutCpu, HardtanhOutMeta, LeakyReluBackwardCheck, LeakyReluCheck, MishCheck,
    ShrinkBackwardCheck, SoftplusBackwardGradInputMetaFn, SoftplusBackwardOutCpu, SoftplusCheck,
    SoftshrinkBackwardCheck, SoftshrinkCheck, ThresholdBackwardCheck, ThresholdCheck,
};
use crate::iter::scalar_type_name;
use crate::iter::{
    binary_op_config, cpu_kernel_binary_math, cpu_kernel_unary_math, unary_op_config, OpMath, StructuredOutputs,
    TensorIterator,
};
use crate::logical::promote::{result_type, Arg};
use crate::math::Float;
use crate::{Cpu, Meta};
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// The common dtype of a backward kernel's two tensor operands, for its dtype check.
fn common_dtype(a: &Tensor, b: &Tensor) -> DType {
    result_type(&[Arg::Tensor(a), Arg::Tensor(b)])
}

/// A scalar argument in the math type.
fn lit<M: Float>(s: Scalar) -> M {
    M::from_f64(s.to_f64())
}

// ---------------------------------------------------------------------------------------------
// leaky_relu and softplus: checks of the generated pointwise kernels
// ---------------------------------------------------------------------------------------------

impl LeakyReluCheck for Meta {
    fn leaky_relu_check(self_: &Tensor, _negative_slope: Scalar) -> Result<()> {
        floating_only("leaky_relu_cpu", self_.dtype())
    }
}

impl HardshrinkCheck for Meta {
    fn hardshrink_check(self_: &Tensor, _lambd: Scalar) -> Result<()> {
        floating_only("hardshrink_cpu", self_.dtype())
    }
}

impl SoftshrinkCheck for Meta {
    fn softshrink_check(self_: &Tensor, lambd: Scalar) -> Result<()> {
        let dtype = self_.dtype();
        floating_only("softshrink_check", dtype)?;
        // PyTorch's bound is the dtype's largest finite value, printed as C++ streams print it.
        let (max, printed) = match dtype {
            DType::F64 => (f64::MAX, "1.79769e+308"),
            DType::F16 => (65504.0, "65504"),
            DType::BF16 => (3.389_531_389_251_535_5e38, "3.38953e+38"),
            _ => (f32::MAX as f64, "3.40282e+38"),
        };
        let l = lambd.to_f64();
        if !(0.0..=max).contains(&l) {
            return Err(Error::runtime(format!(
                "lambda must be in range [0, {printed}] for input dtype {}, but found {l}",
                scalar_type_name(dtype)
            )));
        }
        Ok(())
    }
}

impl ThresholdCheck for Meta {
    fn threshold_check(self_: &Tensor, _threshold: Scalar, _value: Scalar) -> Result<()> {
        // Every dtype but bool, as PyTorch's `threshold_cpu`.
        if self_.dtype() == DType::Bool {
            return Err(not_implemented("threshold_cpu", DType::Bool));
        }
        Ok(())
    }
}

impl ShrinkBackwardCheck for Meta {
    fn shrink_backward_check(grad_out: &Tensor, self_: &Tensor, _lambd: Scalar) -> Result<()> {
        floating_only("shrink_backward_cpu", common_dtype(grad_out, self_))
    }
}

impl SoftshrinkBackwardCheck for Meta {
    fn softshrink_backward_check(grad_output: &Tensor, self_: &Tensor, _lambd: Scalar) -> Result<()> {
        floating_only("shrink_backward_cpu", common_dtype(grad_output, self_))
    }
}

impl LeakyReluBackwardCheck for Meta {
    fn leaky_relu_backward_check(
        grad_output: &Tensor,
        self_: &Tensor,
        negative_slope: Scalar,
        self_is_result: bool,
    ) -> Result<()> {
        // With the result saved instead of the input, a negative slope flips the sign of the
        // negative half, so the input's sign can no longer be recovered.
        if self_is_result && negative_slope.to_f64() < 0.0 {
            return Err(Error::runtime(
                "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. \
                 This is caused by calling in-place forward function with a negative slope, please call out-of-place \
                 version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting \
                 in-place leakRelu backward calculation with negative slope",
            ));
        }
        floating_only("leaky_relu_backward_cpu", common_dtype(grad_output, self_))
    }
}

impl ThresholdBackwardCheck for Meta {
    fn threshold_backward_check(grad_output: &Tensor, self_: &Tensor, _threshold: Scalar) -> Result<()> {
        match common_dtype(grad_output, self_) {
            DType::Bool => Err(not_implemented("threshold_cpu", DType::Bool)),
            _ => Ok(()),
        }
    }
}

impl SoftplusCheck for Meta {
    fn softplus_check(self_: &Tensor, _beta: Scalar, _threshold: Scalar) -> Result<()> {
        floating_only("softplus_cpu", self_.dtype())
    }
}

impl MishCheck for Meta {
    fn mish_check(self_: &Tensor) -> Result<()> {
        floating_only("mish_cpu", self_.dtype())
    }
}

impl HardswishCheck for Meta {
    fn hardswish_check(self_: &Tensor) -> Result<()> {
        floating_only("hardswish_cpu", self_.dtype())
    }
}

impl HardsigmoidCheck for Meta {
    fn hardsigmoid_check(self_: &Tensor) -> Result<()> {
        floating_only("hardsigmoid_cpu", self_.dtype())
    }
}

impl HardswishBackwardCheck for Meta {
    fn hardswish_backward_check(grad_output: &Tensor, self_: &Tensor) -> Result<()> {
        floating_only("hardswish_backward_cpu", common_dtype(grad_output, self_))
    }
}

impl HardsigmoidBackwardCheck for Meta {
    fn hardsigmoid_backward_check(grad_output: &Tensor, self_: &Tensor) -> Result<()> {
        floating_only("hardsigmoid_backward", common_dtype(grad_output, self_))
    }
}

// ---------------------------------------------------------------------------------------------
// softplus_backward
// ---------------------------------------------------------------------------------------------

impl SoftplusBackwardGradInputMetaFn for Meta {
    fn softplus_backward_grad_input(
        outs: &mut StructuredOutputs,
        grad_output: &Tensor,
        self_: &Tensor,
        _beta: Scalar,
        _threshold: Scalar,
    ) -> Result<TensorIterator> {
        binary_op_config().add_input(grad_output).add_input(self_).build_structured(outs)
    }
}

/// `grad * z / (z + 1)` with `z = exp(x * beta)`, or `grad` where `x * beta > threshold` (the
/// linear region of softplus).
#[inline(never)]
fn softplus_backward_loop<S: OpMath<Math = M>, M: Float>(iter: &TensorIterator, beta: Scalar, threshold: Scalar) {
    let (beta, threshold) = (lit::<M>(beta), lit::<M>(threshold));
    let one = M::one();
    cpu_kernel_binary_math::<S>(iter, move |g, x| {
        let z = (x * beta).exp();
        if x * beta > threshold {
            g
        } else {
            g * z / (z + one)
        }
    });
}

impl SoftplusBackwardOutCpu for Cpu {
    fn softplus_backward_out(
        iter: &TensorIterator,
        _grad_output: &Tensor,
        _self: &Tensor,
        beta: Scalar,
        threshold: Scalar,
    ) -> Result<()> {
        float_dispatch!("softplus_backward_cpu", iter.common_dtype(), softplus_backward_loop(iter, beta, threshold));
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// elu
// ---------------------------------------------------------------------------------------------

/// ELU's coefficients in the math type: `(negcoef, poscoef, negiptcoef)` =
/// `(alpha * scale, scale, input_scale)`.
fn elu_coefs<M: Float>(alpha: Scalar, scale: Scalar, input_scale: Scalar) -> (M, M, M) {
    (lit::<M>(alpha) * lit::<M>(scale), lit::<M>(scale), lit::<M>(input_scale))
}

impl EluOutMetaFn for Meta {
    fn elu_out(
        outs: &mut StructuredOutputs,
        self_: &Tensor,
        _alpha: Scalar,
        _scale: Scalar,
        _input_scale: Scalar,
    ) -> Result<TensorIterator> {
        unary_op_config().add_input(self_).build_structured(outs)
    }
}

/// `x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale`.
#[inline(never)]
fn elu_loop<S: OpMath<Math = M>, M: Float>(iter: &TensorIterator, alpha: Scalar, scale: Scalar, input_scale: Scalar) {
    let (negcoef, poscoef, negiptcoef) = elu_coefs::<M>(alpha, scale, input_scale);
    let zero = M::zero();
    cpu_kernel_unary_math::<S>(
        iter,
        move |x| if x <= zero { (x * negiptcoef).exp_m1() * negcoef } else { x * poscoef },
    );
}

impl EluOutCpu for Cpu {
    fn elu_out(iter: &TensorIterator, _self: &Tensor, alpha: Scalar, scale: Scalar, input_scale: Scalar) -> Result<()> {
        float_dispatch!("elu_cpu", iter.common_dtype(), elu_loop(iter, alpha, scale, input_scale));
        Ok(())
    }
}

impl EluBackwardGradInputMetaFn for Meta {
    fn elu_backward_grad_input(
        outs: &mut StructuredOutputs,
        grad_output: &Tensor,
        alpha: Scalar,
        _scale: Scalar,
        _input_scale: Scalar,
        is_result: bool,
        self_or_result: &Tensor,
    ) -> Result<TensorIterator> {
        if is_result && alpha.to_f64() < 0.0 {
            return Err(Error::runtime(
                "In-place elu backward calculation is triggered with a negative slope which is not supported. This \
                 is caused by calling in-place forward function with a negative slope, please call out-of-place \
                 version instead.",
            ));
        }
        binary_op_config().add_input(grad_output).add_input(self_or_result).build_structured(outs)
    }
}

/// ELU's derivative times the gradient, from the input (`x <= 0`: `g * input_scale * alpha *
/// scale * exp(x * input_scale)`) or from the result `y` (`y <= 0`: `g * input_scale * (y +
/// alpha * scale)`); `g * scale` on the positive side.
#[inline(never)]
fn elu_backward_loop<S: OpMath<Math = M>, M: Float>(
    iter: &TensorIterator,
    alpha: Scalar,
    scale: Scalar,
    input_scale: Scalar,
    is_result: bool,
) {
    let (negcoef, poscoef, negiptcoef) = elu_coefs::<M>(alpha, scale, input_scale);
    let zero = M::zero();
    if is_result {
        cpu_kernel_binary_math::<S>(
            iter,
            move |g, y| if y <= zero { g * negiptcoef * (y + negcoef) } else { g * poscoef },
        );
    } else {
        cpu_kernel_binary_math::<S>(iter, move |g, x| {
            if x <= zero {
                g * negiptcoef * negcoef * (x * negiptcoef).exp()
            } else {
                g * poscoef
            }
        });
    }
}

impl EluBackwardOutCpu for Cpu {
    fn elu_backward_out(
        iter: &TensorIterator,
        _grad_output: &Tensor,
        alpha: Scalar,
        scale: Scalar,
        input_scale: Scalar,
        is_result: bool,
        _self_or_result: &Tensor,
    ) -> Result<()> {
        float_dispatch!(
            "elu_backward_cpu",
            iter.common_dtype(),
            elu_backward_loop(iter, alpha, scale, input_scale, is_result)
        );
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// hardtanh
// ---------------------------------------------------------------------------------------------

/// The bounds `clamp` gets: for integral inputs truncated to integers, so that they never
/// promote the result to float (`hardtanh(int_tensor, -1.5, 1.5)` clamps to `[-1, 1]`).
fn hardtanh_bounds(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<(Scalar, Scalar)> {
    let dtype = self_.dtype();
    if dtype == DType::Bool {
        return Err(Error::dtype("Bool inputs not supported for hardtanh"));
    }
    if dtype.is_integral(false) {
        Ok((Scalar::Int(min_val.to_i64()), Scalar::Int(max_val.to_i64())))
    } else {
        Ok((min_val, max_val))
    }
}

fn hardtanh_impl(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
    let (lo, hi) = hardtanh_bounds(self_, min_val, max_val)?;
    ops::clamp::call(self_, Some(lo), Some(hi))
}

fn hardtanh_inplace_impl(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
    let (lo, hi) = hardtanh_bounds(self_, min_val, max_val)?;
    ops::clamp_::call(self_, Some(lo), Some(hi))
}

fn hardtanh_out_impl(self_: &Tensor, min_val: Scalar, max_val: Scalar, out: &Tensor) -> Result<Tensor> {
    let (lo, hi) = hardtanh_bounds(self_, min_val, max_val)?;
    ops::clamp_out::call(self_, Some(lo), Some(hi), out)
}

impl HardtanhCpu for Cpu {
    fn hardtanh(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
        hardtanh_impl(self_, min_val, max_val)
    }
}

impl HardtanhMeta for Meta {
    fn hardtanh(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
        hardtanh_impl(self_, min_val, max_val)
    }
}

impl HardtanhInplaceCpu for Cpu {
    fn hardtanh_(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
        hardtanh_inplace_impl(self_, min_val, max_val)
    }
}

impl HardtanhInplaceMeta for Meta {
    fn hardtanh_(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
        hardtanh_inplace_impl(self_, min_val, max_val)
    }
}

impl HardtanhOutCpu for Cpu {
    fn hardtanh_out(self_: &Tensor, min_val: Scalar, max_val: Scalar, out: &Tensor) -> Result<Tensor> {
        hardtanh_out_impl(self_, min_val, max_val, out)
    }
}

impl HardtanhOutMeta for Meta {
    fn hardtanh_out(self_: &Tensor, min_val: Scalar, max_val: Scalar, out: &Tensor) -> Result<Tensor> {
        hardtanh_out_impl(self_, min_val, max_val, out)
    }
}

/// `grad` where `min < x < max`, else 0 (the bounds themselves get 0, as in PyTorch).
#[inline(never)]
fn hardtanh_backward_loop<S: OpMath<Math = M>, M: Float>(iter: &TensorIterator, min_val: Scalar, max_val: Scalar) {
    let (lo, hi) = (lit::<M>(min_val), lit::<M>(max_val));
    let zero = M::zero();
    cpu_kernel_binary_math::<S>(iter, move |g, x| if x <= lo || x >= hi { zero } else { g });
}

/// `hardtanh_backward`'s iterator into `grad_input` (or a new tensor): a binary iterator over
/// the gradient and the input, so both promote to a common floating dtype (all the Meta kernels
/// do).
fn hardtanh_backward_iter(
    grad_output: &Tensor,
    self_: &Tensor,
    grad_input: Option<&Tensor>,
) -> Result<(TensorIterator, StructuredOutputs)> {
    let mut outs = match grad_input {
        Some(g) => StructuredOutputs::out(&[g]),
        None => StructuredOutputs::functional(1),
    };
    let iter = binary_op_config().add_input(grad_output).add_input(self_).build_structured(&mut outs)?;
    Ok((iter, outs))
}

/// `hardtanh_backward` on the CPU.
fn hardtanh_backward_impl(
    grad_output: &Tensor,
    self_: &Tensor,
    min_val: Scalar,
    max_val: Scalar,
    grad_input: Option<&Tensor>,
) -> Result<Tensor> {
    let (iter, outs) = hardtanh_backward_iter(grad_output, self_, grad_input)?;
    // PyTorch runs `hardtanh_backward` through the `hardshrink_backward` loop, whose name its
    // error messages carry.
    float_dispatch!("hardshrink_backward_cpu", iter.common_dtype(), hardtanh_backward_loop(&iter, min_val, max_val));
    iter.cast_outputs()?;
    Ok(outs.into_outputs().remove(0))
}

impl HardtanhBackwardCpu for Cpu {
    fn hardtanh_backward(grad_output: &Tensor, self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
        hardtanh_backward_impl(grad_output, self_, min_val, max_val, None)
    }
}

impl HardtanhBackwardMeta for Meta {
    fn hardtanh_backward(grad_output: &Tensor, self_: &Tensor, _min: Scalar, _max: Scalar) -> Result<Tensor> {
        Ok(hardtanh_backward_iter(grad_output, self_, None)?.1.into_outputs().remove(0))
    }
}

impl HardtanhBackwardOutCpu for Cpu {
    fn hardtanh_backward_out(
        grad_output: &Tensor,
        self_: &Tensor,
        min_val: Scalar,
        max_val: Scalar,
        grad_input: &Tensor,
    ) -> Result<Tensor> {
        hardtanh_backward_impl(grad_output, self_, min_val, max_val, Some(grad_input))
    }
}

impl HardtanhBackwardOutMeta for Meta {
    fn hardtanh_backward_out(
        grad_output: &Tensor,
        self_: &Tensor,
        _min: Scalar,
        _max: Scalar,
        grad_input: &Tensor,
    ) -> Result<Tensor> {
        Ok(hardtanh_backward_iter(grad_output, self_, Some(grad_input))?.1.into_outputs().remove(0))
    }
}
