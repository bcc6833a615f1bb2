//! `nn.MultiheadAttention`.

use super::{init, Linear, Module, Slot};
use crate::options::{ScaledDotProductAttentionOpts, SoftmaxOpts};
use crate::{DType, Error, Result, Tensor};

/// `nn.MultiheadAttention` with PyTorch's parameters (`in_proj_weight`, `in_proj_bias`,
/// `out_proj.weight`, `out_proj.bias`) and initialisation (Xavier-uniform input projection,
/// zero biases), for `kdim = vdim = embed_dim`.
///
/// Inputs are `[L, B, E]` (`[B, L, E]` with `batch_first`), or unbatched `[L, E]`. Masks follow
/// PyTorch's convention: a bool `attn_mask` (`[L, S]` or `[B·H, L, S]`) or `key_padding_mask`
/// (`[B, S]`) is `true` where attention is *not* allowed; float masks are added to the scores.
/// Without `need_weights` the fused attention kernel runs (`scaled_dot_product_attention`);
/// with it the weights are computed explicitly and returned (averaged over heads by default).
///
/// ```
/// use oxten::nn::{Module, MultiheadAttention};
/// let mha = MultiheadAttention::new(8, 2).batch_first(true);
/// let x = oxten::randn(&[3, 5, 8]);
/// let (y, w) = mha.forward_with(&x, &x, &x, Default::default()).unwrap();
/// assert_eq!((&y.sizes()[..], &w.unwrap().sizes()[..]), (&[3i64, 5, 8][..], &[3i64, 5, 5][..]));
/// ```
pub struct MultiheadAttention {
    /// The model width `E`.
    pub embed_dim: i64,
    /// The number of heads `H` (`E` divisible by `H`).
    pub num_heads: i64,
    /// Dropout on the attention weights, in training mode.
    pub dropout: f64,
    /// Inputs and outputs are `[B, L, E]` rather than `[L, B, E]`.
    pub batch_first: bool,
    /// `[3E, E]`: the query, key and value projections stacked.
    pub in_proj_weight: Tensor,
    /// `[3E]`, when the layer has biases.
    pub in_proj_bias: Option<Tensor>,
    /// The output projection.
    pub out_proj: Linear,
    training: bool,
}

/// The optional arguments of [`MultiheadAttention::forward_with`], PyTorch's defaults in
/// `Default` (`need_weights` and `average_attn_weights` true).
#[derive(Clone, Copy, Debug)]
pub struct MhaOpts<'a> {
    /// `[B, S]`: keys to ignore (bool `true`) or a float added per key.
    pub key_padding_mask: Option<&'a Tensor>,
    /// Also return the attention weights.
    pub need_weights: bool,
    /// `[L, S]` or `[B·H, L, S]`: pairs to ignore (bool `true`) or a float added to the scores.
    pub attn_mask: Option<&'a Tensor>,
    /// Average the returned weights over heads (else `[B, H, L, S]`).
    pub average_attn_weights: bool,
    /// Causal attention; used when `attn_mask` is absent (PyTorch treats it as a hint that the
    /// given mask is causal).
    pub is_causal: bool,
}

impl Default for MhaOpts<'_> {
    fn default() -> Self {
        MhaOpts {
            key_padding_mask: None,
            need_weights: true,
            attn_mask: None,
            average_attn_weights: true,
            is_causal: false,
        }
    }
}

impl MultiheadAttention {
    /// `embed_dim` split over `num_heads`, with biases, no dropout, sequence-first inputs.
    ///
    /// # Panics
    /// If `embed_dim` is not divisible by `num_heads`.
    pub fn new(embed_dim: i64, num_heads: i64) -> Self {
        MultiheadAttention::with_bias(embed_dim, num_heads, true)
    }

    /// [`MultiheadAttention::new`] with or without the projections' biases.
    ///
    /// # Panics
    /// If `embed_dim` is not divisible by `num_heads`.
    pub fn with_bias(embed_dim: i64, num_heads: i64, bias: bool) -> Self {
        assert!(
            num_heads > 0 && embed_dim % num_heads == 0,
            "embed_dim must be divisible by num_heads (got {embed_dim} and {num_heads})"
        );
        let in_proj_weight = crate::empty(&[3 * embed_dim, embed_dim]);
        init::xavier_uniform_(&in_proj_weight, 1.0);
        let in_proj_bias = bias.then(|| crate::zeros(&[3 * embed_dim]).requires_grad_(true));
        let out_proj = Linear::with_bias(embed_dim, embed_dim, bias);
        if let Some(b) = &out_proj.bias {
            crate::autograd::no_grad(|| b.zero_());
        }
        MultiheadAttention {
            embed_dim,
            num_heads,
            dropout: 0.0,
            batch_first: false,
            in_proj_weight: in_proj_weight.requires_grad_(true),
            in_proj_bias,
            out_proj,
            training: true,
        }
    }

    /// Sets the dropout probability on the attention weights (builder style).
    pub fn dropout(mut self, p: f64) -> Self {
        self.dropout = p;
        self
    }

    /// Sets batch-first inputs and outputs (builder style).
    pub fn batch_first(mut self, batch_first: bool) -> Self {
        self.batch_first = batch_first;
        self
    }

    /// Rows `part·E .. (part+1)·E` of the input projection: the query (0), key (1) or value (2)
    /// weight and bias.
    fn projection(&self, part: i64) -> Result<(Tensor, Option<Tensor>)> {
        let e = self.embed_dim;
        let w = self.in_proj_weight.try_narrow(0, part * e, e)?;
        let b = self.in_proj_bias.as_ref().map(|b| b.try_narrow(0, part * e, e)).transpose()?;
        Ok((w, b))
    }

    /// Attention of `query` over `key`/`value`: the output and, with `need_weights`, the
    /// attention weights.
    pub fn forward_with(
        &self,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        opts: MhaOpts<'_>,
    ) -> Result<(Tensor, Option<Tensor>)> {
        self.attend(query, key, value, opts).map_err(|e| e.in_op("MultiheadAttention"))
    }

    fn attend(
        &self,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        opts: MhaOpts<'_>,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let unbatched = query.dim() == 2;
        if !unbatched && query.dim() != 3 {
            return Err(Error::value(format!(
                "query should be unbatched 2D or batched 3D tensor but received {}-D query tensor",
                query.dim()
            )));
        }
        // To [B, L, E].
        let to_batch_first = |t: &Tensor| -> Result<Tensor> {
            if unbatched {
                t.try_unsqueeze(0)
            } else if self.batch_first {
                Ok(t.clone())
            } else {
                t.try_transpose(0, 1)
            }
        };
        let (q_in, k_in, v_in) = (to_batch_first(query)?, to_batch_first(key)?, to_batch_first(value)?);
        let (b, l, e) = (q_in.sizes()[0], q_in.sizes()[1], q_in.sizes()[2]);
        if e != self.embed_dim {
            return Err(Error::value(format!("was expecting embedding dimension of {}, but got {e}", self.embed_dim)));
        }
        let s = k_in.sizes()[1];
        let (h, d) = (self.num_heads, self.embed_dim / self.num_heads);
        let heads = |t: Tensor, len: i64| t.try_view(&[b, len, h, d])?.try_transpose(1, 2);
        // Self-attention (one tensor for all three) projects once and splits.
        let (q, k, v) = if query.is_same(key) && key.is_same(value) {
            let qkv = crate::try_linear(&q_in, &self.in_proj_weight, self.in_proj_bias.as_ref())?;
            let parts = qkv.try_split(e, -1)?;
            (heads(parts[0].clone(), l)?, heads(parts[1].clone(), s)?, heads(parts[2].clone(), s)?)
        } else {
            let proj = |x: &Tensor, part: i64, len: i64| -> Result<Tensor> {
                let (w, bias) = self.projection(part)?;
                heads(crate::try_linear(x, &w, bias.as_ref())?, len)
            };
            (proj(&q_in, 0, l)?, proj(&k_in, 1, s)?, proj(&v_in, 2, s)?)
        };
        let mask = self.merged_mask(&opts, b, l, s, q.dtype(), unbatched)?;
        let p = if self.training { self.dropout } else { 0.0 };
        let (out, weights) = if opts.need_weights {
            let scale = 1.0 / (d as f64).sqrt();
            let mut scores = q.try_mul_scalar(scale)?.try_matmul(&k.try_transpose(-2, -1)?)?;
            if let Some(m) = &mask {
                scores = scores.try_add(m)?;
            }
            let w = scores.try_softmax_with(-1, SoftmaxOpts { dtype: None })?;
            let w = if p > 0.0 { crate::try_dropout(&w, p, true)? } else { w };
            let out = w.try_matmul(&v)?;
            let w = if opts.average_attn_weights { w.try_mean_dim(Some(&[1]), false)? } else { w };
            (out, Some(if unbatched { w.try_squeeze_dim(0)? } else { w }))
        } else {
            let causal_only = mask.is_none() && opts.is_causal;
            let sdpa_opts = ScaledDotProductAttentionOpts {
                attn_mask: if causal_only { None } else { mask.as_ref() },
                dropout_p: p,
                is_causal: causal_only,
                ..Default::default()
            };
            (crate::try_scaled_dot_product_attention_with(&q, &k, &v, sdpa_opts)?, None)
        };
        let out = self.out_proj.forward(&out.try_transpose(1, 2)?.try_reshape(&[b, l, e])?)?;
        let out = if unbatched {
            out.try_squeeze_dim(0)?
        } else if self.batch_first {
            out
        } else {
            out.try_transpose(0, 1)?
        };
        Ok((out, weights))
    }

    /// The additive float mask `[B or 1, H or 1, L, S]` from `attn_mask`, `key_padding_mask`
    /// and `is_causal` (when no `attn_mask` is given), or `None` when there is nothing to mask
    /// (or only causality, which the fused kernel handles itself).
    fn merged_mask(
        &self,
        opts: &MhaOpts<'_>,
        b: i64,
        l: i64,
        s: i64,
        dtype: DType,
        unbatched: bool,
    ) -> Result<Option<Tensor>> {
        let additive = |m: &Tensor| -> Result<Tensor> {
            if m.dtype() == DType::Bool {
                let zeros = crate::try_zeros_like(m)?.try_to_dtype(dtype)?;
                zeros.try_masked_fill_scalar(m, f64::NEG_INFINITY)
            } else {
                m.try_to_dtype(dtype)
            }
        };
        let mut mask = match opts.attn_mask {
            Some(m) => Some(match m.dim() {
                2 => additive(m)?.try_view(&[1, 1, l, s])?,
                3 => additive(m)?.try_view(&[b, self.num_heads, l, s])?,
                n => return Err(Error::value(format!("attn_mask's dimension {n} is not supported"))),
            }),
            None if opts.is_causal && (opts.need_weights || opts.key_padding_mask.is_some()) => {
                let upper = crate::ops::triu::call(&crate::try_ones(&[l, s])?, 1)?.try_to_dtype(DType::Bool)?;
                Some(additive(&upper)?.try_view(&[1, 1, l, s])?)
            }
            None => None,
        };
        if let Some(kpm) = opts.key_padding_mask {
            let kpm = if unbatched { kpm.try_unsqueeze(0)? } else { kpm.clone() };
            let kpm = additive(&kpm)?.try_view(&[b, 1, 1, s])?;
            mask = Some(match mask {
                Some(m) => m.try_add(&kpm)?,
                None => kpm,
            });
        }
        Ok(mask)
    }
}

impl Module for MultiheadAttention {
    /// Self-attention of `x` with the default options, returning the output only.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let opts = MhaOpts { need_weights: false, ..Default::default() };
        Ok(self.forward_with(x, x, x, opts)?.0)
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f("in_proj_weight", &self.in_proj_weight, Slot::Parameter);
        if let Some(bias) = &self.in_proj_bias {
            f("in_proj_bias", bias, Slot::Parameter);
        }
        super::visit_child("out_proj", &self.out_proj, f);
    }

    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
}
