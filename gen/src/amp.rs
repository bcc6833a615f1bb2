//! Gradient scaling for mixed-precision training (`torch.amp.GradScaler`).
//!
//! f16 gradients underflow where f32 ones would not: the scaler multiplies the loss by a large
//! factor before `backward`, divides the gradients by it before the optimizer step (skipping the
//! step when a gradient came out inf or NaN), and adapts the factor: halved after a step with
//! non-finite gradients, doubled after `growth_interval` steps without. PyTorch's semantics and
//! defaults (scale 2^16, growth 2.0, backoff 0.5, interval 2000); the per-step work is the two
//! operators of `native_functions.yaml`, `_amp_foreach_non_finite_check_and_unscale_` and
//! `_amp_update_scale_`, which keep the scale and the found-inf flag on the gradients' device.
//!
//! ```
//! use oxten::amp::{GradScaler, GradScalerOpts};
//! use oxten::optim::{Optimizer, Sgd, SgdOpts};
//! use oxten::Tensor;
//! let w = Tensor::from_vec(vec![1.0f32, -2.0], &[2]).unwrap().requires_grad_(true);
//! let mut opt = Sgd::new(vec![w.clone()], SgdOpts { lr: 0.1, ..Default::default() }).unwrap();
//! let mut scaler = GradScaler::new(GradScalerOpts::default()).unwrap();
//! let loss = w.mul(&w).sum();
//! scaler.scale(&loss).unwrap().backward();     // gradients are 2^16 · 2w
//! assert!(scaler.step(&mut opt).unwrap());     // unscaled to 2w, then stepped
//! scaler.update().unwrap();
//! assert_eq!(w.to_vec::<f32>().unwrap(), [0.8, -1.6]);
//! ```

use crate::optim::Optimizer;
use crate::{ops, DType, Device, Error, Result, Tensor};
use std::collections::HashMap;

/// [`GradScaler`]'s settings (`torch.amp.GradScaler`'s arguments).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradScalerOpts {
    /// The first scale factor (2^16).
    pub init_scale: f64,
    /// The factor the scale grows by after `growth_interval` steps without inf/NaN (2.0).
    pub growth_factor: f64,
    /// The factor the scale shrinks by after a step with inf/NaN gradients (0.5).
    pub backoff_factor: f64,
    /// Steps without inf/NaN between two growths (2000).
    pub growth_interval: i64,
    /// `false` makes every method a pass-through (`scale` returns its input, `step` steps).
    pub enabled: bool,
}

impl Default for GradScalerOpts {
    fn default() -> Self {
        GradScalerOpts {
            init_scale: 65536.0,
            growth_factor: 2.0,
            backoff_factor: 0.5,
            growth_interval: 2000,
            enabled: true,
        }
    }
}

/// Where an optimizer is in the current iteration (PyTorch's `OptState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Ready,
    Unscaled,
    Stepped,
}

struct OptimizerState {
    stage: Stage,
    /// 1.0 on the gradients' device when an unscaled gradient was inf or NaN.
    found_inf: Option<Tensor>,
}

/// Dynamic loss scaling (`torch.amp.GradScaler`): [`scale`](Self::scale) the loss,
/// `backward`, optionally [`unscale_`](Self::unscale_) (to clip gradients),
/// [`step`](Self::step), [`update`](Self::update).
pub struct GradScaler {
    opts: GradScalerOpts,
    /// The scale (a one-element f32 tensor on the device of the first scaled output).
    scale: Option<Tensor>,
    /// Consecutive steps without inf/NaN (a one-element i32 tensor beside the scale).
    growth_tracker: Option<Tensor>,
    /// Per optimizer (by address) in this iteration.
    optimizers: HashMap<usize, OptimizerState>,
}

fn opt_id(opt: &dyn Optimizer) -> usize {
    opt as *const dyn Optimizer as *const () as usize
}

impl GradScaler {
    /// A scaler with `opts`; the factors must be positive, growth above 1 and backoff below 1,
    /// and the interval positive, as PyTorch checks.
    pub fn new(opts: GradScalerOpts) -> Result<GradScaler> {
        if opts.enabled {
            if opts.growth_factor.is_nan() || opts.growth_factor <= 1.0 {
                return Err(Error::value(format!(
                    "GradScaler: the growth factor must be > 1.0, got {}",
                    opts.growth_factor
                )));
            }
            if opts.backoff_factor.is_nan() || opts.backoff_factor <= 0.0 || opts.backoff_factor >= 1.0 {
                return Err(Error::value(format!(
                    "GradScaler: the backoff factor must be < 1.0 and > 0, got {}",
                    opts.backoff_factor
                )));
            }
            if opts.growth_interval <= 0 {
                return Err(Error::value(format!(
                    "GradScaler: the growth interval must be a positive integer, got {}",
                    opts.growth_interval
                )));
            }
            if !opts.init_scale.is_finite() || opts.init_scale <= 0.0 {
                return Err(Error::value(format!(
                    "GradScaler: the initial scale must be positive and finite, got {}",
                    opts.init_scale
                )));
            }
        }
        Ok(GradScaler { opts, scale: None, growth_tracker: None, optimizers: HashMap::new() })
    }

    /// Whether the scaler does anything.
    pub fn is_enabled(&self) -> bool {
        self.opts.enabled
    }

    /// `outputs` times the scale (created on `outputs`' device on first use).
    pub fn scale(&mut self, outputs: &Tensor) -> Result<Tensor> {
        if !self.opts.enabled {
            return Ok(outputs.clone());
        }
        let device = outputs.device();
        if self.scale.is_none() {
            self.scale = Some(Tensor::scalar(self.opts.init_scale as f32).try_to_device(device)?);
            self.growth_tracker = Some(Tensor::scalar(0i32).try_to_device(device)?);
        }
        let scale = self.scale.as_ref().expect("set above");
        outputs.try_mul(&scale.try_to_device(device)?.try_to_dtype(outputs.dtype())?)
    }

    fn scale_tensor(&self, what: &str) -> Result<&Tensor> {
        self.scale.as_ref().ok_or_else(|| {
            Error::runtime(format!(
                "GradScaler.{what}: no scale yet: this iteration did not call scale() (no inf checks were recorded)"
            ))
        })
    }

    /// Divides the gradients of `opt`'s parameters by the scale in place and records whether any
    /// was inf or NaN; once per optimizer between two [`update`](Self::update)s.
    pub fn unscale_(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        if !self.opts.enabled {
            return Ok(());
        }
        let id = opt_id(opt);
        match self.optimizers.get(&id).map(|s| s.stage) {
            Some(Stage::Unscaled) => {
                return Err(Error::runtime(
                    "unscale_() has already been called on this optimizer since the last update().",
                ))
            }
            Some(Stage::Stepped) => return Err(Error::runtime("unscale_() is being called after step().")),
            _ => {}
        }
        let scale = self.scale_tensor("unscale_")?;
        // 1 / scale in f64, rounded to f32 once, as PyTorch computes it.
        let inv_scale = crate::autograd::no_grad(|| {
            Tensor::scalar(1.0f64).try_div(&scale.try_to_dtype(DType::F64)?)?.try_to_dtype(DType::F32)
        })?;
        let grads: Vec<Tensor> = opt.params().iter().filter_map(Tensor::grad).collect();
        let device = grads.first().map_or(scale.device(), Tensor::device);
        let found_inf = Tensor::scalar(0.0f32).try_to_device(device)?;
        if !grads.is_empty() {
            let inv = inv_scale.try_to_device(device)?;
            crate::autograd::no_grad(|| {
                ops::_amp_foreach_non_finite_check_and_unscale_::call(&grads, &found_inf, &inv)
            })?;
        }
        self.optimizers.insert(id, OptimizerState { stage: Stage::Unscaled, found_inf: Some(found_inf) });
        Ok(())
    }

    /// Unscales `opt`'s gradients (unless [`unscale_`](Self::unscale_) did) and runs
    /// `opt.step()` when none of them is inf or NaN; returns whether it stepped.
    pub fn step(&mut self, opt: &mut dyn Optimizer) -> Result<bool> {
        if !self.opts.enabled {
            opt.step()?;
            return Ok(true);
        }
        let id = opt_id(opt);
        if self.optimizers.get(&id).is_some_and(|s| s.stage == Stage::Stepped) {
            return Err(Error::runtime("step() has already been called since the last update()."));
        }
        if self.optimizers.get(&id).is_none_or(|s| s.stage == Stage::Ready) {
            self.unscale_(opt)?;
        }
        let state = self.optimizers.get_mut(&id).expect("unscaled above");
        let found = match &state.found_inf {
            Some(f) => f.try_to_dtype(DType::F64)?.item::<f64>()? != 0.0,
            None => false,
        };
        if !found {
            opt.step()?;
        }
        state.stage = Stage::Stepped;
        Ok(!found)
    }

    /// Adapts the scale from this iteration's inf/NaN checks (every optimizer's) and starts the
    /// next iteration.
    pub fn update(&mut self) -> Result<()> {
        if !self.opts.enabled {
            return Ok(());
        }
        let scale = self.scale_tensor("update")?.clone();
        let tracker = self.growth_tracker.clone().expect("made with the scale");
        let device = scale.device();
        let mut found = Tensor::scalar(0.0f32).try_to_device(device)?;
        let flags: Vec<&Tensor> = self.optimizers.values().filter_map(|s| s.found_inf.as_ref()).collect();
        if flags.is_empty() {
            return Err(Error::runtime("No inf checks were recorded prior to update."));
        }
        for f in flags {
            found = found.try_add(&f.try_to_device(device)?)?;
        }
        crate::autograd::no_grad(|| {
            ops::_amp_update_scale_::call(
                &scale,
                &tracker,
                &found,
                self.opts.growth_factor,
                self.opts.backoff_factor,
                self.opts.growth_interval,
            )
        })?;
        self.optimizers.clear();
        Ok(())
    }

    /// Sets the scale to `new_scale` (`scaler.update(new_scale)`) and starts the next iteration.
    pub fn update_to(&mut self, new_scale: f64) -> Result<()> {
        if !self.opts.enabled {
            return Ok(());
        }
        let device = self.scale.as_ref().map_or(Device::Cpu, Tensor::device);
        self.scale = Some(Tensor::scalar(new_scale as f32).try_to_device(device)?);
        if self.growth_tracker.is_none() {
            self.growth_tracker = Some(Tensor::scalar(0i32).try_to_device(device)?);
        }
        self.optimizers.clear();
        Ok(())
    }

    /// The current scale (`init_scale` before the first [`scale`](Self::scale); 1.0 when
    /// disabled).
    pub fn get_scale(&self) -> f64 {
        if !self.opts.enabled {
            return 1.0;
        }
        match &self.scale {
            Some(s) => s.try_to_dtype(DType::F64).and_then(|s| s.item::<f64>()).unwrap_or(f64::NAN),
            None => self.opts.init_scale,
        }
    }

    /// Consecutive steps without inf/NaN since the last change of scale.
    pub fn get_growth_tracker(&self) -> i64 {
        match &self.growth_tracker {
            Some(t) => t.try_to_dtype(DType::I64).and_then(|t| t.item::<i64>()).unwrap_or(0),
            None => 0,
        }
    }

    /// The settings.
    pub fn opts(&self) -> GradScalerOpts {
        self.opts
    }

    /// PyTorch's `state_dict()` entries: `scale`, `growth_factor`, `backoff_factor`,
    /// `growth_interval`, `_growth_tracker` (empty when disabled).
    pub fn state_dict(&self) -> Vec<(String, f64)> {
        if !self.opts.enabled {
            return Vec::new();
        }
        vec![
            ("scale".into(), self.get_scale()),
            ("growth_factor".into(), self.opts.growth_factor),
            ("backoff_factor".into(), self.opts.backoff_factor),
            ("growth_interval".into(), self.opts.growth_interval as f64),
            ("_growth_tracker".into(), self.get_growth_tracker() as f64),
        ]
    }

    /// Restores what [`state_dict`](Self::state_dict) saved; an empty dict for an enabled scaler
    /// is an error, as in PyTorch.
    pub fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        if !self.opts.enabled {
            return Ok(());
        }
        if state.is_empty() {
            return Err(Error::runtime(
                "The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler.",
            ));
        }
        let get = |k: &str| {
            state
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| *v)
                .ok_or_else(|| Error::value(format!("GradScaler.load_state_dict: missing `{k}`")))
        };
        let device = self.scale.as_ref().map_or(Device::Cpu, Tensor::device);
        self.opts.growth_factor = get("growth_factor")?;
        self.opts.backoff_factor = get("backoff_factor")?;
        self.opts.growth_interval = get("growth_interval")? as i64;
        self.scale = Some(Tensor::scalar(get("scale")? as f32).try_to_device(device)?);
        self.growth_tracker = Some(Tensor::scalar(get("_growth_tracker")? as i32).try_to_device(device)?);
        Ok(())
    }
}
