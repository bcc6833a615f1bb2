"""The cases of gen/benches/linalg.rs, measured in PyTorch eager on this machine with 2 threads.

Prints one line per case: `name median_seconds` (medians over repeated timed loops, like
criterion's). Run right after `cargo bench -p oxten --bench linalg` and compare the medians.
"""
import statistics
import sys
import time

import torch


def median_time(fn, min_time=1.0, reps=20):
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


def rand_tensor(shape, dtype, salt):
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64) + salt
    return ((i * 7919 % 1000).to(torch.float32) / 500.0 - 1.0).reshape(shape).to(dtype)


def main():
    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
    out = {}
    for dtype, name, n in ((torch.float32, "float32", 256), (torch.float32, "float32", 1024),
                           (torch.bfloat16, "bfloat16", 256), (torch.bfloat16, "bfloat16", 1024),
                           (torch.bfloat16, "bfloat16", 2048)):
        a, b = rand_tensor((n, n), dtype, 0), rand_tensor((n, n), dtype, 1)
        out[f"linalg/matmul_{name}/{n}"] = median_time(lambda: torch.matmul(a, b))
    x, w = rand_tensor((1024, 1024), torch.float32, 0), rand_tensor((1024, 1024), torch.float32, 1)
    out["linalg/linear_float32/1024"] = median_time(lambda: torch.nn.functional.linear(x, w))
    xb, wb = x.to(torch.bfloat16), w.to(torch.bfloat16)
    out["linalg/linear_bfloat16/1024"] = median_time(lambda: torch.nn.functional.linear(xb, wb))
    x, w = rand_tensor((64, 784), torch.float32, 2), rand_tensor((256, 784), torch.float32, 3)
    out["linalg/mm_xwt_float32/64x784x256"] = median_time(lambda: torch.mm(x, w.t()))
    a, b = rand_tensor((32, 128, 128), torch.float32, 0), rand_tensor((32, 128, 128), torch.float32, 1)
    out["linalg/bmm_float32/32x128x128"] = median_time(lambda: torch.bmm(a, b))
    def dominant(shape, salt):
        return rand_tensor(shape, torch.float32, salt) + shape[-1] * torch.eye(shape[-1])

    a, b = dominant((256, 256), 0), rand_tensor((256, 16), torch.float32, 1)
    out["linalg/solve_float32/256x16"] = median_time(lambda: torch.linalg.solve(a, b))
    out["linalg/inv_float32/256"] = median_time(lambda: torch.linalg.inv(a))
    spd = a @ a.T
    out["linalg/cholesky_float32/256"] = median_time(lambda: torch.linalg.cholesky(spd))
    small = dominant((4096, 4, 4), 2)
    out["linalg/inv_float32/4096x4x4"] = median_time(lambda: torch.linalg.inv(small))
    a = rand_tensor((128, 128), torch.float32, 3)
    out["linalg/qr_float32/128"] = median_time(lambda: torch.linalg.qr(a))
    sym = a + a.T
    out["linalg/eigh_float32/128"] = median_time(lambda: torch.linalg.eigh(sym))
    out["linalg/svd_float32/128"] = median_time(lambda: torch.linalg.svd(a))
    small = rand_tensor((1024, 4, 4), torch.float32, 4)
    out["linalg/svdvals_float32/1024x4x4"] = median_time(lambda: torch.linalg.svdvals(small))
    print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}")
    for k, v in out.items():
        print(f"{k} {v:.9e}")


if __name__ == "__main__":
    main()
