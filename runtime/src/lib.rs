//! oxten's runtime: the tensor handle, storage, dtypes and promotion, the dispatcher with its
//! thread-local include/exclude sets, autograd, autocast state, and TensorIterator.
//!
//! Most users depend on the `oxten` crate, which re-exports this one together with the generated
//! operator API and the registered kernels.

pub mod alloc;
pub mod autocast;
pub mod autograd;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod device;
pub mod dimvec;
pub mod dispatch;
pub mod dtype;
pub mod error;
pub mod generator;
pub mod iter;
pub mod ops_support;
pub mod parallel;
mod promotion;
pub mod scalar;
pub mod storage;
pub mod tensor;

pub use device::{Device, DeviceType, Layout, MemoryFormat};
pub use dimvec::DimVec;
pub use dispatch::{DispatchKey, KeySet};
pub use dtype::{can_cast, promote_types, DType};
pub use error::{Error, ErrorKind, Result};
pub use generator::Generator;
pub use iter::{TensorIterator, TensorIteratorConfig};
pub use promotion::result_type;
pub use scalar::Scalar;
pub use storage::Storage;
pub use tensor::{wrap_dim, Element, Tensor, TensorLayout, WeakTensor};

/// The generated operator layer (from native_functions.yaml, by build.rs).
#[allow(clippy::too_many_arguments, clippy::needless_lifetimes, clippy::derivable_impls, non_snake_case)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/ops.rs"));
}
pub use generated::{functions, ops, options};
