"""Writes tests/golden/transformer_layers.safetensors for tests/tests/transformer_modules.rs:
PyTorch's MultiheadAttention, TransformerEncoderLayer, TransformerDecoderLayer,
TransformerEncoder, RMSNorm, LayerNorm(bias=False), Embedding(padding_idx) and GELU('tanh'),
each with its parameters moved off their defaults (saved under the module's prefix and
PyTorch's state_dict names), on fixed inputs (`__`-prefixed), with the outputs and the input
gradients of `out.sum()` (`__out_*`, `__grad_*`). Dropout is 0 and the layers run in training
mode, so PyTorch takes its reference (not fast) path. Run: python3 scripts/transformer_fixture.py
(needs torch and safetensors).
"""
import pathlib

import torch
from safetensors.torch import save_file
from torch import nn

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "transformer_layers.safetensors"
torch.manual_seed(3)
state = {}


def randomize(prefix, module):
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    for name, t in module.state_dict().items():
        state[f"{prefix}.{name}"] = t.detach().clone().contiguous()


def leaf(name, shape):
    x = torch.randn(*shape)
    state[f"__{name}"] = x.clone()
    return x.requires_grad_(True)


def record(name, out, *inputs):
    state[f"__out_{name}"] = out.detach().clone().contiguous()
    grads = torch.autograd.grad(out.sum(), inputs)
    for i, g in enumerate(grads):
        state[f"__grad_{name}_{i}"] = g.contiguous()


# ---- MultiheadAttention ----
mha = nn.MultiheadAttention(8, 2, batch_first=True)
randomize("mha", mha)
q, kv = leaf("q", (2, 5, 8)), leaf("kv", (2, 6, 8))
kpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
attn_mask = torch.randn(5, 6)
state["__kpm"] = kpm.to(torch.uint8)
state["__attn_mask"] = attn_mask
out, w = mha(q, kv, kv, key_padding_mask=kpm, attn_mask=attn_mask)
state["__out_mha_weights"] = w.detach().clone()
record("mha_cross", out, q, kv)
out, _ = mha(q, q, q, need_weights=False, attn_mask=nn.Transformer.generate_square_subsequent_mask(5), is_causal=True)
record("mha_causal", out, q)
out, w = mha(q, q, q, average_attn_weights=False)
state["__out_mha_head_weights"] = w.detach().clone()
seq_first = nn.MultiheadAttention(8, 4, bias=False)
randomize("mha_seq", seq_first)
out, _ = seq_first(q.transpose(0, 1), q.transpose(0, 1), q.transpose(0, 1), need_weights=False)
record("mha_seq", out, q)

# ---- encoder and decoder layers ----
enc = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
randomize("enc", enc)
src = leaf("src", (5, 2, 8))
src_kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
state["__src_kpm"] = src_kpm.to(torch.uint8)
record("enc", enc(src, src_key_padding_mask=src_kpm), src)
enc_pre = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation="gelu", batch_first=True,
                                     norm_first=True, bias=False)
randomize("enc_pre", enc_pre)
record("enc_pre", enc_pre(q, is_causal=True, src_mask=nn.Transformer.generate_square_subsequent_mask(5)), q)
dec = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
randomize("dec", dec)
mem_kpm = kpm
record("dec", dec(q, kv, tgt_mask=nn.Transformer.generate_square_subsequent_mask(5), tgt_is_causal=True,
                  memory_key_padding_mask=mem_kpm), q, kv)
stack = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0), 2,
                              norm=nn.LayerNorm(8), enable_nested_tensor=False)
randomize("stack", stack)
record("stack", stack(src), src)

# ---- norms, embedding, gelu ----
rms = nn.RMSNorm([4, 6])
randomize("rms", rms)
x = leaf("x", (2, 3, 4, 6))
record("rms", rms(x), x)
state["__out_rms_bf16"] = rms(x.detach().bfloat16()).float()
rms_eps = nn.RMSNorm(6, eps=0.1, elementwise_affine=False)
record("rms_eps", rms_eps(x), x)
ln = nn.LayerNorm(6, bias=False)
randomize("ln", ln)
record("ln", ln(x), x)
emb = nn.Embedding(7, 3, padding_idx=2)
with torch.no_grad():
    emb.weight.copy_(torch.randn_like(emb.weight))
    emb.weight[2] = 0
state["emb.weight"] = emb.weight.detach().clone()
idx = torch.tensor([[0, 2, 6], [2, 3, 1]])
state["__idx"] = idx
y = emb(idx)
state["__out_emb"] = y.detach().clone()
(g,) = torch.autograd.grad((y * torch.arange(1.0, 4.0)).sum(), emb.weight)
state["__grad_emb"] = g
record("gelu_tanh", nn.GELU(approximate="tanh")(x), x)

save_file(state, str(OUT))
print(f"wrote {OUT}: {len(state)} tensors")
