#!/usr/bin/env python3
"""PyTorch's side of gen/examples/cuda_bench.rs: the same cases, timed the same way (CUDA events
around a batch of calls after a warm-up, median of repetitions), one JSON object per line."""
import json
import sys
import time

import torch

dev = "cuda"
quick = "--quick" in sys.argv


def transformer_step_ms(batch, amp):
    """The GPT step of cuda_bench.rs's transformer_step_ms, written the same way."""
    F = torch.nn.functional
    layers, d, heads, t, vocab = 6, 512, 8, 256, 4096

    def param(*shape, scale=0.02):
        return (torch.randn(*shape, device=dev) * scale).requires_grad_(True)

    def ones(n):
        return torch.ones(n, device=dev, requires_grad=True)

    emb, pos, lnf_w, lnf_b = param(vocab, d), param(t, d), ones(d), param(d, scale=0.0)
    blocks = [[ones(d), param(d, scale=0.0), param(3 * d, d), param(d, d), ones(d), param(d, scale=0.0),
               param(4 * d, d), param(d, 4 * d)] for _ in range(layers)]
    params = [emb, pos, lnf_w, lnf_b] + [p for b in blocks for p in b]
    tokens = (torch.arange(batch * t, device=dev) * 7919 % vocab).reshape(batch, t)
    targets = (torch.arange(batch * t, device=dev) * 104729 + 1) % vocab
    opt = torch.optim.AdamW(params, lr=3e-4, fused=True)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            x = F.embedding(tokens, emb) + pos
            for l1w, l1b, qkv_w, proj_w, l2w, l2b, fc1, fc2 in blocks:
                qkv = F.linear(F.layer_norm(x, (d,), l1w, l1b), qkv_w).reshape(batch, t, 3, heads, d // heads)
                qkv = qkv.permute(2, 0, 3, 1, 4)
                att = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
                x = x + F.linear(att.transpose(1, 2).reshape(batch, t, d), proj_w)
                x = x + F.linear(F.gelu(F.linear(F.layer_norm(x, (d,), l2w, l2b), fc1), approximate="tanh"), fc2)
            logits = F.linear(F.layer_norm(x, (d,), lnf_w, lnf_b), emb).reshape(batch * t, vocab)
        loss = F.cross_entropy(logits, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    v = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(10):
            step()
        torch.cuda.synchronize()
        v.append((time.perf_counter() - t0) * 1e3 / 10)
    v.sort()
    return v[1]


if "--transformer" in sys.argv:
    torch.backends.cuda.matmul.allow_tf32 = False
    for batch, amp in [(16, False), (16, True), (64, True)]:
        case = f"gpt_step_b{batch}_{'bf16_autocast' if amp else 'f32'}"
        print(json.dumps({"lib": "torch", "case": case, "ms": round(transformer_step_ms(batch, amp), 3)}), flush=True)
    sys.exit(0)


def rand(n, dtype):
    return (torch.rand(n, device=dev) * 2 - 1).to(dtype)


def time_ms(iters, reps, f):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    v = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(iters):
            f()
        b.record()
        b.synchronize()
        v.append(a.elapsed_time(b) / iters)
    v.sort()
    return v[len(v) // 2]


def wall_us(iters, reps, f):
    for _ in range(100):
        f()
    torch.cuda.synchronize()
    v = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(iters):
            f()
        torch.cuda.synchronize()
        v.append((time.perf_counter() - t) * 1e6 / iters)
    v.sort()
    return v[len(v) // 2]


def report(case, ms, nbytes=0.0, flops=0.0):
    print(json.dumps({"lib": "torch", "case": case, "ms": round(ms, 5),
                      "tb_s": round(nbytes / (ms * 1e-3) / 1e12, 3) if nbytes else 0.0,
                      "tflop_s": round(flops / (ms * 1e-3) / 1e12, 1) if flops else 0.0}), flush=True)


print(json.dumps({"lib": "torch", "case": "version", "torch": torch.__version__,
                  "device": torch.cuda.get_device_name()}), flush=True)
for p in (24, 28):
    n = 1 << p
    x = rand(n, torch.float32)
    y = torch.empty_like(x)
    report(f"copy_f32_2^{p}", time_ms(10, 7, lambda: y.copy_(x)), 8.0 * n)
for dtype, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
    es = torch.tensor([], dtype=dtype).element_size()
    for p in (24, 28):
        n = 1 << p
        x, y = rand(n, dtype), rand(n, dtype)
        out = torch.empty_like(x)
        report(f"add_{name}_2^{p}", time_ms(10, 7, lambda: torch.add(x, y, out=out)), 3.0 * es * n)
        report(f"mul_{name}_2^{p}", time_ms(10, 7, lambda: torch.mul(x, y, out=out)), 3.0 * es * n)
        report(f"exp_{name}_2^{p}", time_ms(10, 7, lambda: torch.exp(x, out=out)), 2.0 * es * n)
        report(f"add_alloc_{name}_2^{p}", time_ms(10, 7, lambda: x + y), 3.0 * es * n)
        del x, y, out
for p in (24, 28):
    n = 1 << p
    x = rand(n, torch.float32)
    report(f"sum_f32_2^{p}", time_ms(10, 7, lambda: x.sum()), 4.0 * n)
n = 8192
x = rand(n * n, torch.float32).reshape(n, n)
y = rand(n * n, torch.float32).reshape(n, n).t()
report("add_transposed_f32_8192^2", time_ms(5, 5, lambda: x + y), 12.0 * n * n)
del x, y
x = rand(4096 * 4096, torch.float32).reshape(4096, 4096)
report("softmax_f32_4096^2", time_ms(10, 7, lambda: x.softmax(1)), 8.0 * 4096 * 4096)
del x
x = rand(64 * 784, torch.float32).reshape(64, 784)
y = torch.arange(64, device=dev) % 10
w1 = (rand(256 * 784, torch.float32).reshape(256, 784) * 0.05).requires_grad_()
b1 = (rand(256, torch.float32) * 0.05).requires_grad_()
w2 = (rand(10 * 256, torch.float32).reshape(10, 256) * 0.05).requires_grad_()
b2 = (rand(10, torch.float32) * 0.05).requires_grad_()


def mlp_step():
    h = torch.nn.functional.linear(x, w1, b1).relu()
    loss = torch.nn.functional.nll_loss(torch.nn.functional.linear(h, w2, b2).log_softmax(1), y)
    loss.backward()
    with torch.no_grad():
        for p in (w1, b1, w2, b2):
            p.sub_(p.grad * 0.01)
            p.grad = None


print(json.dumps({"lib": "torch", "case": "mlp_sgd_step", "us": round(wall_us(200, 9, mlp_step), 2)}), flush=True)
sizes = [(torch.float32, 2048, "f32"), (torch.bfloat16, 4096, "bf16")] if quick else \
    [(torch.float32, 4096, "f32"), (torch.bfloat16, 8192, "bf16"), (torch.float16, 8192, "f16")]
for dtype, n, name in sizes:
    a, b = rand(n * n, dtype).reshape(n, n), rand(n * n, dtype).reshape(n, n)
    torch.backends.cuda.matmul.allow_tf32 = False
    report(f"matmul_{name}_{n}", time_ms(5, 5, lambda: a @ b), 0.0, 2.0 * n ** 3)
    if dtype == torch.float32:
        torch.backends.cuda.matmul.allow_tf32 = True
        report(f"matmul_tf32_{n}", time_ms(5, 5, lambda: a @ b), 0.0, 2.0 * n ** 3)
        torch.backends.cuda.matmul.allow_tf32 = False
x, y = rand(1, torch.float32), rand(1, torch.float32)
out = torch.empty_like(x)
print(json.dumps({"lib": "torch", "case": "add_1_alloc", "us": round(wall_us(2000, 9, lambda: x + y), 2)}))
print(json.dumps({"lib": "torch", "case": "add_1_out", "us": round(wall_us(2000, 9, lambda: torch.add(x, y, out=out)), 2)}))
print(json.dumps({"lib": "torch", "case": "add_1_item", "us": round(wall_us(200, 9, lambda: (x + y).item()), 2)}))
