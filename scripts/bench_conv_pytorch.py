"""The cases of gen/benches/conv.rs, measured in PyTorch eager on this machine (2 threads).

Prints one line per case: `name median_seconds`. Run after `cargo bench -p oxten --bench conv`:
  cargo bench -p oxten --bench conv -- --noplot > target/bench-conv-oxten.txt
  python3 scripts/bench_conv_pytorch.py > target/bench-conv-torch.txt
  python3 scripts/bench_table.py target/bench-conv-oxten.txt target/bench-conv-torch.txt
"""
import statistics
import time

import torch
import torch.nn.functional as F


def median_time(fn, reps=10, warmup=2):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def filled(shape, scale):
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64)
    return (((i * 7919 % 1000).to(torch.float32) / 500.0 - 1.0) * scale).view(shape)


def main():
    torch.set_num_threads(2)
    cl = torch.channels_last
    x, w, b = filled((32, 64, 56, 56), 1.0), filled((64, 64, 3, 3), 0.05), filled((64,), 0.1)
    xc, wc = x.contiguous(memory_format=cl), w.contiguous(memory_format=cl)
    xb, wb, bb = xc.to(torch.bfloat16), wc.to(torch.bfloat16), b.to(torch.bfloat16)
    out = {}
    with torch.no_grad():
        out["conv/conv2d_f32_nchw"] = median_time(lambda: F.conv2d(x, w, b, padding=1))
        out["conv/conv2d_f32_nhwc"] = median_time(lambda: F.conv2d(xc, wc, b, padding=1))
        out["conv/conv2d_bf16_nhwc"] = median_time(lambda: F.conv2d(xb, wb, bb, padding=1))
        xn, wn = x.to(torch.bfloat16), w.to(torch.bfloat16)
        out["conv/conv2d_bf16_nchw"] = median_time(lambda: F.conv2d(xn, wn, bb, padding=1))
        out["conv/max_pool2d_f32_nchw"] = median_time(lambda: F.max_pool2d(x, 2))
        out["conv/max_pool2d_f32_nhwc"] = median_time(lambda: F.max_pool2d(xc, 2))
    print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}")
    for k, v in out.items():
        print(f"{k} {v:.9e}")


if __name__ == "__main__":
    main()
