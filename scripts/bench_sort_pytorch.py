"""The cases of gen/benches/sort.rs, measured in PyTorch eager on this machine.

Prints one line per case: `name median_seconds` (medians over repeated timed loops, like
criterion's). Run right after `cargo bench -p oxten --bench sort` and compare the medians.
"""
import torch

from bench_linalg_pytorch import median_time


def hashed(shape):
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64)
    return (((i * 2654435761) % (1 << 32)).to(torch.float64) / 4294967296.0).to(torch.float32).reshape(shape)


def main():
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads")
    long = hashed((1 << 20,))
    print(f"sort_2p20_float32 {median_time(lambda: torch.sort(long)):.6f}")
    print(f"topk100_2p20_float32 {median_time(lambda: torch.topk(long, 100)):.6f}")
    rows = hashed((1024, 1024))
    print(f"sort_1024x1024_float32 {median_time(lambda: torch.sort(rows)):.6f}")


if __name__ == "__main__":
    main()
