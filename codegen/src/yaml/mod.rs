//! Loading and validating `native_functions.yaml`.
//!
//! The file is a YAML list with one mapping per operator overload:
//!
//! ```yaml
//! - func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
//!   structured: True
//!   structured_inherits: TensorIteratorBase
//!   dispatch:
//!     CPU, CUDA: add_out
//! ```
//!
//! [`parse_native_functions`] turns the text into [`NativeFunction`]s,
//! collecting every problem as a [`YamlError`] that names the file, line and
//! entry. [`group_native_functions`] then pairs up the functional, inplace,
//! mutable and out= variants of each operator.
//!
//! ```
//! use oxten_codegen::backend::DispatchKey;
//! use oxten_codegen::yaml::{group_native_functions, parse_native_functions};
//!
//! let text = "\
//! - func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
//!   structured_delegate: add.out
//!   variants: function, method
//! - func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
//!   structured: True
//!   dispatch:
//!     CPU, CUDA: add_out
//! ";
//! let fns = parse_native_functions(text, "native_functions.yaml").unwrap();
//! assert_eq!(fns[1].dispatch[&DispatchKey::Cuda], "add_out");
//! let groups = group_native_functions(&fns);
//! assert_eq!(groups.len(), 1);
//! assert!(groups[0].structured());
//! ```

pub mod autogen;
mod checks;
mod entry;
mod error;
mod function;
mod group;
mod load;
mod loc;
mod values;

pub use entry::ALLOWED_KEYS;
pub use error::YamlError;
pub use function::{AutocastPolicies, AutocastPolicy, DeviceCheck, NativeFunction, OpDoc, Variant};
pub use group::{group_native_functions, NativeFunctionsGroup};
pub use load::parse_native_functions;
pub use loc::Loc;
