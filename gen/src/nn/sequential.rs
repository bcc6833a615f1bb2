//! `nn.Sequential`.

use super::{visit_child, Module, Slot};
use crate::{Result, Tensor};

/// Layers applied in order; the `i`-th layer's tensors are named `"{i}.…"`, as in PyTorch.
#[derive(Default)]
pub struct Sequential {
    layers: Vec<Box<dyn Module>>,
}

impl Sequential {
    /// An empty chain (the identity).
    pub fn new() -> Self {
        Sequential::default()
    }

    /// Appends a layer (builder style).
    #[allow(clippy::should_implement_trait)]
    pub fn add(mut self, layer: impl Module + 'static) -> Self {
        self.layers.push(Box::new(layer));
        self
    }

    /// Appends a boxed layer.
    pub fn push(&mut self, layer: Box<dyn Module>) {
        self.layers.push(layer);
    }

    /// The number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// Whether there are no layers.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Runs the layers in order, calling `f(i, output)` after each (to inspect intermediates).
    pub fn forward_inspect(&self, input: &Tensor, mut f: impl FnMut(usize, &Tensor)) -> Result<Tensor> {
        let mut x = input.clone();
        for (i, l) in self.layers.iter().enumerate() {
            x = l.forward(&x)?;
            f(i, &x);
        }
        Ok(x)
    }
}

impl Module for Sequential {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.forward_inspect(input, |_, _| {})
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        for (i, l) in self.layers.iter().enumerate() {
            visit_child(&i.to_string(), l.as_ref(), f);
        }
    }

    fn set_training(&mut self, training: bool) {
        for l in &mut self.layers {
            l.set_training(training);
        }
    }
}
