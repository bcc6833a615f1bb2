"""The cases of gen/benches/transformer.rs, measured in PyTorch eager on this machine.

Prints one line per case: `name median_seconds` (medians over repeated timed loops, like
criterion's). Run right after `cargo bench -p oxten --bench transformer` and compare the medians.
PyTorch's AdamW runs three ways: single-tensor (its CPU default), foreach, and fused.
"""
import torch

from bench_linalg_pytorch import median_time


def fill(shape, salt):
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64)
    return ((((i + salt) * 7919) % 1000).to(torch.float32) / 500.0 - 1.0).reshape(shape)


def gpt_shapes():
    v, c, t = 97, 128, 128
    s = [(v, c), (t, c)]
    for _ in range(4):
        s += [(c,), (c,), (3 * c, c), (3 * c,), (c, c), (c,)]
        s += [(4 * c, c), (4 * c,), (c, 4 * c), (c,), (c,), (c,)]
    s += [(c,), (c,)]
    return s


def main():
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads")
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(256, 8, dim_feedforward=1024, dropout=0.0, batch_first=True)
    x = fill((32, 128, 256), 0).requires_grad_(True)
    go = fill((32, 128, 256), 1)
    params = list(layer.parameters())

    def step():
        y = layer(x)
        torch.autograd.grad(y, params + [x], go)

    print(f"encoder_layer_forward_backward_float32 {median_time(step):.6f}")
    for name, kw in [("single_tensor", dict(foreach=False)), ("foreach", dict(foreach=True)), ("fused", dict(fused=True))]:
        ps = [fill(s, i).requires_grad_(True) for i, s in enumerate(gpt_shapes())]
        for i, p in enumerate(ps):
            p.grad = fill(p.shape, 100 + i)
        opt = torch.optim.AdamW(ps, lr=1e-3, **kw)
        print(f"adamw_step_gpt_params_{name} {median_time(opt.step):.6f}")


if __name__ == "__main__":
    main()
