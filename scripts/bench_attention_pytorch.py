"""The cases of gen/benches/attention.rs, measured in PyTorch eager on this machine.

Prints one line per case: `name median_seconds` (medians over repeated timed loops, like
criterion's). Run right after `cargo bench -p oxten --bench attention` and compare the medians.
"""
import torch
import torch.nn.functional as F

from bench_linalg_pytorch import median_time, rand_tensor


def main():
    shape = (8, 8, 512, 64)
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads")
    for dtype, name in [(torch.float32, "float32"), (torch.bfloat16, "bfloat16")]:
        q, k, v = (rand_tensor(shape, dtype, s) for s in range(3))
        with torch.no_grad():
            t = median_time(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
        print(f"sdpa_causal_forward_{name} {t:.6f}")
        q, k, v = (x.requires_grad_(True) for x in (q, k, v))
        go = rand_tensor(shape, dtype, 3)

        def step():
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            torch.autograd.grad(out, (q, k, v), go)

        print(f"sdpa_causal_forward_backward_{name} {median_time(step):.6f}")


if __name__ == "__main__":
    main()
