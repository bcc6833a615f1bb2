//! The dispatcher: one kernel table per operator, indexed by dispatch key.
//!
//! A call's key set is the union of its tensors' keys and the thread-local include set, minus the
//! thread-local exclude set and the operator's fallthrough keys; the highest key runs. Layer keys
//! without a kernel for an operator (Autograd, Autocast) are fallthroughs: their bit is masked
//! out of the key set, so they cost nothing. Kernels at the alias keys CompositeImplicitAutograd
//! and CompositeExplicitAutograd fill the backend slots that have no direct kernel
//! (CompositeImplicitAutograd also fills Autograd), and a per-key fallback fills what is left.
//!
//! Tensors of the out-of-tree backend also carry `AutogradPrivateUse1`, above `Autograd`: the
//! backend's own Autograd kernels (a backend YAML's `autograd:` list) sit there, and every other
//! operator falls through to the generated ones. Kernels that run "below autograd" exclude both
//! ([`KeySet::AUTOGRAD`]).

mod ivalue;
mod key;
mod op;
mod op_info;
mod registry;
mod tls;
mod trace;

pub use ivalue::{pop_returns, FromIValue, IValue, IntoIValue, Stack};
pub use key::{DispatchKey, KeySet, NUM_KEYS};
pub use op::{BoxedFn, BoxedKernel, Kernel, Op, OperatorEntry, RegistrationKey, Resolved};
pub use op_info::{arg, take_args, ArgInfo, OpInfo};
pub use registry::{
    clear_fallback, define_op, find_op, list, op_names, register_boxed, register_fallback,
    register_fallthrough_fallback, set_init_hook,
};
pub use tls::{
    is_excluded, local_keys, set_excluded, with_excluded, with_included, ExcludeGuard, IncludeGuard, LocalKeysGuard,
};
