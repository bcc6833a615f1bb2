#!/usr/bin/env bash
# The MLP training step of issue 3 (`autograd/mlp_784_256_10_b64_fwd_bwd`), oxten against
# PyTorch, over N alternating pairs: each pair is one criterion run (2 s of samples; its median)
# right followed by the same case in PyTorch (its median). This host's speed drifts by up to 2x within minutes, so
# only the ratio within a pair, and the median over many pairs, mean anything.
#   scripts/mlp_pairs.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
cargo bench -p oxten --bench autograd --no-run >/dev/null 2>&1
ox=() pt=()
for _ in $(seq "$n"); do
    cargo bench -p oxten --bench autograd -- --noplot --warm-up-time 1 --measurement-time 2 \
        mlp_784_256_10_b64_fwd_bwd >/dev/null 2>&1
    # criterion's median, the statistic the PyTorch script reports.
    ox+=("$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["median"]["point_estimate"] / 1e3)' \
        target/criterion/autograd/mlp_784_256_10_b64_fwd_bwd/new/estimates.json)")
    pt+=("$(python3 scripts/bench_autograd_pytorch.py 2>&1 | awk '/mlp_784_256_10_b64_fwd_bwd/ {print $2 * 1e6}')")
done
python3 - "${ox[*]}" "${pt[*]}" <<'PY'
import statistics, sys
ox = [float(v) for v in sys.argv[1].split()]
pt = [float(v) for v in sys.argv[2].split()]
ratios = [p / o for o, p in zip(ox, pt)]
print("pair  oxten µs  PyTorch µs  ratio")
for i, (o, p, r) in enumerate(zip(ox, pt, ratios), 1):
    print(f"{i:4}  {o:8.1f}  {p:10.1f}  {r:5.2f}")
print(f"median oxten {statistics.median(ox):.1f} µs, PyTorch {statistics.median(pt):.1f} µs; "
      f"median ratio (PyTorch/oxten) {statistics.median(ratios):.2f}x over {len(ox)} pairs")
PY
