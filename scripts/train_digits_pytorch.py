"""The PyTorch baseline of the main job (`cargo run --release -p oxten --example train`): the same
CNN, data split, optimizer, schedule and batch size on the UCI digits set (gen/data/digits.csv),
timing each epoch. Run: python3 scripts/train_digits_pytorch.py [--epochs N] [--threads N]
[--channels-last] [--bf16]. Prints one line per epoch and the median epoch time.
"""
import argparse
import pathlib
import statistics
import time

import torch
from torch import nn

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load():
    rows = [list(map(int, line.split(","))) for line in (ROOT / "gen" / "data" / "digits.csv").read_text().split()]
    x = torch.tensor([r[:64] for r in rows], dtype=torch.float32).reshape(-1, 1, 8, 8) / 16.0
    y = torch.tensor([r[64] for r in rows], dtype=torch.int64)
    idx = shuffled(len(rows), SEED)  # the example's split: the first 20% of a seeded shuffle
    n_test = round(len(rows) * 0.2)
    test, train = torch.tensor(idx[:n_test]), torch.tensor(idx[n_test:])
    return x[train], y[train], x[test], y[test]


SEED = 0x5EED  # the example's SEED
M64 = (1 << 64) - 1


def shuffled(n, seed):
    """Fisher-Yates with splitmix64, exactly as gen/examples/train/digits.rs does it."""
    state = seed

    def next_u64():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    v = list(range(n))
    for i in range(n - 1, 0, -1):
        j = (next_u64() * (i + 1)) >> 64
        v[i], v[j] = v[j], v[i]
    return v


def model():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 4 * 4, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10),
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--bf16", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    xtr, ytr, xte, yte = load()
    net = model()
    fmt = torch.channels_last if a.channels_last else torch.contiguous_format
    net = net.to(memory_format=fmt)
    xtr, xte = xtr.contiguous(memory_format=fmt), xte.contiguous(memory_format=fmt)
    opt = torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=a.epochs)
    times = []
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        net.train()
        perm = torch.randperm(len(xtr))
        total = 0.0
        for i in range(0, len(xtr), a.batch_size):
            idx = perm[i:i + a.batch_size]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
                loss = nn.functional.cross_entropy(net(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        sched.step()
        net.eval()
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            acc = (net(xte).argmax(1) == yte).float().mean().item()
        dt = time.perf_counter() - t0
        times.append(dt)
        print(f"epoch {epoch:2d}  loss {total / len(xtr):.4f}  test accuracy {100 * acc:.2f}%  {dt * 1000:.0f} ms")
    print(f"median epoch time: {statistics.median(times) * 1000:.0f} ms (torch {torch.__version__}, {a.threads} threads)")


if __name__ == "__main__":
    main()
