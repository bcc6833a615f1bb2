//! Losses that PyTorch composes from pointwise operators (its `Loss.cpp`): `l1_loss`,
//! `smooth_l1_loss`, `huber_loss`, `soft_margin_loss`, `hinge_embedding_loss`,
//! `margin_ranking_loss`, `cosine_embedding_loss`, `triplet_margin_loss`, `kl_div`,
//! `poisson_nll_loss` and `binary_cross_entropy`. CompositeImplicitAutograd: gradients come from
//! the operators, and every backend that has them has the losses.

use crate::generated::decls::{
    BinaryCrossEntropyCompositeImplicit, CosineEmbeddingLossCompositeImplicit, HingeEmbeddingLossCompositeImplicit,
    HuberLossCompositeImplicit, KlDivCompositeImplicit, L1LossCompositeImplicit, MarginRankingLossCompositeImplicit,
    PoissonNllLossCompositeImplicit, SmoothL1LossCompositeImplicit, SoftMarginLossCompositeImplicit,
    TripletMarginLossCompositeImplicit,
};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Scalar, Tensor};

/// PyTorch's `apply_loss_reduction`: 0 none, 1 mean, 2 sum.
fn reduce(loss: Tensor, reduction: i64) -> Result<Tensor> {
    match reduction {
        0 => Ok(loss),
        1 => ops::mean::call(&loss, None),
        2 => ops::sum::call(&loss, None),
        r => Err(Error::value(format!("{r} is not a valid value for reduction"))),
    }
}

fn one() -> Scalar {
    Scalar::Int(1)
}

fn abs_diff(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ops::sub::call(a, b, one())?.try_abs()
}

impl L1LossCompositeImplicit for Composite {
    fn l1_loss(self_: &Tensor, target: &Tensor, reduction: i64) -> Result<Tensor> {
        reduce(abs_diff(self_, target)?, reduction)
    }
}

impl SmoothL1LossCompositeImplicit for Composite {
    fn smooth_l1_loss(self_: &Tensor, target: &Tensor, reduction: i64, beta: f64) -> Result<Tensor> {
        if beta < 0.0 {
            return Err(Error::runtime("smooth_l1_loss does not support negative values for beta."));
        }
        let z = abs_diff(self_, target)?;
        if beta == 0.0 {
            return reduce(z, reduction);
        }
        let quad = ops::mul::call(&z, &z)?.try_mul_scalar(Scalar::Float(0.5 / beta))?;
        let lin = ops::sub_scalar::call(&z, Scalar::Float(0.5 * beta), one())?;
        let small = ops::lt_scalar::call(&z, Scalar::Float(beta))?;
        reduce(ops::where_self::call(&small, &quad, &lin)?, reduction)
    }
}

impl HuberLossCompositeImplicit for Composite {
    fn huber_loss(self_: &Tensor, target: &Tensor, reduction: i64, delta: f64) -> Result<Tensor> {
        if delta <= 0.0 {
            return Err(Error::runtime("huber_loss does not support non-positive values for delta."));
        }
        let z = abs_diff(self_, target)?;
        let quad = ops::mul::call(&z, &z)?.try_mul_scalar(Scalar::Float(0.5))?;
        let lin = ops::sub_scalar::call(&z, Scalar::Float(0.5 * delta), one())?.try_mul_scalar(Scalar::Float(delta))?;
        let small = ops::lt_scalar::call(&z, Scalar::Float(delta))?;
        reduce(ops::where_self::call(&small, &quad, &lin)?, reduction)
    }
}

impl SoftMarginLossCompositeImplicit for Composite {
    fn soft_margin_loss(self_: &Tensor, target: &Tensor, reduction: i64) -> Result<Tensor> {
        let z = ops::mul::call(target, self_)?.try_neg()?;
        reduce(ops::log1p::call(&ops::exp::call(&z)?)?, reduction)
    }
}

impl HingeEmbeddingLossCompositeImplicit for Composite {
    fn hinge_embedding_loss(self_: &Tensor, target: &Tensor, margin: f64, reduction: i64) -> Result<Tensor> {
        let zeros = ops::zeros_like::call(self_, None, None, None, None, None)?;
        let clamped =
            ops::clamp_min::call(&ops::rsub_scalar::call(self_, Scalar::Float(margin), one())?, Scalar::Int(0))?;
        let from_margin = ops::where_self::call(&ops::ne_scalar::call(target, one())?, &clamped, &zeros)?;
        let from_self = ops::where_self::call(&ops::ne_scalar::call(target, Scalar::Int(-1))?, self_, &zeros)?;
        reduce(ops::add::call(&from_margin, &from_self, one())?, reduction)
    }
}

impl MarginRankingLossCompositeImplicit for Composite {
    fn margin_ranking_loss(
        input1: &Tensor,
        input2: &Tensor,
        target: &Tensor,
        margin: f64,
        reduction: i64,
    ) -> Result<Tensor> {
        if input1.dim() != input2.dim() || input1.dim() != target.dim() {
            return Err(Error::runtime(format!(
                "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: {:?}, input2: {:?}, target: {:?} ",
                &input1.sizes()[..],
                &input2.sizes()[..],
                &target.sizes()[..]
            )));
        }
        let d = ops::sub::call(input1, input2, one())?;
        let z = ops::mul::call(&target.try_neg()?, &d)?.try_add_scalar(Scalar::Float(margin))?;
        reduce(ops::clamp_min::call(&z, Scalar::Int(0))?, reduction)
    }
}

impl CosineEmbeddingLossCompositeImplicit for Composite {
    fn cosine_embedding_loss(
        input1: &Tensor,
        input2: &Tensor,
        target: &Tensor,
        margin: f64,
        reduction: i64,
    ) -> Result<Tensor> {
        let td = target.dim();
        if td > 1 {
            return Err(Error::runtime("0D or 1D target tensor expected, multi-target not supported"));
        }
        let want = td + 1;
        if input1.dim() != want || input2.dim() != want {
            return Err(Error::runtime(format!(
                "{td}D target tensor expects {want}D input tensors, but found inputs with sizes {:?} and {:?}.",
                &input1.sizes()[..],
                &input2.sizes()[..]
            )));
        }
        let dim = [td as i64];
        let sum = |t: Tensor| ops::sum_dim_intlist::call(&t, Some(&dim), false, None);
        let prod = sum(ops::mul::call(input1, input2)?)?;
        let mag1 = sum(ops::mul::call(input1, input1)?)?.try_add_scalar(Scalar::Float(1e-12))?;
        let mag2 = sum(ops::mul::call(input2, input2)?)?.try_add_scalar(Scalar::Float(1e-12))?;
        let cos = ops::div::call(&prod, &ops::sqrt::call(&ops::mul::call(&mag1, &mag2)?)?)?;
        let zeros = ops::zeros_like::call(&cos, None, None, None, None, None)?;
        let pos = ops::rsub_scalar::call(&cos, one(), one())?;
        let neg = ops::clamp_min::call(&cos.try_sub_scalar(Scalar::Float(margin))?, Scalar::Int(0))?;
        let out_pos = ops::where_self::call(&ops::eq_scalar::call(target, one())?, &pos, &zeros)?;
        let out_neg = ops::where_self::call(&ops::eq_scalar::call(target, Scalar::Int(-1))?, &neg, &zeros)?;
        reduce(ops::add::call(&out_pos, &out_neg, one())?, reduction)
    }
}

impl TripletMarginLossCompositeImplicit for Composite {
    #[allow(clippy::too_many_arguments)]
    fn triplet_margin_loss(
        anchor: &Tensor,
        positive: &Tensor,
        negative: &Tensor,
        margin: f64,
        p: f64,
        eps: f64,
        swap: bool,
        reduction: i64,
    ) -> Result<Tensor> {
        let (a, pd, n) = (anchor.dim(), positive.dim(), negative.dim());
        if a != pd || pd != n {
            return Err(Error::runtime(format!(
                "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor {a}D, positive {pd}D, and negative {n}D inputs"
            )));
        }
        let d_pos = ops::pairwise_distance::call(anchor, positive, p, eps, false)?;
        let mut d_neg = ops::pairwise_distance::call(anchor, negative, p, eps, false)?;
        if swap {
            let d_swap = ops::pairwise_distance::call(positive, negative, p, eps, false)?;
            d_neg = ops::minimum::call(&d_neg, &d_swap)?;
        }
        let z = ops::sub::call(&d_pos, &d_neg, one())?.try_add_scalar(Scalar::Float(margin))?;
        reduce(ops::clamp_min::call(&z, Scalar::Int(0))?, reduction)
    }
}

impl KlDivCompositeImplicit for Composite {
    fn kl_div(self_: &Tensor, target: &Tensor, reduction: i64, log_target: bool) -> Result<Tensor> {
        let loss = if log_target {
            ops::mul::call(&ops::exp::call(target)?, &ops::sub::call(target, self_, one())?)?
        } else {
            ops::sub::call(&ops::xlogy::call(target, target)?, &ops::mul::call(target, self_)?, one())?
        };
        reduce(loss, reduction)
    }
}

impl PoissonNllLossCompositeImplicit for Composite {
    fn poisson_nll_loss(
        input: &Tensor,
        target: &Tensor,
        log_input: bool,
        full: bool,
        eps: f64,
        reduction: i64,
    ) -> Result<Tensor> {
        let mut loss = if log_input {
            ops::sub::call(&ops::exp::call(input)?, &ops::mul::call(target, input)?, one())?
        } else {
            let log = ops::log::call(&input.try_add_scalar(Scalar::Float(eps))?)?;
            ops::sub::call(input, &ops::mul::call(target, &log)?, one())?
        };
        if full {
            // Stirling's approximation of log(target!), where target > 1.
            let two_pi_t = target.try_mul_scalar(Scalar::Float(2.0 * std::f64::consts::PI))?;
            let stirling = ops::sub::call(&ops::mul::call(target, &ops::log::call(target)?)?, target, one())?
                .try_add(&ops::log::call(&two_pi_t)?.try_mul_scalar(Scalar::Float(0.5))?)?;
            let small = ops::le_scalar::call(target, one())?;
            loss = loss.try_add(&ops::masked_fill_scalar::call(&stirling, &small, Scalar::Int(0))?)?;
        }
        reduce(loss, reduction)
    }
}

impl BinaryCrossEntropyCompositeImplicit for Composite {
    fn binary_cross_entropy(
        self_: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
    ) -> Result<Tensor> {
        if self_.sizes() != target.sizes() {
            return Err(Error::value(format!(
                "Using a target size ({:?}) that is different to the input size ({:?}) is deprecated. Please ensure they have the same size.",
                &target.sizes()[..],
                &self_.sizes()[..]
            )));
        }
        if self_.device() == oxten_runtime::Device::Cpu && self_.numel() > 0 {
            let outside = ops::logical_or::call(
                &ops::lt_scalar::call(self_, Scalar::Int(0))?,
                &ops::gt_scalar::call(self_, one())?,
            )?;
            if ops::any::call(&outside)?.item::<bool>()? {
                return Err(Error::runtime("all elements of input should be between 0 and 1"));
            }
        }
        // log clamped at -100 so that 0 and 1 give finite losses, as PyTorch.
        let log_x = ops::clamp_min::call(&ops::log::call(self_)?, Scalar::Int(-100))?;
        let log_1mx = ops::clamp_min::call(&ops::log1p::call(&self_.try_neg()?)?, Scalar::Int(-100))?;
        let loss = ops::sub::call(
            &ops::mul::call(&target.try_sub_scalar(one())?, &log_1mx)?,
            &ops::mul::call(target, &log_x)?,
            one(),
        )?;
        let loss = match weight {
            Some(w) => ops::mul::call(&loss, w)?,
            None => loss,
        };
        reduce(loss, reduction)
    }
}
