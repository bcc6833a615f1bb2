#!/usr/bin/env bash
# The README's test command: builds the workspace and runs every test (unit, integration,
# property, gradient and compile-fail tests), then the generator's own checks.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q -p oxten-codegen -- check
cargo test --workspace --release --quiet
# The CUDA backend without a GPU: its unit tests (kernel sources, NVRTC log annotation) and the
# GPU test binary, which must report that it skipped and pass. In the dev profile: they need no
# speed, and a second release build with the `cuda` feature costs CI two more minutes.
cargo test --quiet --features cuda -p oxten-kernels --lib cuda
cargo test --quiet --features cuda -p oxten-tests --test cuda
