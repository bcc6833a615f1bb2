"""Regenerates tests/golden/composites.txt: PyTorch's outputs for the operators oxten composes
of others (count_nonzero, nansum, nanmean, trace, positive, true_divide, the flips, ravel, the
`*_as` views, swapaxes/swapdims, atleast_Nd and the stacking functions), replayed by
tests/tests/composite_ops.rs.

Format: scripts/golden_lib.py. Run: python3 scripts/golden_composites.py  (needs torch).
"""
import torch

from golden_lib import Golden

g = Golden("composites.txt", "scripts/golden_composites.py")
case = g.case

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, U8, B = torch.int64, torch.int32, torch.uint8, torch.bool
INF, NAN = float("inf"), float("nan")


def t(shape, dtype=F32, layout="c", lo=-3.0, hi=3.0):
    return ("t", shape, dtype, layout, lo, hi)


def v(x, dtype=F32):
    return ("v", torch.tensor(x, dtype=dtype))


WITH_NAN = [[1.0, NAN, 0.0, -2.5], [NAN, NAN, 3.0, 0.0], [0.5, -0.0, INF, NAN]]

# ---- count_nonzero ----
for d in [F32, F64, I64, U8, B, BF16]:
    case("count_nonzero", torch.count_nonzero, [t((3, 4), d, "c", -1.0, 1.0)])
case("count_nonzero", torch.count_nonzero, [v(WITH_NAN)])
for dims in [[0], [1], [0, 1], [-1]]:
    case("count_nonzero_dims", lambda x, d=dims: torch.count_nonzero(x, d), [v(WITH_NAN)], dims=dims)
case("count_nonzero", lambda x: torch.count_nonzero(x, 1), [t((4, 5), I64, "t", -1, 2)], dim=1)
case("count_nonzero", lambda x: torch.count_nonzero(x, 3), [t((2, 3), F32)], dim=3)
case("count_nonzero", torch.count_nonzero, [t((0, 3), F32)])

# ---- nansum, nanmean ----
for name, fn in [("nansum", torch.nansum), ("nanmean", torch.nanmean)]:
    case(name, fn, [v(WITH_NAN)])
    case(name, fn, [v(WITH_NAN, F64)])
    for dim in [0, 1, -1]:
        case(name, lambda x, f=fn, d=dim: f(x, d), [v(WITH_NAN)], dims=[dim])
        case(name, lambda x, f=fn, d=dim: f(x, d, keepdim=True), [v(WITH_NAN)], dims=[dim], keepdim=1)
    case(name, lambda x, f=fn: f(x, (0, 1)), [v(WITH_NAN, F16)], dims=[0, 1])
    case(name, fn, [t((3, 4), I64)])
    case(name, fn, [t((3, 4), B)])
    case(name, fn, [t((4, 5), F32, "t")])
    case(name, lambda x, f=fn: f(x, dtype=torch.float64), [v(WITH_NAN)], dtype="float64")
    case(name, fn, [v([[NAN, NAN], [1.0, NAN]])])
    case(name, lambda x, f=fn: f(x, 1), [v([[NAN, NAN], [1.0, NAN]])], dims=[1])
    case(name, fn, [t((0, 3), F32)])

# ---- trace ----
for d in [F32, F64, I64, I32, U8, B]:
    case("trace", torch.trace, [t((3, 4), d, "c", -5, 5)])
case("trace", torch.trace, [t((4, 3), F32, "t")])
case("trace", torch.trace, [t((3,), F32)])
case("trace", torch.trace, [t((2, 2, 2), F32)])
case("trace", torch.trace, [t((0, 3), F32)])

# ---- positive, true_divide ----
for d in [F32, I64, B]:
    case("positive", torch.positive, [t((3, 4), d)])
for d in [F32, I64, B]:
    case("true_divide", torch.true_divide, [t((3, 4), d, "c", 1, 4), t((4,), I64, "c", 1, 4)])
case("true_divide_scalar", lambda x: torch.true_divide(x, 3), [t((3, 4), I64)], other=3)
case("true_divide_", lambda x, y: x.clone().true_divide_(y), [t((3, 4), F32), t((4,), F32, "c", 1, 4)])
case("true_divide_", lambda x, y: x.clone().true_divide_(y), [t((3,), I64), t((3,), I64, "c", 1, 4)])
case("true_divide_scalar_", lambda x: x.clone().true_divide_(2.5), [t((3, 4), F64)], other=2.5)
case("true_divide_out", lambda x, y, o: torch.true_divide(x, y, out=o), [t((2, 3), F64), t((3,), F64, "c", 1, 3),
                                                                          t((0,), F64)])

# ---- flips, ravel, *_as, swapaxes ----
for shape in [(3,), (3, 4), (2, 3, 4), ()]:
    case("fliplr", torch.fliplr, [t(shape, F32)])
    case("flipud", torch.flipud, [t(shape, I64)])
    case("ravel", torch.ravel, [t(shape, F32)])
case("fliplr", torch.fliplr, [t((4, 5), F32, "t")])
case("ravel", torch.ravel, [t((4, 5), F32, "t")])
case("ravel", torch.ravel, [t((2, 3, 2, 2), F32, "cl")])
case("view_as", lambda x, y: x.view_as(y), [t((3, 4), F32), t((2, 6), I64)])
case("view_as", lambda x, y: x.view_as(y), [t((4, 3), F32, "t"), t((12,), F32)])
case("expand_as", lambda x, y: x.expand_as(y), [t((3, 1), F32), t((2, 3, 4), F32)])
case("expand_as", lambda x, y: x.expand_as(y), [t((3, 2), F32), t((3, 4), F32)])
case("reshape_as", lambda x, y: x.reshape_as(y), [t((4, 3), F32, "t"), t((2, 6), F32)])
case("reshape_as", lambda x, y: x.reshape_as(y), [t((4, 3), F32), t((5,), F32)])
for a, b in [(0, 1), (-1, 0), (1, 1), (0, 3)]:
    case("swapaxes", lambda x, p=a, q=b: torch.swapaxes(x, p, q), [t((2, 3, 4), F32)], dim0=a, dim1=b)
    case("swapdims", lambda x, p=a, q=b: torch.swapdims(x, p, q), [t((2, 3, 4), I64)], dim0=a, dim1=b)

# ---- atleast_Nd and the stacking functions ----
for shape in [(), (3,), (2, 3), (2, 3, 4)]:
    for n in [1, 2, 3]:
        case(f"atleast_{n}d", getattr(torch, f"atleast_{n}d"), [t(shape, F32)])
for name in ["hstack", "vstack", "dstack", "column_stack"]:
    fn = getattr(torch, name)
    case(name, lambda a, b, f=fn: f([a, b]), [t((3,), F32), t((3,), F32)])
    case(name, lambda a, b, f=fn: f([a, b]), [t((2, 3), F32), t((2, 3), I64)])
    case(name, lambda a, b, f=fn: f([a, b]), [t((), F32), t((), F32)])
    case(name, lambda a, b, f=fn: f([a, b]), [t((2, 3, 2), F32), t((2, 3, 2), F32)])
    case(name, lambda a, b, f=fn: f([a, b]), [t((2, 3), F32), t((2, 4), F32)])
    case(name, lambda a, b, f=fn: f([a, b]), [t((4, 3), F32, "t"), t((4, 3), F32)])
    case(name, lambda a, b, f=fn: f([a, b]), [t((3,), F32), t((3, 2), F32)])

# An empty list is refused before the kernel by oxten's dispatcher (`expected a non-empty list of
# Tensors for argument 'tensors'`), so that case is a Rust test, not a golden one.

g.save()
