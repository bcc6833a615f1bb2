//! RMSprop and Adagrad (`torch.optim.RMSprop`, `torch.optim.Adagrad`): adaptive learning rates
//! from running averages (RMSprop) or sums (Adagrad) of squared gradients.

use super::{check, check_params, Group, Optimizer};
use crate::autograd::no_grad;
use crate::options::{AddOpts, AddcdivInplaceOpts, AddcmulInplaceOpts, AddcmulOpts};
use crate::{Result, Scalar, Tensor};

/// RMSprop's hyperparameters; `Default` is PyTorch's (`lr=1e-2`, `alpha=0.99`, `eps=1e-8`, the
/// rest off).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmspropOpts {
    /// Learning rate.
    pub lr: f64,
    /// Smoothing constant of the squared-gradient average.
    pub alpha: f64,
    /// Added to the denominator for stability.
    pub eps: f64,
    /// Weight decay (L2 penalty).
    pub weight_decay: f64,
    /// Momentum factor (0: none).
    pub momentum: f64,
    /// Normalise by the variance estimate (subtracting the squared mean gradient).
    pub centered: bool,
    /// Maximise the objective instead of minimising it.
    pub maximize: bool,
}

impl Default for RmspropOpts {
    fn default() -> Self {
        RmspropOpts {
            lr: 1e-2,
            alpha: 0.99,
            eps: 1e-8,
            weight_decay: 0.0,
            momentum: 0.0,
            centered: false,
            maximize: false,
        }
    }
}

impl RmspropOpts {
    fn validate(&self) -> Result<()> {
        check(self.lr >= 0.0, "learning rate", self.lr)?;
        check(self.eps >= 0.0, "epsilon value", self.eps)?;
        check(self.momentum >= 0.0, "momentum value", self.momentum)?;
        check(self.weight_decay >= 0.0, "weight_decay value", self.weight_decay)?;
        check(self.alpha >= 0.0, "alpha value", self.alpha)
    }
}

/// RMSprop's per-parameter state.
#[derive(Default)]
struct RmspropState {
    square_avg: Option<Tensor>,
    grad_avg: Option<Tensor>,
    momentum_buffer: Option<Tensor>,
}

/// `torch.optim.RMSprop`. Per parameter and step, with `g` the gradient:
///
/// ```text
/// g ← -g if maximize;   g ← g + weight_decay·p
/// v ← α·v + (1 − α)·g²
/// centered: ḡ ← ḡ + (1 − α)(g − ḡ);   d ← √(v − ḡ²) + eps      else d ← √v + eps
/// momentum: b ← momentum·b + g/d;  p ← p − lr·b                  else p ← p − lr·g/d
/// ```
pub struct Rmsprop {
    groups: Vec<Group<RmspropOpts, RmspropState>>,
}

impl Rmsprop {
    /// One parameter group with `opts`.
    pub fn new(params: Vec<Tensor>, opts: RmspropOpts) -> Result<Self> {
        let mut s = Rmsprop { groups: Vec::new() };
        s.add_param_group(params, opts)?;
        Ok(s)
    }

    /// Adds a group with its own hyperparameters.
    pub fn add_param_group(&mut self, params: Vec<Tensor>, opts: RmspropOpts) -> Result<()> {
        opts.validate()?;
        check_params(&params)?;
        self.groups.push(Group { opts, params: params.into_iter().map(|p| (p, RmspropState::default())).collect() });
        Ok(())
    }

    /// The squared-gradient average of parameter `i` of group `group` (after a step).
    pub fn square_avg(&self, group: usize, i: usize) -> Option<Tensor> {
        self.groups.get(group)?.params.get(i)?.1.square_avg.clone()
    }
}

impl Optimizer for Rmsprop {
    fn step(&mut self) -> Result<()> {
        no_grad(|| {
            for group in &mut self.groups {
                let o = group.opts;
                for (p, st) in &mut group.params {
                    let Some(mut g) = p.grad() else { continue };
                    if o.maximize {
                        g = g.try_neg()?;
                    }
                    if o.weight_decay != 0.0 {
                        g = g.try_add_with(p, AddOpts { alpha: Scalar::Float(o.weight_decay) })?;
                    }
                    let v = st.square_avg.get_or_insert_with(|| crate::zeros_like(p));
                    v.try_mul_scalar_(o.alpha)?;
                    v.try_addcmul_with_(&g, &g, AddcmulInplaceOpts { value: Scalar::Float(1.0 - o.alpha) })?;
                    let avg = if o.centered {
                        let m = st.grad_avg.get_or_insert_with(|| crate::zeros_like(p));
                        m.try_lerp_scalar_(&g, Scalar::Float(1.0 - o.alpha))?;
                        v.try_addcmul_with(m, m, AddcmulOpts { value: Scalar::Int(-1) })?
                            .try_sqrt()?
                            .try_add_scalar(o.eps)?
                    } else {
                        v.try_sqrt()?.try_add_scalar(o.eps)?
                    };
                    if o.momentum > 0.0 {
                        let b = st.momentum_buffer.get_or_insert_with(|| crate::zeros_like(p));
                        b.try_mul_scalar_(o.momentum)?;
                        b.try_addcdiv_(&g, &avg)?;
                        p.try_add_with_(b, crate::options::AddInplaceOpts { alpha: Scalar::Float(-o.lr) })?;
                    } else {
                        p.try_addcdiv_with_(&g, &avg, AddcdivInplaceOpts { value: Scalar::Float(-o.lr) })?;
                    }
                }
            }
            Ok(())
        })
    }

    fn lrs(&self) -> Vec<f64> {
        self.groups.iter().map(|g| g.opts.lr).collect()
    }

    fn set_lr(&mut self, group: usize, lr: f64) {
        self.groups[group].opts.lr = lr;
    }

    fn params(&self) -> Vec<Tensor> {
        self.groups.iter().flat_map(|g| g.params.iter().map(|(p, _)| p.clone())).collect()
    }

    fn momentum(&self, group: usize) -> Option<f64> {
        Some(self.groups.get(group)?.opts.momentum)
    }

    fn set_momentum(&mut self, group: usize, momentum: f64) {
        self.groups[group].opts.momentum = momentum;
    }
}

/// Adagrad's hyperparameters; `Default` is PyTorch's (`lr=1e-2`, `eps=1e-10`, the rest 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdagradOpts {
    /// Learning rate.
    pub lr: f64,
    /// Learning-rate decay per step: `lr / (1 + (t − 1)·lr_decay)`.
    pub lr_decay: f64,
    /// Weight decay (L2 penalty).
    pub weight_decay: f64,
    /// The starting value of the squared-gradient sums.
    pub initial_accumulator_value: f64,
    /// Added to the denominator for stability.
    pub eps: f64,
    /// Maximise the objective instead of minimising it.
    pub maximize: bool,
}

impl Default for AdagradOpts {
    fn default() -> Self {
        AdagradOpts {
            lr: 1e-2,
            lr_decay: 0.0,
            weight_decay: 0.0,
            initial_accumulator_value: 0.0,
            eps: 1e-10,
            maximize: false,
        }
    }
}

impl AdagradOpts {
    fn validate(&self) -> Result<()> {
        check(self.lr >= 0.0, "learning rate", self.lr)?;
        check(self.lr_decay >= 0.0, "lr_decay value", self.lr_decay)?;
        check(self.weight_decay >= 0.0, "weight_decay value", self.weight_decay)?;
        check(
            self.initial_accumulator_value >= 0.0,
            "initial_accumulator_value value",
            self.initial_accumulator_value,
        )?;
        check(self.eps >= 0.0, "epsilon value", self.eps)
    }
}

/// `torch.optim.Adagrad`. Per parameter and step `t`, with `g` the gradient:
///
/// ```text
/// g ← -g if maximize;   g ← g + weight_decay·p
/// s ← s + g²;   p ← p − lr / (1 + (t − 1)·lr_decay) · g / (√s + eps)
/// ```
pub struct Adagrad {
    groups: Vec<Group<AdagradOpts, (u64, Tensor)>>,
}

impl Adagrad {
    /// One parameter group with `opts`.
    pub fn new(params: Vec<Tensor>, opts: AdagradOpts) -> Result<Self> {
        let mut s = Adagrad { groups: Vec::new() };
        s.add_param_group(params, opts)?;
        Ok(s)
    }

    /// Adds a group with its own hyperparameters; the sums start at `initial_accumulator_value`.
    pub fn add_param_group(&mut self, params: Vec<Tensor>, opts: AdagradOpts) -> Result<()> {
        opts.validate()?;
        check_params(&params)?;
        let params = params
            .into_iter()
            .map(|p| {
                let sum = crate::full_like(&p, opts.initial_accumulator_value);
                (p, (0, sum))
            })
            .collect();
        self.groups.push(Group { opts, params });
        Ok(())
    }

    /// The squared-gradient sum of parameter `i` of group `group`.
    pub fn sum(&self, group: usize, i: usize) -> Option<Tensor> {
        Some(self.groups.get(group)?.params.get(i)?.1 .1.clone())
    }
}

impl Optimizer for Adagrad {
    fn step(&mut self) -> Result<()> {
        no_grad(|| {
            for group in &mut self.groups {
                let o = group.opts;
                for (p, (step, sum)) in &mut group.params {
                    let Some(mut g) = p.grad() else { continue };
                    *step += 1;
                    if o.maximize {
                        g = g.try_neg()?;
                    }
                    if o.weight_decay != 0.0 {
                        g = g.try_add_with(p, AddOpts { alpha: Scalar::Float(o.weight_decay) })?;
                    }
                    let clr = o.lr / (1.0 + (*step - 1) as f64 * o.lr_decay);
                    sum.try_addcmul_(&g, &g)?;
                    let std = sum.try_sqrt()?.try_add_scalar(o.eps)?;
                    p.try_addcdiv_with_(&g, &std, AddcdivInplaceOpts { value: Scalar::Float(-clr) })?;
                }
            }
            Ok(())
        })
    }

    fn lrs(&self) -> Vec<f64> {
        self.groups.iter().map(|g| g.opts.lr).collect()
    }

    fn set_lr(&mut self, group: usize, lr: f64) {
        self.groups[group].opts.lr = lr;
    }

    fn params(&self) -> Vec<Tensor> {
        self.groups.iter().flat_map(|g| g.params.iter().map(|(p, _)| p.clone())).collect()
    }
}
