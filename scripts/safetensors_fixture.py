"""Writes tests/golden/fixture.safetensors with the reference `safetensors` package, for
tests/tests/safetensors.rs (which checks every value and that oxten writes the same bytes).

    pip install safetensors torch
    python3 scripts/safetensors_fixture.py

The values are fixed (no random numbers), so the file regenerates byte for byte. The metadata
has a single key: the reference implementation writes metadata from a hash map, so the order
of several keys would not be reproducible.
"""
import pathlib

import torch
from safetensors.torch import save_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "golden" / "fixture.safetensors"

tensors = {
    # f32 [2, 1, 3, 3]: -2.0, -1.75, ..., 2.25
    "conv.weight": torch.arange(18, dtype=torch.float32).reshape(2, 1, 3, 3) * 0.25 - 2.0,
    "fc.bias": torch.tensor([0.5, -1.25, 3.0e100], dtype=torch.float64),
    "half": torch.tensor([[1.0, -0.5], [65504.0, 2.0**-24]], dtype=torch.float16),
    "brain": torch.tensor([1.0, -2.5, 3.140625], dtype=torch.bfloat16),
    "labels": torch.tensor([0, -1, 2**40, -(2**63)], dtype=torch.int64),
    "counts": torch.tensor([-7, 2**31 - 1], dtype=torch.int32),
    "shorts": torch.tensor([-32768, 0, 32767], dtype=torch.int16),
    "bytes.signed": torch.tensor([-128, 127], dtype=torch.int8),
    "pixels": torch.tensor([[0, 1], [128, 255]], dtype=torch.uint8),
    "mask": torch.tensor([True, False, True]),
    "scalar": torch.tensor(3.5, dtype=torch.float32),
    "empty": torch.zeros(0, 4, dtype=torch.float32),
    # A transposed tensor (safetensors.torch wants it contiguous): [[0, 3], [1, 4], [2, 5]].
    "transposed": torch.arange(6, dtype=torch.int16).reshape(2, 3).t().contiguous(),
}

OUT.parent.mkdir(parents=True, exist_ok=True)
save_file(tensors, str(OUT), metadata={"format": "pt"})
print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes, {len(tensors)} tensors)")
