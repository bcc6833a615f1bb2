//! oxten's hand-written kernels and meta functions.
//!
//! The generator declares one trait per kernel named in `native_functions.yaml`
//! ([`generated::decls`]); this crate implements them on three marker types:
//! [`Cpu`] (CPU kernels and impls of structured ops), [`Meta`] (meta functions of structured ops
//! and Meta-key kernels) and [`Composite`] (CompositeExplicitAutograd and
//! CompositeImplicitAutograd kernels, which call other operators). A missing or mistyped kernel
//! is a compile error naming the trait, and so the operator. Kernels of `pointwise:` operators
//! are generated whole ([`generated::pointwise`]).
//!
//! `cargo run -p oxten-codegen -- stubs <op>` prints what to implement for an operator.

mod amp;
mod checks;
mod conv;
mod convert;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
mod factory;
mod foreach;
mod index;
mod linalg;
mod logical;
pub mod math;
mod nn;
mod norm;
mod pointwise;
mod pool;
mod random;
mod reduce;
mod shape;
mod sort;
pub mod support;
/// The gate functions of the recurrent cells, shared with `oxten::nn`'s RNN modules.
pub use nn::rnn_cells as recurrent;
/// The output size of max unpooling, shared with `oxten::nn`'s unpooling modules.
pub use pool::unpool_output_size;
mod views;

/// The TensorIterator's device-agnostic setup (`oxten_runtime::iter`) and the CPU loops that run
/// over it ([`cpu`]), under one path for the kernels of this crate.
mod iter {
    pub use crate::cpu::*;
    pub use oxten_runtime::iter::*;
}

/// Code generated from native_functions.yaml by build.rs.
pub mod generated {
    /// One trait per hand-written kernel: shared meta-function traits at the root, each
    /// backend's kernels in its own module (`decls::cpu`, `decls::meta` …), re-exported here.
    #[allow(clippy::too_many_arguments, non_snake_case)]
    pub mod decls {
        include!(concat!(env!("OUT_DIR"), "/decls.rs"));
    }
    /// Meta functions and CPU impls of `pointwise:` operators. The expressions' literals come
    /// from the YAML as written (`1.4426950408889634`), hence `approx_constant`.
    #[allow(clippy::too_many_arguments, clippy::needless_lifetimes, clippy::approx_constant)]
    pub mod pointwise {
        include!(concat!(env!("OUT_DIR"), "/pointwise.rs"));
    }
    /// CUDA impls of `pointwise:` operators.
    #[cfg(feature = "cuda")]
    #[allow(clippy::too_many_arguments, clippy::needless_lifetimes, clippy::approx_constant)]
    pub mod pointwise_cuda {
        include!(concat!(env!("OUT_DIR"), "/pointwise_cuda.rs"));
    }
}

/// Implements the CPU kernels and the impls of structured operators.
pub struct Cpu;
/// Implements meta functions and Meta-key kernels.
pub struct Meta;
/// Implements CompositeExplicitAutograd and CompositeImplicitAutograd kernels.
pub struct Composite;
/// Implements the CUDA kernels and the CUDA impls of structured operators.
#[cfg(feature = "cuda")]
pub struct Cuda;
