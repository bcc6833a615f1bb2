//! Automatic differentiation.
//!
//! Everything from the runtime's autograd ([`grad`], [`backward`], [`no_grad`],
//! [`SavedVariable`], [`Node`] …) plus what is generated from `derivatives.yaml`:
//!
//! - one backward node type per entry ([`generated::MulBackward0`] …), whose `apply` evaluates
//!   the entry's formulas;
//! - the Autograd-key kernel of every differentiable operator, registered by [`init`](crate::init)
//!   through [`register_autograd`];
//! - [`DERIVATIVES`], the list of entries, and [`NOT_IMPLEMENTED`], the differentiable operators
//!   without an entry (their backward fails with "the derivative for '…' is not implemented").
//!
//! [`helpers`] holds the hand-written functions the formulas call; [`gradcheck()`] and
//! [`gradgradcheck()`] compare the formulas against finite differences.
//!
//! ```
//! use oxten::Tensor;
//! let x = Tensor::from_vec(vec![0.5f64, 0.75], &[2]).unwrap().requires_grad_(true);
//! let y = x.mul(&x).sum();
//! let g = oxten::autograd::grad(&[y], &[x.clone()]).unwrap();
//! assert_eq!(g[0].as_ref().unwrap().to_vec::<f64>().unwrap(), [1.0, 1.5]);
//! ```

pub use oxten_runtime::autograd::*;

pub mod gradcheck;
pub mod helpers;

pub use gradcheck::{gradcheck, gradgradcheck, GradcheckOpts, Outputs};

/// Generated from `derivatives.yaml`: backward nodes, Autograd kernels and their registration.
#[allow(clippy::too_many_arguments, non_snake_case)]
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/autograd.rs"));
}

pub use generated::{register_autograd, DerivativeEntry, DERIVATIVES, NOT_IMPLEMENTED, NO_FORWARD_FORMULA};
