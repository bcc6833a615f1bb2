//! Backends as data: a typed [`DispatchKey`] and, per key, a [`BackendIndex`] saying which
//! operators have a kernel there, under which name, whether it is the impl of a structured op,
//! and where the kernels live. The emitters loop over the indices instead of naming backends,
//! so CUDA (and, through a backend YAML, an out-of-tree backend) is one more index.

mod external;
mod index;
mod key;
mod lazy_ir;

pub use external::{emit_backend, generate, parse_backend_yaml, BackendYaml, Fallback, NATIVE_FUNCTIONS_YAML};
pub use index::{in_tree_backends, BackendIndex, BackendMetadata};
pub use key::DispatchKey;
