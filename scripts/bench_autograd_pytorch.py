"""The cases of gen/benches/autograd.rs, measured in PyTorch eager on this machine.

Prints one line per case: `name median_seconds [divisor]` (a divisor asks the table for a
per-unit row: the chain's time per node). Medians over repeated timed loops, like criterion's;
run by scripts/bench_autograd.sh right after the Rust benchmarks.
"""
import statistics
import sys
import time

import torch

from bench_pytorch import median_time

CHAIN = 1000


def filled(shape, scale):
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64)
    return (((i * 7919) % 1000).to(torch.float32) / 500.0 - 1.0).mul(scale).reshape(shape)


def mlp_cases(out):
    x = filled((64, 784), 1.0)
    w1, b1 = filled((256, 784), 0.05).requires_grad_(), filled((256,), 0.1).requires_grad_()
    w2, b2 = filled((10, 256), 0.1).requires_grad_(), filled((10,), 0.1).requires_grad_()
    params = [w1, b1, w2, b2]

    def loss():
        h = torch.relu(x.mm(w1.t()) + b1)
        return (h.mm(w2.t()) + b2).sum()

    def step():
        for p in params:
            p.grad = None
        loss().backward()

    out["autograd/mlp_784_256_10_b64_fwd_bwd"] = (median_time(step), None)
    out["autograd/mlp_784_256_10_b64_fwd"] = (median_time(loss), None)
    # Forward mode along a direction of w1: torch.func.jvp, and forward-over-reverse for the HVP.
    from torch.func import grad, jvp
    ps = [p.detach() for p in params]
    v = filled((256, 784), 0.01)

    def loss_of_w1(w):
        h = torch.relu(x.mm(w.t()) + ps[1])
        return torch.tanh(h.mm(ps[2].t()) + ps[3]).sum()

    out["autograd/mlp_784_256_10_b64_jvp"] = (median_time(lambda: jvp(loss_of_w1, (ps[0],), (v,))), None)
    out["autograd/mlp_784_256_10_b64_hvp"] = (median_time(lambda: jvp(grad(loss_of_w1), (ps[0],), (v,))), None)


def chain_case(out, reps=60):
    x = filled((1,), 1.0).requires_grad_()
    one = torch.tensor([1e-3])

    def build():
        x.grad = None
        y = x
        for i in range(CHAIN):
            y = y * 1.0001 if i % 2 == 0 else y + one
        return y

    build().backward()  # warm-up
    samples = []
    for _ in range(reps):
        y = build()
        t0 = time.perf_counter()
        y.backward()
        samples.append(time.perf_counter() - t0)
    out["autograd/chain_1000_backward"] = (statistics.median(samples), CHAIN)


def main():
    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else torch.get_num_threads())
    out = {}
    mlp_cases(out)
    chain_case(out)
    print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}")
    for k, (v, per) in out.items():
        print(f"{k} {v:.9e}" + (f" {per}" if per else ""))


if __name__ == "__main__":
    main()
