//! Autograd metadata on tensors: the optional slot in every `TensorImpl`, allocated only when a
//! tensor gets a gradient function, `requires_grad`, a `.grad`, hooks or view information.

use super::functions::{AccumulateGrad, AsStridedBackward};
use super::hooks::{HookList, TensorHook};
use super::node::{Edge, InputMetadata, Node};
use crate::tensor::Tensor;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

/// How a view was created; decides which in-place updates of it are allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreationMeta {
    /// An ordinary view, created with grad mode on.
    Default,
    /// Created with grad mode off: modifying it in place while grad mode is on (and something
    /// requires grad) is an error.
    NoGradMode,
    /// Created in inference mode from a normal tensor.
    InferenceMode,
    /// One of several views returned by one op (`split`, `unbind`): in-place is forbidden.
    MultiOutputNode,
    /// Returned from a custom `Function`'s forward: in-place is forbidden.
    InCustomFunction,
}

/// The view relation of a tensor: its root base and when its `grad_fn` was last brought up to
/// date with the base's history.
#[derive(Clone)]
pub(crate) struct ViewInfo {
    pub(crate) base: Tensor,
    /// The version counter value for which `grad_fn` is current. When the shared counter moves
    /// (an in-place op on the base or another view), `grad_fn` is regenerated from the base.
    pub(crate) attr_version: u64,
    pub(crate) creation: CreationMeta,
}

/// Per-tensor autograd state.
#[derive(Default)]
pub(crate) struct AutogradMeta {
    /// Set by `requires_grad_(true)` on leaves.
    pub(crate) requires_grad: bool,
    pub(crate) grad: Option<Tensor>,
    pub(crate) grad_fn: Option<Arc<dyn Node>>,
    pub(crate) output_nr: usize,
    /// The leaf's `AccumulateGrad`, held weakly: the graph owns it.
    pub(crate) grad_accumulator: Option<Weak<AccumulateGrad>>,
    pub(crate) retains_grad: bool,
    /// Tensor hooks of a leaf (non-leaf tensors register them on their `grad_fn`).
    pub(crate) leaf_hooks: Option<Arc<HookList<TensorHook>>>,
    pub(crate) view: Option<ViewInfo>,
    /// The version at which an in-place op rebased this tensor's history; see
    /// `SavedVariable::new`.
    pub(crate) rebased_at_version: Option<u64>,
    /// Forward-mode tangents, one per open dual level (see [`super::forward_ad`]).
    pub(crate) fw_grads: Vec<(u64, Tensor)>,
}

/// The autograd slot of a `TensorImpl`: whether the tensor is an inference tensor, and its
/// metadata, allocated only when needed.
#[derive(Default)]
pub struct AutogradSlot {
    inference: bool,
    meta: OnceLock<Box<Mutex<AutogradMeta>>>,
}

impl AutogradSlot {
    /// The slot of a newly allocated tensor: an inference tensor inside inference mode.
    #[inline]
    pub fn for_new_tensor() -> AutogradSlot {
        AutogradSlot { inference: super::mode::is_inference_mode_enabled(), meta: OnceLock::new() }
    }
    /// The slot of a new alias (view) of the tensor owning `of`: inference-ness is inherited.
    #[inline]
    pub fn alias_of(of: &AutogradSlot) -> AutogradSlot {
        AutogradSlot { inference: of.inference, meta: OnceLock::new() }
    }
    #[inline]
    pub(crate) fn get(&self) -> Option<MutexGuard<'_, AutogradMeta>> {
        self.meta.get().map(|m| m.lock().unwrap_or_else(|e| e.into_inner()))
    }
    #[inline]
    pub(crate) fn get_or_init(&self) -> MutexGuard<'_, AutogradMeta> {
        self.meta.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
    }
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.meta.get().is_none()
    }
}

impl Tensor {
    pub(crate) fn ag_meta(&self) -> Option<MutexGuard<'_, AutogradMeta>> {
        self.autograd_slot().get()
    }
    pub(crate) fn ag_meta_mut(&self) -> MutexGuard<'_, AutogradMeta> {
        self.autograd_slot().get_or_init()
    }

    /// The stored `grad_fn`, without bringing a view's up to date.
    pub(crate) fn raw_grad_fn(&self) -> Option<Arc<dyn Node>> {
        self.ag_meta().and_then(|m| m.grad_fn.clone())
    }

    /// Sets `grad_fn` and `output_nr` (the tensor's gradient edge).
    pub(crate) fn set_gradient_edge(&self, f: Option<Arc<dyn Node>>, output_nr: usize) {
        let mut m = self.ag_meta_mut();
        m.grad_fn = f;
        m.output_nr = output_nr;
    }

    /// The root base of this view, if it is one.
    pub fn view_base(&self) -> Option<Tensor> {
        self.ag_meta().and_then(|m| m.view.as_ref().map(|v| v.base.clone()))
    }
    /// Whether this tensor was recorded as a view of another (`t._is_view()`).
    pub fn is_view(&self) -> bool {
        self.ag_meta().is_some_and(|m| m.view.is_some())
    }
    pub(crate) fn view_info(&self) -> Option<ViewInfo> {
        self.ag_meta().and_then(|m| m.view.clone())
    }

    /// The function that created this tensor (`None` for leaves and tensors that do not require
    /// grad). For a view whose base was modified in place since the view's `grad_fn` was set, the
    /// `grad_fn` is regenerated from the base's current history (an `AsStridedBackward0` node),
    /// so that gradients flow through the in-place op.
    pub fn grad_fn(&self) -> Option<Arc<dyn Node>> {
        let mut m = self.ag_meta()?;
        let Some(view) = m.view.as_ref() else { return m.grad_fn.clone() };
        let version = self.version();
        if view.attr_version == version {
            return m.grad_fn.clone();
        }
        let base = view.base.clone();
        // Lock order is always view -> base; the root base is never a view.
        if m.grad_fn.is_none() && !base.requires_grad() {
            return None;
        }
        if base.requires_grad() {
            let old = m.grad_fn.take();
            let node: Arc<dyn Node> = Arc::new(AsStridedBackward::new(&base, self));
            node.base().set_self_weak(&node);
            node.base().set_input_metadata(0, InputMetadata::of(self));
            if let Some(old) = old.as_ref() {
                if let Some(w) = old.base().take_retains_grad(m.output_nr) {
                    if let Some(t) = w.upgrade() {
                        node.base().add_retains_grad(0, &t);
                    }
                }
            }
            m.grad_fn = Some(node);
            m.output_nr = 0;
        }
        if let Some(view) = m.view.as_mut() {
            view.attr_version = version;
        }
        m.grad_fn.clone()
    }

    /// Whether gradients are computed for this tensor: a leaf with `requires_grad_(true)`, a
    /// tensor with a `grad_fn`, or a view whose base requires grad.
    pub fn requires_grad(&self) -> bool {
        let Some(m) = self.ag_meta() else { return false };
        if m.requires_grad || m.grad_fn.is_some() {
            return true;
        }
        let base = m.view.as_ref().map(|v| v.base.clone());
        drop(m);
        base.is_some_and(|b| b.requires_grad())
    }

    /// A leaf is a tensor without a `grad_fn`: created by the user or by ops that did not record
    /// history. Only leaves get `.grad` filled by `backward()` (unless `retain_grad()`).
    pub fn is_leaf(&self) -> bool {
        self.grad_fn().is_none()
    }

    /// The index of this tensor among its `grad_fn`'s outputs.
    pub fn output_nr(&self) -> usize {
        self.ag_meta().map_or(0, |m| m.output_nr)
    }

    /// The accumulated gradient.
    pub fn grad(&self) -> Option<Tensor> {
        self.ag_meta().and_then(|m| m.grad.clone())
    }

    /// Replaces (or clears) `.grad`.
    pub fn set_grad(&self, g: Option<Tensor>) {
        if g.is_none() && self.autograd_slot().is_empty() {
            return;
        }
        self.ag_meta_mut().grad = g;
    }

    /// Whether `.grad` of this non-leaf tensor is kept (`retain_grad()`).
    pub fn retains_grad(&self) -> bool {
        self.ag_meta().is_some_and(|m| m.retains_grad)
    }

    /// Whether this is an inference tensor: allocated in inference mode, or a view of one. It
    /// can never be saved for backward, nor updated in place outside inference mode.
    pub fn is_inference(&self) -> bool {
        self.autograd_slot().inference
    }

    /// The leaf's `AccumulateGrad` node, created if needed (held weakly by the tensor).
    /// `None` for non-leaves and tensors that do not require grad.
    pub fn grad_accumulator(&self) -> Option<Arc<dyn Node>> {
        if self.grad_fn().is_some() || !self.requires_grad() {
            return None;
        }
        let mut m = self.ag_meta_mut();
        if let Some(acc) = m.grad_accumulator.as_ref().and_then(Weak::upgrade) {
            return Some(acc);
        }
        let acc = Arc::new(AccumulateGrad::new(self.clone()));
        m.grad_accumulator = Some(Arc::downgrade(&acc));
        let node: Arc<dyn Node> = acc;
        node.base().set_self_weak(&node);
        Some(node)
    }

    /// The leaf's `AccumulateGrad` node if one exists now (never creates one).
    pub fn try_grad_accumulator(&self) -> Option<Arc<dyn Node>> {
        let m = self.ag_meta()?;
        m.grad_accumulator.as_ref().and_then(Weak::upgrade).map(|a| a as Arc<dyn Node>)
    }

    /// Where this tensor's gradient goes: `(grad_fn, output_nr)`, or the leaf's accumulator, or
    /// an invalid edge if it does not require grad.
    pub fn gradient_edge(&self) -> Edge {
        if let Some(f) = self.grad_fn() {
            return Edge::new(f, self.output_nr());
        }
        match self.grad_accumulator() {
            Some(acc) => Edge::new(acc, 0),
            None => Edge::empty(),
        }
    }

    pub(crate) fn leaf_hooks(&self) -> Vec<TensorHook> {
        self.ag_meta().and_then(|m| m.leaf_hooks.clone()).map(|l| l.snapshot()).unwrap_or_default()
    }
}
