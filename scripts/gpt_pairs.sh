#!/usr/bin/env bash
# Training throughput of the GPT example (tokens/s over the steps after the first), oxten against
# PyTorch (scripts/gpt_pytorch.py, the same model, batches and schedule), over N alternating
# pairs of S-step runs (this host is noisy: only same-run, many-pair medians mean anything).
#   scripts/gpt_pairs.sh [N] [S]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}
steps=${2:-60}
cargo build --release -p oxten --example gpt >/dev/null 2>&1
ox=() pt=()
for _ in $(seq "$n"); do
    ox+=("$(./target/release/examples/gpt --steps "$steps" --eval-every "$steps" --out target/gpt-pairs 2>&1 | sed -n 's/.*steps in .* (\([0-9]*\) tokens\/s).*/\1/p')")
    pt+=("$(python3 scripts/gpt_pytorch.py --steps "$steps" 2>&1 | sed -n 's/.*, \([0-9]*\) tokens\/s$/\1/p')")
done
python3 - "${ox[*]}" "${pt[*]}" <<'PY'
import statistics, sys
ox = [float(v) for v in sys.argv[1].split()]
pt = [float(v) for v in sys.argv[2].split()]
mo, mp = statistics.median(ox), statistics.median(pt)
print(f"oxten   tokens/s: {ox}")
print(f"PyTorch tokens/s: {pt}")
print(f"median oxten {mo:.0f}, PyTorch {mp:.0f} tokens/s: oxten/PyTorch {mo / mp:.2f}x over {len(ox)} pairs")
PY
