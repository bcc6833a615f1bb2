//! `nn.Linear` and `nn.Bilinear`.

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

/// `nn.Bilinear`: `y[…, o] = Σ_ij x1[…, i] · weight[o, i, j] · x2[…, j] + bias[o]`, with
/// `weight` of shape `[out_features, in1_features, in2_features]`. Initialised like PyTorch:
/// weight and bias uniform in `±1/√in1_features`. Takes two inputs: [`Bilinear::forward_with`]
/// (as a [`Module`], the one input is both).
pub struct Bilinear {
    /// `[out_features, in1_features, in2_features]`.
    pub weight: Tensor,
    /// `[out_features]`, when the layer has a bias.
    pub bias: Option<Tensor>,
}

impl Bilinear {
    /// A layer with or without a bias.
    pub fn new(in1_features: i64, in2_features: i64, out_features: i64, bias: bool) -> Self {
        let bound = if in1_features > 0 { 1.0 / (in1_features as f64).sqrt() } else { 0.0 };
        let param = |sizes: &[i64]| {
            let t = crate::empty(sizes);
            init::uniform_(&t, -bound, bound);
            t.requires_grad_(true)
        };
        Bilinear {
            weight: param(&[out_features, in1_features, in2_features]),
            bias: bias.then(|| param(&[out_features])),
        }
    }

    /// The layer applied to its two inputs (equal leading dims).
    pub fn forward_with(&self, x1: &Tensor, x2: &Tensor) -> Result<Tensor> {
        crate::ops::bilinear::call(x1, x2, &self.weight, self.bias.as_ref())
    }
}

impl Module for Bilinear {
    /// The layer with `x` as both inputs (`in1_features == in2_features`).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.forward_with(x, x)
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
        if let Some(b) = &self.bias {
            f("bias", b, Slot::Parameter);
        }
    }
}
