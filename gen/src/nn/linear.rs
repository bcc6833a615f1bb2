//! `nn.Linear`.

use super::{init, Module, Slot};
use crate::{Result, Tensor};

/// `y = x · weightᵀ + bias`, with `weight` of shape `[out_features, in_features]` and `bias` of
/// `[out_features]`. Initialised like PyTorch: weight by Kaiming-uniform with `a = √5` (bound
/// `1/√in_features`), bias uniform in `±1/√in_features`.
pub struct Linear {
    /// `[out_features, in_features]`.
    pub weight: Tensor,
    /// `[out_features]`, when the layer has a bias.
    pub bias: Option<Tensor>,
}

impl Linear {
    /// A layer with a bias.
    pub fn new(in_features: i64, out_features: i64) -> Self {
        Linear::with_bias(in_features, out_features, true)
    }

    /// A layer with or without a bias.
    pub fn with_bias(in_features: i64, out_features: i64, bias: bool) -> Self {
        let weight = crate::empty(&[out_features, in_features]);
        init::kaiming_uniform_(&weight, 5f64.sqrt());
        let bias = bias.then(|| {
            let b = crate::empty(&[out_features]);
            let bound = if in_features > 0 { 1.0 / (in_features as f64).sqrt() } else { 0.0 };
            init::uniform_(&b, -bound, bound);
            b.requires_grad_(true)
        });
        Linear { weight: weight.requires_grad_(true), bias }
    }
}

impl Module for Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        crate::try_linear(x, &self.weight, self.bias.as_ref())
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
        if let Some(b) = &self.bias {
            f("bias", b, Slot::Parameter);
        }
    }
}
