"""bf16 matrix products and convolutions, oxten against PyTorch in alternating pairs.

Each pair runs oxten's criterion cases (`gen/benches/linalg.rs` and `gen/benches/conv.rs`,
bf16 only, short measurements) and then the same cases in PyTorch
(`scripts/bench_linalg_pytorch.py`, `scripts/bench_conv_pytorch.py`); the table gives the
median over pairs of each side's median, and the median of the per-pair ratios. This host's
speed drifts by tens of percent over minutes, so only same-run pairs are comparable.

Usage: python3 scripts/bf16_pairs.py [pairs]   (after `cargo bench -p oxten --bench linalg
--bench conv --no-run`; needs torch)
"""
import json
import pathlib
import statistics
import subprocess
import sys


def oxten_medians(bench, filt):
    subprocess.run(
        ["cargo", "bench", "-q", "-p", "oxten", "--bench", bench, "--", filt, "--noplot",
         "--measurement-time", "2", "--warm-up-time", "1"],
        check=True, capture_output=True)
    out = {}
    for est in pathlib.Path("target/criterion").glob("*/**/new/estimates.json"):
        bench_json = est.parent / "benchmark.json"
        if not bench_json.exists():
            continue
        name = json.loads(bench_json.read_text())["full_id"]
        if filt in name and (name.startswith("linalg/") or name.startswith("conv/")):
            out[name] = json.loads(est.read_text())["median"]["point_estimate"] * 1e-9
    return out


def torch_medians(script, filt):
    res = subprocess.run([sys.executable, script], check=True, capture_output=True, text=True)
    out = {}
    for line in res.stdout.splitlines():
        if line.startswith("#"):
            continue
        k, v, *_ = line.split()
        if filt in k:
            out[k] = float(v)
    return out


def human(s):
    for unit, f in (("s", 1), ("ms", 1e3), ("µs", 1e6)):
        if s * f >= 1:
            return f"{s * f:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


def main():
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    ox, pt = {}, {}
    for _ in range(pairs):
        for bench, script, filt in (("linalg", "scripts/bench_linalg_pytorch.py", "bfloat16"),
                                    ("conv", "scripts/bench_conv_pytorch.py", "bf16")):
            for k, v in oxten_medians(bench, filt).items():
                ox.setdefault(k, []).append(v)
            for k, v in torch_medians(script, filt).items():
                pt.setdefault(k, []).append(v)
    print("| case | oxten | PyTorch | speed-up (median of pairs) |")
    print("| --- | --- | --- | --- |")
    for k in sorted(ox):
        if k not in pt:
            continue
        ratios = [p / o for o, p in zip(ox[k], pt[k])]
        print(f"| {k} | {human(statistics.median(ox[k]))} | {human(statistics.median(pt[k]))} "
              f"| {statistics.median(ratios):.2f}× |")


if __name__ == "__main__":
    main()
