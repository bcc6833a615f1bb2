//! # oxten
//!
//! A tensor library for Rust with PyTorch's semantics, whose operator layer is generated from
//! `native_functions.yaml` the way PyTorch's ATen is.
//!
//! ```
//! use oxten::{Tensor, DType};
//! let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
//! let b = oxten::ones(&[2]);
//! let c = a.add(&b).mul_scalar(2.0);          // broadcasting, like PyTorch
//! assert_eq!(c.to_vec::<f32>().unwrap(), [4.0, 6.0, 8.0, 10.0]);
//! assert_eq!(c.sum().item::<f32>().unwrap(), 28.0);
//! // Every op has a fallible form that returns an error naming the op and the problem:
//! let err = a.try_add(&Tensor::from_vec(vec![1.0f32; 3], &[3]).unwrap()).unwrap_err();
//! assert!(err.to_string().contains("must match the size"));
//! # let _ = DType::F32;
//! ```
//!
//! Kernels register themselves with the dispatcher when the program starts (or on the first
//! call to [`init`], which is idempotent).
#![warn(missing_docs)]

/// oxten's kernels and meta functions (what generated out-of-tree backend code builds on).
pub use oxten_kernels as kernels;
/// oxten's runtime crate (tensors, dispatcher, autograd engine): what the code generated for
/// downstream operator libraries ([`oxten_codegen::library`]) builds on.
///
/// [`oxten_codegen::library`]: https://docs.rs/oxten-codegen
pub use oxten_runtime as runtime;
pub use oxten_runtime::alloc;
pub use oxten_runtime::dispatch;
pub use oxten_runtime::functions::*;
pub use oxten_runtime::generator::{
    default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state, Generator,
};
/// TensorIterator: its device-agnostic setup (`oxten_runtime::iter`) and the CPU loops that run
/// over it (`oxten_kernels::cpu`), under one path.
pub mod iter {
    pub use oxten_kernels::cpu::*;
    pub use oxten_runtime::iter::*;
}
pub use oxten_runtime::ops;

/// Sets how many threads operators use, counting the caller (`torch.set_num_threads`): the
/// kernels' parallel loops and the matrix products. The default is `OXTEN_NUM_THREADS`, else
/// `RAYON_NUM_THREADS`, else one per core; asking for more threads than run starts more workers.
///
/// ```
/// oxten::set_num_threads(1).unwrap();
/// assert_eq!(oxten::get_num_threads(), 1);
/// assert!(oxten::set_num_threads(0).is_err());
/// ```
pub fn set_num_threads(n: usize) -> Result<()> {
    oxten_runtime::parallel::set_num_threads(n)
}

/// How many threads operators use, counting the caller (`torch.get_num_threads`).
pub fn get_num_threads() -> usize {
    oxten_runtime::parallel::num_threads()
}
pub use oxten_runtime::options;
/// `tensor![[1.0, 2.0], [3.0, 4.0]]`: a tensor from literals, like `torch.tensor` (see
/// [`Literal`]).
pub use oxten_runtime::tensor;
pub use oxten_runtime::tensor::Literal;
pub use oxten_runtime::{
    can_cast, promote_types, DType, Device, DeviceType, DimVec, Element, Error, ErrorKind, Layout, MemoryFormat,
    Result, Scalar, Storage, Tensor, TensorLayout,
};

pub mod amp;
pub mod autocast;
pub mod autograd;
pub mod backend;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod func;
pub mod nn;
pub mod optim;
pub mod safetensors;
mod support;

/// Generated: structured wrappers and the registration of every in-tree kernel.
#[allow(clippy::too_many_arguments, unused_variables, non_snake_case)]
mod register {
    include!(concat!(env!("OUT_DIR"), "/register.rs"));
}

/// Registers every in-tree kernel with the dispatcher. Runs automatically when the program
/// starts; calling it again does nothing.
pub fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        oxten_kernels::cpu::register();
        #[cfg(feature = "cuda")]
        oxten_kernels::cuda::register();
        register::register_all();
        autograd::register_autograd();
        autocast::register_autocast();
    });
}

/// Runs `f` in a CPU autocast region computing in `dtype` (`with torch.autocast("cpu",
/// dtype=dtype):`): matrix products and convolutions run in `dtype`, losses in f32 (see
/// [`autocast`](mod@autocast) for the policies and the other device types and options).
///
/// ```
/// use oxten::{DType, Tensor};
/// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let c = oxten::autocast(DType::BF16, || a.mm(&a));
/// assert_eq!(c.dtype(), DType::BF16);
/// ```
///
/// # Panics
/// When `dtype` is not bf16 or f16 (the lower-precision dtypes CPU autocast supports).
#[track_caller]
pub fn autocast<R>(dtype: DType, f: impl FnOnce() -> R) -> R {
    autocast::region(Device::Cpu, dtype, f)
}

// Register at load time, before `main` and before any other thread exists, so that
// `oxten::Tensor` methods work without an explicit `init()`. Registering lazily on a first miss
// raced: a thread could find an operator's backend kernel already registered by another
// thread's `init()` but not yet its autograd kernel, and run without recording history. The
// dispatcher still calls the hook on a miss, which covers platforms without constructors.
// `unsafe`: code before `main` must not rely on the standard library's runtime being set up
// beyond what it needs here (allocation and `OnceLock`s), which ctor documents as sound.
#[ctor::ctor(unsafe)]
fn register_at_load() {
    oxten_runtime::dispatch::set_init_hook(init);
    init();
}
