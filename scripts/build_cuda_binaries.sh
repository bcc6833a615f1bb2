#!/usr/bin/env bash
# Builds the CUDA test and benchmark binaries on the development machine (no GPU or CUDA toolkit
# needed) and copies them to target/gpu-bin, the git-ignored folder carried to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/gpu-bin
test_bin=$(cargo test --release --features cuda -p oxten-tests --test cuda --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys; print([j["executable"] for j in map(json.loads, sys.stdin) if j.get("executable") and j["target"]["name"]=="cuda"][-1])')
cp "$test_bin" target/gpu-bin/cuda_tests
cargo build --release --features oxten/cuda -p oxten --example cuda_bench
cp target/release/examples/cuda_bench target/gpu-bin/cuda_bench
# The working tree and the carried binaries travel together within 64 MiB: strip and compress.
for b in cuda_tests cuda_bench; do strip target/gpu-bin/$b; xz -T2 -6 -f target/gpu-bin/$b; done
ls -la target/gpu-bin
