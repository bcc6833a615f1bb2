"""Regenerates tests/golden/print.txt: how PyTorch prints tensors (precision, widths, scientific
notation, summarisation, line wrapping, suffixes), replayed by tests/tests/printing.rs.

Format, per case:
  case NAME DTYPE SIZES REQUIRES_GRAD   (SIZES "2,3", "-" for 0-dim)
  values V...                           the elements in row-major order (Python float repr)
  | LINE                                each line of str(tensor), "torch." removed from dtypes
Run: python3 scripts/golden_print.py  (needs torch).
"""
import math
import pathlib

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
DT = {torch.float32: "float32", torch.float64: "float64", torch.bfloat16: "bfloat16",
      torch.float16: "float16", torch.int64: "int64", torch.int32: "int32", torch.uint8: "uint8",
      torch.bool: "bool"}
out = ["# Written by scripts/golden_print.py from PyTorch " + torch.__version__ + ". Do not edit."]


def case(name, t, requires_grad=False):
    if requires_grad:
        t = t.clone().requires_grad_(True)
    sizes = ",".join(str(s) for s in t.shape) if t.dim() else "-"
    out.append(f"case {name} {DT[t.dtype]} {sizes} {int(requires_grad)}")
    vals = t.detach().reshape(-1).double().tolist() if t.dtype != torch.bool else [float(v) for v in t.reshape(-1).tolist()]
    out.append("values " + " ".join(repr(v) for v in vals))
    for line in str(t).replace("torch.", "").split("\n"):
        out.append("| " + line)


f = torch.float32
case("ints_2d", torch.arange(6).reshape(2, 3))
case("fixed", torch.tensor([1.0, 2.5]))
case("integral", torch.tensor([1.0, -2.0, 30.0]))
case("sci_summarized_2d", torch.arange(2000, dtype=f).reshape(40, 50) / 7)
case("summarized_1d", torch.arange(2000, dtype=f) / 3)
case("sci_small", torch.tensor([1e-5, 1.0]))
case("sci_large", torch.tensor([1e9, 2.0]))
case("nonfinite", torch.tensor([math.nan, math.inf, -math.inf, 1.5]))
case("nonfinite_integral", torch.tensor([math.nan, 2.0, -3.0]))
case("zeros", torch.zeros(2, 2))
case("bool", torch.tensor([True, False, True]))
case("bool_all_true", torch.tensor([True, True]))
case("float64", torch.tensor([0.1, 0.2], dtype=torch.float64))
case("int32", torch.tensor([-7, 100, 3], dtype=torch.int32))
case("bfloat16", torch.tensor([1.5, 2.25, -0.125], dtype=torch.bfloat16))
case("scalar", torch.tensor(2.5))
case("scalar_integral", torch.tensor(2.0))
case("scalar_int", torch.tensor(-4))
case("empty_1d", torch.zeros(0))
case("empty_2d", torch.zeros(2, 0))
case("three_d", torch.arange(24, dtype=f).reshape(2, 3, 4) / 3)
case("wrapped_row", torch.arange(30, dtype=f) / 3 - 4)
case("wrapped_ints", torch.arange(60) * 1000)
case("summarized_3d", (torch.arange(6000, dtype=f).reshape(10, 20, 30) - 3000) / 11)
case("summarized_ints", torch.arange(1500).reshape(30, 50))
case("requires_grad", torch.tensor([1.0, 2.0]), requires_grad=True)
case("requires_grad_float64", torch.tensor([[0.5, 1.25]], dtype=torch.float64), requires_grad=True)
case("long_suffix", torch.arange(8, dtype=torch.float64).reshape(2, 4) * 123.456, requires_grad=True)
(ROOT / "tests/golden/print.txt").write_text("\n".join(out) + "\n")
