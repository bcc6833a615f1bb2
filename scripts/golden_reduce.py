"""Regenerates tests/golden/reduce.txt: PyTorch's outputs for the reductions beyond sum and mean.

var/std (and var_mean/std_mean) with correction, prod, min.dim/argmin/min/max, cumsum,
linalg_vector_norm and norm, all/any: dtypes, dims (negative, empty list, none), keepdim,
non-contiguous and channels_last inputs, empty tensors, out= dtypes and error cases (format:
scripts/golden_lib.py). tests/tests/reduce_ops.rs replays every case through oxten.
Run: python3 scripts/golden_reduce.py  (needs torch). Calls go through torch.ops.aten so that
each case exercises exactly the overload it names.
"""
import warnings

import torch

from golden_lib import Golden

warnings.filterwarnings("ignore")  # degrees-of-freedom and out= resize warnings

A = torch.ops.aten
g = Golden("reduce.txt", "scripts/golden_reduce.py")

F = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
I = [torch.int64, torch.int32, torch.uint8, torch.int8]
DT = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16", torch.bfloat16: "bfloat16",
      torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.uint8: "uint8", torch.int8: "int8",
      torch.bool: "bool"}
inf = float("inf")
nan = float("nan")


def case(op, fn, args, **kw):
    """g.case, with dtype-valued attributes written by name."""
    return g.case(op, fn, args, **{k: DT[v] if isinstance(v, torch.dtype) else v for k, v in kw.items()})


def attrs(dim=None, keepdim=False, **kw):
    """Attributes: `dim` (a list; absent means None), keepdim, others as given."""
    out = {}
    if dim is not None:
        out["dim"] = list(dim)
    if keepdim:
        out["keepdim"] = 1
    for k, v in kw.items():
        if v is None:
            continue
        out[k] = DT[v] if isinstance(v, torch.dtype) else v
    return out


# ---- var / std / var_mean / std_mean ----
def stat(name, op):
    def run(shape, dtype, layout="c", dim=None, correction=None, keepdim=False, lo=-3.0, hi=3.0):
        case(name, lambda x: op(x, dim, correction=correction, keepdim=keepdim),
             [("t", shape, dtype, layout, lo, hi)], **attrs(dim, keepdim, correction=correction))
    return run


for name, op in [("var", A.var.correction), ("std", A.std.correction),
                 ("var_mean", A.var_mean.correction), ("std_mean", A.std_mean.correction)]:
    run = stat(name, op)
    for d in F:
        run((3, 4, 5), d)
        run((3, 4, 5), d, dim=[1])
        run((3, 4, 5), d, dim=[0, -1], keepdim=True)
    run((3, 4), torch.float32, dim=[-1], correction=0)
    run((3, 4), torch.float64, dim=[0], correction=2.5)
    run((3, 4), torch.float32, dim=[1], correction=-1)
    run((3, 4), torch.float32, dim=[1], correction=4)        # correction = N: inf
    run((3, 4), torch.float32, dim=[1], correction=7)        # correction > N: inf
    run((2, 3), torch.float32, dim=[])                       # empty list: every dim
    run((6, 5), torch.float32, "t", dim=[0])
    run((6, 5), torch.float64, "t", dim=[1], keepdim=True)
    run((2, 3, 4, 5), torch.float32, "cl", dim=[1])
    run((2, 3, 4, 5), torch.float32, "cl", dim=[1, 2, 3], keepdim=True)
    run((0, 3), torch.float32, dim=[0])                      # empty reduction: NaN
    run((0, 3), torch.float32, dim=[1])
    run((0, 3), torch.float32)
    run((), torch.float32)
    run((), torch.float64, dim=[0], correction=0)
    run((5,), torch.float32, correction=5)                   # N - correction = 0: inf
    run((1000,), torch.float32, lo=100.0, hi=101.0)          # large mean: Welford stays accurate
    run((3, 4), torch.int64)
    run((3, 4), torch.bool)
    run((3, 4), torch.float32, dim=[1, 1])
    run((3, 4), torch.float32, dim=[2])
case("var", lambda x: A.var.correction(x, [1], correction=5), [("v", torch.ones(2, 3))], dim=[1], correction=5)
case("std", lambda x: A.std.correction(x, [1], correction=3), [("v", torch.full((2, 3), 2.0))], dim=[1], correction=3)
case("var", lambda x: A.var.correction(x, [0]), [("v", torch.tensor([[1.0, nan], [2.0, 3.0]]))], dim=[0])
case("var", lambda x: A.var.correction(x, [0]), [("v", torch.tensor([[1.0, inf], [inf, 3.0], [2.0, 1.0]]))], dim=[0])
case("std_mean", lambda x: A.std_mean.correction(x), [("v", torch.tensor([1.0, 2.0, -inf]))])
for name, op in [("var_out", A.var.correction_out), ("std_out", A.std.correction_out)]:
    for od in [torch.float32, torch.float64, torch.float16, torch.int64]:
        case(name, lambda x, od=od, op=op: op(x, [1], out=torch.empty(0, dtype=od)),
             [("t", (3, 4), torch.float32, "c")], dim=[1], out_dtype=DT[od])
    case(name, lambda x, op=op: op(x, None, correction=0, keepdim=True, out=torch.empty(0, dtype=torch.float32)),
         [("t", (3, 4), torch.float64, "c")], correction=0, keepdim=1, out_dtype="float32")
    case(name, lambda x, op=op: op(x, [0], out=torch.empty(0, dtype=torch.float32)),
         [("t", (3, 4), torch.int32, "c")], dim=[0], out_dtype="float32")

# ---- prod ----
for d in F + I + [torch.bool]:
    lo, hi = (0.5, 1.5) if d.is_floating_point else (-3.0, 3.0)
    case("prod", lambda x: A.prod(x), [("t", (3,), d, "c", lo, hi)])
    case("prod_dim", lambda x: A.prod.dim_int(x, 1), [("t", (4, 3), d, "c", lo, hi)], dim=[1])
    case("prod_dim", lambda x: A.prod.dim_int(x, -2, True), [("t", (3, 2, 4), d, "c", lo, hi)], dim=[-2],
         keepdim=1)
case("prod", lambda x: A.prod(x), [("t", (4, 5), torch.float64, "c", 0.5, 1.5)])
case("prod", lambda x: A.prod(x), [("t", (4, 5), torch.float32, "t", 0.5, 1.5)])
case("prod", lambda x: A.prod(x, dtype=torch.float64), [("t", (4, 3), torch.int32, "c")], dtype=torch.float64)
case("prod", lambda x: A.prod(x, dtype=torch.int32), [("t", (4, 3), torch.float32, "c")], dtype=torch.int32)
case("prod", lambda x: A.prod(x, dtype=torch.bool), [("t", (4, 3), torch.int64, "c")], dtype=torch.bool)
case("prod", lambda x: A.prod(x), [("t", (2, 30), torch.int64, "c", 1.0, 6.0)])  # wraps around
case("prod", lambda x: A.prod(x), [("t", (0, 3), torch.float32, "c")])
case("prod", lambda x: A.prod(x), [("t", (0,), torch.int32, "c")])
case("prod", lambda x: A.prod(x), [("v", torch.tensor([2.0, 0.0, nan, 3.0]))])
case("prod", lambda x: A.prod(x), [("t", (), torch.float32, "c")])
case("prod_dim", lambda x: A.prod.dim_int(x, 0), [("t", (0, 3), torch.float32, "c")], dim=[0])
case("prod_dim", lambda x: A.prod.dim_int(x, 1), [("t", (0, 3), torch.float32, "c")], dim=[1])
case("prod_dim", lambda x: A.prod.dim_int(x, 0), [("t", (), torch.float64, "c")], dim=[0])
case("prod_dim", lambda x: A.prod.dim_int(x, -1, True), [("t", (), torch.float64, "c")], dim=[-1], keepdim=1)
case("prod_dim", lambda x: A.prod.dim_int(x, 0), [("t", (6, 5), torch.float32, "t", 0.5, 1.5)], dim=[0])
case("prod_dim", lambda x: A.prod.dim_int(x, 1), [("t", (2, 3, 4, 5), torch.float32, "cl", 0.5, 1.5)], dim=[1])
case("prod_dim", lambda x: A.prod.dim_int(x, 1, dtype=torch.float64), [("t", (3, 4), torch.int64, "c")], dim=[1],
     dtype=torch.float64)
case("prod_dim", lambda x: A.prod.dim_int(x, 1, dtype=torch.int16), [("t", (3, 4), torch.uint8, "c")], dim=[1],
     dtype=torch.int16)
case("prod_dim", lambda x: A.prod.dim_int(x, 2), [("t", (3, 4), torch.float32, "c")], dim=[2])
case("prod_dim_out", lambda x: A.prod.int_out(x, 1, out=torch.empty(0)), [("t", (3, 4), torch.int64, "c")], dim=[1],
     out_dtype="float32")
case("prod_dim_out", lambda x: A.prod.int_out(x, 0, out=torch.empty(0, dtype=torch.int64)),
     [("t", (3, 4), torch.float32, "c")], dim=[0], out_dtype="int64")

# ---- min.dim / argmin / min / max ----
for d in F + I + [torch.bool]:
    case("min_dim", lambda x: A.min.dim(x, 1), [("t", (3, 4), d, "c")], dim=[1])
    case("min_dim", lambda x: A.min.dim(x, -2, True), [("t", (3, 4), d, "c")], dim=[-2], keepdim=1)
    case("min", lambda x: A.min(x), [("t", (3, 4), d, "c")])
    case("max", lambda x: A.max(x), [("t", (3, 4), d, "c")])
    if d != torch.bool:
        case("argmin", lambda x: A.argmin(x), [("t", (3, 4), d, "c")])
        case("argmin", lambda x: A.argmin(x, 0), [("t", (3, 4), d, "c")], dim=[0])
case("min_dim", lambda x: A.min.dim(x, 0), [("t", (5, 6), torch.float32, "t")], dim=[0])
case("min_dim", lambda x: A.min.dim(x, 1), [("t", (2, 3, 4, 5), torch.float32, "cl")], dim=[1])
case("min_dim", lambda x: A.min.dim(x, 1), [("v", torch.tensor([[1.0, nan, nan, 0.0], [2.0, 1.0, 1.0, 3.0]]))],
     dim=[1])
case("min_dim", lambda x: A.min.dim(x, 0), [("t", (), torch.float32, "c")], dim=[0])
case("min_dim", lambda x: A.min.dim(x, 1), [("t", (3, 0), torch.float32, "c")], dim=[1])
case("min_dim", lambda x: A.min.dim(x, 0), [("t", (3, 0), torch.float32, "c")], dim=[0])
case("min_dim", lambda x: A.min.dim(x, 2), [("t", (3, 4), torch.float32, "c")], dim=[2])
case("argmin", lambda x: A.argmin(x, 1), [("t", (5, 6), torch.float64, "t")], dim=[1])
case("argmin", lambda x: A.argmin(x, None, True), [("t", (3, 4), torch.float32, "c")], keepdim=1)
case("argmin", lambda x: A.argmin(x, 1, True), [("t", (2, 3, 4, 5), torch.float32, "cl")], dim=[1], keepdim=1)
case("argmin", lambda x: A.argmin(x), [("v", torch.tensor([3.0, 1.0, nan, 0.0, nan]))])
case("argmin", lambda x: A.argmin(x), [("t", (3, 4), torch.bool, "c")])
case("argmin", lambda x: A.argmin(x), [("t", (0,), torch.float32, "c")])
case("argmin", lambda x: A.argmin(x, 1), [("t", (2, 0), torch.float32, "c")], dim=[1])
case("argmin", lambda x: A.argmin(x, 0), [("t", (2, 0), torch.float32, "c")], dim=[0])
for name, op in [("min", A.min), ("max", A.max)]:
    case(name, lambda x, op=op: op(x), [("t", (6, 5), torch.float32, "t")])
    case(name, lambda x, op=op: op(x), [("v", torch.tensor([1.0, nan, -2.0]))])
    case(name, lambda x, op=op: op(x), [("t", (), torch.int32, "c")])
    case(name, lambda x, op=op: op(x), [("t", (0, 3), torch.float32, "c")])
    case(name, lambda x, op=op: op(x), [("t", (200, 300), torch.float32, "c")])
for name, op in [("min_out", A.min.unary_out), ("max_out", A.max.unary_out)]:
    for od in [torch.float32, torch.float64]:
        case(name, lambda x, od=od, op=op: op(x, out=torch.empty(3, dtype=od)), [("t", (3, 4), torch.float32, "c")],
             out_dtype=DT[od])
    case(name, lambda x, op=op: op(x, out=torch.empty(0, dtype=torch.int64)), [("t", (3, 4), torch.int32, "c")],
         out_dtype="int64")

# ---- cumsum ----
for d in F + I + [torch.bool]:
    case("cumsum", lambda x: A.cumsum(x, 1), [("t", (3, 4), d, "c")], dim=[1])
    case("cumsum", lambda x: A.cumsum(x, 0), [("t", (3, 4), d, "c")], dim=[0])
case("cumsum", lambda x: A.cumsum(x, -1), [("t", (2, 3, 4), torch.float32, "c")], dim=[-1])
case("cumsum", lambda x: A.cumsum(x, 1), [("t", (2, 3, 4), torch.float64, "c")], dim=[1])
case("cumsum", lambda x: A.cumsum(x, 1), [("t", (5, 6), torch.float32, "t")], dim=[1])
case("cumsum", lambda x: A.cumsum(x, 0), [("t", (5, 6), torch.int32, "t")], dim=[0])
case("cumsum", lambda x: A.cumsum(x, 1), [("t", (2, 3, 4, 5), torch.float32, "cl")], dim=[1])
case("cumsum", lambda x: A.cumsum(x, 3), [("t", (2, 3, 4, 5), torch.bfloat16, "cl")], dim=[3])
case("cumsum", lambda x: A.cumsum(x, 0), [("t", (40000,), torch.float32, "c")], dim=[0])
case("cumsum", lambda x: A.cumsum(x, 0), [("t", (300, 200), torch.float32, "c")], dim=[0])
case("cumsum", lambda x: A.cumsum(x, 1), [("t", (300, 200), torch.float64, "c")], dim=[1])
case("cumsum", lambda x: A.cumsum(x, 0), [("v", torch.tensor([200, 100, 50], dtype=torch.uint8))], dim=[0])
case("cumsum", lambda x: A.cumsum(x, 0), [("v", torch.tensor([1.0, nan, 2.0, inf]))], dim=[0])
case("cumsum", lambda x: A.cumsum(x, 1, dtype=torch.float32), [("t", (3, 4), torch.int64, "c")], dim=[1],
     dtype=torch.float32)
case("cumsum", lambda x: A.cumsum(x, 1, dtype=torch.int32), [("t", (3, 4), torch.float32, "c")], dim=[1],
     dtype=torch.int32)
case("cumsum", lambda x: A.cumsum(x, 0, dtype=torch.float64), [("t", (3, 4), torch.float16, "c")], dim=[0],
     dtype=torch.float64)
case("cumsum", lambda x: A.cumsum(x, 0), [("t", (), torch.float32, "c")], dim=[0])
case("cumsum", lambda x: A.cumsum(x, -1), [("t", (), torch.int32, "c")], dim=[-1])
case("cumsum", lambda x: A.cumsum(x, 1), [("t", (0, 3), torch.float32, "c")], dim=[1])
case("cumsum", lambda x: A.cumsum(x, 1), [("t", (3, 0), torch.int32, "c")], dim=[1])
case("cumsum", lambda x: A.cumsum(x, 2), [("t", (3, 4), torch.float32, "c")], dim=[2])
case("cumsum", lambda x: A.cumsum(x, 1), [("t", (), torch.float32, "c")], dim=[1])
for d in [torch.float32, torch.int32, torch.float16]:
    case("cumsum_", lambda x: x.clone().cumsum_(1), [("t", (3, 4), d, "c")], dim=[1])
case("cumsum_", lambda x: x.clone().cumsum_(0), [("t", (4, 5), torch.float64, "t")], dim=[0])
case("cumsum_", lambda x: x.clone().cumsum_(0), [("t", (4, 5), torch.bool, "c")], dim=[0])
case("cumsum_", lambda x: x.clone().cumsum_(1, dtype=torch.float32), [("t", (3, 4), torch.float32, "c")], dim=[1],
     dtype=torch.float32)
case("cumsum_out", lambda x: A.cumsum.out(x, 1, out=torch.empty(0)), [("t", (3, 4), torch.int64, "c")], dim=[1],
     out_dtype="float32")
case("cumsum_out", lambda x: A.cumsum.out(x, 0, out=torch.empty(0, dtype=torch.int64)),
     [("t", (3, 4), torch.float32, "c")], dim=[0], out_dtype="int64")
case("cumsum_out", lambda x: A.cumsum.out(x, 1, out=torch.empty(4, 3).t()), [("t", (3, 4), torch.float32, "c")],
     dim=[1], out_dtype="float32", out_layout="t")

# ---- linalg_vector_norm / norm ----
def vnorm(shape, dtype, layout="c", ord=2, dim=None, keepdim=False, out_dtype=None):
    case("vector_norm", lambda x: A.linalg_vector_norm(x, ord, dim, keepdim, dtype=out_dtype),
         [("t", shape, dtype, layout)], **attrs(dim, keepdim, ord=ord, dtype=out_dtype))


for d in F:
    for o in [2, 1, 0, inf, -inf, 3, 0.5, -1, 1.5]:
        vnorm((3, 4), d, ord=o, dim=[1])
    vnorm((3, 4, 5), d)
    vnorm((3, 4, 5), d, dim=[0, -1], keepdim=True)
vnorm((3, 4), torch.float32, ord=2.0, dim=[])
vnorm((6, 5), torch.float32, "t", dim=[0])
vnorm((6, 5), torch.float64, "t", ord=inf, dim=[1], keepdim=True)
vnorm((2, 3, 4, 5), torch.float32, "cl", dim=[1])
vnorm((2, 3, 4, 5), torch.float32, "cl", ord=1, dim=[2, 3], keepdim=True)
vnorm((3, 4), torch.float32, out_dtype=torch.float64)
vnorm((3, 4), torch.float16, ord=inf, dim=[0], out_dtype=torch.float32)
vnorm((3, 4), torch.bfloat16, ord=3, dim=[1], out_dtype=torch.float64)
vnorm((1000,), torch.float32)
vnorm((0, 3), torch.float32)
vnorm((0, 3), torch.float32, ord=0)
vnorm((0, 3), torch.float32, ord=3.5)
vnorm((0, 3), torch.float32, ord=2, dim=[0])
vnorm((0, 3), torch.float32, ord=inf, dim=[1])
vnorm((0, 3), torch.float32, ord=-1, dim=[1])
vnorm((0, 3), torch.float32, ord=inf)
vnorm((0, 3), torch.float32, ord=-1)
vnorm((0, 3), torch.float32, ord=-inf, dim=[0])
vnorm((0, 3), torch.float32, ord=-1.5, dim=[0])
vnorm((), torch.float32, dim=[0])
vnorm((), torch.float64, ord=0)
vnorm((3, 4), torch.int64)
vnorm((3, 4), torch.float64, out_dtype=torch.float32)
vnorm((3, 4), torch.float32, out_dtype=torch.int64)
vnorm((3, 4), torch.float16, out_dtype=torch.bfloat16)
vnorm((3, 4), torch.float32, dim=[1, -1])
vnorm((3, 4), torch.float32, dim=[2])
for o in [inf, -inf, 0, 2, -2.5]:
    case("vector_norm", lambda x, o=o: A.linalg_vector_norm(x, o), [("v", torch.tensor([1.0, nan, 0.0, -3.0]))], ord=o)
case("vector_norm", lambda x: A.linalg_vector_norm(x, -1.0), [("v", torch.tensor([1.0, 0.0, -3.0]))], ord=-1.0)
case("vector_norm_out", lambda x: A.linalg_vector_norm.out(x, 2, [1], out=torch.empty(0)),
     [("t", (3, 4), torch.float32, "c")], dim=[1], out_dtype="float32")
for d in [torch.float32, torch.float64, torch.float16, torch.bfloat16]:
    case("norm", lambda x: A.norm.Scalar(x), [("t", (3, 4), d, "c")])
    case("norm", lambda x: A.norm.Scalar(x, 3), [("t", (3, 4), d, "c")], p=3)
    case("norm_dim", lambda x: A.norm.ScalarOpt_dim(x, None, [1]), [("t", (3, 4), d, "c")], dim=[1])
case("norm", lambda x: A.norm.Scalar(x, inf), [("t", (6, 5), torch.float32, "t")], p=inf)
case("norm", lambda x: A.norm.Scalar(x, 0), [("t", (3, 4), torch.float32, "c")], p=0)
case("norm_dim", lambda x: A.norm.ScalarOpt_dim(x, 1, [0, -1], True), [("t", (3, 4, 5), torch.float32, "c")],
     p=1, dim=[0, -1], keepdim=1)
case("norm_dim", lambda x: A.norm.ScalarOpt_dim(x, 2, []), [("t", (3, 4), torch.float64, "c")], p=2, dim=[])
case("norm_dim", lambda x: A.norm.ScalarOpt_dim(x, -inf, [0]), [("t", (3, 4), torch.float32, "c")], p=-inf, dim=[0])
case("norm", lambda x: A.norm.Scalar(x), [("t", (3, 4), torch.int64, "c")])
case("norm_dim", lambda x: A.norm.ScalarOpt_dim(x, 2, [1]), [("t", (3, 4), torch.int32, "c")], p=2, dim=[1])
case("norm", lambda x: A.norm.Scalar(x, inf), [("t", (0, 2), torch.float32, "c")], p=inf)

# ---- all / any ----
for name, full, one, many in [("all", A.all, A.all.dim, A.all.dims), ("any", A.any, A.any.dim, A.any.dims)]:
    for d in F + I + [torch.bool]:
        lo, hi = (-1.0, 2.0) if d.is_floating_point else (0.0, 2.0)
        case(name, lambda x, f=full: f(x), [("t", (3, 4), d, "c", lo, hi)])
        case(name + "_dim", lambda x, f=one: f(x, 1), [("t", (3, 4), d, "c", lo, hi)], dim=[1])
        case(name + "_dims", lambda x, f=many: f(x, [0, -1], True), [("t", (3, 4, 2), d, "c", lo, hi)],
             dim=[0, -1], keepdim=1)
    case(name, lambda x, f=full: f(x), [("t", (3, 4), torch.float32, "c", 0.5, 2.0)])
    case(name, lambda x, f=full: f(x), [("t", (200, 300), torch.bool, "c", -0.001, 100.0)])
    case(name + "_dims", lambda x, f=many: f(x), [("t", (3, 4), torch.float32, "c")])
    case(name + "_dims", lambda x, f=many: f(x, []), [("t", (3, 4), torch.float32, "c", -1.0, 2.0)], dim=[])
    case(name + "_dims", lambda x, f=many: f(x, []), [("v", torch.tensor([[0, 7], [3, 0]], dtype=torch.uint8))],
         dim=[])
    case(name + "_dim", lambda x, f=one: f(x, 0), [("t", (5, 6), torch.float32, "t", -1.0, 2.0)], dim=[0])
    case(name + "_dims", lambda x, f=many: f(x, [1], True), [("t", (2, 3, 4, 5), torch.float32, "cl", -1.0, 2.0)],
         dim=[1], keepdim=1)
    case(name + "_dim", lambda x, f=one: f(x, 1), [("v", torch.tensor([[0, 7], [0, 0], [3, 9]], dtype=torch.uint8))],
         dim=[1])
    case(name, lambda x, f=full: f(x), [("v", torch.tensor([7], dtype=torch.uint8))])
    case(name, lambda x, f=full: f(x), [("v", torch.tensor([nan, 1.0]))])
    case(name, lambda x, f=full: f(x), [("t", (0, 3), torch.float32, "c")])
    case(name + "_dim", lambda x, f=one: f(x, 0), [("t", (0, 3), torch.float32, "c")], dim=[0])
    case(name + "_dim", lambda x, f=one: f(x, 0), [("t", (0, 3), torch.uint8, "c")], dim=[0])
    case(name + "_dim", lambda x, f=one: f(x, 1), [("t", (0, 3), torch.float32, "c")], dim=[1])
    case(name + "_dim", lambda x, f=one: f(x, 0), [("t", (), torch.float32, "c")], dim=[0])
    case(name + "_dims", lambda x, f=many: f(x, [0], True), [("t", (), torch.int32, "c")], dim=[0], keepdim=1)
    case(name + "_dim", lambda x, f=one: f(x, 2), [("t", (3, 4), torch.float32, "c")], dim=[2])
    case(name + "_dims", lambda x, f=many: f(x, [1, 1]), [("t", (3, 4), torch.float32, "c")], dim=[1, 1])
    out_all, out_dim = getattr(A, name).all_out, getattr(A, name).out
    for od in [torch.uint8, torch.bool, torch.float32]:
        case(name + "_out", lambda x, od=od, f=out_all: f(x, out=torch.empty(0, dtype=od)),
             [("t", (3, 4), torch.float32, "c", -1.0, 2.0)], out_dtype=DT[od])
    case(name + "_dim_out", lambda x, f=out_dim: f(x, 0, out=torch.empty(0, dtype=torch.uint8)),
         [("v", torch.tensor([[0.5, 0.0, 2.0], [0.7, 3.0, 0.0]]))], dim=[0], out_dtype="uint8")
    case(name + "_dim_out", lambda x, f=out_dim: f(x, 0, out=torch.empty(0, dtype=torch.bool)),
         [("v", torch.tensor([[3, 0], [5, 0]], dtype=torch.uint8))], dim=[0], out_dtype="bool")

g.save()
