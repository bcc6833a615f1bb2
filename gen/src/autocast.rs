//! Autocast (automatic mixed precision), like `torch.autocast`.
//!
//! Everything from the runtime's autocast ([`AutocastGuard`], [`region`], [`disabled`], the
//! thread-local state and the cast cache; see its documentation for how it works) plus what is
//! generated from the `autocast:` fields of `native_functions.yaml`: the Autocast-key kernel of
//! every operator with a policy, registered by [`init`](crate::init) through
//! [`register_autocast`], and [`AUTOCAST_OPS`], the list of those operators and their policies.
//!
//! ```
//! use oxten::{autocast::AutocastGuard, DType, Device, Tensor};
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
//! let w = Tensor::from_vec(vec![0.5f32, 0.0, 0.0, 0.5], &[2, 2]).unwrap().requires_grad_(true);
//! let (y, s) = {
//!     let _amp = AutocastGuard::new(Device::Cpu, DType::BF16);
//!     let y = x.mm(&w);                   // lower_precision_fp: computed in bf16
//!     let s = y.sum();                    // no CPU policy: stays in its input's dtype
//!     (y, s)
//! };
//! assert_eq!((y.dtype(), s.dtype()), (DType::BF16, DType::BF16));
//! // Nested regions with autocast off compute in the dtypes they are given.
//! let z = oxten::autocast(DType::BF16, || oxten::autocast::disabled(Device::Cpu, || x.mm(&w)));
//! assert_eq!(z.dtype(), DType::F32);
//! // Backward outside the region: the f32 weight gets an f32 gradient.
//! s.to_dtype(DType::F32).backward();
//! assert_eq!(w.grad().unwrap().dtype(), DType::F32);
//! ```

pub use oxten_runtime::autocast::*;

/// Generated from the `autocast:` fields of `native_functions.yaml`: Autocast kernels and their
/// registration.
#[allow(clippy::too_many_arguments, non_snake_case)]
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/autocast.rs"));
}

pub use generated::{register_autocast, AutocastEntry, AUTOCAST_OPS};
