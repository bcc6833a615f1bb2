//! Activations that PyTorch composes of other operators (its CompositeImplicitAutograd ones):
//! `relu6` is `hardtanh(x, 0, 6)`, `selu` and `celu` are `elu` with fixed or derived scales,
//! `glu` multiplies one half of a dimension by the sigmoid of the other, `prelu` is
//! `where(x > 0, x, weight * x)` with the weight laid along dim 1, and `rrelu` is a leaky ReLU
//! with the mean slope (evaluation) or uniformly drawn slopes (training); `softsign`, `tanhshrink`
//! and `softmin` are `torch.nn.functional`'s Python-level ones. Their backends,
//! gradients and double backward are those of the operators they call; the argument checks and
//! error messages are PyTorch's.

use super::not_implemented;
use crate::generated::decls::{
    CeluCompositeImplicit, CeluInplaceCompositeImplicit, GluCompositeImplicit, LogSigmoidCheck, PreluCompositeImplicit,
    Relu6CompositeImplicit, Relu6InplaceCompositeImplicit, RreluCompositeImplicit, RreluInplaceCompositeImplicit,
    SeluCompositeImplicit, SeluInplaceCompositeImplicit, SoftminCompositeImplicit, SoftsignCompositeImplicit,
    TanhshrinkCompositeImplicit,
};
use crate::{Composite, Meta};
use oxten_runtime::{ops, wrap_dim, DType, Error, Generator, Result, Scalar, Tensor};

/// SELU's constants (Klambauer et al., 2017), as PyTorch writes them.
const SELU_ALPHA: f64 = 1.673_263_242_354_377_2;
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

impl Relu6CompositeImplicit for Composite {
    fn relu6(self_: &Tensor) -> Result<Tensor> {
        ops::hardtanh::call(self_, Scalar::Int(0), Scalar::Int(6))
    }
}

impl Relu6InplaceCompositeImplicit for Composite {
    fn relu6_(self_: &Tensor) -> Result<Tensor> {
        ops::hardtanh_::call(self_, Scalar::Int(0), Scalar::Int(6))
    }
}

impl SeluCompositeImplicit for Composite {
    fn selu(self_: &Tensor) -> Result<Tensor> {
        ops::elu::call(self_, Scalar::Float(SELU_ALPHA), Scalar::Float(SELU_SCALE), Scalar::Int(1))
    }
}

impl SeluInplaceCompositeImplicit for Composite {
    fn selu_(self_: &Tensor) -> Result<Tensor> {
        ops::elu_::call(self_, Scalar::Float(SELU_ALPHA), Scalar::Float(SELU_SCALE), Scalar::Int(1))
    }
}

/// `celu`'s `elu` scales: `alpha`, 1 and `1 / alpha` (which must exist).
fn celu_input_scale(alpha: Scalar) -> Result<Scalar> {
    let a = alpha.to_f64();
    if a == 0.0 {
        return Err(Error::runtime("ZeroDivisionError: alpha cannot be 0 for CELU"));
    }
    Ok(Scalar::Float(1.0 / a))
}

impl CeluCompositeImplicit for Composite {
    fn celu(self_: &Tensor, alpha: Scalar) -> Result<Tensor> {
        ops::elu::call(self_, alpha, Scalar::Int(1), celu_input_scale(alpha)?)
    }
}

impl CeluInplaceCompositeImplicit for Composite {
    fn celu_(self_: &Tensor, alpha: Scalar) -> Result<Tensor> {
        ops::elu_::call(self_, alpha, Scalar::Int(1), celu_input_scale(alpha)?)
    }
}

impl GluCompositeImplicit for Composite {
    fn glu(self_: &Tensor, dim: i64) -> Result<Tensor> {
        if self_.dim() == 0 {
            return Err(Error::runtime("glu does not support scalars because halving size must be even"));
        }
        let d = wrap_dim(dim, self_.dim())?;
        let n = self_.sizes()[d];
        if n % 2 != 0 {
            return Err(Error::runtime(format!("Halving dimension must be even, but dimension {d} is size {n}")));
        }
        if !self_.dtype().is_floating_point() {
            return Err(not_implemented("glu_cpu", self_.dtype()));
        }
        let a = ops::narrow::call(self_, d as i64, 0, n / 2)?;
        let b = ops::narrow::call(self_, d as i64, n / 2, n / 2)?;
        a.try_mul(&b.try_sigmoid()?)
    }
}

impl PreluCompositeImplicit for Composite {
    fn prelu(self_: &Tensor, weight: &Tensor) -> Result<Tensor> {
        let slopes = weight.numel();
        if slopes != 1 {
            if self_.dim() == 0 {
                return Err(Error::runtime("Not allow zero-dim input tensor."));
            }
            let channels = if self_.dim() > 1 { self_.sizes()[1] } else { 1 };
            if channels != slopes {
                return Err(Error::runtime(format!(
                    "Mismatch of parameter numbers and input channel size. Found parameter numbers = {slopes} and channel size = {channels}."
                )));
            }
        }
        if weight.dim() > 1 {
            return Err(Error::runtime(format!(
                "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {}",
                weight.dim()
            )));
        }
        if self_.dtype() != weight.dtype() {
            return Err(Error::runtime(format!(
                "prelu: Type promoting not supported. Got {} and {}",
                type_name(self_.dtype()),
                type_name(weight.dtype())
            )));
        }
        if !self_.dtype().is_floating_point() {
            return Err(not_implemented("prelu_cpu", self_.dtype()));
        }
        // One slope per channel, laid along dim 1 so that it broadcasts over the other dims.
        let w = if slopes != 1 && self_.dim() > 1 {
            let mut shape = vec![1i64; self_.dim()];
            shape[1] = slopes;
            weight.try_reshape(&shape)?
        } else {
            weight.try_reshape(&[])?
        };
        let positive = self_.try_gt_scalar(0)?;
        ops::where_self::call(&positive, self_, &w.try_mul(self_)?)
    }
}

/// PyTorch's short dtype names in messages (`Float`, `Double` …).
fn type_name(dtype: DType) -> &'static str {
    crate::iter::scalar_type_name(dtype)
}

/// `rrelu` out of place: the mean slope, or (training) a slope from `U(lower, upper)` per
/// negative element, as PyTorch's `rrelu_with_noise`.
fn rrelu_impl(
    self_: &Tensor,
    lower: Scalar,
    upper: Scalar,
    training: bool,
    generator: Option<&Generator>,
) -> Result<Tensor> {
    let (lo, hi) = (lower.to_f64(), upper.to_f64());
    if lo > hi {
        return Err(Error::runtime(format!(
            "Lower bound should be less than or equal to the upper bound, but got lower={} and upper={}",
            crate::support::format_g(lo),
            crate::support::format_g(hi)
        )));
    }
    if !training {
        return ops::leaky_relu::call(self_, Scalar::Float((lo + hi) / 2.0));
    }
    if !self_.dtype().is_floating_point() {
        return Err(not_implemented("rrelu_with_noise_out_cpu", self_.dtype()));
    }
    let noise = ops::empty_like::call(self_, None, None, None, None, None)?;
    let noise = ops::uniform_::call(&noise, lo, hi, generator)?;
    ops::where_self::call(&self_.try_gt_scalar(0)?, self_, &self_.try_mul(&noise)?)
}

impl RreluCompositeImplicit for Composite {
    fn rrelu(
        self_: &Tensor,
        lower: Scalar,
        upper: Scalar,
        training: bool,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        rrelu_impl(self_, lower, upper, training, generator)
    }
}

impl RreluInplaceCompositeImplicit for Composite {
    fn rrelu_(
        self_: &Tensor,
        lower: Scalar,
        upper: Scalar,
        training: bool,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        let result = rrelu_impl(self_, lower, upper, training, generator)?;
        self_.try_copy_(&result)
    }
}

impl LogSigmoidCheck for Meta {
    fn log_sigmoid_check(self_: &Tensor) -> Result<()> {
        super::floating_only("log_sigmoid_cpu", self_.dtype())
    }
}

impl SoftsignCompositeImplicit for Composite {
    fn softsign(input: &Tensor) -> Result<Tensor> {
        ops::div::call(input, &input.try_abs()?.try_add_scalar(Scalar::Int(1))?)
    }
}

impl TanhshrinkCompositeImplicit for Composite {
    fn tanhshrink(input: &Tensor) -> Result<Tensor> {
        ops::sub::call(input, &ops::tanh::call(input)?, Scalar::Int(1))
    }
}

impl SoftminCompositeImplicit for Composite {
    fn softmin(input: &Tensor, dim: Option<i64>, dtype: Option<DType>) -> Result<Tensor> {
        // Without `dim`, PyTorch's legacy `_get_softmax_dim`: 0 for 0-, 1- and 3-D input, else 1.
        let dim = dim.unwrap_or(if matches!(input.dim(), 0 | 1 | 3) { 0 } else { 1 });
        ops::softmax::call(&input.try_neg()?, dim, dtype)
    }
}
