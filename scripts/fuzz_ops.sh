#!/usr/bin/env bash
# The long run of the schema-driven operator fuzzer: N calls (default 1,000,000) for each seed
# given (default 1 2 3), with the address space capped so that a call asking for absurd
# amounts of memory is refused (an error) rather than swapping the machine. Run it after every
# change to kernels; a failure prints the command that reruns the failing call.
#   scripts/fuzz_ops.sh [CALLS] [SEED...]
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-1000000}
shift || true
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(1 2 3)
cargo build --release --quiet -p oxten-tests --bin op_fuzz
status=0
for seed in "${seeds[@]}"; do
  # 8 GiB of address space: enough for every sane call, too little for a 2^40-element tensor.
  ( ulimit -v 8388608; OXTEN_FUZZ_TRACE=${OXTEN_FUZZ_TRACE:-} ./target/release/op_fuzz --calls "$calls" --seed "$seed" ) || status=1
done
exit $status
