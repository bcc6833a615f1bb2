"""Regenerates tests/golden/core_ops.txt: PyTorch's outputs for the core operators.

Each case records the op, its inputs (values, dtype, shape, layout) and PyTorch's output (dtype,
shape, strides, values) or the error PyTorch raised (format: scripts/golden_lib.py).
tests/tests/golden.rs replays every case through oxten. Run: python3 scripts/golden.py  (needs torch).
"""
import torch

from golden_lib import Golden

g = Golden("core_ops.txt", "scripts/golden.py")
case = g.case

F = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
I = [torch.int64, torch.int32, torch.uint8, torch.int8]

# ---- binary arithmetic: dtype pairs, broadcasting, layouts ----
for name, fn in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div),
                 ("maximum", torch.maximum), ("minimum", torch.minimum)]:
    for da, db in [(torch.float32, torch.float32), (torch.int64, torch.float32), (torch.int32, torch.int64),
                   (torch.uint8, torch.int8), (torch.float16, torch.float32), (torch.bfloat16, torch.bfloat16),
                   (torch.float16, torch.bfloat16), (torch.bool, torch.int32), (torch.float64, torch.int16)]:
        case(name, fn, [("t", (2, 3), da, "c"), ("t", (2, 3), db, "c")])
    case(name, fn, [("t", (4, 1, 3), torch.float32, "c"), ("t", (5, 1), torch.float32, "c")])
    case(name, fn, [("t", (3, 4), torch.float32, "t"), ("t", (3, 4), torch.float32, "c")])
    case(name, fn, [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (2, 3, 4, 5), torch.float32, "cl")])
    case(name, fn, [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (1, 3, 1, 1), torch.float32, "c")])
    case(name, fn, [("t", (3,), torch.float32, "c"), ("t", (4,), torch.float32, "c")])
    # 0-dim tensors lose to dimensioned ones within a category.
    case(name, fn, [("t", (4,), torch.float16, "c"), ("t", (), torch.float64, "c")])
    case(name, fn, [("t", (4,), torch.int32, "c"), ("t", (), torch.float64, "c")])
for name, fn in [("add_scalar", torch.add), ("sub_scalar", torch.sub), ("mul_scalar", torch.mul),
                 ("div_scalar", torch.div)]:
    for d in [torch.float32, torch.int64, torch.float16, torch.uint8, torch.bfloat16]:
        for s in [2, 2.5, True]:
            if name == "sub_scalar" and s is True:
                continue
            case(name, fn, [("t", (2, 3), d, "c"), ("s", s)])
case("add", lambda a, b: torch.add(a, b, alpha=2), [("t", (5,), torch.int64, "c"), ("t", (5,), torch.int64, "c")], alpha=2)
case("add", lambda a, b: torch.add(a, b, alpha=0.5), [("t", (5,), torch.float32, "c"), ("t", (5,), torch.float32, "c")], alpha=0.5)
case("add", lambda a, b: torch.add(a, b, alpha=0.5), [("t", (5,), torch.int64, "c"), ("t", (5,), torch.int64, "c")], alpha=0.5)
case("sub", torch.sub, [("t", (3,), torch.bool, "c"), ("t", (3,), torch.bool, "c")])

# ---- unary ----
for name in ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "silu"]:
    fn = getattr(torch, name) if hasattr(torch, name) else getattr(torch.nn.functional, name)
    for d in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32]:
        if name == "silu" and not d.is_floating_point:
            continue
        case(name, fn, [("t", (3, 4), d, "c")])
    case(name, fn, [("t", (2, 3, 4, 5), torch.float32, "cl")])
    case(name, fn, [("t", (5, 6), torch.float32, "t")])
for approx in ["none", "tanh"]:
    for d in F:
        case("gelu", lambda x, a=approx: torch.nn.functional.gelu(x, approximate=a), [("t", (3, 4), d, "c")], approximate=approx)
for d in [torch.float32, torch.int64, torch.float16]:
    for e in [2, 3, 0.5, -1, 2.5, 0]:
        case("pow", torch.pow, [("t", (6,), d, "c"), ("s", e)])
case("pow", torch.pow, [("t", (4,), torch.int64, "c"), ("s", -2)])
for d in [torch.float32, torch.int64, torch.bfloat16]:
    case("clamp", lambda x: torch.clamp(x, min=-1), [("t", (8,), d, "c")], min=-1)
    case("clamp", lambda x: torch.clamp(x, max=1), [("t", (8,), d, "c")], max=1)
    case("clamp", lambda x: torch.clamp(x, min=-1.5, max=0.5), [("t", (8,), d, "c")], min=-1.5, max=0.5)

# ---- comparisons, logical, where ----
for name in ["eq", "ne", "lt", "le", "gt", "ge"]:
    fn = getattr(torch, name)
    case(name, fn, [("t", (3, 4), torch.int64, "c"), ("t", (3, 4), torch.int64, "c")])
    case(name, fn, [("t", (3, 4), torch.float32, "c"), ("t", (4,), torch.int32, "c")])
    case(name, fn, [("t", (3, 4), torch.float16, "t"), ("t", (3, 4), torch.float16, "c")])
    case(name + "_scalar", fn, [("t", (3, 4), torch.float32, "c"), ("s", 0.5)])
    case(name + "_scalar", fn, [("t", (3, 4), torch.int64, "c"), ("s", 1)])
for d in [torch.float32, torch.int64, torch.bool, torch.bfloat16]:
    case("logical_not", torch.logical_not, [("t", (7,), d, "c")])
case("where", torch.where, [("t", (2, 3), torch.bool, "c"), ("t", (2, 3), torch.float32, "c"), ("t", (3,), torch.float64, "c")])
case("where", torch.where, [("t", (2, 1), torch.bool, "c"), ("t", (1, 3), torch.int64, "c"), ("t", (2, 3), torch.int32, "c")])
case("where", torch.where, [("t", (2, 3), torch.float32, "c"), ("t", (2, 3), torch.float32, "c"), ("t", (2, 3), torch.float32, "c")])

# ---- bool tensors: + is or, * is and; negation and relu are rejected ----
for name, fn in [("add", torch.add), ("mul", torch.mul), ("maximum", torch.maximum), ("minimum", torch.minimum),
                 ("eq", torch.eq), ("lt", torch.lt), ("ge", torch.ge)]:
    case(name, fn, [("t", (6,), torch.bool, "c"), ("t", (6,), torch.bool, "c")])
case("add_scalar", torch.add, [("t", (6,), torch.bool, "c"), ("s", True)])
case("mul_scalar", torch.mul, [("t", (6,), torch.bool, "c"), ("s", False)])
case("add_scalar", torch.add, [("t", (6,), torch.bool, "c"), ("s", 3)])
case("neg", torch.neg, [("t", (6,), torch.bool, "c")])
case("relu", torch.relu, [("t", (6,), torch.bool, "c")])

# ---- reductions ----
for d in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.bool]:
    case("sum", torch.sum, [("t", (3, 4, 5), d, "c")])
    case("sum_dim", lambda x: torch.sum(x, dim=1), [("t", (3, 4, 5), d, "c")], dim=1)
    case("sum_dim", lambda x: torch.sum(x, dim=(0, 2), keepdim=True), [("t", (3, 4, 5), d, "c")], dim="0,2", keepdim=1)
case("sum_dim", lambda x: torch.sum(x, dim=0), [("t", (6, 7), torch.float32, "t")], dim=0)
case("sum_dim", lambda x: torch.sum(x, dim=-1), [("t", (2, 3, 4, 5), torch.float32, "cl")], dim=-1)
for d in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]:
    case("mean_dim", lambda x: torch.mean(x, dim=1), [("t", (3, 4, 5), d, "c")], dim=1)
    case("amax", lambda x: torch.amax(x, dim=1), [("t", (3, 4), d, "c")], dim=1)
    case("amin", lambda x: torch.amin(x, dim=(0, 1)), [("t", (3, 4), d, "c")], dim="0,1")
    case("max_dim", lambda x: torch.max(x, dim=1), [("t", (3, 4), d, "c")], dim=1)
    case("max_dim", lambda x: torch.max(x, dim=0, keepdim=True), [("t", (3, 4), d, "c")], dim=0, keepdim=1)
    case("argmax", lambda x: torch.argmax(x), [("t", (3, 4), d, "c")])
    case("argmax", lambda x: torch.argmax(x, dim=1), [("t", (3, 4), d, "c")], dim=1)
case("max_dim", lambda x: torch.max(x, dim=1), [("t", (3, 0), torch.float32, "c")], dim=1)
case("amax", lambda x: torch.amax(x, dim=1), [("t", (3, 0), torch.float32, "c")], dim=1)

# ---- matrix products ----
for d in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8]:
    case("mm", torch.mm, [("t", (3, 4), d, "c"), ("t", (4, 5), d, "c")])
case("mm", torch.mm, [("t", (3, 4), torch.float32, "t"), ("t", (4, 5), torch.float32, "c")])
case("mm", torch.mm, [("t", (3, 4), torch.float32, "c"), ("t", (4, 5), torch.float32, "t")])
case("mm", torch.mm, [("t", (3, 4), torch.float64, "t"), ("t", (4, 5), torch.float64, "t")])
case("mm", torch.mm, [("t", (3, 4), torch.bfloat16, "t"), ("t", (4, 5), torch.bfloat16, "t")])
case("mm", torch.mm, [("t", (3, 4), torch.int64, "t"), ("t", (4, 5), torch.int64, "c")])
# Large enough for gemm's blocking and edge handling (sizes not multiples of the register tiles).
case("mm", torch.mm, [("t", (33, 70), torch.float32, "c"), ("t", (70, 19), torch.float32, "t")])
case("mm", torch.mm, [("t", (33, 70), torch.float64, "t"), ("t", (70, 19), torch.float64, "c")])
case("mm", torch.mm, [("t", (2, 0), torch.float32, "c"), ("t", (0, 3), torch.float32, "c")])
case("mm", torch.mm, [("t", (0, 3), torch.float32, "c"), ("t", (3, 2), torch.float32, "c")])
case("mm", torch.mm, [("t", (2, 3), torch.float32, "c"), ("t", (4, 5), torch.float32, "c")])
case("mm", torch.mm, [("t", (2, 3), torch.float32, "c"), ("t", (3, 5), torch.float64, "c")])
case("mm", torch.mm, [("t", (3,), torch.float32, "c"), ("t", (3, 5), torch.float32, "c")])
case("mm", torch.mm, [("t", (2, 3), torch.float32, "c"), ("t", (3,), torch.float32, "c")])
case("mm", torch.mm, [("t", (2, 3), torch.bool, "c"), ("t", (3, 2), torch.bool, "c")])

g.save()
