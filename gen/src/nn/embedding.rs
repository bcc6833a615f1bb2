//! `nn.Embedding`.

use super::{init, Module, Slot};
use crate::{Result, Tensor};

/// A lookup table of `num_embeddings` vectors of size `embedding_dim`, initialised from a
/// standard normal (PyTorch's default); the input is a tensor of int64 indices.
pub struct Embedding {
    /// `[num_embeddings, embedding_dim]`: one row per index.
    pub weight: Tensor,
}

impl Embedding {
    /// A table of `num_embeddings × embedding_dim` normal values.
    pub fn new(num_embeddings: i64, embedding_dim: i64) -> Self {
        let weight = crate::empty(&[num_embeddings, embedding_dim]);
        init::normal_(&weight, 0.0, 1.0);
        Embedding { weight: weight.requires_grad_(true) }
    }
}

impl Module for Embedding {
    fn forward(&self, indices: &Tensor) -> Result<Tensor> {
        crate::try_embedding(&self.weight, indices)
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
    }
}
