//! `nn.TransformerEncoderLayer`, `nn.TransformerDecoderLayer`, `nn.TransformerEncoder` and
//! `nn.TransformerDecoder`, with PyTorch's parameter names, defaults and both layer-norm
//! placements.

use super::{visit_child, Dropout, LayerNorm, Linear, MhaOpts, Module, MultiheadAttention, Slot};
use crate::options::GeluOpts;
use crate::{Result, Tensor};

/// The feed-forward activation of a transformer layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Activation {
    /// `relu` (PyTorch's default).
    #[default]
    Relu,
    /// Exact `gelu`.
    Gelu,
    /// `gelu` with the tanh approximation.
    GeluTanh,
}

impl Activation {
    fn apply(self, x: &Tensor) -> Result<Tensor> {
        match self {
            Activation::Relu => x.try_relu(),
            Activation::Gelu => x.try_gelu(),
            Activation::GeluTanh => x.try_gelu_with(GeluOpts { approximate: "tanh" }),
        }
    }
}

/// The sizes and options of a transformer layer, with PyTorch's defaults from
/// [`TransformerConfig::new`]; the fields are public to change them.
#[derive(Clone, Copy, Debug)]
pub struct TransformerConfig {
    /// The model width.
    pub d_model: i64,
    /// Attention heads.
    pub nhead: i64,
    /// The feed-forward width (2048).
    pub dim_feedforward: i64,
    /// Dropout after attention, inside and after the feed-forward block (0.1).
    pub dropout: f64,
    /// The feed-forward activation (ReLU).
    pub activation: Activation,
    /// The layer norms' epsilon (1e-5).
    pub layer_norm_eps: f64,
    /// `[B, L, E]` inputs rather than `[L, B, E]` (false).
    pub batch_first: bool,
    /// Pre-norm (`x + f(norm(x))`) rather than post-norm (`norm(x + f(x))`) (false).
    pub norm_first: bool,
    /// Biases in the linear layers and layer norms (true).
    pub bias: bool,
}

impl TransformerConfig {
    /// PyTorch's defaults for `d_model` and `nhead`.
    pub fn new(d_model: i64, nhead: i64) -> Self {
        TransformerConfig {
            d_model,
            nhead,
            dim_feedforward: 2048,
            dropout: 0.1,
            activation: Activation::Relu,
            layer_norm_eps: 1e-5,
            batch_first: false,
            norm_first: false,
            bias: true,
        }
    }

    fn attention(&self) -> MultiheadAttention {
        MultiheadAttention::with_bias(self.d_model, self.nhead, self.bias)
            .dropout(self.dropout)
            .batch_first(self.batch_first)
    }

    fn norm(&self) -> LayerNorm {
        LayerNorm::with_options(&[self.d_model], self.layer_norm_eps, true, self.bias)
    }
}

/// The feed-forward block shared by both layers: `linear2(dropout(act(linear1(x))))`.
struct FeedForward<'a> {
    linear1: &'a Linear,
    linear2: &'a Linear,
    dropout: &'a Dropout,
    activation: Activation,
}

impl FeedForward<'_> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let h = self.activation.apply(&self.linear1.forward(x)?)?;
        self.linear2.forward(&self.dropout.forward(&h)?)
    }
}

/// `nn.TransformerEncoderLayer`: self-attention and a feed-forward block, each with a residual
/// connection, dropout and a layer norm (before or after, per `norm_first`).
pub struct TransformerEncoderLayer {
    /// Self-attention.
    pub self_attn: MultiheadAttention,
    /// `[dim_feedforward, d_model]`.
    pub linear1: Linear,
    /// `[d_model, dim_feedforward]`.
    pub linear2: Linear,
    /// The norm around self-attention.
    pub norm1: LayerNorm,
    /// The norm around the feed-forward block.
    pub norm2: LayerNorm,
    dropout: Dropout,
    dropout1: Dropout,
    dropout2: Dropout,
    /// The options the layer was built with.
    pub config: TransformerConfig,
}

/// Masks for [`TransformerEncoderLayer::forward_with`] and [`TransformerEncoder::forward_with`].
#[derive(Clone, Copy, Debug, Default)]
pub struct EncoderMasks<'a> {
    /// `[L, L]` (or `[B·H, L, L]`): bool `true` where attention is not allowed, or additive.
    pub mask: Option<&'a Tensor>,
    /// `[B, L]`: padding positions (bool `true`) or additive per key.
    pub key_padding_mask: Option<&'a Tensor>,
    /// Causal self-attention (used when `mask` is absent).
    pub is_causal: bool,
}

impl TransformerEncoderLayer {
    /// PyTorch's defaults for `d_model` and `nhead` (see [`TransformerConfig::new`]).
    pub fn new(d_model: i64, nhead: i64) -> Self {
        TransformerEncoderLayer::from_config(TransformerConfig::new(d_model, nhead))
    }

    /// A layer with the given options.
    pub fn from_config(config: TransformerConfig) -> Self {
        TransformerEncoderLayer {
            self_attn: config.attention(),
            linear1: Linear::with_bias(config.d_model, config.dim_feedforward, config.bias),
            linear2: Linear::with_bias(config.dim_feedforward, config.d_model, config.bias),
            norm1: config.norm(),
            norm2: config.norm(),
            dropout: Dropout::new(config.dropout),
            dropout1: Dropout::new(config.dropout),
            dropout2: Dropout::new(config.dropout),
            config,
        }
    }

    fn self_attention(&self, x: &Tensor, masks: EncoderMasks<'_>) -> Result<Tensor> {
        let opts = MhaOpts {
            key_padding_mask: masks.key_padding_mask,
            need_weights: false,
            attn_mask: masks.mask,
            average_attn_weights: true,
            is_causal: masks.is_causal,
        };
        self.dropout1.forward(&self.self_attn.forward_with(x, x, x, opts)?.0)
    }

    fn feed_forward(&self, x: &Tensor) -> Result<Tensor> {
        let ff = FeedForward {
            linear1: &self.linear1,
            linear2: &self.linear2,
            dropout: &self.dropout,
            activation: self.config.activation,
        };
        self.dropout2.forward(&ff.forward(x)?)
    }

    /// The layer with masks.
    pub fn forward_with(&self, src: &Tensor, masks: EncoderMasks<'_>) -> Result<Tensor> {
        if self.config.norm_first {
            let x = src.try_add(&self.self_attention(&self.norm1.forward(src)?, masks)?)?;
            x.try_add(&self.feed_forward(&self.norm2.forward(&x)?)?)
        } else {
            let x = self.norm1.forward(&src.try_add(&self.self_attention(src, masks)?)?)?;
            self.norm2.forward(&x.try_add(&self.feed_forward(&x)?)?)
        }
    }

    /// A copy with its own parameters (what PyTorch's `copy.deepcopy` gives
    /// `TransformerEncoder`).
    pub fn deep_clone(&self) -> Self {
        let mut copy = TransformerEncoderLayer::from_config(self.config);
        copy_parameters(self, &copy);
        copy.set_training(self.dropout.training());
        copy
    }
}

/// Copies every tensor of `from` into the same-named tensor of `to` (same architecture).
fn copy_parameters(from: &dyn Module, to: &dyn Module) {
    let src = from.state_dict();
    let dst = to.state_dict();
    crate::autograd::no_grad(|| {
        for ((_, s), (_, d)) in src.iter().zip(&dst) {
            d.copy_(s);
        }
    });
}

impl Module for TransformerEncoderLayer {
    fn forward(&self, src: &Tensor) -> Result<Tensor> {
        self.forward_with(src, EncoderMasks::default())
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        visit_child("self_attn", &self.self_attn, f);
        visit_child("linear1", &self.linear1, f);
        visit_child("linear2", &self.linear2, f);
        visit_child("norm1", &self.norm1, f);
        visit_child("norm2", &self.norm2, f);
    }

    fn set_training(&mut self, training: bool) {
        self.self_attn.set_training(training);
        for d in [&mut self.dropout, &mut self.dropout1, &mut self.dropout2] {
            d.set_training(training);
        }
    }
}

/// `nn.TransformerDecoderLayer`: self-attention over the target, cross-attention over the
/// encoder's output (`memory`) and a feed-forward block, each with a residual connection,
/// dropout and a layer norm.
pub struct TransformerDecoderLayer {
    /// Self-attention over the target.
    pub self_attn: MultiheadAttention,
    /// Attention from the target to the memory.
    pub multihead_attn: MultiheadAttention,
    /// `[dim_feedforward, d_model]`.
    pub linear1: Linear,
    /// `[d_model, dim_feedforward]`.
    pub linear2: Linear,
    /// The norm around self-attention.
    pub norm1: LayerNorm,
    /// The norm around cross-attention.
    pub norm2: LayerNorm,
    /// The norm around the feed-forward block.
    pub norm3: LayerNorm,
    dropout: Dropout,
    dropout1: Dropout,
    dropout2: Dropout,
    dropout3: Dropout,
    /// The options the layer was built with.
    pub config: TransformerConfig,
}

/// Masks for [`TransformerDecoderLayer::forward_with`].
#[derive(Clone, Copy, Debug, Default)]
pub struct DecoderMasks<'a> {
    /// Target self-attention mask (`[T, T]` or `[B·H, T, T]`).
    pub tgt_mask: Option<&'a Tensor>,
    /// Cross-attention mask (`[T, S]` or `[B·H, T, S]`).
    pub memory_mask: Option<&'a Tensor>,
    /// `[B, T]` target padding.
    pub tgt_key_padding_mask: Option<&'a Tensor>,
    /// `[B, S]` memory padding.
    pub memory_key_padding_mask: Option<&'a Tensor>,
    /// Causal target self-attention (used when `tgt_mask` is absent).
    pub tgt_is_causal: bool,
    /// Causal cross-attention (used when `memory_mask` is absent).
    pub memory_is_causal: bool,
}

impl TransformerDecoderLayer {
    /// PyTorch's defaults for `d_model` and `nhead` (see [`TransformerConfig::new`]).
    pub fn new(d_model: i64, nhead: i64) -> Self {
        TransformerDecoderLayer::from_config(TransformerConfig::new(d_model, nhead))
    }

    /// A layer with the given options.
    pub fn from_config(config: TransformerConfig) -> Self {
        TransformerDecoderLayer {
            self_attn: config.attention(),
            multihead_attn: config.attention(),
            linear1: Linear::with_bias(config.d_model, config.dim_feedforward, config.bias),
            linear2: Linear::with_bias(config.dim_feedforward, config.d_model, config.bias),
            norm1: config.norm(),
            norm2: config.norm(),
            norm3: config.norm(),
            dropout: Dropout::new(config.dropout),
            dropout1: Dropout::new(config.dropout),
            dropout2: Dropout::new(config.dropout),
            dropout3: Dropout::new(config.dropout),
            config,
        }
    }

    fn self_attention(&self, x: &Tensor, m: &DecoderMasks<'_>) -> Result<Tensor> {
        let opts = MhaOpts {
            key_padding_mask: m.tgt_key_padding_mask,
            need_weights: false,
            attn_mask: m.tgt_mask,
            average_attn_weights: true,
            is_causal: m.tgt_is_causal,
        };
        self.dropout1.forward(&self.self_attn.forward_with(x, x, x, opts)?.0)
    }

    fn cross_attention(&self, x: &Tensor, memory: &Tensor, m: &DecoderMasks<'_>) -> Result<Tensor> {
        let opts = MhaOpts {
            key_padding_mask: m.memory_key_padding_mask,
            need_weights: false,
            attn_mask: m.memory_mask,
            average_attn_weights: true,
            is_causal: m.memory_is_causal,
        };
        self.dropout2.forward(&self.multihead_attn.forward_with(x, memory, memory, opts)?.0)
    }

    fn feed_forward(&self, x: &Tensor) -> Result<Tensor> {
        let ff = FeedForward {
            linear1: &self.linear1,
            linear2: &self.linear2,
            dropout: &self.dropout,
            activation: self.config.activation,
        };
        self.dropout3.forward(&ff.forward(x)?)
    }

    /// A copy with its own parameters (what PyTorch's `copy.deepcopy` gives
    /// `TransformerDecoder`).
    pub fn deep_clone(&self) -> Self {
        let mut copy = TransformerDecoderLayer::from_config(self.config);
        copy_parameters(self, &copy);
        copy.set_training(self.dropout.training());
        copy
    }

    /// The layer over target `tgt` and encoder output `memory`, with masks.
    pub fn forward_with(&self, tgt: &Tensor, memory: &Tensor, masks: DecoderMasks<'_>) -> Result<Tensor> {
        let m = &masks;
        if self.config.norm_first {
            let x = tgt.try_add(&self.self_attention(&self.norm1.forward(tgt)?, m)?)?;
            let x = x.try_add(&self.cross_attention(&self.norm2.forward(&x)?, memory, m)?)?;
            x.try_add(&self.feed_forward(&self.norm3.forward(&x)?)?)
        } else {
            let x = self.norm1.forward(&tgt.try_add(&self.self_attention(tgt, m)?)?)?;
            let x = self.norm2.forward(&x.try_add(&self.cross_attention(&x, memory, m)?)?)?;
            self.norm3.forward(&x.try_add(&self.feed_forward(&x)?)?)
        }
    }
}

impl Module for TransformerDecoderLayer {
    /// The layer attending to its own input as the memory (no masks); use
    /// [`TransformerDecoderLayer::forward_with`] to pass an encoder's output.
    fn forward(&self, tgt: &Tensor) -> Result<Tensor> {
        self.forward_with(tgt, tgt, DecoderMasks::default())
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        visit_child("self_attn", &self.self_attn, f);
        visit_child("multihead_attn", &self.multihead_attn, f);
        visit_child("linear1", &self.linear1, f);
        visit_child("linear2", &self.linear2, f);
        visit_child("norm1", &self.norm1, f);
        visit_child("norm2", &self.norm2, f);
        visit_child("norm3", &self.norm3, f);
    }

    fn set_training(&mut self, training: bool) {
        self.self_attn.set_training(training);
        self.multihead_attn.set_training(training);
        for d in [&mut self.dropout, &mut self.dropout1, &mut self.dropout2, &mut self.dropout3] {
            d.set_training(training);
        }
    }
}

/// `nn.TransformerEncoder`: `num_layers` copies of one encoder layer (identical initial
/// weights, as PyTorch's deep copies) and an optional final norm.
pub struct TransformerEncoder {
    /// The layers, named `layers.{i}`.
    pub layers: Vec<TransformerEncoderLayer>,
    /// The final layer norm, named `norm`.
    pub norm: Option<LayerNorm>,
}

impl TransformerEncoder {
    /// `num_layers` deep copies of `layer`, then `norm` if given.
    pub fn new(layer: TransformerEncoderLayer, num_layers: usize, norm: Option<LayerNorm>) -> Self {
        let mut layers: Vec<TransformerEncoderLayer> = (1..num_layers).map(|_| layer.deep_clone()).collect();
        if num_layers > 0 {
            layers.insert(0, layer);
        }
        TransformerEncoder { layers, norm }
    }

    /// The stack with masks (the same for every layer).
    pub fn forward_with(&self, src: &Tensor, masks: EncoderMasks<'_>) -> Result<Tensor> {
        let mut x = src.clone();
        for layer in &self.layers {
            x = layer.forward_with(&x, masks)?;
        }
        match &self.norm {
            Some(n) => n.forward(&x),
            None => Ok(x),
        }
    }
}

impl Module for TransformerEncoder {
    fn forward(&self, src: &Tensor) -> Result<Tensor> {
        self.forward_with(src, EncoderMasks::default())
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        for (i, layer) in self.layers.iter().enumerate() {
            visit_child(&format!("layers.{i}"), layer, f);
        }
        if let Some(n) = &self.norm {
            visit_child("norm", n, f);
        }
    }

    fn set_training(&mut self, training: bool) {
        for layer in &mut self.layers {
            layer.set_training(training);
        }
    }
}

/// `nn.TransformerDecoder`: `num_layers` copies of one decoder layer (identical initial
/// weights, as PyTorch's deep copies) and an optional final norm.
pub struct TransformerDecoder {
    /// The layers, named `layers.{i}`.
    pub layers: Vec<TransformerDecoderLayer>,
    /// The final layer norm, named `norm`.
    pub norm: Option<LayerNorm>,
}

impl TransformerDecoder {
    /// `num_layers` deep copies of `layer`, then `norm` if given.
    pub fn new(layer: TransformerDecoderLayer, num_layers: usize, norm: Option<LayerNorm>) -> Self {
        let mut layers: Vec<TransformerDecoderLayer> = (1..num_layers).map(|_| layer.deep_clone()).collect();
        if num_layers > 0 {
            layers.insert(0, layer);
        }
        TransformerDecoder { layers, norm }
    }

    /// The stack over target `tgt` and encoder output `memory` (the same masks for every layer).
    pub fn forward_with(&self, tgt: &Tensor, memory: &Tensor, masks: DecoderMasks<'_>) -> Result<Tensor> {
        let mut x = tgt.clone();
        for layer in &self.layers {
            x = layer.forward_with(&x, memory, masks)?;
        }
        match &self.norm {
            Some(n) => n.forward(&x),
            None => Ok(x),
        }
    }
}

impl Module for TransformerDecoder {
    /// The stack attending to its own input as the memory; use
    /// [`TransformerDecoder::forward_with`] to pass an encoder's output.
    fn forward(&self, tgt: &Tensor) -> Result<Tensor> {
        self.forward_with(tgt, tgt, DecoderMasks::default())
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        for (i, layer) in self.layers.iter().enumerate() {
            visit_child(&format!("layers.{i}"), layer, f);
        }
        if let Some(n) = &self.norm {
            visit_child("norm", n, f);
        }
    }

    fn set_training(&mut self, training: bool) {
        for layer in &mut self.layers {
            layer.set_training(training);
        }
    }
}
