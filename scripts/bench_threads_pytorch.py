"""The cases of gen/examples/bench_threads.rs in PyTorch eager, at each thread count.

Prints `threads case median_seconds` lines (medians of timed repetitions after two warm-up calls,
at least 5 and about 0.3 s per case, as the Rust side). Usage:
python3 scripts/bench_threads_pytorch.py [--threads 1,2,4,8,16] [--no-cap] [--only CASE]
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

from bench_sort_pytorch import hashed


def median_time(f):
    f()
    f()
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < 0.3 and len(times) < 2000):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def cases():
    a = hashed((1 << 20,))
    b = hashed((1 << 20,)) + 0.5
    m = hashed((1024, 1024))
    m2 = hashed((2048, 2048))
    mb = m.to(torch.bfloat16)
    x = hashed((32, 64, 56, 56)).contiguous(memory_format=torch.channels_last)
    w = ((hashed((64, 64, 3, 3)) - 0.5) * 0.1).contiguous(memory_format=torch.channels_last)

    def conv():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            F.conv2d(x, w, None, 1, 1)

    return [
        ("add_f32_2p20", lambda: a + b),
        ("exp_f32_2p20", lambda: a.exp()),
        ("log_f32_2p20", lambda: b.log()),
        ("tanh_f32_2p20", lambda: a.tanh()),
        ("sigmoid_f32_2p20", lambda: a.sigmoid()),
        ("erf_f32_2p20", lambda: a.erf()),
        ("gelu_f32_2p20", lambda: F.gelu(a)),
        ("sum_f32_2p20", lambda: a.sum()),
        ("matmul_f32_1024", lambda: m @ m),
        ("matmul_f32_2048", lambda: m2 @ m2),
        ("matmul_bf16_1024", lambda: mb @ mb),
        ("conv2d_nhwc_bf16_autocast", conv),
    ]


def main():
    args = sys.argv[1:]
    threads = [1, 2, 4, 8, 16]
    if "--threads" in args:
        threads = [int(t) for t in args[args.index("--threads") + 1].split(",") if t]
    only = args[args.index("--only") + 1] if "--only" in args else None
    cores = os.cpu_count() or 1
    if "--no-cap" not in args:
        threads = [t for t in threads if t <= cores]
    print(f"# torch {torch.__version__}, {cores} cores, capability {torch.backends.cpu.get_cpu_capability()}")
    with torch.no_grad():
        for t in threads:
            torch.set_num_threads(t)
            for name, f in cases():
                if only and only not in name:
                    continue
                print(f"{t} {name} {median_time(f):.9f}", flush=True)


if __name__ == "__main__":
    main()
