//! Parameter-free layers: activations, `Flatten`, `Identity`.

use super::Module;
use crate::{Result, Tensor};

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
