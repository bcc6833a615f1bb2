#!/usr/bin/env bash
# Runs oxten's criterion benchmarks and the same cases in PyTorch, in one go, and prints a
# markdown table (medians and oxten/PyTorch throughput ratios) for BENCHMARKS.md.
# Needs Python with torch (pip install torch). Usage: scripts/bench.sh [criterion filter]
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch" 2>/dev/null || python3 -m pip install -q torch
cargo bench -p oxten --bench ops -- ${1:-} --noplot 2>&1 | tee target/bench-oxten.txt >/dev/null
python3 scripts/bench_pytorch.py | tee target/bench-torch.txt >/dev/null
python3 scripts/bench_table.py target/bench-oxten.txt target/bench-torch.txt
