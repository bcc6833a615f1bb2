#!/usr/bin/env bash
# Runs the autograd benchmarks (gen/benches/autograd.rs, criterion) and the same cases in
# PyTorch eager, one after the other, and prints the markdown table recorded in BENCHMARKS.md
# ("Autograd (issue 3)"). Needs Python with torch.
# Usage: [THREADS=n] scripts/bench_autograd.sh [criterion filter]
# THREADS sets both libraries' thread count (rayon's pool, torch.set_num_threads); by default
# each uses its own default (the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch" 2>/dev/null || python3 -m pip install -q torch
mkdir -p target
if [ -n "${THREADS:-}" ]; then export RAYON_NUM_THREADS="$THREADS"; fi
cargo bench -p oxten --bench autograd -- ${1:-} --noplot 2>&1 | tee target/bench-autograd-oxten.txt >/dev/null
python3 scripts/bench_autograd_pytorch.py ${THREADS:-} | tee target/bench-autograd-torch.txt >/dev/null
python3 scripts/bench_table.py target/bench-autograd-oxten.txt target/bench-autograd-torch.txt
