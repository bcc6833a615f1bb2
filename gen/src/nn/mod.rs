//! Neural-network layers in the style of `torch.nn`: plain structs that hold their parameters
//! (leaf tensors with `requires_grad`) and buffers, a [`Module`] trait for the forward pass,
//! named parameter iteration and train/eval mode, and [`Sequential`] to chain layers.
//!
//! Parameter and buffer names follow PyTorch's `state_dict` (`0.weight`, `2.running_mean`, …),
//! so [`Module::state_dict`] can be saved with [`crate::safetensors`] and loaded by PyTorch, and
//! the other way round. Initialisation follows PyTorch's defaults (see [`init`]) and draws from
//! oxten's default generator, so `oxten::manual_seed` makes it reproducible.
//!
//! ```
//! use oxten::nn::{Linear, Module, ReLU, Sequential};
//! use oxten::Tensor;
//! let net = Sequential::new().add(Linear::new(4, 8)).add(ReLU).add(Linear::new(8, 2));
//! let y = net.forward(&oxten::ones(&[3, 4])).unwrap();
//! assert_eq!(&y.sizes()[..], &[3, 2]);
//! let names: Vec<String> = net.named_parameters().into_iter().map(|(n, _)| n).collect();
//! assert_eq!(names, ["0.weight", "0.bias", "2.weight", "2.bias"]);
//! ```

mod activation;
mod attention;
mod containers;
mod conv;
mod dropout;
mod embedding;
mod grid_sample;
pub mod init;
mod linear;
mod norm;
mod pool;
mod rnn;
mod sequential;
mod transformer;
mod upsample;

pub use activation::{
    ChannelShuffle, Flatten, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, Identity, LeakyReLU, LogSigmoid, Mish,
    PReLU, RReLU, ReLU, ReLU6, SiLU, Sigmoid, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold, CELU, ELU,
    GELU, GLU, SELU,
};
pub use attention::{MhaOpts, MultiheadAttention};
pub use containers::{ModuleDict, ModuleList};
pub use conv::{Conv1d, Conv2d, Conv3d, ConvNd, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, ConvTransposeNd};
pub use dropout::{AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout};
pub use embedding::{Embedding, EmbeddingBag, EmbeddingBagMode};
pub use grid_sample::{affine_grid, grid_sample, GridSampleMode, GridSamplePadding};
pub use linear::{Bilinear, Linear};
pub use norm::{
    BatchNorm2d, GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, InstanceNormNd, LayerNorm,
    LocalResponseNorm, RMSNorm,
};
pub use pool::{
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveAvgPoolNd, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
    AdaptiveMaxPool3d, AdaptiveMaxPoolNd, AvgPool1d, AvgPool2d, AvgPool3d, AvgPoolNd, FractionalMaxPool2d,
    FractionalMaxPool3d, FractionalMaxPoolNd, FractionalOutput, MaxPool1d, MaxPool2d, MaxPool3d, MaxPoolNd,
    MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, MaxUnpoolNd,
};
pub use rnn::{GRUCell, LSTMCell, Nonlinearity, RNNCell, RnnOptions, GRU, LSTM, RNN};
pub use sequential::Sequential;
pub use transformer::{
    Activation, DecoderMasks, EncoderMasks, TransformerConfig, TransformerDecoder, TransformerDecoderLayer,
    TransformerEncoder, TransformerEncoderLayer,
};
pub use upsample::{interpolate, InterpolateMode, Resize, Upsample};

use crate::{Result, Tensor};

/// Whether a named tensor is a trainable parameter or a buffer (state that is saved but not
/// trained, such as batch norm's running statistics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A trainable parameter (`requires_grad`, seen by optimizers).
    Parameter,
    /// A buffer: state saved with the module but not trained (running statistics).
    Buffer,
}

/// A layer or a model.
///
/// Implement [`forward`](Module::forward) and, for layers with parameters or buffers,
/// [`visit`](Module::visit) (and [`set_training`](Module::set_training) for layers that behave
/// differently in training, like dropout and batch norm); the rest is provided.
pub trait Module: Send + Sync {
    /// The forward pass.
    fn forward(&self, input: &Tensor) -> Result<Tensor>;

    /// Calls `f(name, tensor, slot)` for every parameter and buffer, children's prefixed with
    /// the child's name and a dot, in registration order.
    fn visit(&self, _f: &mut dyn FnMut(&str, &Tensor, Slot)) {}

    /// Switches between training (`true`) and evaluation mode, recursively.
    fn set_training(&mut self, _training: bool) {}

    /// Training mode (`model.train()`).
    fn train(&mut self) {
        self.set_training(true)
    }

    /// Evaluation mode (`model.eval()`).
    fn eval(&mut self) {
        self.set_training(false)
    }

    /// The parameters with their `state_dict` names.
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        self.visit(&mut |n, t, s| {
            if s == Slot::Parameter {
                out.push((n.to_string(), t.clone()));
            }
        });
        out
    }

    /// The parameters (handles sharing storage with the model's), for an optimizer.
    fn parameters(&self) -> Vec<Tensor> {
        self.named_parameters().into_iter().map(|(_, t)| t).collect()
    }

    /// Parameters and buffers with their names, as PyTorch's `state_dict()` lists them.
    fn state_dict(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        self.visit(&mut |n, t, _| out.push((n.to_string(), t.clone())));
        out
    }

    /// The number of scalar parameters.
    fn num_parameters(&self) -> i64 {
        self.parameters().iter().map(|p| p.numel()).sum()
    }
}

/// Visits `child`'s tensors with names prefixed by `prefix.` (for container modules).
pub fn visit_child(prefix: &str, child: &dyn Module, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
    child.visit(&mut |n, t, s| f(&format!("{prefix}.{n}"), t, s));
}

impl<M: Module + ?Sized> Module for Box<M> {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        (**self).forward(input)
    }
    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        (**self).visit(f)
    }
    fn set_training(&mut self, training: bool) {
        (**self).set_training(training)
    }
}

/// `torch.nn.utils.clip_grad_norm_`: scales the gradients of `parameters` in place so that their
/// joint 2-norm is at most `max_norm` (by `max_norm / (norm + 1e-6)` when it is larger), and
/// returns the norm before clipping. As in PyTorch, the per-gradient norms come from one
/// `_foreach_norm`, their norm is the total, and one `_foreach_mul_` scales every gradient.
/// Parameters without a gradient are skipped; a non-finite norm is an error, as with PyTorch's
/// `error_if_nonfinite=True`.
pub fn clip_grad_norm_(parameters: &[impl AsRef<Tensor>], max_norm: f64) -> Result<f64> {
    crate::autograd::no_grad(|| {
        let grads: Vec<Tensor> = parameters.iter().filter_map(|p| p.as_ref().grad()).collect();
        if grads.is_empty() {
            return Ok(0.0);
        }
        let norms = crate::ops::_foreach_norm_scalar::call(&grads, crate::Scalar::Int(2), None)?;
        let norms: Vec<&Tensor> = norms.iter().collect();
        let total = crate::ops::linalg_vector_norm::call(
            &crate::try_stack(&norms, 0)?,
            crate::Scalar::Int(2),
            None,
            false,
            None,
        )?;
        let norm = total.try_to_dtype(crate::DType::F64)?.item::<f64>()?;
        if !norm.is_finite() {
            return Err(crate::Error::runtime(format!(
                "The total norm of order 2.0 for gradients from `parameters` is non-finite ({norm}), so it cannot be clipped"
            ))
            .in_op("clip_grad_norm_"));
        }
        let coef = (max_norm / (norm + 1e-6)).min(1.0);
        crate::ops::_foreach_mul_scalar_::call(&grads, crate::Scalar::Float(coef))?;
        Ok(norm)
    })
}
