#!/usr/bin/env bash
# Runs the cargo-fuzz targets (fuzz/fuzz_targets: schema_parser, yaml_loader, pointwise_expr,
# derivatives, safetensors) for SECONDS each (default 120), starting from the small seed corpora
# in fuzz/seeds; what libFuzzer finds goes to the git-ignored fuzz/corpus and fuzz/artifacts.
# Run it after a change to a parser or loader.
#   scripts/fuzz_parsers.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-120}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(schema_parser yaml_loader pointwise_expr derivatives safetensors)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  echo "== $t (${secs}s)"
  cargo +nightly fuzz run "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- -max_total_time="$secs" -rss_limit_mb=4096 2>&1 \
    | grep -E "^(#[0-9]+.*(DONE|pulse)|Done|==[0-9]+==|SUMMARY|artifact|thread .* panicked)" | tail -4
done
