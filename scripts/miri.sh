#!/usr/bin/env bash
# Miri over the unit tests that exercise unsafe code: the runtime's (storage, layouts, strided
# reads, the thread pool), the kernels crate's (im2col, dot_rows, SIMD dispatch, copies,
# random fills) and the CPU loop tests (every TensorIterator path: contiguous, broadcast,
# strided, tiled, parallel; copies and casts), with sizes reduced under cfg(miri).
# Needs the nightly toolchain with Miri (`rustup component add miri rust-src --toolchain nightly`).
# Tree Borrows because rayon's crossbeam-epoch trips Stacked Borrows; leaks because the pool's
# threads outlive `main`. About 40 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation -Zmiri-tree-borrows -Zmiri-ignore-leaks}"
cargo +nightly miri test -p oxten-runtime --lib
cargo +nightly miri test -p oxten-kernels --lib
cargo +nightly miri test -p oxten-tests --test iter_loops --test iter_copy
