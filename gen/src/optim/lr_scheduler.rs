//! Learning-rate schedulers (`torch.optim.lr_scheduler`): call [`LrScheduler::step`] once per
//! epoch, after the optimizer's steps.

use super::Optimizer;
use crate::{Error, Result};

/// What the schedulers share: [`step`](LrScheduler::step) advances the epoch counter and sets
/// every group's learning rate on the optimizer.
pub trait LrScheduler {
    /// Advances one epoch and updates the optimizer's learning rates.
    fn step(&mut self, opt: &mut dyn Optimizer);
    /// The learning rates the last `step` set (initially the optimizer's own).
    fn last_lr(&self) -> &[f64];
}

/// `StepLR`: multiplies the learning rate by `gamma` every `step_size` epochs
/// (`lr = base_lr · gamma^⌊epoch / step_size⌋`).
pub struct StepLr {
    base_lrs: Vec<f64>,
    last: Vec<f64>,
    step_size: u64,
    gamma: f64,
    epoch: u64,
}

impl StepLr {
    /// Remembers the optimizer's current learning rates as the base ones.
    pub fn new(opt: &dyn Optimizer, step_size: u64, gamma: f64) -> Result<Self> {
        if step_size == 0 {
            return Err(Error::value("StepLR: step_size must be positive"));
        }
        let base_lrs = opt.lrs();
        Ok(StepLr { last: base_lrs.clone(), base_lrs, step_size, gamma, epoch: 0 })
    }
}

impl LrScheduler for StepLr {
    fn step(&mut self, opt: &mut dyn Optimizer) {
        self.epoch += 1;
        let k = (self.epoch / self.step_size) as i32;
        self.last = self.base_lrs.iter().map(|b| b * self.gamma.powi(k)).collect();
        for (i, lr) in self.last.iter().enumerate() {
            opt.set_lr(i, *lr);
        }
    }
    fn last_lr(&self) -> &[f64] {
        &self.last
    }
}

/// `CosineAnnealingLR`: anneals from the base learning rate to `eta_min` over `t_max` epochs
/// along a half cosine, `lr = eta_min + (base_lr − eta_min)(1 + cos(π·epoch / t_max)) / 2`, and
/// continues the cosine (back up) past `t_max`, as PyTorch's closed form does.
pub struct CosineAnnealingLr {
    base_lrs: Vec<f64>,
    last: Vec<f64>,
    t_max: u64,
    eta_min: f64,
    epoch: u64,
}

impl CosineAnnealingLr {
    /// Remembers the optimizer's current learning rates as the base ones.
    pub fn new(opt: &dyn Optimizer, t_max: u64, eta_min: f64) -> Result<Self> {
        if t_max == 0 {
            return Err(Error::value("CosineAnnealingLR: T_max must be positive"));
        }
        let base_lrs = opt.lrs();
        Ok(CosineAnnealingLr { last: base_lrs.clone(), base_lrs, t_max, eta_min, epoch: 0 })
    }
}

impl LrScheduler for CosineAnnealingLr {
    fn step(&mut self, opt: &mut dyn Optimizer) {
        self.epoch += 1;
        let c = (std::f64::consts::PI * self.epoch as f64 / self.t_max as f64).cos();
        self.last = self.base_lrs.iter().map(|b| self.eta_min + (b - self.eta_min) * (1.0 + c) / 2.0).collect();
        for (i, lr) in self.last.iter().enumerate() {
            opt.set_lr(i, *lr);
        }
    }
    fn last_lr(&self) -> &[f64] {
        &self.last
    }
}
