//! Parameter-free layers: activations, `Flatten`, `Identity`, `ChannelShuffle`.

use super::{Module, Slot};
use crate::{ops, Result, Scalar, Tensor};

macro_rules! activation {
    ($(#[$doc:meta])* $name:ident, |$x:ident| $body:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;

        impl Module for $name {
            fn forward(&self, $x: &Tensor) -> Result<Tensor> {
                $body
            }
        }
    };
}

activation!(
    /// `nn.ReLU`: `max(x, 0)`.
    ReLU,
    |x| x.try_relu()
);
activation!(
    /// `nn.Mish`: `x · tanh(softplus(x))`.
    Mish,
    |x| crate::try_mish(x)
);
activation!(
    /// `nn.Hardswish`: `x · relu6(x + 3) / 6`.
    Hardswish,
    |x| crate::try_hardswish(x)
);
activation!(
    /// `nn.Hardsigmoid`: `relu6(x + 3) / 6`.
    Hardsigmoid,
    |x| crate::try_hardsigmoid(x)
);

/// `nn.GELU`: exact (erf-based, the default) or with the tanh approximation
/// (`GELU::tanh()`, PyTorch's `approximate='tanh'`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GELU {
    /// Use `x/2 · (1 + tanh(√(2/π)(x + 0.044715x³)))` instead of the exact form.
    pub tanh_approximation: bool,
}

impl GELU {
    /// The exact GELU.
    pub fn new() -> Self {
        GELU::default()
    }

    /// GELU with the tanh approximation.
    pub fn tanh() -> Self {
        GELU { tanh_approximation: true }
    }
}

impl Module for GELU {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let approximate = if self.tanh_approximation { "tanh" } else { "none" };
        x.try_gelu_with(crate::options::GeluOpts { approximate })
    }
}
activation!(
    /// `nn.SiLU`: `x · sigmoid(x)`.
    SiLU,
    |x| x.try_silu()
);
activation!(
    /// `nn.Tanh`.
    Tanh,
    |x| x.try_tanh()
);
activation!(
    /// `nn.Sigmoid`.
    Sigmoid,
    |x| x.try_sigmoid()
);
activation!(
    /// `nn.Identity`.
    Identity,
    |x| Ok(x.clone())
);

/// `nn.Flatten`: flattens dims `start_dim..=end_dim` (default 1..=-1, keeping the batch dim).
#[derive(Clone, Copy, Debug)]
pub struct Flatten {
    /// The first dimension flattened.
    pub start_dim: i64,
    /// The last dimension flattened (negative counts from the end).
    pub end_dim: i64,
}

impl Default for Flatten {
    fn default() -> Self {
        Flatten { start_dim: 1, end_dim: -1 }
    }
}

impl Module for Flatten {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.try_flatten_with(self.start_dim, crate::options::FlattenOpts { end_dim: self.end_dim })
    }
}

/// `nn.ChannelShuffle`: ShuffleNet's shuffle of `[N, C, *]` channels in `groups` groups.
#[derive(Clone, Copy, Debug)]
pub struct ChannelShuffle {
    /// The number of groups (dividing the channels).
    pub groups: i64,
}

impl Module for ChannelShuffle {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        ops::channel_shuffle::call(x, self.groups)
    }
}

activation!(
    /// `nn.ReLU6`: `min(max(x, 0), 6)`.
    ReLU6,
    |x| ops::relu6::call(x)
);
activation!(
    /// `nn.SELU`: `scale · elu(x, alpha)` with the self-normalizing constants.
    SELU,
    |x| ops::selu::call(x)
);
activation!(
    /// `nn.LogSigmoid`: `log(sigmoid(x))`, without overflow.
    LogSigmoid,
    |x| ops::log_sigmoid::call(x)
);
activation!(
    /// `nn.Softsign`: `x / (1 + |x|)`.
    Softsign,
    |x| x.try_div(&x.try_abs()?.try_add_scalar(1)?)
);
activation!(
    /// `nn.Tanhshrink`: `x - tanh(x)`.
    Tanhshrink,
    |x| x.try_sub(&x.try_tanh()?)
);

/// Declares a layer with scalar hyper-parameters (public fields, PyTorch's defaults in
/// `Default`) whose forward is one expression of them.
macro_rules! scalar_activation {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident: $ty:ty = $default:expr),* $(,)? },
     |$s:ident, $x:ident| $body:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name {
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $($field: $default,)* }
            }
        }

        impl Module for $name {
            fn forward(&self, $x: &Tensor) -> Result<Tensor> {
                let $s = self;
                $body
            }
        }
    };
}

scalar_activation!(
    /// `nn.ELU`: `x` for `x > 0`, `alpha · (exp(x) - 1)` otherwise.
    ELU {
        /// The saturation value of the negative part.
        alpha: f64 = 1.0,
    },
    |s, x| ops::elu::call(x, Scalar::Float(s.alpha), Scalar::Int(1), Scalar::Int(1))
);
scalar_activation!(
    /// `nn.CELU`: `max(0, x) + min(0, alpha · (exp(x / alpha) - 1))`.
    CELU {
        /// The saturation value of the negative part (not 0).
        alpha: f64 = 1.0,
    },
    |s, x| ops::celu::call(x, Scalar::Float(s.alpha))
);
scalar_activation!(
    /// `nn.LeakyReLU`: `x` for `x >= 0`, `negative_slope · x` otherwise.
    LeakyReLU {
        /// The slope of the negative part.
        negative_slope: f64 = 0.01,
    },
    |s, x| ops::leaky_relu::call(x, Scalar::Float(s.negative_slope))
);
scalar_activation!(
    /// `nn.Hardtanh`: `x` clamped to `[min_val, max_val]`.
    Hardtanh {
        /// The lower bound.
        min_val: f64 = -1.0,
        /// The upper bound.
        max_val: f64 = 1.0,
    },
    |s, x| ops::hardtanh::call(x, Scalar::Float(s.min_val), Scalar::Float(s.max_val))
);
scalar_activation!(
    /// `nn.Hardshrink`: zero inside `[-lambd, lambd]`, `x` outside.
    Hardshrink {
        /// The half-width of the zeroed band.
        lambd: f64 = 0.5,
    },
    |s, x| ops::hardshrink::call(x, Scalar::Float(s.lambd))
);
scalar_activation!(
    /// `nn.Softshrink`: `x ∓ lambd` outside `[-lambd, lambd]`, zero inside.
    Softshrink {
        /// The shrinkage (at least 0).
        lambd: f64 = 0.5,
    },
    |s, x| ops::softshrink::call(x, Scalar::Float(s.lambd))
);
scalar_activation!(
    /// `nn.Softplus`: `log(1 + exp(beta · x)) / beta`, linear above `threshold`.
    Softplus {
        /// The sharpness.
        beta: f64 = 1.0,
        /// Above `beta · x > threshold` the layer is the identity.
        threshold: f64 = 20.0,
    },
    |s, x| ops::softplus::call(x, Scalar::Float(s.beta), Scalar::Float(s.threshold))
);
scalar_activation!(
    /// `nn.Threshold`: `x` where `x > threshold`, `value` elsewhere (no defaults in PyTorch;
    /// here 0 and 0, a ReLU).
    Threshold {
        /// The threshold.
        threshold: f64 = 0.0,
        /// The replacement at or below the threshold.
        value: f64 = 0.0,
    },
    |s, x| ops::threshold::call(x, Scalar::Float(s.threshold), Scalar::Float(s.value))
);

/// `nn.GLU`: `a · sigmoid(b)` for the two halves `a`, `b` of dimension `dim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GLU {
    /// The dimension that is halved (its size must be even).
    pub dim: i64,
}

impl Default for GLU {
    fn default() -> Self {
        GLU { dim: -1 }
    }
}

impl Module for GLU {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        ops::glu::call(x, self.dim)
    }
}

/// `nn.RReLU`: a leaky ReLU whose negative slope is drawn from `U(lower, upper)` per element in
/// training mode and is their mean in evaluation mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RReLU {
    /// The smallest slope.
    pub lower: f64,
    /// The largest slope.
    pub upper: f64,
    training: bool,
}

impl Default for RReLU {
    fn default() -> Self {
        RReLU::new(1.0 / 8.0, 1.0 / 3.0)
    }
}

impl RReLU {
    /// A layer in training mode with slopes from `U(lower, upper)`.
    pub fn new(lower: f64, upper: f64) -> Self {
        RReLU { lower, upper, training: true }
    }
}

impl Module for RReLU {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        ops::rrelu::call(x, Scalar::Float(self.lower), Scalar::Float(self.upper), self.training, None)
    }

    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
}

/// `nn.PReLU`: a leaky ReLU with learned slopes, one shared or one per channel (dim 1), each
/// initialised to `init` (PyTorch's default 0.25).
pub struct PReLU {
    /// `[num_parameters]`.
    pub weight: Tensor,
}

impl PReLU {
    /// `num_parameters` slopes (1, or the number of channels), each starting at `init`.
    pub fn new(num_parameters: i64, init: f64) -> Self {
        let weight = crate::empty(&[num_parameters]);
        super::init::constant_(&weight, init);
        PReLU { weight: weight.requires_grad_(true) }
    }
}

impl Default for PReLU {
    fn default() -> Self {
        PReLU::new(1, 0.25)
    }
}

impl Module for PReLU {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        ops::prelu::call(x, &self.weight)
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
    }
}
