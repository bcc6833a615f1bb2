"""The cases of gen/benches/ops.rs, measured in PyTorch eager on this machine.

Prints one line per case: `name median_seconds`. Medians over repeated timed loops, like
criterion's; run by scripts/bench.sh right after the Rust benchmarks.
"""
import statistics
import sys
import time

import torch


def median_time(fn, min_time=0.5, reps=15):
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time / reps:
            break
        n *= 2
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return statistics.median(samples)


def rand_tensor(n, dtype):
    i = torch.arange(n, dtype=torch.int64)
    return ((i * 7919 % 1000).to(torch.float32) / 500.0 - 1.0).to(dtype)


def main():
    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else torch.get_num_threads())
    out = {}
    a, b = torch.tensor([1.0]), torch.tensor([2.0])
    out["add_1elem_alloc"] = median_time(lambda: torch.add(a, b))
    c = torch.empty(1)
    out["add_1elem_out"] = median_time(lambda: torch.add(a, b, out=c))
    for n in (1 << 20, 1 << 24):
        for dtype, name in ((torch.float32, "float32"), (torch.bfloat16, "bfloat16")):
            x, y = rand_tensor(n, dtype), -rand_tensor(n, dtype)
            out[f"elementwise/add_{name}/{n}"] = median_time(lambda: torch.add(x, y))
            out[f"elementwise/mul_{name}/{n}"] = median_time(lambda: torch.mul(x, y))
            out[f"elementwise/exp_{name}/{n}"] = median_time(lambda: torch.exp(x))
    n = 1 << 20
    a, b = rand_tensor(n, torch.float32) * 10.0, rand_tensor(n, torch.float32) + 1.5
    out[f"elementwise/round_float32/{n}"] = median_time(lambda: torch.round(a))
    out[f"elementwise/remainder_float32/{n}"] = median_time(lambda: torch.remainder(a, b))
    ai, bi = (a * 100.0).to(torch.int64), (b * 10.0).to(torch.int64)
    out[f"elementwise/floor_divide_int64/{n}"] = median_time(lambda: torch.floor_divide(ai, bi))
    big = rand_tensor(1 << 24, torch.float32)
    out["layout/sum_f32/16777216"] = median_time(lambda: big.sum())
    mid = rand_tensor(1 << 20, torch.float32)
    out["layout/sum_f32/1048576"] = median_time(lambda: mid.sum())
    m = rand_tensor(1 << 20, torch.float32).view(1024, 1024)
    row = rand_tensor(1024, torch.float32)
    out["layout/broadcast_add_1024x1024+1024"] = median_time(lambda: m + row)
    mt = m.t()
    out["layout/transposed_add_1024x1024"] = median_time(lambda: mt + m)
    act = rand_tensor(64 * 256, torch.float32).view(64, 256)
    out["layout/sum_dim0_64x256"] = median_time(lambda: act.sum(0))
    act_t = rand_tensor(64 * 256, torch.float32).view(256, 64).t()
    out["layout/transpose_contiguous_64x256"] = median_time(lambda: act_t.contiguous())
    rows, dim, bags, per = 100_000, 64, 2048, 20
    weight = rand_tensor(rows * dim, torch.float32).view(rows, dim)
    indices = torch.arange(bags * per, dtype=torch.int64) * 7919 % rows
    offsets = torch.arange(bags, dtype=torch.int64) * per
    for name in ("sum", "max"):
        out[f"nn/embedding_bag_{name}/{bags * per}"] = median_time(
            lambda: torch.nn.functional.embedding_bag(indices, weight, offsets, mode=name))
    sizes = [1 + b * 7 % 39 for b in range(bags)]
    starts = torch.tensor([0] + sizes[:-1], dtype=torch.int64).cumsum(0)
    mixed = torch.arange(sum(sizes), dtype=torch.int64) * 7919 % rows
    out[f"nn/embedding_bag_sum_mixed/{sum(sizes)}"] = median_time(
        lambda: torch.nn.functional.embedding_bag(mixed, weight, starts, mode="sum"))
    source = rand_tensor(bags * per * dim, torch.float32).view(bags * per, dim)
    into = torch.arange(bags * per, dtype=torch.int64) * 7919 % bags
    target = torch.zeros(bags, dim)
    out[f"nn/index_add_rows/{bags * per}"] = median_time(lambda: target.index_add(0, into, source))
    out[f"nn/embedding_dense_backward/{bags * per}"] = median_time(
        lambda: torch.ops.aten.embedding_dense_backward(source, indices, rows, -1, False))
    print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}")
    for k, v in out.items():
        print(f"{k} {v:.9e}")


if __name__ == "__main__":
    main()
