#!/usr/bin/env bash
# Runs on the GPU machine (no Rust toolchain there): the CUDA test binary, the CUDA benchmarks
# twice (the second run must compile nothing: the NVRTC disk cache) and PyTorch's side, writing
# everything under $OUT. Build the binaries here first with scripts/build_cuda_binaries.sh.
set -uo pipefail
BIN=${BIN:-target/gpu-bin}
OUT=${OUT:-/tmp/oxten-gpu}
mkdir -p "$OUT"
for f in "$BIN"/*.xz; do [ -e "$f" ] && xz -dkf "$f" && chmod +x "${f%.xz}"; done
export OXTEN_CUDA_CACHE="$OUT/nvrtc-cache"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; lscpu | grep -E 'Model name|^CPU\(s\)'; } > "$OUT/host.txt" 2>&1
# First the benchmarks with an empty kernel cache (first-call NVRTC compiles are counted), then
# the tests, then the benchmarks again: the second run must compile nothing.
rm -rf "$OXTEN_CUDA_CACHE"
timeout "${BENCH_TIMEOUT:-150}" "$BIN/cuda_bench" ${QUICK:-} > "$OUT/bench_oxten_1.jsonl" 2> "$OUT/bench_oxten_1.err"
timeout "${TEST_TIMEOUT:-240}" "$BIN/cuda_tests" --test-threads=1 > "$OUT/tests.txt" 2>&1; echo "tests rc=$?" >> "$OUT/tests.txt"
timeout 60 "$BIN/cuda_bench" --quick > "$OUT/bench_oxten_2.jsonl" 2> "$OUT/bench_oxten_2.err"
timeout "${TORCH_TIMEOUT:-150}" python3 scripts/bench_cuda_pytorch.py ${QUICK:-} > "$OUT/bench_torch.jsonl" 2> "$OUT/bench_torch.err"
grep -E "^test |panicked|test result|rc=" "$OUT/tests.txt" | grep -v " ok$"; cat "$OUT"/bench_*.jsonl
