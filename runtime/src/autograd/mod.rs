//! Reverse-mode automatic differentiation, with PyTorch's semantics.
//!
//! - **Graph.** Every differentiable op call with an input that requires grad (and grad mode on)
//!   records a [`Node`] (e.g. `MulBackward0`) whose [`Edge`]s point at the nodes that produced
//!   its inputs, or at the [`AccumulateGrad`] sink of a leaf. The outputs get the node as their
//!   `grad_fn` ([`set_history`]). The generated Autograd-key kernels do this with the helpers in
//!   [`history`]; custom functions use [`apply_function`].
//! - **Saved tensors.** [`SavedVariable`] snapshots the version counter; using a tensor that was
//!   modified in place since it was saved is an error; after a backward without `retain_graph`
//!   saved tensors are freed.
//! - **Engine.** [`backward`] / [`grad`] / [`Tensor::try_backward`](crate::Tensor::try_backward) run the graph from the roots:
//!   dependency counting, gradient summation, ready queue by sequence number, pruning to the
//!   requested inputs, central shape/dtype checks and `sum_to` reduction of gradients, hooks,
//!   anomaly detection, reentrant backward. See [`engine`].
//! - **Modes.** [`no_grad`], [`enable_grad`], [`inference_mode`], [`detect_anomaly`], all
//!   thread-local with restoring guards; [`ThreadLocalState`] carries them to other threads.
//! - **Views and in-place.** [`make_view`] links a view to its base; an in-place op on a view
//!   rewrites the base's history through [`CopySlices`] ([`rebase_history`]), and the views of a
//!   base modified in place regenerate their `grad_fn` from it.
//! - **Forward mode.** [`forward_ad`]: dual tensors whose tangents every differentiable op
//!   propagates with its `result:` formula; it composes with the reverse mode.
//!
//! The autograd state of a tensor lives in an optional slot of its `TensorImpl`, allocated only
//! when it is needed.

pub mod engine;
pub mod forward_ad;
mod function;
mod functions;
pub mod history;
mod hooks;
mod meta;
mod mode;
mod node;
mod saved;
mod tensor_api;
pub mod utils;

pub use engine::{backward, execute, grad, grad_with, GradOpts, MAX_REENTRANT_DEPTH, MAX_REENTRANT_INLINE_DEPTH};
pub use function::{apply_function, Function, FunctionCtx};
pub use functions::{
    as_strided_backward, AccumulateGrad, AsStridedBackward, CopySlices, Geometry, GraphRoot, Identity,
    NotImplementedBackward,
};
pub use history::{
    check_inplace, collect_next_edges, compute_requires_grad, make_view, make_view_with, rebase_history,
    refuse_out_differentiation, set_history, set_history_at,
};
pub use hooks::{HookHandle, PostHook, PreHook, TensorHook};
pub use meta::{AutogradSlot, CreationMeta};
pub use mode::{
    detect_anomaly, enable_grad, inference_mode, is_anomaly_enabled, is_grad_enabled, is_inference_mode_enabled,
    no_grad, set_grad_enabled, AnomalyModeGuard, EnableGradGuard, GradModeGuard, InferenceModeGuard, NoGradGuard,
    ThreadLocalState, ThreadLocalStateGuard,
};
pub use node::{node_id, AnomalyMetadata, Edge, InputMetadata, Node, NodeBase};
pub use saved::{torch_type_name, SavedVariable, ERR_BACKWARD_TWICE, ERR_INFERENCE_SAVED};
pub use tensor_api::BackwardOpts;
pub use utils::{is_expandable_to, sum_to};
