//! Losses that PyTorch composes from pointwise operators (its `Loss.cpp`): `l1_loss`,
//! `smooth_l1_loss`, `huber_loss`, `soft_margin_loss`, `hinge_embedding_loss`,
//! `margin_ranking_loss`, `cosine_embedding_loss`, `triplet_margin_loss`, `kl_div`,
//! `poisson_nll_loss` and `binary_cross_entropy`, `multi_margin_loss` and
//! `multilabel_margin_loss` (kernels in PyTorch, composites here), and the losses that
//! `torch.nn.functional` writes in Python: `gaussian_nll_loss` and `multilabel_soft_margin_loss`.
//! CompositeImplicitAutograd: gradients come from the operators, and every backend that has them
//! has the losses.

use crate::generated::decls::{
    BinaryCrossEntropyCompositeImplicit, CosineEmbeddingLossCompositeImplicit, GaussianNllLossCompositeImplicit,
    GaussianNllLossFloatVarCompositeImplicit, HingeEmbeddingLossCompositeImplicit, HuberLossCompositeImplicit,
    KlDivCompositeImplicit, L1LossCompositeImplicit, MarginRankingLossCompositeImplicit,
    MultiMarginLossCompositeImplicit, MultilabelMarginLossCompositeImplicit, MultilabelSoftMarginLossCompositeImplicit,
    PoissonNllLossCompositeImplicit, SmoothL1LossCompositeImplicit, SoftMarginLossCompositeImplicit,
    TripletMarginLossCompositeImplicit,
};
use crate::support::any_outside;
use crate::Composite;
use oxten_runtime::{ops, DType, Error, Result, Scalar, Tensor};

/// PyTorch's `apply_loss_reduction`: 0 none, 1 mean, 2 sum.
pub(super) fn reduce(loss: Tensor, reduction: i64) -> Result<Tensor> {
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

/// PyTorch's shape check of the multi-class margin losses: `(nframe, dim)` of a non-empty vector,
/// a matrix whose batch may be empty, or a 0-dim input.
fn margin_frames(self_: &Tensor) -> Result<(i64, i64)> {
    let s = self_.sizes();
    match s.len() {
        0 => Ok((1, 1)),
        1 if s[0] != 0 => Ok((1, s[0])),
        2 if s[1] != 0 => Ok((s[0], s[1])),
        _ => Err(Error::runtime(format!(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: {:?}",
            &s[..]
        ))),
    }
}

impl MultiMarginLossCompositeImplicit for Composite {
    fn multi_margin_loss(
        self_: &Tensor,
        target: &Tensor,
        p: Scalar,
        margin: Scalar,
        weight: Option<&Tensor>,
        reduction: i64,
    ) -> Result<Tensor> {
        let p = p.to_f64();
        if p != 1.0 && p != 2.0 {
            return Err(Error::value("only p == 1 and p == 2 supported"));
        }
        let (nframe, dim) = margin_frames(self_)?;
        if target.dim() > 1 || target.numel() != nframe {
            return Err(Error::runtime(format!(
                "inconsistent target size, expected {nframe} but got {:?}",
                &target.sizes()[..]
            )));
        }
        if let Some(w) = weight {
            if w.dim() > 1 || w.numel() != dim {
                return Err(Error::runtime(format!(
                    "inconsistent weight size, expected {dim} but got {:?}",
                    &w.sizes()[..]
                )));
            }
        }
        super::expect_dtype(DType::I64, target.dtype())?;
        if any_outside(target, 0, dim)? {
            return Err(Error::runtime("target out of range"));
        }
        let x = ops::reshape::call(self_, &[nframe, dim])?;
        let y = ops::reshape::call(target, &[nframe, 1])?;
        let x_y = ops::gather::call(&x, 1, &y, false)?;
        // relu, not clamp: PyTorch's kernel counts a term only where it is positive, so a term
        // exactly at 0 gives no gradient.
        let z = ops::relu::call(&ops::sub::call(&x, &x_y, one())?.try_add_scalar(margin)?)?;
        let mut z = if p == 2.0 { ops::mul::call(&z, &z)? } else { z };
        if let Some(w) = weight {
            let w_y = ops::index_select::call(&ops::reshape::call(w, &[dim])?, 0, &ops::reshape::call(&y, &[nframe])?)?;
            z = ops::mul::call(&z, &ops::unsqueeze::call(&w_y, 1)?)?;
        }
        let classes = ops::arange::call(Scalar::Int(dim), Some(DType::I64), None, None, None)?;
        let other_class = ops::ne::call(&ops::unsqueeze::call(&classes, 0)?, &y)?;
        let z = ops::where_scalarother::call(&other_class, &z, Scalar::Int(0))?;
        let per_sample = ops::sum_dim_intlist::call(&z, Some(&[1]), false, None)?.try_div_scalar(Scalar::Int(dim))?;
        let per_sample = if target.dim() == 0 { ops::reshape::call(&per_sample, &[])? } else { per_sample };
        reduce(per_sample, reduction)
    }
}

impl MultilabelMarginLossCompositeImplicit for Composite {
    fn multilabel_margin_loss(self_: &Tensor, target: &Tensor, reduction: i64) -> Result<Tensor> {
        let (nframe, dim) = margin_frames(self_)?;
        let consistent = if self_.dim() <= 1 {
            target.dim() <= 1 && target.numel() == dim
        } else {
            target.sizes()[..] == [nframe, dim]
        };
        if !consistent {
            return Err(Error::runtime(format!(
                "inconsistent target size: {:?} for input of size: {:?}",
                &target.sizes()[..],
                &self_.sizes()[..]
            )));
        }
        super::expect_dtype(DType::I64, target.dtype())?;
        if any_outside(target, -1, dim)? {
            return Err(Error::runtime("argument #2 'target' is out of range"));
        }
        let x = ops::reshape::call(self_, &[nframe, dim])?;
        let t = ops::reshape::call(target, &[nframe, dim])?;
        // A row's targets are its entries before the first -1; a class listed twice counts twice.
        let listed = ops::cumprod::call(&ops::ne_scalar::call(&t, Scalar::Int(-1))?, 1, Some(DType::I64))?;
        let listed_bool = ops::ne_scalar::call(&listed, Scalar::Int(0))?;
        let index = ops::where_scalarother::call(&listed_bool, &t, Scalar::Int(0))?;
        let zeros = ops::zeros_like::call(&x, None, None, None, None, None)?;
        let counts =
            ops::scatter_add::call(&zeros, 1, &index, &ops::to_dtype::call(&listed, x.dtype(), false, false, None)?)?;
        let not_target = ops::eq_scalar::call(&counts, Scalar::Int(0))?;
        // hinge[n, j, i] = max(0, 1 - (x[n, j] - x[n, i])) for target j and non-target i.
        let diff = ops::sub::call(&ops::unsqueeze::call(&x, 1)?, &ops::unsqueeze::call(&x, 2)?, one())?;
        let hinge = ops::relu::call(&diff.try_add_scalar(one())?)?;
        let pair_weight = ops::mul::call(&ops::unsqueeze::call(&counts, 2)?, &ops::unsqueeze::call(&not_target, 1)?)?;
        let z = ops::mul::call(&hinge, &pair_weight)?;
        let per_sample =
            ops::sum_dim_intlist::call(&z, Some(&[1, 2]), false, None)?.try_div_scalar(Scalar::Int(dim))?;
        let per_sample = if target.dim() <= 1 { ops::reshape::call(&per_sample, &[])? } else { per_sample };
        reduce(per_sample, reduction)
    }
}

/// `torch.nn.functional.gaussian_nll_loss`'s shape rule for `var`: the input's shape, the
/// input's shape without its last dimension (unsqueezed), or broadcastable with one mismatch.
fn gaussian_var(input: &Tensor, var: &Tensor) -> Result<Tensor> {
    if var.numel() > 0 && ops::any::call(&ops::lt_scalar::call(var, Scalar::Int(0))?)?.item::<bool>()? {
        return Err(Error::value("var has negative entry/entries"));
    }
    let (is, vs) = (input.sizes(), var.sizes());
    if is[..] == vs[..] {
        return Ok(var.clone());
    }
    if is[..is.len().saturating_sub(1)] == vs[..] {
        return ops::unsqueeze::call(var, -1);
    }
    let mismatch: i64 = is.iter().zip(vs.iter()).filter(|(x, y)| x != y).map(|(_, y)| *y).sum();
    if is.len() == vs.len() && mismatch == 1 {
        return Ok(var.clone());
    }
    Err(Error::value("var is of incorrect size"))
}

fn gaussian_nll(input: &Tensor, target: &Tensor, var: &Tensor, full: bool, eps: f64, reduction: i64) -> Result<Tensor> {
    if !(0..=2).contains(&reduction) {
        return Err(Error::value(format!("{reduction} is not valid")));
    }
    // The clamp is made without recording (PyTorch clamps a clone under no_grad), so the
    // gradient reaches `var` unchanged: `clamped + (var - var.detach())` is `clamped` in value.
    let detached = var.detach();
    let clamped = ops::clamp_min::call(&detached, Scalar::Float(eps))?;
    let var = if var.requires_grad() {
        ops::add::call(&clamped, &ops::sub::call(var, &detached, one())?, one())?
    } else {
        clamped
    };
    let d = ops::sub::call(input, target, one())?;
    let sq = ops::div::call(&ops::mul::call(&d, &d)?, &var)?;
    let mut loss = ops::add::call(&ops::log::call(&var)?, &sq, one())?.try_mul_scalar(Scalar::Float(0.5))?;
    if full {
        loss = loss.try_add_scalar(Scalar::Float(0.5 * (2.0 * std::f64::consts::PI).ln()))?;
    }
    reduce(loss, reduction)
}

impl GaussianNllLossCompositeImplicit for Composite {
    fn gaussian_nll_loss(
        input: &Tensor,
        target: &Tensor,
        var: &Tensor,
        full: bool,
        eps: f64,
        reduction: i64,
    ) -> Result<Tensor> {
        gaussian_nll(input, target, &gaussian_var(input, var)?, full, eps, reduction)
    }
}

impl GaussianNllLossFloatVarCompositeImplicit for Composite {
    fn gaussian_nll_loss_float_var(
        input: &Tensor,
        target: &Tensor,
        var: f64,
        full: bool,
        eps: f64,
        reduction: i64,
    ) -> Result<Tensor> {
        if var < 0.0 {
            return Err(Error::value("var has negative entry/entries"));
        }
        let var = ops::full_like::call(input, Scalar::Float(var), None, None, None, None, None)?;
        gaussian_nll(input, target, &var, full, eps, reduction)
    }
}

impl MultilabelSoftMarginLossCompositeImplicit for Composite {
    fn multilabel_soft_margin_loss(
        input: &Tensor,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: i64,
    ) -> Result<Tensor> {
        if input.dim() == 0 {
            return Err(Error::index("Dimension specified as -1 but tensor has no dimensions"));
        }
        let pos = ops::mul::call(target, &ops::log_sigmoid::call(input)?)?;
        let neg = ops::mul::call(
            &ops::rsub_scalar::call(target, one(), one())?,
            &ops::log_sigmoid::call(&input.try_neg()?)?,
        )?;
        let mut loss = ops::add::call(&pos, &neg, one())?.try_neg()?;
        if let Some(w) = weight {
            loss = ops::mul::call(&loss, w)?;
        }
        let class_dim = input.dim() as i64 - 1;
        let classes = input.sizes()[class_dim as usize];
        let per_sample =
            ops::sum_dim_intlist::call(&loss, Some(&[class_dim]), false, None)?.try_div_scalar(Scalar::Int(classes))?;
        reduce(per_sample, reduction)
    }
}
