//! A decoder-only transformer (GPT-2's layout, pre-norm): token and position embeddings,
//! `layers` blocks of causal self-attention and a GELU (tanh) MLP, a final layer norm, and the
//! output projection tied to the token embedding. No dropout, so a run is deterministic and its
//! losses can be compared with PyTorch's (`scripts/gpt_pytorch.py`, same `state_dict` names).

use oxten::nn::{visit_child, Embedding, LayerNorm, Linear, Module, Slot};
use oxten::options::{GeluOpts, ScaledDotProductAttentionOpts};
use oxten::{Result, Tensor};

/// The sizes of a model.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub vocab: i64,
    pub context: i64,
    pub width: i64,
    pub heads: i64,
    pub layers: i64,
}

/// Causal multi-head self-attention: one projection to queries, keys and values, the fused
/// attention kernel, and the output projection.
struct Attention {
    qkv: Linear,
    proj: Linear,
    heads: i64,
}

impl Attention {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let s = x.sizes();
        let (b, t, c) = (s[0], s[1], s[2]);
        let qkv = self.qkv.forward(x)?;
        let heads = |u: &Tensor| u.try_view(&[b, t, self.heads, c / self.heads])?.try_transpose(1, 2);
        let parts = qkv.try_split(c, 2)?;
        let (q, k, v) = (heads(&parts[0])?, heads(&parts[1])?, heads(&parts[2])?);
        let causal = ScaledDotProductAttentionOpts { is_causal: true, ..Default::default() };
        let y = oxten::try_scaled_dot_product_attention_with(&q, &k, &v, causal)?;
        self.proj.forward(&y.try_transpose(1, 2)?.try_reshape(&[b, t, c])?)
    }
}

struct Block {
    ln1: LayerNorm,
    attn: Attention,
    ln2: LayerNorm,
    fc: Linear,
    out: Linear,
}

impl Block {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let x = x.try_add(&self.attn.forward(&self.ln1.forward(x)?)?)?;
        let h = self.fc.forward(&self.ln2.forward(&x)?)?;
        let h = oxten::try_gelu_with(&h, GeluOpts { approximate: "tanh" })?;
        x.try_add(&self.out.forward(&h)?)
    }
}

/// The model.
pub struct Gpt {
    pub config: Config,
    wte: Embedding,
    wpe: Embedding,
    blocks: Vec<Block>,
    ln_f: LayerNorm,
}

impl Gpt {
    /// A model with PyTorch's default initialisation of each layer.
    pub fn new(config: Config) -> Gpt {
        let c = config.width;
        let blocks = (0..config.layers)
            .map(|_| Block {
                ln1: LayerNorm::new(&[c]),
                attn: Attention { qkv: Linear::new(c, 3 * c), proj: Linear::new(c, c), heads: config.heads },
                ln2: LayerNorm::new(&[c]),
                fc: Linear::new(c, 4 * c),
                out: Linear::new(4 * c, c),
            })
            .collect();
        // GPT-2's initialisation of the embeddings (N(0, 0.02)): PyTorch's N(0, 1) default makes
        // the tied output projection's first logits huge (a first loss near 70).
        let (wte, wpe) = (Embedding::new(config.vocab, c), Embedding::new(config.context, c));
        oxten::nn::init::normal_(&wte.weight, 0.0, 0.02);
        oxten::nn::init::normal_(&wpe.weight, 0.0, 0.02);
        Gpt { config, wte, wpe, blocks, ln_f: LayerNorm::new(&[c]) }
    }

    /// Next-token logits `[B, T, vocab]` for token ids `[B, T]` (int64).
    pub fn logits(&self, idx: &Tensor) -> Result<Tensor> {
        let t = idx.sizes()[1];
        let pos = oxten::try_arange(t)?;
        let mut x = self.wte.forward(idx)?.try_add(&self.wpe.forward(&pos)?)?;
        for b in &self.blocks {
            x = b.forward(&x)?;
        }
        // The output projection is the token embedding (weight tying).
        oxten::try_linear(&self.ln_f.forward(&x)?, &self.wte.weight, None)
    }

    /// The mean cross-entropy of predicting `targets` `[B, T]` from `idx`.
    pub fn loss(&self, idx: &Tensor, targets: &Tensor) -> Result<Tensor> {
        let logits = self.logits(idx)?;
        oxten::try_cross_entropy_loss(&logits.try_view(&[-1, self.config.vocab])?, &targets.try_view(&[-1])?)
    }
}

impl Module for Gpt {
    fn forward(&self, idx: &Tensor) -> Result<Tensor> {
        self.logits(idx)
    }

    /// PyTorch's names for the same model (`scripts/gpt_pytorch.py`).
    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        visit_child("wte", &self.wte, f);
        visit_child("wpe", &self.wpe, f);
        for (i, b) in self.blocks.iter().enumerate() {
            let p = format!("blocks.{i}");
            visit_child(&format!("{p}.ln1"), &b.ln1, f);
            visit_child(&format!("{p}.attn.qkv"), &b.attn.qkv, f);
            visit_child(&format!("{p}.attn.proj"), &b.attn.proj, f);
            visit_child(&format!("{p}.fc"), &b.fc, f);
            visit_child(&format!("{p}.out"), &b.out, f);
            visit_child(&format!("{p}.ln2"), &b.ln2, f);
        }
        visit_child("ln_f", &self.ln_f, f);
    }
}
