"""The GPT example (gen/examples/gpt) in PyTorch: the same corpus, split, batches (the same
SplitMix64 stream), model, initial weights, optimizer and schedule, for comparing losses and
speed with oxten's run.

  cargo run --release -p oxten --example gpt -- --steps 50 --save-init /tmp/gpt_init.safetensors \
      --losses /tmp/gpt_oxten.txt
  python3 scripts/gpt_pytorch.py --steps 50 --init /tmp/gpt_init.safetensors \
      --compare /tmp/gpt_oxten.txt

Prints tokens/s (steps after the first) and, with --compare, the largest difference between the
two runs' per-step training losses.
"""
import argparse
import math
import os
import pathlib
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import load_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXTENSIONS = {"rs", "md", "yaml", "py", "toml", "sh"}
MASK = (1 << 64) - 1


def token(b):
    if b == 9:
        return 0
    if b == 10:
        return 1
    if 32 <= b <= 126:
        return 2 + b - 32
    return None


def corpus():
    paths = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("target", "golden")]
        for f in filenames:
            if f.startswith(".") or f in ("target", "golden"):
                continue
            if f.rsplit(".", 1)[-1] in EXTENSIONS and "." in f:
                paths.append(pathlib.Path(dirpath) / f)
    # Rust's Path ordering compares component by component.
    paths.sort(key=lambda p: p.relative_to(ROOT).parts)
    train, val = [], []
    for i, p in enumerate(paths):
        toks = [t for t in (token(b) for b in p.read_bytes()) if t is not None]
        (val if i % 10 == 9 else train).extend(toks)
    return train, val, len(paths)


class SplitMix64:
    def __init__(self, seed):
        self.s = seed & MASK

    def next_u64(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next_u64() >> 11) / float(1 << 53)

    def below(self, n):
        return int(self.uniform() * n) % max(n, 1)


def batch(tokens, b, t, rng):
    xs, ys = [], []
    for _ in range(b):
        s = rng.below(len(tokens) - t - 1)
        xs.append(tokens[s:s + t])
        ys.append(tokens[s + 1:s + t + 1])
    return torch.tensor(xs), torch.tensor(ys)


class Attention(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.qkv, self.proj, self.heads = nn.Linear(c, 3 * c), nn.Linear(c, c), heads

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, 2)
        q, k, v = (u.view(b, t, self.heads, c // self.heads).transpose(1, 2) for u in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.ln1, self.attn, self.ln2 = nn.LayerNorm(c), Attention(c, heads), nn.LayerNorm(c)
        self.fc, self.out = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab, context, c, heads, layers):
        super().__init__()
        self.vocab = vocab
        self.wte, self.wpe = nn.Embedding(vocab, c), nn.Embedding(context, c)
        self.blocks = nn.ModuleList(Block(c, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(c)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for b in self.blocks:
            x = b(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return F.cross_entropy(logits.view(-1, self.vocab), targets.view(-1))


def lr_at(step, steps, peak):
    warm = max(steps // 20, 1)
    if step < warm:
        return peak * (step + 1) / warm
    t = (step - warm) / max(steps - warm, 1)
    return peak * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * t)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--lr", type=float, default=4e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--init", help="initial weights written by the Rust side's --save-init")
    p.add_argument("--compare", help="the Rust side's --losses file")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    train, val, files = corpus()
    print(f"corpus: {files} files, {len(train)} training and {len(val)} validation characters")
    torch.manual_seed(a.seed)
    model = Gpt(97, a.context, a.width, a.heads, a.layers)
    if a.init:
        model.load_state_dict(load_file(a.init))
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.1)
    rng = SplitMix64(a.seed ^ 0x5EED)
    losses, timed, n = [], 0.0, 0
    for step in range(a.steps):
        t0 = time.perf_counter()
        x, y = batch(train, a.batch, a.context, rng)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a.steps, a.lr)
        loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if step > 0:
            timed += time.perf_counter() - t0
            n += 1
    tok = a.batch * a.context * n / max(timed, 1e-9)
    print(f"pytorch {torch.__version__}: {a.steps} steps, final loss {losses[-1]:.4f}, {tok:.0f} tokens/s")
    if a.compare:
        theirs = [float(line) for line in pathlib.Path(a.compare).read_text().split()]
        k = min(len(theirs), len(losses), 50)
        diff = max(abs(u - v) for u, v in zip(theirs[:k], losses[:k]))
        print(f"largest loss difference over the first {k} steps: {diff:.2e}")


if __name__ == "__main__":
    main()
