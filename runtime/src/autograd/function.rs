//! Custom autograd functions (`torch.autograd.Function`): a forward computed without recording
//! history and a user-written backward, joined to the graph as one node.
//!
//! ```ignore
//! struct Square;
//! impl Function for Square {
//!     fn name(&self) -> String { "Square".into() }
//!     fn forward(&self, ctx: &mut FunctionCtx, x: &[Tensor]) -> Result<Vec<Tensor>> {
//!         ctx.save_for_backward(&[x[0].clone()]);
//!         Ok(vec![x[0].try_mul(&x[0])?])
//!     }
//!     fn backward(&self, ctx: &FunctionCtx, g: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
//!         let x = &ctx.saved_tensors()?[0];
//!         Ok(vec![Some(g[0].as_ref().unwrap().try_mul(&x.try_mul_scalar(2.0)?)?)])
//!     }
//! }
//! let y = apply_function(Square, &[x])?;
//! ```

use super::history::{collect_next_edges, make_view_with, set_history_at};
use super::meta::CreationMeta;
use super::mode::{is_grad_enabled, NoGradGuard};
use super::node::{InputMetadata, Node, NodeBase};
use super::saved::SavedVariable;
use super::utils;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use std::any::Any;
use std::sync::{Arc, OnceLock, Weak};

/// A custom differentiable function.
pub trait Function: Send + Sync + 'static {
    /// The node is named `"{name}Backward"`.
    fn name(&self) -> String;
    /// Computes the outputs (grad mode is off). Save what backward needs on `ctx`.
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>>;
    /// Given the gradients of the outputs, returns one gradient per input (`None` = zero).
    /// Runs with grad mode = `create_graph`.
    fn backward(&self, ctx: &FunctionCtx, grads: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>>;
}

/// The context shared by a custom function's forward and backward.
pub struct FunctionCtx {
    to_save: Vec<Tensor>,
    /// Set once, right after the node is created (saved outputs need their history first).
    saved: OnceLock<Vec<SavedVariable>>,
    needs_input_grad: Vec<bool>,
    non_differentiable: Vec<Tensor>,
    materialize_grads: bool,
    data: Option<Box<dyn Any + Send + Sync>>,
    node: OnceLock<Weak<dyn Node>>,
}

impl FunctionCtx {
    fn new(needs_input_grad: Vec<bool>) -> Self {
        FunctionCtx {
            to_save: Vec::new(),
            saved: OnceLock::new(),
            needs_input_grad,
            non_differentiable: Vec::new(),
            materialize_grads: true,
            data: None,
            node: OnceLock::new(),
        }
    }

    /// Saves tensors (inputs or outputs of forward) for backward (`ctx.save_for_backward`).
    pub fn save_for_backward(&mut self, tensors: &[Tensor]) {
        self.to_save = tensors.to_vec();
    }

    /// The saved tensors, checked against in-place modification since they were saved.
    pub fn saved_tensors(&self) -> Result<Vec<Tensor>> {
        let Some(saved) = self.saved.get() else { return Ok(self.to_save.clone()) };
        let node = self
            .node
            .get()
            .and_then(Weak::upgrade)
            .ok_or_else(|| Error::runtime("saved_tensors: the function's node no longer exists"))?;
        saved.iter().map(|s| s.unpack(&*node)).collect()
    }

    /// Marks outputs that are not differentiable (they will not require grad).
    pub fn mark_non_differentiable(&mut self, tensors: &[Tensor]) {
        self.non_differentiable.extend(tensors.iter().cloned());
    }

    /// Whether input `i` needs a gradient.
    pub fn needs_input_grad(&self, i: usize) -> bool {
        self.needs_input_grad.get(i).copied().unwrap_or(false)
    }

    /// Whether `None` output gradients are replaced by zeros before backward (default true).
    pub fn set_materialize_grads(&mut self, value: bool) {
        self.materialize_grads = value;
    }

    /// Stores arbitrary data for backward.
    pub fn set_data<T: Any + Send + Sync>(&mut self, value: T) {
        self.data = Some(Box::new(value));
    }
    /// The stored data, if it has type `T`.
    pub fn data<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.data.as_ref().and_then(|d| d.downcast_ref())
    }
    /// The stored data, mutably (in forward).
    pub fn data_mut<T: Any + Send + Sync>(&mut self) -> Option<&mut T> {
        self.data.as_mut().and_then(|d| d.downcast_mut())
    }
}

struct CppNode<F: Function> {
    base: NodeBase,
    f: F,
    ctx: FunctionCtx,
    outputs: Vec<InputMetadata>,
}

impl<F: Function> Node for CppNode<F> {
    fn base(&self) -> &NodeBase {
        &self.base
    }
    fn name(&self) -> String {
        format!("{}Backward", self.f.name())
    }
    fn apply(&self, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let mut grads = grads;
        grads.resize(self.outputs.len().max(grads.len()), None);
        if self.ctx.materialize_grads {
            for (g, md) in grads.iter_mut().zip(&self.outputs) {
                if g.is_none() {
                    *g = Some(utils::zeros(&md.sizes, md.dtype, md.device)?);
                }
            }
        }
        let mut res = self.f.backward(&self.ctx, &grads)?;
        let n = self.base.num_outputs();
        if res.len() > n && res[n..].iter().all(Option::is_none) {
            res.truncate(n);
        }
        if res.len() != n {
            return Err(Error::runtime(format!(
                "function {} returned an incorrect number of gradients (expected {n}, got {})",
                self.name(),
                res.len()
            )));
        }
        for (i, r) in res.iter_mut().enumerate() {
            if !self.base.next_edge(i).is_valid() {
                *r = None;
            }
        }
        Ok(res)
    }
    fn release_variables(&self) {
        for s in self.ctx.saved.get().into_iter().flatten() {
            s.reset();
        }
    }
    fn visit_saved(&self, f: &mut dyn FnMut(&str, &SavedVariable)) {
        for s in self.ctx.saved.get().into_iter().flatten() {
            f("saved_tensors", s);
        }
    }
}

/// Applies a custom function: runs `forward` without recording, and (when grad mode is on and
/// some input requires grad) records one node whose backward is `f.backward`. A custom function
/// has no forward-mode formula: an input with a tangent is an error, as in PyTorch without a
/// `jvp` method.
pub fn apply_function<F: Function>(f: F, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    use super::forward_ad;
    if forward_ad::is_active() && !forward_ad::levels_of(&inputs.iter().map(Some).collect::<Vec<_>>()).is_empty() {
        return Err(Error::runtime(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD.",
        ));
    }
    let requires: Vec<bool> = inputs.iter().map(Tensor::requires_grad).collect();
    let executable = is_grad_enabled() && requires.iter().any(|&r| r);
    let mut ctx = FunctionCtx::new(requires.iter().map(|&r| r && executable).collect());
    let raw = {
        let _g = NoGradGuard::new();
        f.forward(&mut ctx, inputs)?
    };
    // An input returned as-is becomes a new tensor (sharing storage) so that it can get history.
    let outputs: Vec<Tensor> = raw
        .iter()
        .map(|o| {
            if inputs.iter().any(|i| i.is_same(o)) {
                let l = o.layout();
                let alias = o.alias_with_layout(&l.sizes, &l.strides, l.offset)?;
                if executable {
                    make_view_with(&alias, o, CreationMeta::InCustomFunction);
                }
                Ok(alias)
            } else {
                Ok(o.clone())
            }
        })
        .collect::<Result<_>>()?;
    if !executable {
        return Ok(outputs);
    }
    let edges = collect_next_edges(&inputs.iter().map(Some).collect::<Vec<_>>());
    let metas: Vec<InputMetadata> = outputs.iter().map(InputMetadata::of).collect();
    let to_save = std::mem::take(&mut ctx.to_save);
    let non_diff = std::mem::take(&mut ctx.non_differentiable);
    let node = Arc::new(CppNode { base: NodeBase::new(edges), f, ctx, outputs: metas.clone() });
    let dyn_node: Arc<dyn Node> = node.clone();
    for (i, (o, raw_o)) in outputs.iter().zip(&raw).enumerate() {
        if non_diff.iter().any(|t| t.is_same(raw_o) || t.is_same(o)) {
            dyn_node.base().set_input_metadata(i, metas[i].clone());
            continue;
        }
        set_history_at(o, &dyn_node, i);
    }
    // Save after the outputs have their history, so saved outputs do not own the node.
    let mut saved = Vec::with_capacity(to_save.len());
    for t in &to_save {
        let is_output = raw.iter().any(|o| o.is_same(t)) && !inputs.iter().any(|i| i.is_same(t));
        let t = match outputs.iter().zip(&raw).find(|(_, r)| r.is_same(t)) {
            Some((o, _)) if is_output => o.clone(),
            _ => t.clone(),
        };
        saved.push(SavedVariable::new(&t, is_output)?);
    }
    let _ = node.ctx.saved.set(saved);
    let _ = node.ctx.node.set(Arc::downgrade(&dyn_node));
    Ok(outputs)
}
