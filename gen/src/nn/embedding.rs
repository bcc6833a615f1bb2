//! `nn.Embedding`.

use super::{init, Module, Slot};
use crate::{Result, Tensor};

/// A lookup table of `num_embeddings` vectors of size `embedding_dim`, initialised from a
/// standard normal (PyTorch's default); the input is a tensor of int64 indices. With a
/// `padding_idx`, that row starts at zero and receives no gradient (a padding token).
pub struct Embedding {
    /// `[num_embeddings, embedding_dim]`: one row per index.
    pub weight: Tensor,
    /// The padding row (non-negative, after PyTorch's wrapping of a negative index).
    pub padding_idx: Option<i64>,
}

impl Embedding {
    /// A table of `num_embeddings × embedding_dim` normal values.
    pub fn new(num_embeddings: i64, embedding_dim: i64) -> Self {
        let weight = crate::empty(&[num_embeddings, embedding_dim]);
        init::normal_(&weight, 0.0, 1.0);
        Embedding { weight: weight.requires_grad_(true), padding_idx: None }
    }

    /// A table whose row `padding_idx` (negative counts from the end) is zero and never
    /// trained.
    pub fn with_padding_idx(num_embeddings: i64, embedding_dim: i64, padding_idx: i64) -> Result<Self> {
        if padding_idx >= num_embeddings || padding_idx < -num_embeddings {
            return Err(crate::Error::value(format!(
                "Padding_idx must be within num_embeddings (got {padding_idx} for {num_embeddings} embeddings)"
            ))
            .in_op("Embedding"));
        }
        let padding_idx = if padding_idx < 0 { padding_idx + num_embeddings } else { padding_idx };
        let mut e = Embedding::new(num_embeddings, embedding_dim);
        crate::autograd::no_grad(|| e.weight.select(0, padding_idx).zero_());
        e.padding_idx = Some(padding_idx);
        Ok(e)
    }
}

impl Module for Embedding {
    fn forward(&self, indices: &Tensor) -> Result<Tensor> {
        crate::ops::embedding::call(&self.weight, indices, self.padding_idx.unwrap_or(-1), false, false)
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
    }
}
