#!/usr/bin/env bash
# Builds scripts/libtorch_add.cpp against the libtorch in the pip wheel (`pip install torch`) and
# runs it: libtorch's own C++ cost of a 1-element add, allocating and with out=, in ns per call.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
ABI=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
BIN=target/libtorch_add
mkdir -p target
if [ ! -x "$BIN" ] || [ scripts/libtorch_add.cpp -nt "$BIN" ]; then
  g++ -O2 -std=c++20 -D_GLIBCXX_USE_CXX11_ABI="$ABI" scripts/libtorch_add.cpp -o "$BIN" \
    -I"$TORCH/include" -I"$TORCH/include/torch/csrc/api/include" \
    -L"$TORCH/lib" -Wl,-rpath,"$TORCH/lib" -ltorch -ltorch_cpu -lc10
fi
"$BIN"
