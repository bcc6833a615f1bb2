//! Autograd methods of [`Tensor`]: `requires_grad_`, `retain_grad`, `detach`, `register_hook`,
//! `backward`.

use super::engine;
use super::hooks::{HookHandle, HookList};
use super::mode::is_inference_mode_enabled;
use crate::error::{Error, Result};
use crate::ops_support::unwrap_op;
use crate::tensor::Tensor;
use std::sync::Arc;

/// Options of [`Tensor::try_backward_with`] (`tensor.backward(gradient, retain_graph,
/// create_graph, inputs)`).
#[derive(Clone, Default)]
pub struct BackwardOpts {
    /// The gradient of the tensor (required unless it has one element).
    pub gradient: Option<Tensor>,
    /// Keep the graph's saved tensors for another backward; defaults to `create_graph`.
    pub retain_graph: Option<bool>,
    /// Record the backward computation so that higher-order gradients can be taken.
    pub create_graph: bool,
    /// Accumulate only into these tensors' `.grad` (all leaves when empty).
    pub inputs: Vec<Tensor>,
}

impl Tensor {
    /// Sets whether autograd records operations on this leaf (`requires_grad_`). Returns the
    /// tensor. Only leaves can change the flag (a non-leaf can only be asked for `true`), and only
    /// floating-point tensors can require gradients.
    pub fn try_requires_grad_(&self, requires_grad: bool) -> Result<Tensor> {
        if !self.is_leaf() {
            if !requires_grad {
                return Err(Error::runtime(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
                ));
            }
            return Ok(self.clone());
        }
        if requires_grad {
            if !self.dtype().is_floating_point() {
                return Err(Error::runtime("only Tensors of floating point and complex dtype can require gradients"));
            }
            if self.is_inference() && !is_inference_mode_enabled() {
                return Err(Error::runtime(
                    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
                ));
            }
            self.ag_meta_mut().requires_grad = true;
        } else if let Some(mut m) = self.ag_meta() {
            m.requires_grad = false;
        }
        Ok(self.clone())
    }

    /// Panicking form of [`Tensor::try_requires_grad_`].
    #[track_caller]
    pub fn requires_grad_(&self, requires_grad: bool) -> Tensor {
        unwrap_op(self.try_requires_grad_(requires_grad))
    }

    /// Keeps `.grad` for this non-leaf tensor during backward (no-op for leaves).
    pub fn retain_grad(&self) -> Result<()> {
        if !self.requires_grad() {
            return Err(Error::runtime("can't retain_grad on Tensor that has requires_grad=False"));
        }
        if self.is_leaf() || self.retains_grad() {
            return Ok(());
        }
        let f = self.grad_fn().expect("non-leaf has a grad_fn");
        f.base().add_retains_grad(self.output_nr(), self);
        self.ag_meta_mut().retains_grad = true;
        Ok(())
    }

    /// A new tensor sharing storage (and so the version counter) with this one, without history
    /// and not requiring grad.
    pub fn detach(&self) -> Tensor {
        let l = self.layout();
        self.alias_with_layout(&l.sizes, &l.strides, l.offset).expect("an alias of a valid tensor is valid")
    }

    /// Registers a hook called with this tensor's gradient each time it is computed, before it is
    /// accumulated or passed on; returning `Some(g)` replaces the gradient.
    pub fn register_hook(
        &self,
        f: impl Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    ) -> Result<HookHandle> {
        if !self.requires_grad() {
            return Err(Error::runtime("cannot register a hook on a tensor that doesn't require gradient"));
        }
        let hook: super::hooks::TensorHook = Arc::new(f);
        match self.grad_fn() {
            Some(gf) => Ok(gf.base().register_tensor_pre_hook(self.output_nr(), hook)),
            None => {
                let list = self.ag_meta_mut().leaf_hooks.get_or_insert_with(Default::default).clone();
                Ok(HookList::add(&list, hook))
            }
        }
    }

    /// `tensor.backward()` for a one-element tensor: accumulates gradients into the leaves.
    pub fn try_backward(&self) -> Result<()> {
        self.try_backward_with(BackwardOpts::default())
    }

    /// Panicking form of [`Tensor::try_backward`].
    #[track_caller]
    pub fn backward(&self) {
        unwrap_op(self.try_backward())
    }

    /// `tensor.backward(gradient, retain_graph, create_graph, inputs)`.
    pub fn try_backward_with(&self, opts: BackwardOpts) -> Result<()> {
        engine::backward(
            std::slice::from_ref(self),
            &[opts.gradient],
            opts.retain_graph,
            opts.create_graph,
            &opts.inputs,
        )
    }

    /// Panicking form of [`Tensor::try_backward_with`].
    #[track_caller]
    pub fn backward_with(&self, opts: BackwardOpts) {
        unwrap_op(self.try_backward_with(opts))
    }
}
