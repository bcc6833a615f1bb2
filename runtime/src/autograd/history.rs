//! Recording history: the helpers the generated Autograd kernels call.
//!
//! An Autograd kernel for `out = op(inputs)`:
//! 1. in-place ops: [`check_inplace`]; out= overloads only [`refuse_out_differentiation`];
//! 2. `requires_grad = compute_requires_grad(inputs)`;
//! 3. if so, builds its node with `NodeBase::new(collect_next_edges(inputs))` and saves what the
//!    formula needs ([`SavedVariable`](super::SavedVariable)s of inputs);
//! 4. redispatches below Autograd (`ExcludeGuard::new(DispatchKey::Autograd)`);
//! 5. [`set_history`] on the outputs (then saves outputs, `is_output = true`); in-place ops call
//!    [`rebase_history`] instead; view ops then call [`make_view`] (always, also when nothing
//!    requires grad, so that a later in-place op on the view can update the base's history).

use super::functions::CopySlices;
use super::meta::{CreationMeta, ViewInfo};
use super::mode::{is_grad_enabled, is_inference_mode_enabled};
use super::node::{Edge, InputMetadata, Node};
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use std::sync::Arc;

/// Whether an op's outputs require grad: grad mode is on and some input requires grad.
#[inline]
pub fn compute_requires_grad(inputs: &[Option<&Tensor>]) -> bool {
    is_grad_enabled() && inputs.iter().flatten().any(|t| t.requires_grad())
}

/// What the Autograd kernel of every out= overload checks: out= variants are not
/// differentiable, so an argument that requires grad (grad mode on) or carries a forward
/// gradient is an error naming the overload `op`.
pub fn refuse_out_differentiation(op: &str, inputs: &[Option<&Tensor>]) -> Result<()> {
    let what = if compute_requires_grad(inputs) {
        "requires grad"
    } else if super::forward_ad::is_active() && !super::forward_ad::levels_of(inputs).is_empty() {
        "has a forward gradient"
    } else {
        return Ok(());
    };
    Err(Error::runtime(format!(
        "{op}(): functions with out=... arguments don't support automatic differentiation, but one of the arguments {what}."
    )))
}

/// The gradient edge of each input: `(grad_fn, output_nr)`, the leaf's `AccumulateGrad`, or an
/// invalid edge (absent input, or one that does not require grad).
pub fn collect_next_edges(inputs: &[Option<&Tensor>]) -> Vec<Edge> {
    inputs.iter().map(|t| t.map_or_else(Edge::empty, Tensor::gradient_edge)).collect()
}

/// Output `i` gets `grad_fn = node`, `output_nr = i`, and the node records its metadata.
pub fn set_history(outputs: &[&Tensor], node: Arc<dyn Node>) {
    node.base().set_self_weak(&node);
    for (i, t) in outputs.iter().enumerate() {
        set_history_at(t, &node, i);
    }
}

/// Output `output_nr` of `node` is `t`.
pub fn set_history_at(t: &Tensor, node: &Arc<dyn Node>, output_nr: usize) {
    node.base().set_self_weak(node);
    node.base().set_input_metadata(output_nr, InputMetadata::of(t));
    let mut m = t.ag_meta_mut();
    m.grad_fn = Some(node.clone());
    m.output_nr = output_nr;
    if let Some(v) = m.view.as_mut() {
        v.attr_version = t.version();
    }
}

/// The in-place update rules, checked before an in-place op on `t` whose result requires grad
/// iff `requires_grad`:
/// - an inference tensor can only be updated in inference mode;
/// - with grad mode on, a view created in no-grad mode (or by a multi-output op, or by a custom
///   function) cannot be updated in place;
/// - a leaf that requires grad, or a view of one, cannot be updated in place.
pub fn check_inplace(t: &Tensor, requires_grad: bool) -> Result<()> {
    if t.is_inference() && !is_inference_mode_enabled() {
        return Err(Error::runtime(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.",
        ));
    }
    if !(requires_grad && is_grad_enabled()) {
        return Ok(());
    }
    if let Some(view) = t.view_info() {
        match view.creation {
            CreationMeta::Default | CreationMeta::InferenceMode => {}
            CreationMeta::NoGradMode => {
                return Err(Error::runtime(
                    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).",
                ))
            }
            CreationMeta::MultiOutputNode => {
                return Err(Error::runtime(
                    "Output of a function that returns multiple views is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.",
                ))
            }
            CreationMeta::InCustomFunction => {
                return Err(Error::runtime(
                    "A view was created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.",
                ))
            }
        }
        if t.requires_grad() && view.base.is_leaf() {
            return Err(Error::runtime(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.",
            ));
        }
    }
    if t.requires_grad() && t.is_leaf() {
        return Err(Error::runtime("a leaf Variable that requires grad is being used in an in-place operation."));
    }
    Ok(())
}

/// After an in-place op on `t` recorded as `node` (whose next edge 0 is `t`'s old history):
/// `t`'s history becomes `node`. If `t` is a view, the base's history becomes a [`CopySlices`]
/// wrapping `node` and `t`'s `grad_fn` is regenerated from the base.
///
/// The generated in-place wrapper bumps the version counter after the Autograd kernel returns;
/// saved outputs of `node` that are `t` (saved before or after this call) expect that bump.
pub fn rebase_history(t: &Tensor, node: Arc<dyn Node>) {
    node.base().set_self_weak(&node);
    node.base().set_input_metadata(0, InputMetadata::of(t));
    let version = t.version();
    node.visit_saved(&mut |_, sv| sv.expect_inplace_bump(t));
    if let Some(view) = t.view_info() {
        let base = view.base;
        let old_base_fn = base.grad_fn();
        let cs: Arc<dyn Node> = Arc::new(CopySlices::new(&base, t, node));
        cs.base().set_self_weak(&cs);
        {
            let mut bm = base.ag_meta_mut();
            bm.grad_fn = Some(cs.clone());
            bm.output_nr = 0;
        }
        if let Some(old) = old_base_fn {
            if let Some(w) = old.base().take_retains_grad(0) {
                if let Some(b) = w.upgrade() {
                    cs.base().add_retains_grad(0, &b);
                }
            }
        }
        // Regenerate the view's grad_fn now (from the base's new history), and mark it current
        // for the version the wrapper's bump will produce.
        {
            let mut m = t.ag_meta_mut();
            if let Some(v) = m.view.as_mut() {
                v.attr_version = u64::MAX;
            }
            m.rebased_at_version = Some(version);
        }
        let _ = t.grad_fn();
        if let Some(v) = t.ag_meta_mut().view.as_mut() {
            v.attr_version = version + 1;
        }
        return;
    }
    let old = {
        let mut m = t.ag_meta_mut();
        let old = m.grad_fn.replace(node.clone());
        let old_nr = m.output_nr;
        m.output_nr = 0;
        m.rebased_at_version = Some(version);
        old.map(|o| (o, old_nr))
    };
    if let Some((old, old_nr)) = old {
        if let Some(w) = old.base().take_retains_grad(old_nr) {
            if let Some(t2) = w.upgrade() {
                node.base().add_retains_grad(0, &t2);
            }
        }
    }
}

/// Records that `view` (an output of a view op) is a view of `base`'s root base. Call after
/// [`set_history`], also when nothing requires grad.
pub fn make_view(view: &Tensor, base: &Tensor) {
    let creation = if is_inference_mode_enabled() {
        CreationMeta::InferenceMode
    } else if !is_grad_enabled() {
        CreationMeta::NoGradMode
    } else {
        CreationMeta::Default
    };
    make_view_with(view, base, creation);
}

/// [`make_view`] with an explicit [`CreationMeta`] (`MultiOutputNode` for `split`/`unbind`,
/// `InCustomFunction` …). A view of a view records the view's creation meta if it is stricter.
pub fn make_view_with(view: &Tensor, base: &Tensor, creation: CreationMeta) {
    if view.is_same(base) {
        return;
    }
    let (root, creation) = match base.view_info() {
        Some(bv) => (bv.base, if bv.creation != CreationMeta::Default { bv.creation } else { creation }),
        None => (base.clone(), creation),
    };
    let version = view.version();
    let mut m = view.ag_meta_mut();
    m.view = Some(ViewInfo { base: root, attr_version: version, creation });
}
