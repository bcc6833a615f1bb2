//! Learning-rate schedulers (`torch.optim.lr_scheduler`): call [`LrScheduler::step`] once per
//! epoch (or per batch, for [`OneCycleLr`]), after the optimizer's steps.
//!
//! Each schedule is PyTorch's closed form of the learning rate at an epoch, from the base rates
//! the optimizer had when the scheduler was made. As in PyTorch, making a scheduler applies its
//! epoch-0 rate at once (so [`LinearLr`] starts the warm-up immediately), and [`SequentialLr`]
//! restarts each stage at epoch 0 from the optimizer's original rates.

use super::Optimizer;
use crate::{Error, Result};

/// What the schedulers share: an epoch counter and a closed form of each group's rate.
pub trait LrScheduler {
    /// The learning rates of every group at `epoch`.
    fn lrs_at(&self, epoch: u64) -> Result<Vec<f64>>;
    /// The epoch the last step reached (0 after construction).
    fn last_epoch(&self) -> u64;
    /// Records `epoch` and the rates set for it.
    fn record(&mut self, epoch: u64, lrs: Vec<f64>);
    /// The learning rates the last step set.
    fn last_lr(&self) -> &[f64];
    /// The rates the schedule starts from (the optimizer's when the scheduler was made).
    fn base_lrs(&self) -> &[f64];
    /// Replaces the rates the schedule starts from.
    fn set_base_lrs(&mut self, base: Vec<f64>);

    /// Moves to `epoch` and sets the optimizer's learning rates to that epoch's.
    fn step_to(&mut self, opt: &mut dyn Optimizer, epoch: u64) -> Result<()> {
        let lrs = self.lrs_at(epoch)?;
        for (i, lr) in lrs.iter().enumerate() {
            opt.set_lr(i, *lr);
        }
        self.record(epoch, lrs);
        Ok(())
    }

    /// Advances one epoch and updates the optimizer's learning rates.
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        let next = self.last_epoch() + 1;
        self.step_to(opt, next)
    }
}

/// The bookkeeping every schedule has.
#[derive(Clone, Debug)]
struct Schedule {
    base_lrs: Vec<f64>,
    last: Vec<f64>,
    epoch: u64,
}

impl Schedule {
    fn of(opt: &dyn Optimizer) -> Schedule {
        let base_lrs = opt.lrs();
        Schedule { last: base_lrs.clone(), base_lrs, epoch: 0 }
    }
}

/// Implements the bookkeeping methods of [`LrScheduler`] through a `schedule` field.
macro_rules! schedule_accessors {
    () => {
        fn last_epoch(&self) -> u64 {
            self.schedule.epoch
        }
        fn record(&mut self, epoch: u64, lrs: Vec<f64>) {
            self.schedule.epoch = epoch;
            self.schedule.last = lrs;
        }
        fn last_lr(&self) -> &[f64] {
            &self.schedule.last
        }
        fn base_lrs(&self) -> &[f64] {
            &self.schedule.base_lrs
        }
        fn set_base_lrs(&mut self, base: Vec<f64>) {
            self.schedule.base_lrs = base;
        }
    };
}

/// `StepLR`: multiplies the learning rate by `gamma` every `step_size` epochs
/// (`lr = base_lr · gamma^⌊epoch / step_size⌋`).
pub struct StepLr {
    schedule: Schedule,
    step_size: u64,
    gamma: f64,
}

impl StepLr {
    /// Remembers the optimizer's current learning rates as the base ones.
    pub fn new(opt: &mut dyn Optimizer, step_size: u64, gamma: f64) -> Result<Self> {
        if step_size == 0 {
            return Err(Error::value("StepLR: step_size must be positive"));
        }
        Ok(StepLr { schedule: Schedule::of(opt), step_size, gamma })
    }
}

impl LrScheduler for StepLr {
    fn lrs_at(&self, epoch: u64) -> Result<Vec<f64>> {
        let k = (epoch / self.step_size) as i32;
        Ok(self.schedule.base_lrs.iter().map(|b| b * self.gamma.powi(k)).collect())
    }
    schedule_accessors!();
}

/// `CosineAnnealingLR`: anneals from the base learning rate to `eta_min` over `t_max` epochs
/// along a half cosine, `lr = eta_min + (base_lr − eta_min)(1 + cos(π·epoch / t_max)) / 2`, and
/// continues the cosine (back up) past `t_max`, as PyTorch's closed form does.
pub struct CosineAnnealingLr {
    schedule: Schedule,
    t_max: u64,
    eta_min: f64,
}

impl CosineAnnealingLr {
    /// Remembers the optimizer's current learning rates as the base ones.
    pub fn new(opt: &mut dyn Optimizer, t_max: u64, eta_min: f64) -> Result<Self> {
        if t_max == 0 {
            return Err(Error::value("CosineAnnealingLR: T_max must be positive"));
        }
        Ok(CosineAnnealingLr { schedule: Schedule::of(opt), t_max, eta_min })
    }
}

impl LrScheduler for CosineAnnealingLr {
    fn lrs_at(&self, epoch: u64) -> Result<Vec<f64>> {
        let c = (std::f64::consts::PI * epoch as f64 / self.t_max as f64).cos();
        Ok(self.schedule.base_lrs.iter().map(|b| self.eta_min + (b - self.eta_min) * (1.0 + c) / 2.0).collect())
    }
    schedule_accessors!();
}

/// `LinearLR`: scales the base rate by a factor going linearly from `start_factor` to
/// `end_factor` over `total_iters` epochs, then stays at `end_factor` (a warm-up with the
/// defaults `1/3 → 1` over 5 epochs).
pub struct LinearLr {
    schedule: Schedule,
    start_factor: f64,
    end_factor: f64,
    total_iters: u64,
}

impl LinearLr {
    /// A linear schedule; applies `start_factor` to the optimizer at once.
    pub fn new(opt: &mut dyn Optimizer, start_factor: f64, end_factor: f64, total_iters: u64) -> Result<Self> {
        if !(start_factor > 0.0 && start_factor <= 1.0) {
            return Err(Error::value(
                "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.",
            ));
        }
        if !(0.0..=1.0).contains(&end_factor) {
            return Err(Error::value("Ending multiplicative factor expected to be between 0 and 1."));
        }
        let mut s = LinearLr { schedule: Schedule::of(opt), start_factor, end_factor, total_iters };
        s.step_to(opt, 0)?;
        Ok(s)
    }
}

impl LrScheduler for LinearLr {
    fn lrs_at(&self, epoch: u64) -> Result<Vec<f64>> {
        let done =
            if self.total_iters == 0 { 1.0 } else { epoch.min(self.total_iters) as f64 / self.total_iters as f64 };
        let factor = self.start_factor + (self.end_factor - self.start_factor) * done;
        Ok(self.schedule.base_lrs.iter().map(|b| b * factor).collect())
    }
    schedule_accessors!();
}

/// How [`OneCycleLr`] moves between two rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Anneal {
    /// Half a cosine (PyTorch's default).
    #[default]
    Cos,
    /// A straight line.
    Linear,
}

impl Anneal {
    fn at(self, start: f64, end: f64, pct: f64) -> f64 {
        match self {
            Anneal::Cos => end + (start - end) / 2.0 * ((std::f64::consts::PI * pct).cos() + 1.0),
            Anneal::Linear => (end - start) * pct + start,
        }
    }
}

/// [`OneCycleLr`]'s options; `Default` is PyTorch's (`pct_start=0.3`, cosine, `div_factor=25`,
/// `final_div_factor=1e4`, momentum cycled between 0.85 and 0.95, two phases).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneCycleOpts {
    /// The fraction of the steps spent increasing the rate.
    pub pct_start: f64,
    /// The curve between rates.
    pub anneal_strategy: Anneal,
    /// Cycle the momentum (β1 for Adam) inversely to the rate.
    pub cycle_momentum: bool,
    /// The momentum at the peak rate.
    pub base_momentum: f64,
    /// The momentum at the lowest rates.
    pub max_momentum: f64,
    /// The initial rate is `max_lr / div_factor`.
    pub div_factor: f64,
    /// The final rate is the initial rate `/ final_div_factor`.
    pub final_div_factor: f64,
    /// Up, back down to the initial rate, then to the final one (else up, then down to final).
    pub three_phase: bool,
}

impl Default for OneCycleOpts {
    fn default() -> Self {
        OneCycleOpts {
            pct_start: 0.3,
            anneal_strategy: Anneal::Cos,
            cycle_momentum: true,
            base_momentum: 0.85,
            max_momentum: 0.95,
            div_factor: 25.0,
            final_div_factor: 1e4,
            three_phase: false,
        }
    }
}

/// One phase of a one-cycle schedule: from `start` to `end` (factors of `max_lr` for the rate,
/// momenta for the momentum) up to step `end_step`.
#[derive(Clone, Copy, Debug)]
struct Phase {
    end_step: f64,
    lr: (f64, f64),
    momentum: (f64, f64),
}

/// `OneCycleLR`: the 1cycle policy, stepped once per *batch* for `total_steps` steps. The rate
/// rises from `max_lr / div_factor` to `max_lr` over the first `pct_start` of the steps, then
/// falls to `max_lr / (div_factor · final_div_factor)`; the momentum moves the other way.
pub struct OneCycleLr {
    schedule: Schedule,
    max_lrs: Vec<f64>,
    total_steps: u64,
    opts: OneCycleOpts,
    phases: Vec<Phase>,
    momenta: Vec<f64>,
}

impl OneCycleLr {
    /// A schedule peaking at `max_lr` (every group) over `total_steps` steps; sets the initial
    /// rate (and momentum) at once.
    pub fn new(opt: &mut dyn Optimizer, max_lr: f64, total_steps: u64, opts: OneCycleOpts) -> Result<Self> {
        if total_steps == 0 {
            return Err(Error::value(format!("Expected positive integer total_steps, but got {total_steps}")));
        }
        if !(0.0..=1.0).contains(&opts.pct_start) {
            return Err(Error::value(format!("Expected float between 0 and 1 pct_start, but got {}", opts.pct_start)));
        }
        let groups = opt.lrs().len();
        if opts.cycle_momentum && (0..groups).any(|g| opt.momentum(g).is_none()) {
            return Err(Error::value("optimizer must support momentum or beta1 with `cycle_momentum` option enabled"));
        }
        let initial = 1.0 / opts.div_factor;
        let min = initial / opts.final_div_factor;
        let (lo_m, hi_m) = (opts.base_momentum, opts.max_momentum);
        let n = total_steps as f64;
        let up = opts.pct_start * n - 1.0;
        let phases = if opts.three_phase {
            vec![
                Phase { end_step: up, lr: (initial, 1.0), momentum: (hi_m, lo_m) },
                Phase { end_step: 2.0 * opts.pct_start * n - 2.0, lr: (1.0, initial), momentum: (lo_m, hi_m) },
                Phase { end_step: n - 1.0, lr: (initial, min), momentum: (hi_m, hi_m) },
            ]
        } else {
            vec![
                Phase { end_step: up, lr: (initial, 1.0), momentum: (hi_m, lo_m) },
                Phase { end_step: n - 1.0, lr: (1.0, min), momentum: (lo_m, hi_m) },
            ]
        };
        let mut s = OneCycleLr {
            schedule: Schedule { base_lrs: vec![max_lr * initial; groups], last: vec![], epoch: 0 },
            max_lrs: vec![max_lr; groups],
            total_steps,
            opts,
            phases,
            momenta: vec![hi_m; groups],
        };
        s.step_to(opt, 0)?;
        Ok(s)
    }

    /// The (rate factor, momentum) at `step`.
    fn at(&self, step: u64) -> (f64, f64) {
        let step = step as f64;
        let mut start = 0.0;
        for (i, p) in self.phases.iter().enumerate() {
            if step <= p.end_step || i == self.phases.len() - 1 {
                let pct = if p.end_step > start { (step - start) / (p.end_step - start) } else { 1.0 };
                let a = self.opts.anneal_strategy;
                return (a.at(p.lr.0, p.lr.1, pct), a.at(p.momentum.0, p.momentum.1, pct));
            }
            start = p.end_step;
        }
        unreachable!("the last phase always matches")
    }

    /// The momenta the last step set (when cycling momentum).
    pub fn last_momentum(&self) -> &[f64] {
        &self.momenta
    }
}

impl LrScheduler for OneCycleLr {
    fn lrs_at(&self, epoch: u64) -> Result<Vec<f64>> {
        if epoch >= self.total_steps {
            return Err(Error::value(format!(
                "Tried to step {} times. The specified number of total steps is {}",
                epoch + 1,
                self.total_steps
            )));
        }
        let (factor, _) = self.at(epoch);
        Ok(self.max_lrs.iter().map(|m| m * factor).collect())
    }

    fn step_to(&mut self, opt: &mut dyn Optimizer, epoch: u64) -> Result<()> {
        let lrs = self.lrs_at(epoch)?;
        let (_, momentum) = self.at(epoch);
        for (i, lr) in lrs.iter().enumerate() {
            opt.set_lr(i, *lr);
            if self.opts.cycle_momentum {
                opt.set_momentum(i, momentum);
            }
        }
        self.momenta = vec![momentum; lrs.len()];
        self.record(epoch, lrs);
        Ok(())
    }

    fn set_base_lrs(&mut self, base: Vec<f64>) {
        // The schedule is defined by `max_lr`: keep the ratio to the initial rate.
        self.max_lrs = base.iter().map(|b| b * self.opts.div_factor).collect();
        self.schedule.base_lrs = base;
    }

    fn last_epoch(&self) -> u64 {
        self.schedule.epoch
    }
    fn record(&mut self, epoch: u64, lrs: Vec<f64>) {
        self.schedule.epoch = epoch;
        self.schedule.last = lrs;
    }
    fn last_lr(&self) -> &[f64] {
        &self.schedule.last
    }
    fn base_lrs(&self) -> &[f64] {
        &self.schedule.base_lrs
    }
}

/// `SequentialLR`: runs `schedulers[0]` until `milestones[0]`, then `schedulers[1]` restarted
/// at its epoch 0, and so on; every stage starts from the optimizer's original rates. The usual
/// warm-up then cosine decay is `SequentialLr::new(opt, vec![linear, cosine], &[warmup])`.
pub struct SequentialLr {
    schedulers: Vec<Box<dyn LrScheduler>>,
    milestones: Vec<u64>,
    epoch: u64,
}

impl SequentialLr {
    /// Chains `schedulers` at `milestones` (one fewer than schedulers, increasing).
    pub fn new(opt: &mut dyn Optimizer, mut schedulers: Vec<Box<dyn LrScheduler>>, milestones: &[u64]) -> Result<Self> {
        if schedulers.is_empty() {
            return Err(Error::value("SequentialLR expects at least one scheduler"));
        }
        if milestones.len() + 1 != schedulers.len() {
            return Err(Error::value(format!(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone points, but got number of schedulers {} and the number of milestones to be equal to {}",
                schedulers.len(),
                milestones.len()
            )));
        }
        if milestones.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::value("SequentialLR: milestones must be increasing"));
        }
        // The first scheduler saw the optimizer's original rates; later ones may have seen rates
        // an earlier scheduler had already changed.
        let base = schedulers[0].base_lrs().to_vec();
        for s in &mut schedulers {
            s.set_base_lrs(base.clone());
        }
        schedulers[0].step_to(opt, 0)?;
        Ok(SequentialLr { schedulers, milestones: milestones.to_vec(), epoch: 0 })
    }

    /// The stage running at `epoch`.
    fn stage(&self, epoch: u64) -> usize {
        self.milestones.iter().take_while(|&&m| m <= epoch).count()
    }

    /// Advances one epoch: the current stage steps, or the next one starts at its epoch 0.
    pub fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        self.epoch += 1;
        let i = self.stage(self.epoch);
        if i > 0 && self.milestones[i - 1] == self.epoch {
            self.schedulers[i].step_to(opt, 0)
        } else {
            self.schedulers[i].step(opt)
        }
    }

    /// The learning rates the last step set.
    pub fn last_lr(&self) -> &[f64] {
        self.schedulers[self.stage(self.epoch)].last_lr()
    }
}

/// Whether [`ReduceLrOnPlateau`] watches a metric that should fall or rise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PlateauMode {
    /// Lower is better (a loss).
    #[default]
    Min,
    /// Higher is better (an accuracy).
    Max,
}

/// [`ReduceLrOnPlateau`]'s options; `Default` is PyTorch's (`factor=0.1`, `patience=10`,
/// `threshold=1e-4` relative, no cooldown, `min_lr=0`, `eps=1e-8`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlateauOpts {
    /// Lower or higher is better.
    pub mode: PlateauMode,
    /// The rate is multiplied by this on a plateau.
    pub factor: f64,
    /// Epochs without improvement tolerated before reducing.
    pub patience: u64,
    /// The least change that counts as an improvement.
    pub threshold: f64,
    /// `threshold` relative to the best value (else absolute).
    pub relative_threshold: bool,
    /// Epochs to wait after a reduction before counting again.
    pub cooldown: u64,
    /// The rate never goes below this.
    pub min_lr: f64,
    /// Reductions smaller than this are skipped.
    pub eps: f64,
}

impl Default for PlateauOpts {
    fn default() -> Self {
        PlateauOpts {
            mode: PlateauMode::Min,
            factor: 0.1,
            patience: 10,
            threshold: 1e-4,
            relative_threshold: true,
            cooldown: 0,
            min_lr: 0.0,
            eps: 1e-8,
        }
    }
}

/// `ReduceLROnPlateau`: multiplies the rates by `factor` once a metric has not improved for
/// more than `patience` epochs. Step it with the metric: [`ReduceLrOnPlateau::step`].
pub struct ReduceLrOnPlateau {
    opts: PlateauOpts,
    best: f64,
    num_bad_epochs: u64,
    cooldown_counter: u64,
    last: Vec<f64>,
}

impl ReduceLrOnPlateau {
    /// Watches a metric for `opt`.
    pub fn new(opt: &dyn Optimizer, opts: PlateauOpts) -> Result<Self> {
        if opts.factor >= 1.0 {
            return Err(Error::value("Factor should be < 1.0."));
        }
        let best = match opts.mode {
            PlateauMode::Min => f64::INFINITY,
            PlateauMode::Max => f64::NEG_INFINITY,
        };
        Ok(ReduceLrOnPlateau { opts, best, num_bad_epochs: 0, cooldown_counter: 0, last: opt.lrs() })
    }

    fn is_better(&self, a: f64) -> bool {
        let (t, best) = (self.opts.threshold, self.best);
        match (self.opts.mode, self.opts.relative_threshold) {
            (PlateauMode::Min, true) => a < best * (1.0 - t),
            (PlateauMode::Min, false) => a < best - t,
            (PlateauMode::Max, true) => a > best * (t + 1.0),
            (PlateauMode::Max, false) => a > best + t,
        }
    }

    /// Records this epoch's `metric` and reduces the rates on a plateau.
    pub fn step(&mut self, opt: &mut dyn Optimizer, metric: f64) {
        if self.is_better(metric) {
            self.best = metric;
            self.num_bad_epochs = 0;
        } else {
            self.num_bad_epochs += 1;
        }
        if self.cooldown_counter > 0 {
            self.cooldown_counter -= 1;
            self.num_bad_epochs = 0;
        }
        if self.num_bad_epochs > self.opts.patience {
            for (i, old) in opt.lrs().into_iter().enumerate() {
                let new = (old * self.opts.factor).max(self.opts.min_lr);
                if old - new > self.opts.eps {
                    opt.set_lr(i, new);
                }
            }
            self.cooldown_counter = self.opts.cooldown;
            self.num_bad_epochs = 0;
        }
        self.last = opt.lrs();
    }

    /// The learning rates after the last step.
    pub fn last_lr(&self) -> &[f64] {
        &self.last
    }
}
