"""Regenerates tests/golden/sort.txt: PyTorch's outputs for sorting and selection (sort, argsort,
topk, kthvalue, median, mode), replayed by tests/tests/sort_ops.rs.

Where PyTorch leaves the choice among equal elements unspecified (topk, kthvalue, median), the
inputs have distinct values; sort is stable and mode's choice is fixed, so their cases include
ties (NaN is left out of mode's: PyTorch's choice there depends on its sort's order). Format: scripts/golden_lib.py. Run: python3 scripts/golden_sort.py  (needs torch).
"""
import torch

from golden_lib import Golden

g = Golden("sort.txt", "scripts/golden_sort.py")
case = g.case

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, U8, I8, B = torch.int64, torch.int32, torch.uint8, torch.int8, torch.bool
NAN, INF = float("nan"), float("inf")


def t(shape, dtype=F32, layout="c", lo=-3.0, hi=3.0):
    return ("t", shape, dtype, layout, lo, hi)


def v(x, dtype=F32):
    return ("v", torch.tensor(x, dtype=dtype))


def perm(n, dtype=I64, shape=None):
    """Distinct integers 0..n in a fixed shuffled order."""
    gen = torch.Generator().manual_seed(n)
    x = torch.randperm(n, generator=gen).to(dtype)
    return ("v", x.reshape(shape) if shape else x)


# ---- sort / argsort ----
for d in [F32, F64, F16, BF16, I64, I32, U8, I8, B]:
    for desc in [False, True]:
        case("sort", lambda x, de=desc: torch.sort(x, descending=de), [t((3, 5), d, "c", -3, 3)], descending=desc)
for dim in [0, 1, -1]:
    case("sort", lambda x, d=dim: torch.sort(x, dim=d), [t((4, 3, 5))], dim=dim)
case("sort", lambda x: torch.sort(x, dim=1), [t((4, 5), F32, "t")], dim=1)
case("sort", lambda x: torch.sort(x, dim=0), [t((4, 5), F32, "t")], dim=0)
case("sort", lambda x: torch.sort(x, dim=1), [t((2, 3, 2, 2), F32, "cl")], dim=1)
case("sort", torch.sort, [v([1.0, NAN, -INF, 3.0, INF, -0.0, 0.0, NAN])])
case("sort", lambda x: torch.sort(x, descending=True), [v([1.0, NAN, -INF, 3.0, INF, -0.0, 0.0, NAN])], descending=1)
case("sort", torch.sort, [v([2, 1, 2, 0, 1, 2], I64)])
case("sort", lambda x: torch.sort(x, descending=True), [v([2, 1, 2, 0, 1, 2], I64)], descending=1)
case("sort", torch.sort, [v(3.0)])
case("sort", torch.sort, [t((0, 3))])
case("sort", lambda x: torch.sort(x, dim=2), [t((2, 3))], dim=2)
case("sort_stable", lambda x: torch.sort(x, stable=True, descending=True), [v([1, 3, 3, 2, 3], I64)], descending=1)
case("argsort", torch.argsort, [t((3, 4))])
case("argsort", lambda x: torch.argsort(x, dim=0, descending=True), [t((3, 4))], dim=0, descending=1)
case("argsort", torch.argsort, [v([1.0, 0.0, 1.0, 0.0])])

# ---- topk ----
for d in [F32, F64, F16, BF16]:
    for largest in [True, False]:
        case("topk", lambda x, l=largest: torch.topk(x, 3, largest=l), [t((4, 6), d)], k=3, largest=largest)
for d in [I64, I32, U8]:
    case("topk", lambda x: torch.topk(x, 4), [perm(20, d, (2, 10))], k=4)
case("topk", lambda x: torch.topk(x, 2, dim=0), [t((4, 3))], k=2, dim=0)
case("topk", lambda x: torch.topk(x, 2, dim=1), [t((4, 5), F32, "t")], k=2, dim=1)
case("topk", lambda x: torch.topk(x, 5), [t((3, 5))], k=5)
case("topk", lambda x: torch.topk(x, 0), [t((3, 5))], k=0)
case("topk", lambda x: torch.topk(x, 6), [t((3, 5))], k=6)
case("topk", lambda x: torch.topk(x, -1), [t((3, 5))], k=-1)
case("topk", lambda x: torch.topk(x, 2), [v([1.0, NAN, 3.0, -INF])], k=2)
case("topk", lambda x: torch.topk(x, 2, largest=False), [v([1.0, NAN, 3.0, -INF])], k=2, largest=False)
case("topk", lambda x: torch.topk(x, 1), [v([True, False], B)], k=1)
case("topk", lambda x: torch.topk(x, 1), [v(2.5)], k=1)
case("topk", lambda x: torch.topk(x, 100), [t((300,))], k=100)

# ---- kthvalue / median / mode ----
for d in [F32, F64, F16, BF16]:
    case("kthvalue", lambda x: torch.kthvalue(x, 2), [t((3, 5), d)], k=2)
    case("median_dim", lambda x: torch.median(x, 1), [t((3, 5), d)], dim=1)
    case("median", torch.median, [t((3, 5), d)])
case("kthvalue", lambda x: torch.kthvalue(x, 4, dim=0, keepdim=True), [t((5, 3))], k=4, dim=0, keepdim=True)
case("kthvalue", lambda x: torch.kthvalue(x, 3), [perm(12, I64, (2, 6))], k=3)
case("kthvalue", lambda x: torch.kthvalue(x, 0), [t((3, 5))], k=0)
case("kthvalue", lambda x: torch.kthvalue(x, 6), [t((3, 5))], k=6)
case("kthvalue", lambda x: torch.kthvalue(x, 1), [t((3, 0))], k=1)
case("kthvalue", lambda x: torch.kthvalue(x, 1), [v([True, False], B)], k=1)
case("kthvalue", lambda x: torch.kthvalue(x, 2), [v([1.0, NAN, 3.0])], k=2)
case("kthvalue", lambda x: torch.kthvalue(x, 3), [v([1.0, NAN, 3.0])], k=3)
case("median_dim", lambda x: torch.median(x, 0, keepdim=True), [t((4, 3))], dim=0, keepdim=True)
case("median_dim", lambda x: torch.median(x, 1), [perm(12, I32, (3, 4))], dim=1)
case("median_dim", lambda x: torch.median(x, 1), [v([[2.0, NAN, 1.0], [3.0, 1.0, 2.0]])], dim=1)
case("median_dim", lambda x: torch.median(x, 1), [t((2, 0))], dim=1)
case("median_dim", lambda x: torch.median(x, 0), [v(4.0)], dim=0)
case("median", torch.median, [v([4.0, 1.0, 3.0, 2.0])])
case("median", torch.median, [v([2.0, NAN, 1.0])])
case("median", torch.median, [t((0,))])
case("median", torch.median, [perm(9, I64, (3, 3))])
case("median", torch.median, [v([True, False], B)])
for d in [F32, I64, I32, U8, B]:
    case("mode", torch.mode, [t((3, 8), d, "c", 0, 3)])
case("mode", torch.mode, [v([1, 1, 2, 2], I64)])
case("mode", torch.mode, [v([2, 2, 1, 1, 3], I64)])
case("mode", torch.mode, [v([3, 1, 3, 2, 3, 1], I64)])
case("mode", lambda x: torch.mode(x, 0, keepdim=True), [t((6, 3), I64, "c", 0, 2)], dim=0, keepdim=True)
case("mode", lambda x: torch.mode(x, 1), [t((2, 0))], dim=1)

g.save()
