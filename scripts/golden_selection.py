"""Regenerates tests/golden/selection.txt: PyTorch's outputs for the data-dependent selections
and counts (nonzero, masked_select, repeat_interleave, one_hot, bincount, histc, searchsorted,
bucketize, unique), replayed by tests/tests/selection_ops.rs.

Format: scripts/golden_lib.py. Run: python3 scripts/golden_selection.py  (needs torch).
"""
import torch
import torch.nn.functional as F

from golden_lib import Golden

g = Golden("selection.txt", "scripts/golden_selection.py")
case = g.case

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, U8, B = torch.int64, torch.int32, torch.uint8, torch.bool
NAN, INF = float("nan"), float("inf")


def t(shape, dtype=F32, layout="c", lo=-3.0, hi=3.0):
    return ("t", shape, dtype, layout, lo, hi)


def v(x, dtype=F32):
    return ("v", torch.tensor(x, dtype=dtype))


# ---- nonzero, masked_select ----
for d in [F32, I64, B, BF16]:
    case("nonzero", torch.nonzero, [t((3, 4), d, "c", -1, 2)])
case("nonzero", torch.nonzero, [t((4, 3), F32, "t", -1, 2)])
case("nonzero", torch.nonzero, [v([0.0, NAN, -0.0, 2.0])])
case("nonzero", torch.nonzero, [v(3.0)])
case("nonzero", torch.nonzero, [v(0.0)])
case("nonzero", torch.nonzero, [t((2, 0, 3))])
for d in [F32, I64, F16]:
    case("masked_select", torch.masked_select, [t((3, 4), d), t((3, 4), B)])
case("masked_select", torch.masked_select, [t((3, 4)), t((4,), B)])
case("masked_select", torch.masked_select, [t((3, 1)), t((2, 1, 4), B)])
case("masked_select", torch.masked_select, [t((4, 3), F32, "t"), t((4, 3), B)])
case("masked_select", torch.masked_select, [t((3,)), v([1, 0, 1], I64)])

# ---- repeat_interleave ----
case("repeat_interleave", torch.repeat_interleave, [v([1, 0, 2, 3], I64)])
case("repeat_interleave", torch.repeat_interleave, [v([2, 1], I32)])
case("repeat_interleave", torch.repeat_interleave, [v([1, -1], I64)])
case("repeat_interleave", torch.repeat_interleave, [v([[1]], I64)])
case("repeat_interleave_int", lambda x: torch.repeat_interleave(x, 2), [t((2, 2))], repeats=2)
case("repeat_interleave_int", lambda x: torch.repeat_interleave(x, 3, dim=1), [t((2, 2), I64)], repeats=3, dim=1)
case("repeat_interleave_int", lambda x: torch.repeat_interleave(x, 0, dim=0), [t((2, 2))], repeats=0, dim=0)
case("repeat_interleave_self", lambda x, r: torch.repeat_interleave(x, r, dim=0), [t((3, 2)), v([1, 0, 2], I64)], dim=0)
case("repeat_interleave_self", lambda x, r: torch.repeat_interleave(x, r, dim=-1), [t((2, 3), F32, "t"), v([2], I64)], dim=-1)
case("repeat_interleave_self", lambda x, r: torch.repeat_interleave(x, r), [t((2, 2)), v(2, I64)])
case("repeat_interleave_self", lambda x, r: torch.repeat_interleave(x, r, dim=0), [t((2, 2)), v([1, 2, 3], I64)], dim=0)

# ---- one_hot ----
case("one_hot", F.one_hot, [v([0, 2, 1], I64)])
case("one_hot", lambda x: F.one_hot(x, 5), [v([[0, 2], [4, 1]], I64)], num_classes=5)
case("one_hot", F.one_hot, [v([0, -1], I64)])
case("one_hot", lambda x: F.one_hot(x, 3), [v([0, 5], I64)], num_classes=3)
case("one_hot", F.one_hot, [v([0.0, 1.0])])
case("one_hot", F.one_hot, [v([], I64)])
case("one_hot", lambda x: F.one_hot(x, 3), [v([], I64)], num_classes=3)

# ---- bincount, histc ----
case("bincount", torch.bincount, [v([0, 2, 2, 5], I64)])
case("bincount", lambda x: torch.bincount(x, minlength=8), [v([0, 2, 2, 5], I32)], minlength=8)
case("bincount", lambda x, w: torch.bincount(x, w), [v([0, 2, 2], I64), v([0.5, 1.0, 2.0], F64)], weights=1)
case("bincount", lambda x, w: torch.bincount(x, w), [v([0, 2, 2], U8), v([0.5, 1.0, 2.0])], weights=1)
case("bincount", lambda x, w: torch.bincount(x, w), [v([0, 2, 2], I64), v([1, 2, 3], I64)], weights=1)
case("bincount", torch.bincount, [v([0, -1], I64)])
case("bincount", torch.bincount, [v([[0]], I64)])
case("bincount", torch.bincount, [v([0.0])])
case("bincount", torch.bincount, [v([], I64)])
case("bincount", lambda x, w: torch.bincount(x, w), [v([0, 1], I64), v([1.0])], weights=1)
for d in [F32, F64, BF16]:
    case("histc", lambda x: torch.histc(x, bins=10, min=-2, max=2), [t((50,), d)], bins=10, min=-2, max=2)
case("histc", lambda x: torch.histc(x, bins=4), [v([1.0, 2.0, 1.0, 4.0, 5.0])], bins=4)
case("histc", lambda x: torch.histc(x, bins=4, min=0, max=4), [v([1.0, 2.0, 1.0, 4.0, 5.0, -1.0])], bins=4, min=0, max=4)
case("histc", lambda x: torch.histc(x, bins=4), [v([2.0, 2.0])], bins=4)
case("histc", lambda x: torch.histc(x, bins=3), [t((3, 4))], bins=3)
case("histc", lambda x: torch.histc(x, bins=4), [v([1, 2], I64)], bins=4)
case("histc", lambda x: torch.histc(x, bins=4, min=3, max=1), [v([1.0, 2.0])], bins=4, min=3, max=1)
case("histc", lambda x: torch.histc(x, bins=0), [v([1.0, 2.0])], bins=0)
case("histc", lambda x: torch.histc(x, bins=4, min=0, max=4), [v([1.0, NAN, 3.5])], bins=4, min=0, max=4)

# ---- searchsorted, bucketize ----
seq = v([1, 3, 5, 7], I64)
case("searchsorted", torch.searchsorted, [seq, v([[3, 6, 9], [0, 5, 7]], I64)])
case("searchsorted", lambda s, x: torch.searchsorted(s, x, right=True), [seq, v([3, 6, 7, 1], I64)], right=1)
case("searchsorted", lambda s, x: torch.searchsorted(s, x, side="right"), [seq, v([3, 6], I64)], side="right")
case("searchsorted", lambda s, x: torch.searchsorted(s, x, side="left", right=True), [seq, v([3], I64)], side="left", right=1)
case("searchsorted", lambda s, x: torch.searchsorted(s, x, side="middle"), [seq, v([3], I64)], side="middle")
case("searchsorted", torch.searchsorted, [v([[1, 3, 5], [2, 4, 6]], I64), v([[3, 4], [3, 7]], I64)])
case("searchsorted", torch.searchsorted, [v([[1, 3, 5], [2, 4, 6]], I64), v([3], I64)])
case("searchsorted", lambda s, x: torch.searchsorted(s, x, out_int32=True), [seq, v([4, 8], I64)], out_int32=1)
case("searchsorted", lambda s, x, o: torch.searchsorted(s, x, sorter=o), [v([5, 1, 3], I64), v([2, 4, 6], I64), v([1, 2, 0], I64)], sorter=1)
case("searchsorted", torch.searchsorted, [v([1.0, 3.0]), v([2, 0], I64)])
case("searchsorted", torch.searchsorted, [v([1.0, 3.0, NAN]), v([2.0, NAN, INF])])
case("searchsorted", lambda s, x: torch.searchsorted(s, x, right=True), [v([1.0, 3.0, NAN]), v([2.0, NAN, INF])], right=1)
case("searchsorted", torch.searchsorted, [v([0.5, 1.0, 1.0, 1.0, 2.5], F64), t((3, 2), F64)])
case("searchsorted_scalar", lambda s: torch.searchsorted(s, 4), [seq], value=4)
case("searchsorted_scalar", lambda s: torch.searchsorted(s, 4.5, right=True), [seq], value=4.5, right=1)
case("bucketize", torch.bucketize, [v([[3, 6, 9], [0, 5, 7]], I64), seq])
case("bucketize", lambda x, b: torch.bucketize(x, b, right=True), [v([3, 6], I64), seq], right=1)
case("bucketize", torch.bucketize, [t((2, 3)), v([-1.0, 0.0, 1.0])])
case("bucketize", torch.bucketize, [v([3], I64), v([[1, 3]], I64)])
case("bucketize_scalar", lambda b: torch.bucketize(3, b), [seq], value=3)

# ---- unique ----
for d in [I64, F32, BF16, U8]:
    case("unique", lambda x: torch._unique2(x, True, True, True), [t((3, 5), d, "c", 0, 4)], inverse=1, counts=1)
case("unique", lambda x: torch._unique2(x, True, False, False), [v([2, 1, 2, 3, 1], I64)])
case("unique", lambda x: torch._unique2(x, True, True, False), [v([[2, 1], [2, 3]], I64)], inverse=1)
case("unique", lambda x: torch._unique2(x, True, False, True), [v([2.0, 1.0, NAN, 2.0, NAN, -0.0, 0.0])], counts=1)
case("unique", lambda x: torch._unique2(x, True, True, True), [v([True, False, True], B)], inverse=1, counts=1)
case("unique", lambda x: torch._unique2(x, True, True, True), [v([])], inverse=1, counts=1)
case("unique", lambda x: torch._unique2(x, True, True, True), [v(5.0)], inverse=1, counts=1)

g.save()
