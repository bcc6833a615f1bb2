//! The transformer modules against PyTorch (tests/golden/transformer_layers.safetensors, written
//! by scripts/transformer_fixture.py): `MultiheadAttention` (masks, weights, both layouts),
//! `TransformerEncoderLayer` (post- and pre-norm), `TransformerDecoderLayer`,
//! `TransformerEncoder`, `RMSNorm`, `LayerNorm` without bias, `Embedding` with `padding_idx` and
//! `GELU('tanh')` — outputs and the input gradients of `out.sum()`, with PyTorch's weights loaded
//! by their `state_dict` names (so the names are checked too).

use oxten::nn::{
    Activation, DecoderMasks, Embedding, EncoderMasks, LayerNorm, MhaOpts, Module, ModuleDict, ModuleList,
    MultiheadAttention, RMSNorm, TransformerConfig, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer, GELU,
};
use oxten::{DType, Tensor};

struct Fixture(Vec<(String, Tensor)>);

impl Fixture {
    fn open() -> Fixture {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/transformer_layers.safetensors");
        Fixture(oxten::safetensors::load(path).unwrap())
    }

    fn get(&self, n: &str) -> Tensor {
        self.0.iter().find(|(k, _)| k == n).unwrap_or_else(|| panic!("no tensor {n}")).1.clone()
    }

    /// A bool mask stored as uint8.
    fn mask(&self, n: &str) -> Tensor {
        self.get(n).to_dtype(DType::Bool)
    }

    /// An input leaf that requires grad.
    fn leaf(&self, n: &str) -> Tensor {
        self.get(n).detach().requires_grad_(true)
    }

    /// Loads PyTorch's weights saved under `prefix.` into `m`: every name must exist on both sides.
    fn load(&self, m: &dyn Module, prefix: &str) {
        let named: Vec<(String, Tensor)> =
            m.state_dict().into_iter().map(|(n, t)| (format!("{prefix}.{n}"), t)).collect();
        let src: Vec<(String, Tensor)> =
            self.0.iter().filter(|(k, _)| k.starts_with(&format!("{prefix}."))).cloned().collect();
        assert_eq!(named.len(), src.len(), "{prefix}: {:?}", named.iter().map(|(n, _)| n).collect::<Vec<_>>());
        oxten::safetensors::copy_into(&src, &named).unwrap();
    }

    fn check(&self, name: &str, got: &Tensor, tol: f32) {
        let want = self.get(name);
        assert_eq!(got.sizes(), want.sizes(), "{name}: shape");
        let got = got.to_dtype(DType::F32).to_vec::<f32>().unwrap();
        for (i, (g, w)) in got.iter().zip(want.to_vec::<f32>().unwrap()).enumerate() {
            assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{name}[{i}]: {g} vs PyTorch {w}");
        }
    }

    /// Checks `out` and the gradients of `out.sum()` with respect to `inputs`.
    fn check_with_grads(&self, name: &str, out: &Tensor, inputs: &[&Tensor]) {
        self.check(&format!("__out_{name}"), out, 2e-5);
        let grads = oxten::autograd::grad(&[out.sum()], inputs).unwrap();
        for (i, g) in grads.iter().enumerate() {
            self.check(&format!("__grad_{name}_{i}"), g.as_ref().unwrap(), 2e-5);
        }
    }
}

#[test]
fn multihead_attention_matches_pytorch() {
    let f = Fixture::open();
    let mut mha = MultiheadAttention::new(8, 2).batch_first(true);
    f.load(&mha, "mha");
    mha.train();
    let (q, kv) = (f.leaf("__q"), f.leaf("__kv"));
    let (kpm, mask) = (f.mask("__kpm"), f.get("__attn_mask"));
    let opts = MhaOpts { key_padding_mask: Some(&kpm), attn_mask: Some(&mask), ..Default::default() };
    let (out, w) = mha.forward_with(&q, &kv, &kv, opts).unwrap();
    f.check("__out_mha_weights", &w.unwrap(), 2e-5);
    f.check_with_grads("mha_cross", &out, &[&q, &kv]);

    let causal = oxten::ops::triu::call(&oxten::full(&[5, 5], f64::NEG_INFINITY), 1).unwrap();
    let opts = MhaOpts { need_weights: false, attn_mask: Some(&causal), is_causal: true, ..Default::default() };
    let (out, w) = mha.forward_with(&q, &q, &q, opts).unwrap();
    assert!(w.is_none());
    f.check_with_grads("mha_causal", &out, &[&q]);
    // `is_causal` alone builds the same mask (the fused kernel's causal path).
    let opts = MhaOpts { need_weights: false, is_causal: true, ..Default::default() };
    f.check("__out_mha_causal", &mha.forward_with(&q, &q, &q, opts).unwrap().0, 2e-5);

    let opts = MhaOpts { average_attn_weights: false, ..Default::default() };
    f.check("__out_mha_head_weights", &mha.forward_with(&q, &q, &q, opts).unwrap().1.unwrap(), 2e-5);

    // Sequence-first layout, no biases, four heads.
    let seq = MultiheadAttention::with_bias(8, 4, false);
    f.load(&seq, "mha_seq");
    let qs = q.transpose(0, 1);
    let opts = MhaOpts { need_weights: false, ..Default::default() };
    f.check_with_grads("mha_seq", &seq.forward_with(&qs, &qs, &qs, opts).unwrap().0, &[&q]);
}

#[test]
fn encoder_and_decoder_layers_match_pytorch() {
    let f = Fixture::open();
    let config = TransformerConfig { dim_feedforward: 16, dropout: 0.0, ..TransformerConfig::new(8, 2) };
    let enc = TransformerEncoderLayer::from_config(config);
    f.load(&enc, "enc");
    let src = f.leaf("__src");
    let kpm = f.mask("__src_kpm");
    let out = enc.forward_with(&src, EncoderMasks { key_padding_mask: Some(&kpm), ..Default::default() }).unwrap();
    f.check_with_grads("enc", &out, &[&src]);

    let pre =
        TransformerConfig { activation: Activation::Gelu, batch_first: true, norm_first: true, bias: false, ..config };
    let enc_pre = TransformerEncoderLayer::from_config(pre);
    f.load(&enc_pre, "enc_pre");
    let q = f.leaf("__q");
    let out = enc_pre.forward_with(&q, EncoderMasks { is_causal: true, ..Default::default() }).unwrap();
    f.check_with_grads("enc_pre", &out, &[&q]);

    let dec = TransformerDecoderLayer::from_config(TransformerConfig { batch_first: true, ..config });
    f.load(&dec, "dec");
    let kv = f.leaf("__kv");
    let kpm = f.mask("__kpm");
    let masks = DecoderMasks { tgt_is_causal: true, memory_key_padding_mask: Some(&kpm), ..Default::default() };
    f.check_with_grads("dec", &dec.forward_with(&q, &kv, masks).unwrap(), &[&q, &kv]);

    let stack = TransformerEncoder::new(TransformerEncoderLayer::from_config(config), 2, Some(LayerNorm::new(&[8])));
    let names: Vec<String> = stack.state_dict().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names[0], "layers.0.self_attn.in_proj_weight");
    assert_eq!(names.last().unwrap(), "norm.bias");
    f.load(&stack, "stack");
    f.check_with_grads("stack", &stack.forward(&src).unwrap(), &[&src]);
}

#[test]
fn norms_embedding_and_gelu_match_pytorch() {
    let f = Fixture::open();
    let x = f.leaf("__x");
    let rms = RMSNorm::new(&[4, 6]);
    f.load(&rms, "rms");
    f.check_with_grads("rms", &rms.forward(&x).unwrap(), &[&x]);
    f.check("__out_rms_bf16", &rms.forward(&x.detach().to_dtype(DType::BF16)).unwrap(), 1e-2);
    let rms_eps = RMSNorm::with_options(&[6], Some(0.1), false);
    assert!(rms_eps.state_dict().is_empty());
    f.check_with_grads("rms_eps", &rms_eps.forward(&x).unwrap(), &[&x]);
    let ln = LayerNorm::with_options(&[6], 1e-5, true, false);
    f.load(&ln, "ln");
    f.check_with_grads("ln", &ln.forward(&x).unwrap(), &[&x]);
    f.check_with_grads("gelu_tanh", &GELU::tanh().forward(&x).unwrap(), &[&x]);

    let emb = Embedding::with_padding_idx(7, 3, -5).unwrap();
    assert_eq!(emb.padding_idx, Some(2));
    assert_eq!(emb.weight.select(0, 2).to_vec::<f32>().unwrap(), [0.0; 3], "the padding row starts at zero");
    f.load(&emb, "emb");
    let y = emb.forward(&f.get("__idx")).unwrap();
    f.check("__out_emb", &y, 1e-6);
    let weighted = y.mul(&oxten::arange_start(1, 4).to_dtype(DType::F32)).sum();
    let g = oxten::autograd::grad(&[weighted], &[&emb.weight]).unwrap();
    f.check("__grad_emb", g[0].as_ref().unwrap(), 1e-6);
    assert!(Embedding::with_padding_idx(7, 3, 7).is_err());
}

#[test]
fn encoder_copies_start_equal_and_train_separately() {
    let layer =
        TransformerEncoderLayer::from_config(TransformerConfig { dim_feedforward: 16, ..TransformerConfig::new(8, 2) });
    let stack = TransformerEncoder::new(layer, 3, None);
    let w = |i: usize| stack.layers[i].linear1.weight.to_vec::<f32>().unwrap();
    assert_eq!(w(0), w(1));
    assert_eq!(w(0), w(2));
    oxten::autograd::no_grad(|| stack.layers[1].linear1.weight.add_scalar_(1.0));
    assert_ne!(w(0), w(1), "the copies do not share storage");
}

#[test]
fn containers_name_their_children() {
    let mut list = ModuleList::new();
    list.push(LayerNorm::new(&[4]));
    list.push(RMSNorm::new(&[4]));
    let names: Vec<String> = list.state_dict().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["0.weight", "0.bias", "1.weight"]);
    assert!(list.forward(&oxten::ones(&[4])).unwrap_err().to_string().contains("ModuleList has no forward"));
    let mut dict = ModuleDict::new();
    dict.insert("encoder", LayerNorm::new(&[4]));
    dict.insert("head", RMSNorm::new(&[2]));
    dict.insert("encoder", RMSNorm::new(&[4]));
    let names: Vec<String> = dict.state_dict().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["encoder.weight", "head.weight"]);
    assert_eq!(dict.keys().collect::<Vec<_>>(), ["encoder", "head"]);
}

/// Bad shapes and masks are errors naming the module, never panics.
#[test]
fn bad_inputs_are_errors() {
    let mha = MultiheadAttention::new(8, 2);
    let e = mha.forward_with(&oxten::ones(&[4]), &oxten::ones(&[4]), &oxten::ones(&[4]), MhaOpts::default());
    let msg = e.unwrap_err().to_string();
    assert!(msg.contains("MultiheadAttention") && msg.contains("1-D query"), "{msg}");
    let x = oxten::ones(&[3, 2, 6]);
    let msg = mha.forward_with(&x, &x, &x, MhaOpts::default()).unwrap_err().to_string();
    assert!(msg.contains("expecting embedding dimension of 8, but got 6"), "{msg}");
}
