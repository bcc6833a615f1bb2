"""Regenerates tests/golden/index.txt: PyTorch's outputs for the shape and indexing operators
(cat, stack, split, chunk, flatten, unflatten, index_select, gather, scatter, masked_fill,
embedding, repeat, roll, flip, tril/triu, index, index_put).

Format: scripts/golden_lib.py. tests/tests/index_ops.rs replays every case through oxten.
Conventions of this file's cases (read by the runner):
  - tensor-list ops (cat, stack) take every tensor input as the list; `cat_out` takes the last
    tensor as the out= tensor;
  - `index` / `index_put` take a `pattern` attribute: one letter per index, `i` for the next
    tensor input and `n` for None (`index_put`'s values are the last tensor input);
  - in-place variants (`..._`) return the written tensor.
Run: python3 scripts/golden_index.py  (needs torch).
"""
import torch

from golden_lib import Golden

g = Golden("index.txt", "scripts/golden_index.py")
case = g.case

F = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
ALL = F + [torch.int64, torch.int32, torch.uint8, torch.int8, torch.bool]
L = torch.long


def v(x, dtype=None):
    return ("v", torch.tensor(x, dtype=dtype))


def idx(x):
    return v(x, torch.long)


# ---- cat ----
for d in ALL:
    case("cat", lambda a, b: torch.cat([a, b], 1), [("t", (2, 3), d, "c"), ("t", (2, 2), d, "c")], dim=1)
case("cat", lambda a, b, c: torch.cat([a, b, c], 0),
     [("t", (2, 3), torch.float32, "c"), ("t", (1, 3), torch.float32, "c"), ("t", (4, 3), torch.float32, "c")], dim=0)
case("cat", lambda a, b: torch.cat([a, b], -1), [("t", (2, 3, 4), torch.float32, "c"), ("t", (2, 3, 1), torch.float32, "c")], dim=-1)
case("cat", lambda a, b: torch.cat([a, b], 0), [("t", (3, 2), torch.float32, "t"), ("t", (1, 2), torch.float32, "c")], dim=0)
case("cat", lambda a, b: torch.cat([a, b], 1), [("t", (3, 2), torch.float64, "t"), ("t", (3, 4), torch.float64, "t")], dim=1)
# Type promotion across inputs.
for da, db in [(torch.int32, torch.float16), (torch.bool, torch.int64), (torch.uint8, torch.int8),
               (torch.float16, torch.bfloat16), (torch.int64, torch.float32), (torch.bool, torch.bool)]:
    case("cat", lambda a, b: torch.cat([a, b], 0), [("t", (2, 3), da, "c"), ("t", (1, 3), db, "c")], dim=0)
# Legacy skipping of 1-d empty tensors.
case("cat", lambda a, b: torch.cat([a, b], 1), [("t", (2, 3), torch.float32, "c"), ("t", (0,), torch.float32, "c")], dim=1)
case("cat", lambda a, b, c: torch.cat([a, b, c], 0),
     [("t", (0,), torch.float64, "c"), ("t", (2, 3), torch.float32, "c"), ("t", (0,), torch.float32, "c")], dim=0)
case("cat", lambda a, b: torch.cat([a, b], 0), [("t", (0,), torch.float32, "c"), ("t", (0,), torch.float32, "c")], dim=0)
case("cat", lambda a, b: torch.cat([a, b], 0), [("t", (0, 3), torch.float32, "c"), ("t", (2, 3), torch.float32, "c")], dim=0)
case("cat", lambda a, b: torch.cat([a, b], 1), [("t", (0, 3), torch.float32, "c"), ("t", (0, 2), torch.float32, "c")], dim=1)
case("cat", lambda a: torch.cat([a], 0), [("t", (2, 3), torch.float32, "t")], dim=0)
# Memory format of the output.
case("cat", lambda a, b: torch.cat([a, b], 1), [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (2, 2, 4, 5), torch.float32, "cl")], dim=1)
case("cat", lambda a, b: torch.cat([a, b], 0), [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (1, 3, 4, 5), torch.float32, "cl")], dim=0)
case("cat", lambda a, b: torch.cat([a, b], 1), [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (2, 2, 4, 5), torch.float32, "c")], dim=1)
case("cat", lambda a, b: torch.cat([a, b], 1), [("t", (2, 3, 4, 5), torch.float32, "c"), ("t", (2, 2, 4, 5), torch.bfloat16, "cl")], dim=1)
# Errors.
case("cat", lambda a, b: torch.cat([a, b], 1), [("t", (2, 3), torch.float32, "c"), ("t", (3, 3), torch.float32, "c")], dim=1)
case("cat", lambda a, b: torch.cat([a, b], 0), [("t", (2, 3), torch.float32, "c"), ("t", (3,), torch.float32, "c")], dim=0)
case("cat", lambda a, b: torch.cat([a, b], 2), [("t", (2, 3), torch.float32, "c"), ("t", (2, 3), torch.float32, "c")], dim=2)
case("cat", lambda a, b: torch.cat([a, b], 0), [("t", (), torch.float32, "c"), ("t", (), torch.float32, "c")], dim=0)
case("cat", lambda a, b: torch.cat([a, b], 5), [("t", (0,), torch.float32, "c"), ("t", (2, 3), torch.float32, "c")], dim=5)
# out=
case("cat_out", lambda a, b, o: torch.cat([a, b], 0, out=o),
     [("t", (2, 3), torch.int32, "c"), ("t", (1, 3), torch.int32, "c"), v([], torch.float64)], dim=0)
case("cat_out", lambda a, b, o: torch.cat([a, b], 0, out=o),
     [("t", (2, 3), torch.float32, "c"), ("t", (1, 3), torch.float32, "c"), v([], torch.int32)], dim=0)
case("cat_out", lambda a, b, o: torch.cat([a, b], 1, out=o),
     [("t", (2, 3), torch.float32, "c"), ("t", (2, 3), torch.float32, "c"), ("t", (2, 6), torch.float32, "t")], dim=1)

# ---- stack ----
for d in [torch.float32, torch.int64, torch.bool, torch.float16]:
    for dim in [0, 1, 2, -1]:
        case("stack", lambda a, b, dim=dim: torch.stack([a, b], dim), [("t", (2, 3), d, "c"), ("t", (2, 3), d, "c")], dim=dim)
case("stack", lambda a, b: torch.stack([a, b], 1), [("t", (2, 3), torch.float32, "t"), ("t", (2, 3), torch.float32, "c")], dim=1)
case("stack", lambda a, b: torch.stack([a, b], 0), [("t", (), torch.float32, "c"), ("t", (), torch.float32, "c")], dim=0)
case("stack", lambda a, b: torch.stack([a, b], 2), [("t", (2, 3), torch.int32, "c"), ("t", (2, 3), torch.float32, "c")], dim=2)
case("stack", lambda a, b: torch.stack([a, b], 0), [("t", (2, 3), torch.int32, "c"), ("t", (2, 3), torch.float32, "c")], dim=0)
case("stack", lambda a, b: torch.stack([a, b], 0), [("t", (2, 3), torch.float32, "c"), ("t", (3, 2), torch.float32, "c")], dim=0)
case("stack", lambda a, b: torch.stack([a, b], 3), [("t", (2, 3), torch.float32, "c"), ("t", (2, 3), torch.float32, "c")], dim=3)
case("stack", lambda a, b: torch.stack([a, b], 0), [("t", (0, 3), torch.float32, "c"), ("t", (0, 3), torch.float32, "c")], dim=0)
case("stack", lambda a, b: torch.stack([a, b], 1), [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (2, 3, 4, 5), torch.float32, "cl")], dim=1)
case("stack", lambda a, b: torch.stack([a, b], 4), [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (2, 3, 4, 5), torch.float32, "cl")], dim=4)
case("stack", lambda a, b: torch.stack([a, b], 0), [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (2, 3, 4, 5), torch.float32, "c")], dim=0)
case("stack_out", lambda a, b, o: torch.stack([a, b], 1, out=o), [("t", (2, 3), torch.float32, "c"), ("t", (2, 3), torch.float32, "t"), v([], torch.float64)], dim=1)
case("stack_out", lambda a, b, o: torch.stack([a, b], 2, out=o), [("t", (2, 3), torch.float32, "c"), ("t", (2, 3), torch.float32, "t"), v([], torch.float32)], dim=2)
case("stack_out", lambda a, b, o: torch.stack([a, b], 0, out=o), [("t", (2, 3), torch.float32, "c"), ("t", (2, 3), torch.float32, "c"), ("t", (3, 2, 2), torch.float32, "c")], dim=0)

# ---- split, split_with_sizes, chunk (views) ----
for d in [torch.float32, torch.int64]:
    case("split", lambda x: torch.split(x, 2, 0), [("t", (5, 3), d, "c")], split_size=2, dim=0)
case("split", lambda x: torch.split(x, 2, -1), [("t", (3, 5), torch.float32, "t")], split_size=2, dim=-1)
case("split", lambda x: torch.split(x, 7, 0), [("t", (5, 3), torch.float32, "c")], split_size=7, dim=0)
case("split", lambda x: torch.split(x, 0, 0), [("t", (0, 3), torch.float32, "c")], split_size=0, dim=0)
case("split", lambda x: torch.split(x, 0, 0), [("t", (5, 3), torch.float32, "c")], split_size=0, dim=0)
case("split", lambda x: torch.split(x, -1, 0), [("t", (5, 3), torch.float32, "c")], split_size=-1, dim=0)
case("split", lambda x: torch.split(x, 1, 0), [("t", (), torch.float32, "c")], split_size=1, dim=0)
case("split_with_sizes", lambda x: torch.split(x, [1, 3, 1], 1), [("t", (2, 5), torch.float32, "c")], sizes=[1, 3, 1], dim=1)
case("split_with_sizes", lambda x: torch.split(x, [0, 5], 1), [("t", (2, 5), torch.bfloat16, "t")], sizes=[0, 5], dim=1)
case("split_with_sizes", lambda x: torch.split(x, [2, 2], -1), [("t", (2, 5), torch.float32, "c")], sizes=[2, 2], dim=-1)
case("split_with_sizes", lambda x: torch.split(x, [6, -1], 1), [("t", (2, 5), torch.float32, "c")], sizes=[6, -1], dim=1)
for n in [1, 2, 3, 5, 7]:
    case("chunk", lambda x, n=n: torch.chunk(x, n, 0), [("t", (5, 2), torch.float32, "c")], chunks=n, dim=0)
case("chunk", lambda x: torch.chunk(x, 3, 1), [("t", (4, 6), torch.int32, "t")], chunks=3, dim=1)
case("chunk", lambda x: torch.chunk(x, 3, 0), [("t", (0, 2), torch.float32, "c")], chunks=3, dim=0)
case("chunk", lambda x: torch.chunk(x, 0, 0), [("t", (5, 2), torch.float32, "c")], chunks=0, dim=0)
case("chunk", lambda x: torch.chunk(x, 1, 0), [("t", (), torch.float32, "c")], chunks=1, dim=0)

# ---- flatten, unflatten ----
for (s, e) in [(0, -1), (1, 2), (0, 1), (2, 2), (-2, -1)]:
    case("flatten", lambda x, s=s, e=e: torch.flatten(x, s, e), [("t", (2, 3, 4), torch.float32, "c")], start=s, end=e)
case("flatten", lambda x: torch.flatten(x, 0, 1), [("t", (3, 4), torch.float32, "t")], start=0, end=1)
case("flatten", lambda x: torch.flatten(x, 1, 3), [("t", (2, 3, 4, 5), torch.float16, "cl")], start=1, end=3)
case("flatten", lambda x: torch.flatten(x), [("t", (), torch.int64, "c")], start=0, end=-1)
case("flatten", lambda x: torch.flatten(x, 2, 1), [("t", (2, 3, 4), torch.float32, "c")], start=2, end=1)
case("flatten", lambda x: torch.flatten(x, 0, 3), [("t", (2, 3, 4), torch.float32, "c")], start=0, end=3)
case("unflatten", lambda x: x.unflatten(1, (3, -1)), [("t", (2, 12), torch.float32, "c")], dim=1, sizes=[3, -1])
case("unflatten", lambda x: x.unflatten(-1, (2, 2, 3)), [("t", (2, 12), torch.bool, "c")], dim=-1, sizes=[2, 2, 3])
case("unflatten", lambda x: x.unflatten(0, (2, 2)), [("t", (3, 4), torch.float32, "t")], dim=0, sizes=[2, 2])
case("unflatten", lambda x: x.unflatten(1, (5, -1)), [("t", (2, 12), torch.float32, "c")], dim=1, sizes=[5, -1])
case("unflatten", lambda x: x.unflatten(1, (-1, -1)), [("t", (2, 12), torch.float32, "c")], dim=1, sizes=[-1, -1])
case("unflatten", lambda x: x.unflatten(1, ()), [("t", (2, 12), torch.float32, "c")], dim=1, sizes=[])
case("unflatten", lambda x: x.unflatten(1, (4, 1)), [("t", (4, 3), torch.float32, "t")], dim=1, sizes=[4, 1])

# ---- index_select ----
for d in ALL:
    case("index_select", lambda x, i: torch.index_select(x, 1, i), [("t", (3, 4), d, "c"), idx([3, 0, 3])], dim=1)
    case("index_select", lambda x, i: torch.index_select(x, 0, i), [("t", (3, 4), d, "t"), idx([2, 1])], dim=0)
case("index_select", lambda x, i: torch.index_select(x, -1, i), [("t", (2, 3, 4), torch.float32, "c"), idx([1])], dim=-1)
case("index_select", lambda x, i: torch.index_select(x, 1, i), [("t", (2, 3, 4, 5), torch.float32, "cl"), idx([2, 0])], dim=1)
case("index_select", lambda x, i: torch.index_select(x, 1, i), [("t", (3, 4), torch.float32, "c"), v([0, 2], torch.int32)], dim=1)
case("index_select", lambda x, i: torch.index_select(x, 1, i), [("t", (3, 4), torch.float32, "c"), idx(2)], dim=1)
case("index_select", lambda x, i: torch.index_select(x, 0, i), [("t", (), torch.float32, "c"), idx([0])], dim=0)
case("index_select", lambda x, i: torch.index_select(x, 0, i), [("t", (5,), torch.int64, "c"), idx([4, 4, 0])], dim=0)
case("index_select", lambda x, i: torch.index_select(x, 0, i), [("t", (3, 4), torch.float32, "c"), idx([])], dim=0)
case("index_select", lambda x, i: torch.index_select(x, 1, i), [("t", (0, 3), torch.float32, "c"), idx([0, 2])], dim=1)
case("index_select", lambda x, i: torch.index_select(x, 1, i), [("t", (3, 4), torch.float32, "c"), idx([0, 4])], dim=1)
case("index_select", lambda x, i: torch.index_select(x, 0, i), [("t", (3, 4), torch.float32, "c"), idx([-1])], dim=0)
case("index_select", lambda x, i: torch.index_select(x, 2, i), [("t", (2, 3, 4), torch.float32, "c"), idx([9])], dim=2)
case("index_select", lambda x, i: torch.index_select(x, 0, i), [("t", (3, 4), torch.float32, "c"), idx([[0]])], dim=0)
case("index_select", lambda x, i: torch.index_select(x, 0, i), [("t", (3, 4), torch.float32, "c"), v([0.0])], dim=0)
case("index_select", lambda x, i: torch.index_select(x, 0, i), [("t", (), torch.float32, "c"), idx([0, 0])], dim=0)
case("index_select", lambda x, i: torch.index_select(x, 2, i), [("t", (3, 4), torch.float32, "c"), idx([0])], dim=2)
case("index_select", lambda x, i: torch.index_select(x, 0, i), [("t", (0, 3), torch.float32, "c"), idx([0])], dim=0)
case("index_select_out", lambda x, i, o: torch.index_select(x, 1, i, out=o),
     [("t", (3, 4), torch.float32, "c"), idx([1, 1]), v([], torch.float32)], dim=1)
case("index_select_out", lambda x, i, o: torch.index_select(x, 1, i, out=o),
     [("t", (3, 4), torch.float32, "c"), idx([1, 1]), v([], torch.float64)], dim=1)

# ---- gather ----
for d in ALL:
    case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (3, 4), d, "c"), idx([[0, 3], [2, 2]])], dim=1)
case("gather", lambda x, i: torch.gather(x, 0, i), [("t", (3, 4), torch.float32, "t"), idx([[2, 1, 0, 0]])], dim=0)
case("gather", lambda x, i: torch.gather(x, -1, i), [("t", (2, 3, 4), torch.float64, "c"), ("t", (2, 2, 6), L, "c", 0, 3.49)], dim=-1)
case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (4, 3), torch.float32, "c"), ("t", (3, 4), L, "t", 0, 2.49)], dim=1)
case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (2, 2, 4, 5), L, "c", 0, 2.49)], dim=1)
case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (3, 4), torch.float32, "c"), v([[1, 0]], torch.int32)], dim=1)
case("gather", lambda x, i: torch.gather(x, 0, i), [("t", (), torch.float32, "c"), idx(0)], dim=0)
case("gather", lambda x, i: torch.gather(x, 0, i), [("t", (), torch.float32, "c"), idx([0, 0])], dim=0)
case("gather", lambda x, i: torch.gather(x, 0, i), [("t", (4,), torch.float32, "c"), idx(3)], dim=0)
case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (3, 4), torch.float32, "c"), ("t", (3, 0), L, "c")], dim=1)
case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (3, 4), torch.float32, "c"), idx([[0, 4]])], dim=1)
case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (3, 4), torch.float32, "c"), idx([[-1]])], dim=1)
case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (3, 4), torch.float32, "c"), ("t", (4, 2), L, "c", 0, 1.49)], dim=1)
case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (3, 4), torch.float32, "c"), idx([0])], dim=1)
case("gather", lambda x, i: torch.gather(x, 1, i), [("t", (3, 4), torch.float32, "c"), v([[0.0]])], dim=1)
case("gather", lambda x, i: torch.gather(x, 2, i), [("t", (3, 4), torch.float32, "c"), idx([[0]])], dim=2)
case("gather_out", lambda x, i, o: torch.gather(x, 1, i, out=o), [("t", (3, 4), torch.float32, "c"), idx([[0, 3], [2, 2]]), v([], torch.float64)], dim=1)
case("gather_out", lambda x, i, o: torch.gather(x, 1, i, out=o), [("t", (3, 4), torch.float32, "c"), idx([[0, 3], [2, 2]]), ("t", (2, 2), torch.float32, "t")], dim=1)

# ---- scatter (src, value), scatter_add ----
for d in ALL:
    case("scatter_src", lambda x, i, s: torch.scatter(x, 1, i, s),
         [("t", (3, 4), d, "c"), idx([[0, 3], [2, 1]]), ("t", (2, 2), d, "c")], dim=1)
    case("scatter_add", lambda x, i, s: torch.scatter_add(x, 0, i, s),
         [("t", (3, 4), d, "c"), idx([[0, 1, 2, 0], [0, 0, 2, 2]]), ("t", (2, 4), d, "c")], dim=0)
for d in [torch.float32, torch.int64, torch.uint8, torch.bool, torch.float16]:
    for val in [2, 2.5, True]:
        case("scatter_value", lambda x, i, val: torch.scatter(x, 1, i, val), [("t", (3, 4), d, "c"), idx([[1], [3]]), ("s", val)], dim=1)
case("scatter_value", lambda x, i, val: torch.scatter(x, 1, i, val), [("t", (3, 4), torch.uint8, "c"), idx([[1]]), ("s", 300)], dim=1)
case("scatter_src", lambda x, i, s: torch.scatter(x, 0, i, s),
     [("t", (4, 3), torch.float32, "t"), ("t", (3, 2), L, "c", 0, 3.49), ("t", (3, 3), torch.float32, "t")], dim=0)
case("scatter_src", lambda x, i, s: torch.scatter(x, -1, i, s),
     [("t", (2, 3, 4), torch.float64, "c"), ("t", (2, 3, 2), L, "c", 0, 3.49), ("t", (2, 4, 3), torch.float64, "c")], dim=-1)
case("scatter_src", lambda x, i, s: torch.scatter(x, 1, i, s),
     [("t", (2, 3, 4, 5), torch.float32, "cl"), ("t", (2, 2, 4, 5), L, "c", 0, 2.49), ("t", (2, 2, 4, 5), torch.float32, "cl")], dim=1)
case("scatter_src", lambda x, i, s: torch.scatter(x, 0, i, s), [("t", (), torch.float32, "c"), idx(0), ("t", (), torch.float32, "c")], dim=0)
case("scatter_src", lambda x, i, s: torch.scatter(x, 1, i, s), [("t", (3, 4), torch.float32, "c"), ("t", (3, 0), L, "c"), ("t", (2, 2), torch.float32, "c")], dim=1)
case("scatter_src", lambda x, i, s: torch.scatter(x, 1, i, s), [("t", (3, 4), torch.float32, "c"), idx([[4]]), ("t", (2, 2), torch.float32, "c")], dim=1)
case("scatter_src", lambda x, i, s: torch.scatter(x, 1, i, s), [("t", (3, 4), torch.float32, "c"), idx([[1, 1, 1]]), ("t", (2, 2), torch.float32, "c")], dim=1)
case("scatter_src", lambda x, i, s: torch.scatter(x, 1, i, s), [("t", (3, 4), torch.float32, "c"), idx([[1]]), ("t", (2, 2), torch.float64, "c")], dim=1)
case("scatter_src", lambda x, i, s: torch.scatter(x, 1, i, s), [("t", (3, 4), torch.float32, "c"), v([[1.0]]), ("t", (2, 2), torch.float32, "c")], dim=1)
case("scatter_src", lambda x, i, s: torch.scatter(x, 1, i, s), [("t", (3, 4), torch.float32, "c"), idx([1]), ("t", (2, 2), torch.float32, "c")], dim=1)
case("scatter_value", lambda x, i, val: torch.scatter(x, 1, i, val), [("t", (3, 2), torch.float32, "c"), idx([[1], [1], [1], [1]]), ("s", 1.0)], dim=1)
case("scatter_add", lambda x, i, s: torch.scatter_add(x, 0, i, s), [("t", (3,), torch.float32, "c"), idx([0, 0, 0, 2]), ("t", (4,), torch.float32, "c")], dim=0)
case("scatter_add", lambda x, i, s: torch.scatter_add(x, 0, i, s), [("t", (3,), torch.float32, "c"), idx([0, 5]), ("t", (4,), torch.float32, "c")], dim=0)
case("scatter_add", lambda x, i, s: torch.scatter_add(x, 1, i, s),
     [("t", (4, 3), torch.bfloat16, "t"), ("t", (4, 6), L, "c", 0, 2.49), ("t", (4, 6), torch.bfloat16, "c")], dim=1)
case("scatter_src_", lambda x, i, s: x.scatter_(1, i, s), [("t", (3, 4), torch.float32, "t"), idx([[0, 3], [2, 1]]), ("t", (2, 2), torch.float32, "c")], dim=1)
case("scatter_add_", lambda x, i, s: x.scatter_add_(1, i, s), [("t", (3, 4), torch.int32, "c"), idx([[0, 0], [2, 1]]), ("t", (2, 2), torch.int32, "c")], dim=1)
case("scatter_value_", lambda x, i, val: x.scatter_(0, i, val), [("t", (3, 4), torch.float32, "c"), idx([[2, 0, 1, 1]]), ("s", -1)], dim=0)
case("scatter_add_out", lambda x, i, s, o: torch.scatter_add(x, 0, i, s, out=o), [("t", (2, 3), torch.float32, "t"), idx([[1, 0, 1]]), ("t", (1, 3), torch.float32, "c"), v([], torch.float32)], dim=0)
case("scatter_src_out", lambda x, i, s, o: torch.scatter(x, 0, i, s, out=o), [("t", (2, 3), torch.float32, "c"), idx([[1, 0, 1]]), ("t", (1, 3), torch.float32, "c"), v([], torch.int64)], dim=0)

# ---- masked_fill ----
M = lambda shape: ("t", shape, torch.bool, "c")
for d in ALL:
    case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), d, "c"), M((3, 4)), ("s", 1)])
for d in [torch.float32, torch.int64, torch.bfloat16]:
    case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), d, "c"), M((4,)), ("s", -2.5)])
    case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), d, "t"), M((3, 1)), ("s", True)])
case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (4,), torch.float32, "c"), M((3, 4)), ("s", 7)])
case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (2, 3, 4, 5), torch.float32, "cl"), M((5,)), ("s", 7)])
case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (0, 3), torch.float32, "c"), M((3,)), ("s", 7)])
case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), torch.uint8, "c"), M((3, 4)), ("s", 300)])
case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), torch.int64, "c"), M((3, 4)), ("s", float("inf"))])
case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), torch.float32, "c"), ("t", (3, 4), torch.uint8, "c", 0, 1.4), ("s", 1)])
case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), torch.float32, "c"), ("t", (3, 4), torch.float32, "c"), ("s", 1)])
case("masked_fill_scalar", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), torch.float32, "c"), M((3,)), ("s", 1)])
for d, vd in [(torch.float32, torch.float32), (torch.float32, torch.float64), (torch.int64, torch.float32),
              (torch.float16, torch.int64), (torch.bool, torch.bool)]:
    case("masked_fill", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), d, "c"), M((3, 4)), ("t", (), vd, "c")])
case("masked_fill", lambda x, m, val: x.masked_fill(m, val), [("t", (3, 4), torch.float32, "c"), M((3, 4)), ("t", (1,), torch.float32, "c")])
case("masked_fill_scalar_", lambda x, m, val: x.masked_fill_(m, val), [("t", (4, 3), torch.float32, "t"), M((4, 3)), ("s", 5)])
case("masked_fill_scalar_", lambda x, m, val: x.masked_fill_(m, val), [("t", (4,), torch.float32, "c"), M((3, 4)), ("s", 5)])
case("masked_fill_scalar_", lambda x, m, val: x.masked_fill_(m, val), [("t", (3, 4), torch.float32, "c"), M((3,)), ("s", 5)])
case("masked_fill_", lambda x, m, val: x.masked_fill_(m, val), [("t", (3, 4), torch.int32, "c"), M((1, 4)), ("t", (), torch.int64, "c")])

# ---- embedding, embedding_dense_backward ----
for d in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]:
    case("embedding", lambda w, i: torch.embedding(w, i), [("t", (5, 3), d, "c"), idx([[0, 4], [1, 1]])], padding_idx=-1)
case("embedding", lambda w, i: torch.embedding(w, i), [("t", (5, 3), torch.float32, "t"), idx([4, 2, 2])], padding_idx=-1)
case("embedding", lambda w, i: torch.embedding(w, i, 2), [("t", (5, 3), torch.float32, "c"), v([0, 2], torch.int32)], padding_idx=2)
case("embedding", lambda w, i: torch.embedding(w, i), [("t", (5, 3), torch.float32, "c"), idx(3)], padding_idx=-1)
case("embedding", lambda w, i: torch.embedding(w, i), [("t", (5, 3), torch.float32, "c"), ("t", (2, 0), L, "c")], padding_idx=-1)
case("embedding", lambda w, i: torch.embedding(w, i), [("t", (5, 3), torch.float32, "c"), idx([[0, 5]])], padding_idx=-1)
case("embedding", lambda w, i: torch.embedding(w, i), [("t", (5, 3), torch.float32, "c"), idx([-1])], padding_idx=-1)
case("embedding", lambda w, i: torch.embedding(w, i), [("t", (5, 3), torch.float32, "c"), v([0.0])], padding_idx=-1)
case("embedding", lambda w, i: torch.embedding(w, i), [("t", (5,), torch.float32, "c"), idx([0])], padding_idx=-1)
EDB = torch.ops.aten.embedding_dense_backward
for d in [torch.float32, torch.float64, torch.float16, torch.bfloat16]:
    case("embedding_dense_backward", lambda gr, i: EDB(gr, i, 5, -1, False), [("t", (2, 2, 3), d, "c"), idx([[0, 4], [1, 1]])],
         num_weights=5, padding_idx=-1, freq=0)
case("embedding_dense_backward", lambda gr, i: EDB(gr, i, 5, 1, False), [("t", (2, 2, 3), torch.float32, "c"), idx([[0, 4], [1, 1]])],
     num_weights=5, padding_idx=1, freq=0)
case("embedding_dense_backward", lambda gr, i: EDB(gr, i, 5, -1, True), [("t", (2, 2, 3), torch.float32, "c"), idx([[0, 4], [1, 1]])],
     num_weights=5, padding_idx=-1, freq=1)
case("embedding_dense_backward", lambda gr, i: EDB(gr, i, 4, -1, False), [("t", (6, 2), torch.float32, "t"), v([3, 0, 3, 3, 2, 0], torch.int32)],
     num_weights=4, padding_idx=-1, freq=0)
case("embedding_dense_backward", lambda gr, i: EDB(gr, i, 5, -1, False), [("t", (2, 3), torch.int64, "c"), idx([0, 0])],
     num_weights=5, padding_idx=-1, freq=0)
case("embedding_dense_backward", lambda gr, i: EDB(gr, i, 5, -1, False), [("t", (2, 3), torch.float32, "c"), v([0.0, 1.0])],
     num_weights=5, padding_idx=-1, freq=0)

# ---- repeat ----
for d in [torch.float32, torch.int64, torch.bool, torch.float16]:
    case("repeat", lambda x: x.repeat(2, 1, 3), [("t", (3, 2), d, "c")], repeats=[2, 1, 3])
case("repeat", lambda x: x.repeat(2, 2), [("t", (3, 2), torch.float32, "t")], repeats=[2, 2])
case("repeat", lambda x: x.repeat(1, 1, 1, 2), [("t", (2, 3, 4, 5), torch.float32, "cl")], repeats=[1, 1, 1, 2])
case("repeat", lambda x: x.repeat(3, 2), [("t", (), torch.float32, "c")], repeats=[3, 2])
case("repeat", lambda x: x.repeat([]), [("t", (), torch.float32, "c")], repeats=[])
case("repeat", lambda x: x.repeat(0, 2), [("t", (3, 2), torch.float32, "c")], repeats=[0, 2])
case("repeat", lambda x: x.repeat(2, 1), [("t", (0, 2), torch.float32, "c")], repeats=[2, 1])
case("repeat", lambda x: x.repeat(2), [("t", (3, 2), torch.float32, "c")], repeats=[2])
case("repeat", lambda x: x.repeat(-1, 2), [("t", (3, 2), torch.float32, "c")], repeats=[-1, 2])

# ---- roll, flip ----
for d in [torch.float32, torch.int64, torch.bool, torch.bfloat16]:
    case("roll", lambda x: x.roll(1), [("t", (3, 4), d, "c")], shifts=[1], dims=[])
    case("roll", lambda x: x.roll((1, -5), (0, 1)), [("t", (3, 4), d, "c")], shifts=[1, -5], dims=[0, 1])
case("roll", lambda x: x.roll(2, -1), [("t", (3, 4), torch.float32, "t")], shifts=[2], dims=[-1])
case("roll", lambda x: x.roll(13, 1), [("t", (3, 4), torch.float32, "c")], shifts=[13], dims=[1])
case("roll", lambda x: x.roll(-1, 0), [("t", (3, 4), torch.float32, "t")], shifts=[-1], dims=[0])
case("roll", lambda x: x.roll(1, 1), [("t", (2, 3, 4, 5), torch.float32, "cl")], shifts=[1], dims=[1])
case("roll", lambda x: x.roll((1, 1), (0, 0)), [("t", (3, 4), torch.float32, "c")], shifts=[1, 1], dims=[0, 0])
case("roll", lambda x: x.roll(1, 0), [("t", (0, 3), torch.float32, "c")], shifts=[1], dims=[0])
case("roll", lambda x: x.roll(1), [("t", (), torch.float32, "c")], shifts=[1], dims=[])
case("roll", lambda x: x.roll(1, 0), [("t", (), torch.float32, "c")], shifts=[1], dims=[0])
case("roll", lambda x: x.roll((1, 2), (0,)), [("t", (3, 4), torch.float32, "c")], shifts=[1, 2], dims=[0])
case("roll", lambda x: torch.roll(x, [], []), [("t", (3, 4), torch.float32, "c")], shifts=[], dims=[])
case("roll", lambda x: x.roll(1, 2), [("t", (3, 4), torch.float32, "c")], shifts=[1], dims=[2])
for d in [torch.float32, torch.int64, torch.bool, torch.float16]:
    case("flip", lambda x: x.flip(0), [("t", (3, 4), d, "c")], dims=[0])
    case("flip", lambda x: x.flip(0, -1), [("t", (2, 3, 4), d, "c")], dims=[0, -1])
case("flip", lambda x: x.flip(1), [("t", (3, 4), torch.float32, "t")], dims=[1])
case("flip", lambda x: x.flip(1, 2), [("t", (2, 3, 4, 5), torch.float32, "cl")], dims=[1, 2])
case("flip", lambda x: x.flip([]), [("t", (3, 4), torch.float32, "c")], dims=[])
case("flip", lambda x: x.flip(0), [("t", (), torch.float32, "c")], dims=[0])
case("flip", lambda x: x.flip(0), [("t", (0, 3), torch.float32, "c")], dims=[0])
case("flip", lambda x: x.flip(0, 0), [("t", (3, 4), torch.float32, "c")], dims=[0, 0])
case("flip", lambda x: x.flip(0, -2), [("t", (3, 4), torch.float32, "c")], dims=[0, -2])
case("flip", lambda x: x.flip(2), [("t", (3, 4), torch.float32, "c")], dims=[2])

# ---- tril, triu ----
for name, fn in [("tril", torch.tril), ("triu", torch.triu)]:
    for d in ALL:
        case(name, lambda x, fn=fn: fn(x), [("t", (3, 4), d, "c")], diagonal=0)
    for k in [1, -1, 5, -5]:
        case(name, lambda x, fn=fn, k=k: fn(x, k), [("t", (4, 3), torch.float32, "c")], diagonal=k)
    case(name, lambda x, fn=fn: fn(x, 1), [("t", (4, 3), torch.float32, "t")], diagonal=1)
    case(name, lambda x, fn=fn: fn(x), [("t", (2, 3, 4), torch.float64, "c")], diagonal=0)
    case(name, lambda x, fn=fn: fn(x, -1), [("t", (2, 3, 4, 5), torch.float32, "cl")], diagonal=-1)
    case(name, lambda x, fn=fn: fn(x), [("t", (0, 3), torch.float32, "c")], diagonal=0)
    case(name, lambda x, fn=fn: fn(x), [("t", (3,), torch.float32, "c")], diagonal=0)
    case(name + "_", lambda x, name=name: getattr(x, name + "_")(1), [("t", (3, 4), torch.float32, "t")], diagonal=1)
    case(name + "_out", lambda x, o, fn=fn: fn(x, out=o), [("t", (3, 4), torch.float32, "c"), v([], torch.float64)], diagonal=0)

# ---- index.Tensor ----
X = ("t", (2, 3, 4), torch.float32, "c")
I = torch.ops.aten.index.Tensor


def ix(pattern, *tensors):
    """Builds the indices list from a pattern of `i` (next tensor) and `n` (None)."""
    it = iter(tensors)
    return [next(it) if p == "i" else None for p in pattern]


def index_case(pattern, self_arg, *index_args):
    case("index", lambda x, *ts: I(x, ix(pattern, *ts)), [self_arg, *index_args], pattern=pattern)


for d in ALL:
    index_case("i", ("t", (2, 3, 4), d, "c"), idx([1, 0, 1]))
    index_case("ni", ("t", (2, 3, 4), d, "c"), idx([[2, 0], [1, 1]]))
index_case("ii", X, idx([0, 1]), idx([2, 0]))
index_case("ini", X, idx([0, 1]), idx([2, 0]))
index_case("nii", X, idx([0, 1]), idx([2, 0]))
index_case("ini", X, idx([[0], [1]]), idx([1, 2, 3]))
index_case("nii", X, idx([[0], [1]]), idx([1, 2, 3]))
index_case("nni", X, idx([[0, 3], [1, 2]]))
index_case("i", X, ("t", (2, 3), torch.bool, "c"))
index_case("i", X, ("t", (2, 3, 4), torch.bool, "c"))
index_case("ni", X, v([True, False, True]))
index_case("ini", X, v([True, False]), idx([3]))
index_case("i", X, v([1, 0], torch.uint8))
index_case("i", X, v([1, 0], torch.int32))
index_case("i", X, idx([-1, -2]))
index_case("i", X, idx(1))
index_case("i", X, idx([]))
index_case("ni", ("t", (0, 3), torch.float32, "c"), idx([0, 2]))
index_case("i", ("t", (4, 3, 2), torch.float32, "c"), ("t", (2, 3), L, "t", 0, 3.49))
index_case("i", ("t", (2, 3, 4, 5), torch.float32, "cl"), idx([0, 1]))
index_case("ni", ("t", (2, 3, 4, 5), torch.float32, "cl"), idx([0, 1]))
index_case("nni", ("t", (2, 3, 4), torch.float16, "c"), idx([3, 0]))
index_case("i", ("t", (4, 3), torch.float32, "t"), idx([0, 3]))
index_case("ni", ("t", (4, 3), torch.float32, "t"), idx([0, 2, 2]))
index_case("i", X, idx([2]))
index_case("ni", X, idx([5]))
index_case("i", X, idx([-3]))
index_case("iiii", X, idx([0]), idx([0]), idx([0]), idx([0]))
index_case("i", X, v([True, False, True]))
index_case("ii", X, idx([0, 1]), idx([0, 1, 2]))
index_case("i", X, v([1.0, 0.0]))
index_case("i", ("t", (0, 3), torch.float32, "c"), idx([0]))
case("index_out", lambda x, i, o: torch.ops.aten.index.Tensor_out(x, [i], out=o), [X, idx([1, 0]), v([], torch.float32)], pattern="i")
case("index_out", lambda x, i, o: torch.ops.aten.index.Tensor_out(x, [i], out=o), [X, idx([1, 0]), v([], torch.float64)], pattern="i")

# ---- index_put, index_put_ ----
P = torch.ops.aten.index_put
Z = ("t", (2, 3, 4), torch.float32, "c")


def put_case(pattern, acc, self_arg, *args, name="index_put"):
    fn = (lambda x, *ts: P(x, ix(pattern, *ts[:-1]), ts[-1], acc)) if name == "index_put" else \
        (lambda x, *ts: torch.ops.aten.index_put_(x, ix(pattern, *ts[:-1]), ts[-1], acc))
    case(name, fn, [self_arg, *args], pattern=pattern, accumulate=acc)


for d in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool, torch.uint8]:
    for acc in [False, True]:
        put_case("i", acc, ("t", (2, 3, 4), d, "c"), idx([1, 1, 0]), ("t", (3, 3, 4), d, "c"))
        put_case("ni", acc, ("t", (2, 3, 4), d, "c"), idx([2, 0, 2]), ("t", (4,), d, "c"))
for acc in [False, True]:
    put_case("ii", acc, Z, idx([0, 1, 1]), idx([2, 0, 2]), ("t", (3, 4), torch.float32, "c"))
    put_case("ini", acc, Z, idx([0, 1]), idx([3, 0]), ("t", (2, 3), torch.float32, "c"))
    put_case("nii", acc, Z, idx([[0], [1]]), idx([1, 2, 3]), ("t", (2, 2, 3), torch.float32, "c"))
    put_case("i", acc, Z, ("t", (2, 3), torch.bool, "c"), ("t", (), torch.float32, "c"))
    put_case("i", acc, Z, ("t", (2, 3), torch.bool, "c"), ("t", (1,), torch.float32, "c"))
    put_case("ni", acc, Z, v([True, False, True]), ("t", (2, 2, 4), torch.float32, "c"))
    put_case("i", acc, ("t", (4, 3), torch.float32, "t"), idx([0, 3]), ("t", (3,), torch.float32, "c"))
    put_case("i", acc, ("t", (2, 3, 4, 5), torch.float32, "cl"), idx([1]), ("t", (), torch.float32, "c"))
    put_case("i", acc, Z, idx([-1]), ("t", (3, 4), torch.float32, "t"))
    put_case("i", acc, Z, idx([]), ("t", (), torch.float32, "c"))
put_case("i", False, ("t", (3,), torch.float32, "c"), idx([0, 0, 2]), ("t", (3,), torch.float32, "c"))
put_case("i", True, ("t", (3,), torch.float32, "c"), idx([0, 0, 2]), ("t", (3,), torch.float32, "c"))
put_case("i", False, Z, idx([1]), ("t", (3, 4), torch.float64, "c"))
put_case("i", False, Z, v([True, False], torch.bool), ("t", (), torch.float64, "c"))
put_case("i", False, Z, idx([1]), ("t", (2,), torch.float32, "c"))
put_case("i", False, Z, idx([2]), ("t", (), torch.float32, "c"))
put_case("ni", True, Z, idx([3]), ("t", (), torch.float32, "c"))
put_case("iiii", False, Z, idx([0]), idx([0]), idx([0]), idx([0]), ("t", (), torch.float32, "c"))
put_case("i", False, Z, v([1.0]), ("t", (), torch.float32, "c"))
put_case("i", False, Z, v([1, 0], torch.uint8), ("t", (), torch.float32, "c"))
put_case("i", False, Z, v([True, False, True]), ("t", (), torch.float32, "c"))
put_case("i", False, ("t", (0, 3), torch.float32, "c"), idx([0]), ("t", (), torch.float32, "c"))
put_case("ii", False, Z, idx([0, 1]), idx([0, 1, 2]), ("t", (), torch.float32, "c"))
put_case("i", False, ("t", (4, 3), torch.float32, "t"), idx([3, 1]), ("t", (2, 3), torch.float32, "c"), name="index_put_")
put_case("ini", True, Z, idx([0, 1]), idx([3, 3]), ("t", (2, 3), torch.float32, "c"), name="index_put_")
put_case("i", False, Z, ("t", (2, 3), torch.bool, "c"), ("t", (), torch.float32, "c"), name="index_put_")

g.save()
