//! Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay
//! (`torch.optim.SGD`).

use super::{check, check_params, Group, Optimizer};
use crate::autograd::no_grad;
use crate::options::{AddInplaceOpts, AddOpts};
use crate::{Error, Result, Scalar, Tensor};

/// SGD's hyperparameters; `Default` is PyTorch's (`lr=1e-3`, everything else off).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdOpts {
    /// Learning rate.
    pub lr: f64,
    /// Momentum factor (0: plain SGD).
    pub momentum: f64,
    /// Dampening of the momentum's new gradient.
    pub dampening: f64,
    /// Weight decay (L2 penalty).
    pub weight_decay: f64,
    /// Nesterov momentum.
    pub nesterov: bool,
    /// Maximise the objective instead of minimising it.
    pub maximize: bool,
}

impl Default for SgdOpts {
    fn default() -> Self {
        SgdOpts { lr: 1e-3, momentum: 0.0, dampening: 0.0, weight_decay: 0.0, nesterov: false, maximize: false }
    }
}

impl SgdOpts {
    fn validate(&self) -> Result<()> {
        check(self.lr >= 0.0, "learning rate", self.lr)?;
        check(self.momentum >= 0.0, "momentum value", self.momentum)?;
        check(self.weight_decay >= 0.0, "weight_decay value", self.weight_decay)?;
        if self.nesterov && (self.momentum <= 0.0 || self.dampening != 0.0) {
            return Err(Error::value("Nesterov momentum requires a momentum and zero dampening"));
        }
        Ok(())
    }
}

/// `torch.optim.SGD`. Per parameter and step, with `g` the gradient:
///
/// ```text
/// g ← -g if maximize;   g ← g + weight_decay·p
/// b ← g (first step) or momentum·b + (1 − dampening)·g;   g ← g + momentum·b if nesterov else b
/// p ← p − lr·g
/// ```
pub struct Sgd {
    groups: Vec<Group<SgdOpts, Option<Tensor>>>,
}

impl Sgd {
    /// One parameter group with `opts`.
    pub fn new(params: Vec<Tensor>, opts: SgdOpts) -> Result<Self> {
        let mut s = Sgd { groups: Vec::new() };
        s.add_param_group(params, opts)?;
        Ok(s)
    }

    /// Adds a group with its own hyperparameters (say, no weight decay for biases).
    pub fn add_param_group(&mut self, params: Vec<Tensor>, opts: SgdOpts) -> Result<()> {
        opts.validate()?;
        check_params(&params)?;
        self.groups.push(Group { opts, params: params.into_iter().map(|p| (p, None)).collect() });
        Ok(())
    }

    /// The momentum buffer of parameter `i` of group `group` (after a step with momentum).
    pub fn momentum_buffer(&self, group: usize, i: usize) -> Option<Tensor> {
        self.groups.get(group)?.params.get(i)?.1.clone()
    }
}

fn alpha(a: f64) -> AddOpts {
    AddOpts { alpha: Scalar::Float(a) }
}

impl Optimizer for Sgd {
    fn step(&mut self) -> Result<()> {
        no_grad(|| {
            for group in &mut self.groups {
                let o = group.opts;
                for (p, buf) in &mut group.params {
                    let Some(mut g) = p.grad() else { continue };
                    if o.maximize {
                        g = g.try_neg()?;
                    }
                    if o.weight_decay != 0.0 {
                        g = g.try_add_with(p, alpha(o.weight_decay))?;
                    }
                    if o.momentum != 0.0 {
                        let b = match buf.take() {
                            None => g.detach().try_deep_clone()?,
                            Some(b) => {
                                b.try_mul_scalar_(o.momentum)?;
                                b.try_add_with_(&g, AddInplaceOpts { alpha: Scalar::Float(1.0 - o.dampening) })?;
                                b
                            }
                        };
                        g = if o.nesterov { g.try_add_with(&b, alpha(o.momentum))? } else { b.clone() };
                        *buf = Some(b);
                    }
                    p.try_add_with_(&g, AddInplaceOpts { alpha: Scalar::Float(-o.lr) })?;
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
