//! `nn.Embedding` and `nn.EmbeddingBag`.

use super::{init, Module, Slot};
use crate::{Result, Tensor};

/// A lookup table of `num_embeddings` vectors of size `embedding_dim`, initialised from a
/// standard normal (PyTorch's default); the input is a tensor of int64 indices. With a
/// `padding_idx`, that row starts at zero and receives no gradient (a padding token); with a
/// `max_norm`, every row looked up is first rescaled in place to at most that norm (PyTorch's
/// `max_norm`/`norm_type`, through `embedding_renorm_`).
pub struct Embedding {
    /// `[num_embeddings, embedding_dim]`: one row per index.
    pub weight: Tensor,
    /// The padding row (non-negative, after PyTorch's wrapping of a negative index).
    pub padding_idx: Option<i64>,
    /// The largest norm a row looked up may have: longer rows are rescaled, in `weight`
    /// itself, before the lookup.
    pub max_norm: Option<f64>,
    /// The `p` of the norm `max_norm` bounds (default 2).
    pub norm_type: f64,
    /// Whether the gradient of each row is divided by how often the batch names it.
    pub scale_grad_by_freq: bool,
}

impl Embedding {
    /// A table of `num_embeddings × embedding_dim` normal values.
    pub fn new(num_embeddings: i64, embedding_dim: i64) -> Self {
        let weight = crate::empty(&[num_embeddings, embedding_dim]);
        init::normal_(&weight, 0.0, 1.0);
        Embedding {
            weight: weight.requires_grad_(true),
            padding_idx: None,
            max_norm: None,
            norm_type: 2.0,
            scale_grad_by_freq: false,
        }
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

    /// Bounds the `norm_type`-norm of every row looked up by `max_norm` (PyTorch's
    /// `nn.Embedding(max_norm=, norm_type=)`).
    pub fn with_max_norm(mut self, max_norm: f64, norm_type: f64) -> Self {
        self.max_norm = Some(max_norm);
        self.norm_type = norm_type;
        self
    }

    /// Divides each row's gradient by the number of times the batch names it.
    pub fn with_scale_grad_by_freq(mut self, scale: bool) -> Self {
        self.scale_grad_by_freq = scale;
        self
    }
}

/// `F.embedding`'s `max_norm`: the rows `indices` names rescaled in place, outside autograd.
fn renorm_rows(weight: &Tensor, indices: &Tensor, max_norm: Option<f64>, norm_type: f64) -> Result<()> {
    if let Some(max_norm) = max_norm {
        crate::autograd::no_grad(|| crate::ops::embedding_renorm_::call(weight, indices, max_norm, norm_type))?;
    }
    Ok(())
}

impl Module for Embedding {
    fn forward(&self, indices: &Tensor) -> Result<Tensor> {
        renorm_rows(&self.weight, indices, self.max_norm, self.norm_type)?;
        crate::ops::embedding::call(
            &self.weight,
            indices,
            self.padding_idx.unwrap_or(-1),
            self.scale_grad_by_freq,
            false,
        )
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
    }
}

/// How [`EmbeddingBag`] reduces a bag's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbeddingBagMode {
    /// The sum (weighted by `per_sample_weights` when given).
    Sum,
    /// The mean (PyTorch's default).
    Mean,
    /// The element-wise maximum.
    Max,
}

/// `nn.EmbeddingBag`: the sum, mean or max of the embeddings of each bag of indices, without
/// forming the per-index embeddings' tensor. `forward` takes a 2-D `[bags, bag_size]` input
/// (fixed-size bags); [`EmbeddingBag::forward_bags`] takes 1-D indices and the offsets where
/// each bag starts. Entries equal to `padding_idx` take no part; an empty bag gives zeros.
pub struct EmbeddingBag {
    /// `[num_embeddings, embedding_dim]`, normal initialised (the padding row zero).
    pub weight: Tensor,
    /// The reduction.
    pub mode: EmbeddingBagMode,
    /// The padding row (non-negative).
    pub padding_idx: Option<i64>,
    /// Whether `offsets` has one more element, the end of the last bag.
    pub include_last_offset: bool,
    /// The largest norm a row looked up may have (rescaled in `weight` first, as in
    /// [`Embedding`]).
    pub max_norm: Option<f64>,
    /// The `p` of the norm `max_norm` bounds (default 2).
    pub norm_type: f64,
    /// Whether the gradient of each row is divided by how often the batch names it.
    pub scale_grad_by_freq: bool,
}

impl EmbeddingBag {
    /// A table of `num_embeddings × embedding_dim` normal values reduced by `mode`.
    pub fn new(num_embeddings: i64, embedding_dim: i64, mode: EmbeddingBagMode) -> Self {
        let weight = crate::empty(&[num_embeddings, embedding_dim]);
        init::normal_(&weight, 0.0, 1.0);
        EmbeddingBag {
            weight: weight.requires_grad_(true),
            mode,
            padding_idx: None,
            include_last_offset: false,
            max_norm: None,
            norm_type: 2.0,
            scale_grad_by_freq: false,
        }
    }

    /// Bounds the `norm_type`-norm of every row looked up by `max_norm`.
    pub fn with_max_norm(mut self, max_norm: f64, norm_type: f64) -> Self {
        self.max_norm = Some(max_norm);
        self.norm_type = norm_type;
        self
    }

    /// Divides each row's gradient by the number of times the batch names it.
    pub fn with_scale_grad_by_freq(mut self, scale: bool) -> Self {
        self.scale_grad_by_freq = scale;
        self
    }

    /// Sets the padding row (negative counts from the end), zeroing it.
    pub fn with_padding_idx(mut self, padding_idx: i64) -> Result<Self> {
        let n = self.weight.sizes()[0];
        if padding_idx >= n || padding_idx < -n {
            return Err(crate::Error::value(format!(
                "padding_idx must be within num_embeddings (got {padding_idx} for {n} embeddings)"
            ))
            .in_op("EmbeddingBag"));
        }
        let p = if padding_idx < 0 { padding_idx + n } else { padding_idx };
        crate::autograd::no_grad(|| self.weight.select(0, p).zero_());
        self.padding_idx = Some(p);
        Ok(self)
    }

    /// The bags `indices[offsets[b]..offsets[b + 1]]`, each reduced, with optional per-index
    /// weights (sum mode only).
    pub fn forward_bags(
        &self,
        indices: &Tensor,
        offsets: &Tensor,
        per_sample_weights: Option<&Tensor>,
    ) -> Result<Tensor> {
        let mode = match self.mode {
            EmbeddingBagMode::Sum => 0,
            EmbeddingBagMode::Mean => 1,
            EmbeddingBagMode::Max => 2,
        };
        renorm_rows(&self.weight, indices, self.max_norm, self.norm_type)?;
        let out = crate::ops::embedding_bag_padding_idx::call(
            &self.weight,
            indices,
            offsets,
            self.scale_grad_by_freq,
            mode,
            false,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )?;
        Ok(out.0)
    }
}

impl Module for EmbeddingBag {
    /// A `[bags, bag_size]` input: one bag per row.
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        if input.dim() != 2 {
            return Err(crate::Error::value(format!(
                "EmbeddingBag.forward takes a 2D input of fixed-size bags (got {}D); use forward_bags with offsets",
                input.dim()
            )));
        }
        let (bags, size) = (input.sizes()[0], input.sizes()[1]);
        let offsets = crate::ops::arange_start_step::call(
            crate::Scalar::Int(0),
            crate::Scalar::Int(bags * size),
            crate::Scalar::Int(size.max(1)),
            Some(crate::DType::I64),
            None,
            Some(input.device()),
            None,
        )?;
        let flat = crate::ops::reshape::call(input, &[-1])?;
        let bag = EmbeddingBag { weight: self.weight.clone(), include_last_offset: false, ..*self };
        bag.forward_bags(&flat, &offsets, None)
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("weight", &self.weight, Slot::Parameter);
    }
}
