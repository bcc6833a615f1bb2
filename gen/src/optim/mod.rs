//! Optimizers and learning-rate schedulers, with `torch.optim`'s update rules.
//!
//! An optimizer holds handles to the parameters (tensors share their storage, so updating the
//! handle updates the model) in one or more parameter groups, each with its own
//! hyperparameters. [`Optimizer::step`] reads every parameter's `.grad()` and updates the
//! parameter in place under [`no_grad`](crate::autograd::no_grad); parameters without a gradient
//! are skipped, as in PyTorch. [`Optimizer::zero_grad`] sets the gradients to `None`
//! (PyTorch's default `set_to_none=True`).
//!
//! ```
//! use oxten::optim::{Optimizer, Sgd, SgdOpts};
//! use oxten::Tensor;
//! let w = Tensor::from_vec(vec![1.0f32, -2.0], &[2]).unwrap().requires_grad_(true);
//! let mut opt = Sgd::new(vec![w.clone()], SgdOpts { lr: 0.1, ..Default::default() }).unwrap();
//! w.mul(&w).sum().backward(); // d/dw = 2w
//! opt.step().unwrap();
//! opt.zero_grad();
//! assert_eq!(w.to_vec::<f32>().unwrap(), [0.8, -1.6]);
//! assert!(w.grad().is_none());
//! ```

mod adam;
mod lr_scheduler;
mod rmsprop;
mod sgd;

pub use adam::{Adam, AdamOpts, AdamW};
pub use lr_scheduler::{
    Anneal, CosineAnnealingLr, LinearLr, LrScheduler, OneCycleLr, OneCycleOpts, PlateauMode, PlateauOpts,
    ReduceLrOnPlateau, SequentialLr, StepLr,
};
pub use rmsprop::{Adagrad, AdagradOpts, Rmsprop, RmspropOpts};
pub use sgd::{Sgd, SgdOpts};

use crate::{Error, Result, Tensor};

/// What every optimizer does.
pub trait Optimizer {
    /// One update of every parameter that has a gradient.
    fn step(&mut self) -> Result<()>;
    /// The parameter groups' learning rates, in order.
    fn lrs(&self) -> Vec<f64>;
    /// Sets the learning rate of group `i` (what the schedulers call).
    fn set_lr(&mut self, group: usize, lr: f64);
    /// Every parameter handle, all groups in order.
    fn params(&self) -> Vec<Tensor>;
    /// The momentum (SGD, RMSprop) or β1 (Adam) of group `group`, for schedulers that cycle it
    /// ([`OneCycleLr`]); `None` for optimizers without one.
    fn momentum(&self, _group: usize) -> Option<f64> {
        None
    }
    /// Sets what [`Optimizer::momentum`] reads; ignored by optimizers without a momentum.
    fn set_momentum(&mut self, _group: usize, _momentum: f64) {}
    /// Clears every parameter's gradient (sets it to `None`).
    fn zero_grad(&self) {
        for p in self.params() {
            p.set_grad(None);
        }
    }
}

/// A group of parameters sharing hyperparameters `O`; the optimizer's per-parameter state `S`
/// (momentum buffers, moment estimates) sits beside each parameter.
pub(crate) struct Group<O, S> {
    pub(crate) opts: O,
    pub(crate) params: Vec<(Tensor, S)>,
}

/// Checks a hyperparameter with PyTorch's message: `Invalid learning rate: -1`.
pub(crate) fn check(ok: bool, what: &str, value: f64) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::value(format!("Invalid {what}: {value}")))
    }
}

/// The parameters must be floating-point leaves; PyTorch rejects non-leaf tensors ("can't
/// optimize a non-leaf Tensor").
pub(crate) fn check_params(params: &[Tensor]) -> Result<()> {
    if params.is_empty() {
        return Err(Error::value("optimizer got an empty parameter list"));
    }
    for (i, p) in params.iter().enumerate() {
        if !p.is_leaf() {
            return Err(Error::value(format!("can't optimize a non-leaf Tensor (parameter {i})")));
        }
        if !p.dtype().is_floating_point() {
            return Err(Error::value(format!(
                "optimizer parameter {i} has dtype {}; only floating-point parameters can be optimized",
                p.dtype()
            )));
        }
    }
    Ok(())
}
