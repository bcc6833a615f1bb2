#!/usr/bin/env bash
# Scaling with threads, oxten beside PyTorch in the same run: every case of
# gen/examples/bench_threads.rs at 1, 2, 4, 8 and 16 threads (capped at the cores present), a
# markdown table on stdout and target/bench-threads.png (time against threads).
#
# Usage: scripts/bench_threads.sh [THREADS, e.g. 1,4,8,16]
# Where no Rust toolchain is available (the GPU machine), carry a prebuilt
# target/release/examples/bench_threads and set BENCH_THREADS_BIN to it.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-1,2,4,8,16}
bin=${BENCH_THREADS_BIN:-target/release/examples/bench_threads}
if [ -z "${BENCH_THREADS_BIN:-}" ]; then
    cargo build --release -q -p oxten --example bench_threads
fi
python3 -c "import torch" 2>/dev/null || python3 -m pip install -q torch
out=${OUT_DIR:-target}
mkdir -p "$out"
"$bin" run --threads "$threads" | tee "$out/bench-threads-oxten.txt" >&2
python3 scripts/bench_threads_pytorch.py --threads "$threads" | tee "$out/bench-threads-torch.txt" >&2
grep -m1 "model name" /proc/cpuinfo || true
"$bin" report "$out/bench-threads-oxten.txt" "$out/bench-threads-torch.txt" --png "$out/bench-threads.png"
