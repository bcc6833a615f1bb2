//! Adam and AdamW (`torch.optim.Adam`, `torch.optim.AdamW`), with AMSGrad and `maximize`.

use super::{check, check_params, Group, Optimizer};
use crate::autograd::no_grad;
use crate::options::{AddcdivInplaceOpts, AddcmulInplaceOpts};
use crate::{Result, Scalar, Tensor};

/// Adam's and AdamW's hyperparameters. `Default` is Adam's PyTorch default (`lr=1e-3`,
/// `betas=(0.9, 0.999)`, `eps=1e-8`, no weight decay); [`AdamOpts::adamw`] is AdamW's (the same
/// with `weight_decay=1e-2`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamOpts {
    /// Learning rate.
    pub lr: f64,
    /// Decay rates of the first and second moment estimates.
    pub betas: (f64, f64),
    /// Added to the denominator for stability.
    pub eps: f64,
    /// Weight decay (L2 penalty for Adam, decoupled for AdamW).
    pub weight_decay: f64,
    /// Use the maximum of past second moments (AMSGrad).
    pub amsgrad: bool,
    /// Maximise the objective instead of minimising it.
    pub maximize: bool,
    /// Update every parameter of a group with one fused kernel (`_fused_adam(w)_`: one pass
    /// over parameter, gradient and moments) instead of one operator per step of the formula.
    /// Needs contiguous float32/float64 parameters; the result is the same up to rounding.
    pub fused: bool,
    /// Update a group's parameters with the `_foreach_*` operators (PyTorch's `foreach=True`
    /// path: one call per step of the formula for the whole list) rather than per parameter.
    /// Same operators and order as the default path; `fused` wins when both are set.
    pub foreach: bool,
}

impl Default for AdamOpts {
    fn default() -> Self {
        AdamOpts {
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
            amsgrad: false,
            maximize: false,
            fused: false,
            foreach: false,
        }
    }
}

impl AdamOpts {
    /// AdamW's PyTorch defaults: Adam's with `weight_decay = 1e-2`.
    pub fn adamw() -> Self {
        AdamOpts { weight_decay: 1e-2, ..Default::default() }
    }

    fn validate(&self) -> Result<()> {
        check(self.lr >= 0.0, "learning rate", self.lr)?;
        check(self.eps >= 0.0, "epsilon value", self.eps)?;
        check((0.0..1.0).contains(&self.betas.0), "beta parameter at index 0", self.betas.0)?;
        check((0.0..1.0).contains(&self.betas.1), "beta parameter at index 1", self.betas.1)?;
        check(self.weight_decay >= 0.0, "weight_decay value", self.weight_decay)
    }
}

/// Per-parameter state: the step count and the moment estimates (created on the first step).
#[derive(Default)]
struct State {
    step: u64,
    exp_avg: Option<Tensor>,
    exp_avg_sq: Option<Tensor>,
    max_exp_avg_sq: Option<Tensor>,
}

/// The shared implementation; `decoupled` selects AdamW's weight decay.
struct AdamCore {
    groups: Vec<Group<AdamOpts, State>>,
    decoupled: bool,
}

impl AdamCore {
    fn add_group(&mut self, params: Vec<Tensor>, opts: AdamOpts) -> Result<()> {
        opts.validate()?;
        check_params(&params)?;
        self.groups.push(Group { opts, params: params.into_iter().map(|p| (p, State::default())).collect() });
        Ok(())
    }

    /// PyTorch's single-tensor update, per parameter with gradient `g`:
    ///
    /// ```text
    /// t ← t + 1;  g ← -g if maximize
    /// Adam: g ← g + wd·p          AdamW: p ← p·(1 − lr·wd)
    /// m ← lerp(m, g, 1 − β1);    v ← β2·v + (1 − β2)·g²;   v̂ ← max(v̂, v) if amsgrad
    /// p ← p − lr/(1 − β1ᵗ) · m / (√v / √(1 − β2ᵗ) + eps)
    /// ```
    fn step(&mut self) -> Result<()> {
        let decoupled = self.decoupled;
        no_grad(|| {
            for group in &mut self.groups {
                let o = group.opts;
                if o.fused {
                    fused_step(group, decoupled)?;
                    continue;
                }
                if o.foreach {
                    foreach_step(group, decoupled)?;
                    continue;
                }
                let (b1, b2) = o.betas;
                for (p, st) in &mut group.params {
                    let Some(mut g) = p.grad() else { continue };
                    if o.maximize {
                        g = g.try_neg()?;
                    }
                    st.step += 1;
                    if o.weight_decay != 0.0 {
                        if decoupled {
                            p.try_mul_scalar_(1.0 - o.lr * o.weight_decay)?;
                        } else {
                            g = g.try_add_with(p, crate::options::AddOpts { alpha: Scalar::Float(o.weight_decay) })?;
                        }
                    }
                    let m = st.exp_avg.get_or_insert_with(|| crate::zeros_like(p));
                    m.try_lerp_scalar_(&g, Scalar::Float(1.0 - b1))?;
                    let v = st.exp_avg_sq.get_or_insert_with(|| crate::zeros_like(p));
                    v.try_mul_scalar_(b2)?;
                    v.try_addcmul_with_(&g, &g, AddcmulInplaceOpts { value: Scalar::Float(1.0 - b2) })?;
                    let t = st.step as i32;
                    let bias_correction1 = 1.0 - b1.powi(t);
                    let bias_correction2_sqrt = (1.0 - b2.powi(t)).sqrt();
                    let second = if o.amsgrad {
                        let vmax = st.max_exp_avg_sq.get_or_insert_with(|| crate::zeros_like(p));
                        *vmax = vmax.try_maximum(v)?;
                        vmax.clone()
                    } else {
                        v.clone()
                    };
                    let denom = second.try_sqrt()?.try_div_scalar(bias_correction2_sqrt)?.try_add_scalar(o.eps)?;
                    let m = st.exp_avg.as_ref().expect("set above");
                    p.try_addcdiv_with_(
                        m,
                        &denom,
                        AddcdivInplaceOpts { value: Scalar::Float(-o.lr / bias_correction1) },
                    )?;
                }
            }
            Ok(())
        })
    }

    fn params(&self) -> Vec<Tensor> {
        self.groups.iter().flat_map(|g| g.params.iter().map(|(p, _)| p.clone())).collect()
    }
}

/// One step of a group with the fused kernel: the parameters that have a gradient, their
/// (lazily created) moments and step counts, in one `_fused_adam(w)_` call.
fn fused_step(group: &mut Group<AdamOpts, State>, decoupled: bool) -> Result<()> {
    let o = group.opts;
    let (mut params, mut grads, mut ms, mut vs, mut vmaxs, mut steps) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for (p, st) in &mut group.params {
        let Some(g) = p.grad() else { continue };
        st.step += 1;
        params.push(p.clone());
        grads.push(g);
        ms.push(st.exp_avg.get_or_insert_with(|| crate::zeros_like(p)).clone());
        vs.push(st.exp_avg_sq.get_or_insert_with(|| crate::zeros_like(p)).clone());
        if o.amsgrad {
            vmaxs.push(st.max_exp_avg_sq.get_or_insert_with(|| crate::zeros_like(p)).clone());
        }
        steps.push(Tensor::scalar(st.step as f32));
    }
    if params.is_empty() {
        return Ok(());
    }
    let call = if decoupled { crate::ops::_fused_adamw_::call } else { crate::ops::_fused_adam_::call };
    call(
        &params,
        &grads,
        &ms,
        &vs,
        &vmaxs,
        &steps,
        o.lr,
        o.betas.0,
        o.betas.1,
        o.weight_decay,
        o.eps,
        o.amsgrad,
        o.maximize,
        None,
        None,
    )
}

/// One step of a group with the `_foreach_*` operators, as PyTorch's `_multi_tensor_adam`:
/// the single-tensor formula applied to the whole list at each step, the per-parameter bias
/// corrections passed as scalar lists.
fn foreach_step(group: &mut Group<AdamOpts, State>, decoupled: bool) -> Result<()> {
    use crate::ops;
    let o = group.opts;
    let (b1, b2) = o.betas;
    let (mut params, mut grads, mut ms, mut vs, mut vmaxs, mut steps, mut kept) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for (k, (p, st)) in group.params.iter_mut().enumerate() {
        let Some(g) = p.grad() else { continue };
        kept.push(k);
        st.step += 1;
        steps.push(st.step as i32);
        params.push(p.clone());
        grads.push(if o.maximize { g.try_neg()? } else { g });
        ms.push(st.exp_avg.get_or_insert_with(|| crate::zeros_like(p)).clone());
        vs.push(st.exp_avg_sq.get_or_insert_with(|| crate::zeros_like(p)).clone());
        if o.amsgrad {
            vmaxs.push(st.max_exp_avg_sq.get_or_insert_with(|| crate::zeros_like(p)).clone());
        }
    }
    if params.is_empty() {
        return Ok(());
    }
    if o.weight_decay != 0.0 {
        if decoupled {
            ops::_foreach_mul_scalar_::call(&params, Scalar::Float(1.0 - o.lr * o.weight_decay))?;
        } else {
            let alpha = Scalar::Float(o.weight_decay);
            grads = grads
                .iter()
                .zip(&params)
                .map(|(g, p)| g.try_add_with(p, crate::options::AddOpts { alpha }))
                .collect::<Result<_>>()?;
        }
    }
    ops::_foreach_lerp_scalar_::call(&ms, &grads, Scalar::Float(1.0 - b1))?;
    ops::_foreach_mul_scalar_::call(&vs, Scalar::Float(b2))?;
    ops::_foreach_addcmul_scalar_::call(&vs, &grads, &grads, Scalar::Float(1.0 - b2))?;
    let second = if o.amsgrad {
        for (vmax, v) in vmaxs.iter_mut().zip(&vs) {
            *vmax = vmax.try_maximum(v)?;
        }
        // The state holds the new maxima.
        for (&k, vmax) in kept.iter().zip(&vmaxs) {
            group.params[k].1.max_exp_avg_sq = Some(vmax.clone());
        }
        &vmaxs
    } else {
        &vs
    };
    let denom = ops::_foreach_sqrt::call(second)?;
    let bc2_sqrt: Vec<Scalar> = steps.iter().map(|&t| Scalar::Float((1.0 - b2.powi(t)).sqrt())).collect();
    ops::_foreach_div_scalarlist_::call(&denom, &bc2_sqrt)?;
    ops::_foreach_add_scalar_::call(&denom, Scalar::Float(o.eps))?;
    let step_size: Vec<Scalar> = steps.iter().map(|&t| Scalar::Float(-o.lr / (1.0 - b1.powi(t)))).collect();
    ops::_foreach_addcdiv_scalarlist_::call(&params, &ms, &denom, &step_size)
}

macro_rules! adam_optimizer {
    ($(#[$doc:meta])* $name:ident, $decoupled:expr) => {
        $(#[$doc])*
        pub struct $name(AdamCore);

        impl $name {
            /// One parameter group with `opts`.
            pub fn new(params: Vec<Tensor>, opts: AdamOpts) -> Result<Self> {
                let mut s = $name(AdamCore { groups: Vec::new(), decoupled: $decoupled });
                s.0.add_group(params, opts)?;
                Ok(s)
            }

            /// Adds a group with its own hyperparameters.
            pub fn add_param_group(&mut self, params: Vec<Tensor>, opts: AdamOpts) -> Result<()> {
                self.0.add_group(params, opts)
            }

            /// The first and second moment estimates of parameter `i` of group `group`.
            pub fn moments(&self, group: usize, i: usize) -> Option<(Tensor, Tensor)> {
                let st = &self.0.groups.get(group)?.params.get(i)?.1;
                Some((st.exp_avg.clone()?, st.exp_avg_sq.clone()?))
            }
        }

        impl Optimizer for $name {
            fn step(&mut self) -> Result<()> {
                self.0.step()
            }
            fn lrs(&self) -> Vec<f64> {
                self.0.groups.iter().map(|g| g.opts.lr).collect()
            }
            fn set_lr(&mut self, group: usize, lr: f64) {
                self.0.groups[group].opts.lr = lr;
            }
            fn params(&self) -> Vec<Tensor> {
                self.0.params()
            }
            fn momentum(&self, group: usize) -> Option<f64> {
                Some(self.0.groups.get(group)?.opts.betas.0)
            }
            fn set_momentum(&mut self, group: usize, beta1: f64) {
                self.0.groups[group].opts.betas.0 = beta1;
            }
        }
    };
}

adam_optimizer!(
    /// `torch.optim.Adam`: weight decay is added to the gradient (L2 regularisation).
    Adam,
    false
);
adam_optimizer!(
    /// `torch.optim.AdamW`: weight decay is applied to the parameter directly (decoupled), before
    /// the Adam update. Use [`AdamOpts::adamw`] for its PyTorch defaults.
    AdamW,
    true
);
