#!/usr/bin/env bash
# Median epoch times of the digits CNN, oxten against PyTorch, over N alternating pairs (this
# host is noisy: only same-run, many-pair medians mean anything). Extra arguments
# (`--channels-last`, `--bf16`) go to both.
#   scripts/train_pairs.sh [N] [options...]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-6}
shift || true
cargo build --release -p oxten --example train >/dev/null 2>&1
ox=() pt=()
for _ in $(seq "$n"); do
    ox+=("$(./target/release/examples/train --out target/train-pairs "$@" 2>&1 | sed -n 's/.*median epoch \([0-9]*\) ms.*/\1/p')")
    pt+=("$(python3 scripts/train_digits_pytorch.py "$@" 2>&1 | sed -n 's/median epoch time: \([0-9]*\) ms.*/\1/p')")
done
python3 - "${ox[*]}" "${pt[*]}" <<'PY'
import statistics, sys
ox = [float(v) for v in sys.argv[1].split()]
pt = [float(v) for v in sys.argv[2].split()]
mo, mp = statistics.median(ox), statistics.median(pt)
print(f"oxten   epochs (ms): {ox}")
print(f"PyTorch epochs (ms): {pt}")
print(f"median oxten {mo:.0f} ms, PyTorch {mp:.0f} ms, speed ratio (PyTorch/oxten) {mp / mo:.2f}x over {len(ox)} pairs")
PY
