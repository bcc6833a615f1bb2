"""The cases of gen/benches/recurrent.rs, measured in PyTorch eager on this machine.

Prints one line per case: `name median_seconds` (medians over repeated timed loops, like
criterion's). Run right after `cargo bench -p oxten --bench recurrent` and compare the medians.
"""
import torch

from bench_linalg_pytorch import median_time


def hashed(shape):
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64)
    v = ((i * 2654435761) % (1 << 32)).to(torch.float64) / 2147483648.0 - 1.0
    return v.to(torch.float32).reshape(shape)


def main():
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads")
    torch.manual_seed(0)
    x = hashed((32, 16, 64))
    lstm, gru = torch.nn.LSTM(64, 128), torch.nn.GRU(64, 128)
    with torch.no_grad():
        print(f"lstm_forward_32x16x64_h128 {median_time(lambda: lstm(x)):.6f}")
        print(f"gru_forward_32x16x64_h128 {median_time(lambda: gru(x)):.6f}")
    xg = x.detach().requires_grad_(True)

    def step():
        lstm(xg)[0].sum().backward()
        for p in lstm.parameters():
            p.grad = None

    print(f"lstm_forward_backward_32x16x64_h128 {median_time(step):.6f}")
    big_x = hashed((128, 32, 256)).requires_grad_(True)
    big = torch.nn.LSTM(256, 256)
    with torch.no_grad():
        print(f"lstm_forward_128x32x256_h256 {median_time(lambda: big(big_x)):.6f}")

    def big_step():
        big(big_x)[0].sum().backward()
        big_x.grad = None
        for p in big.parameters():
            p.grad = None

    print(f"lstm_forward_backward_128x32x256_h256 {median_time(big_step):.6f}")
    rows = hashed((1024, 1024))
    small = rows * 0.001 + 1.0
    print(f"cumsum_1024x1024_float32 {median_time(lambda: rows.cumsum(1)):.6f}")
    print(f"cumprod_1024x1024_float32 {median_time(lambda: small.cumprod(1)):.6f}")
    print(f"logcumsumexp_1024x1024_float32 {median_time(lambda: rows.logcumsumexp(1)):.6f}")


if __name__ == "__main__":
    main()
