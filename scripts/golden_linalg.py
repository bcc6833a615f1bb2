"""Regenerates tests/golden/linalg.txt: PyTorch's outputs for the matrix products (mm, addmm,
addmm_, bmm, dot, mv, matmul, linear and their out= overloads; baddbmm, addbmm, outer, cross,
einsum).

Format: scripts/golden_lib.py. tests/tests/linalg.rs replays every case through oxten.
Attributes the replay applies before calling the op (the lambdas here do the same):
  mt=0,1     inputs whose last two dims are transposed (the recorded tensor is the contiguous base)
  every2=0   1-D inputs taken with step 2 (strided vectors)
  beta, alpha  addmm's scalars
  bias=1     linear gets its third input as bias
  out=c|t    the out= overload, into a fresh empty(0) tensor (c) or a transposed, right-sized one (t)
Run: python3 scripts/golden_linalg.py  (needs torch).
"""
import torch

from golden_lib import Golden

g = Golden("linalg.txt", "scripts/golden_linalg.py")

F = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
ALL = F + [torch.int64]
f32, f64, bf16, i64 = torch.float32, torch.float64, torch.bfloat16, torch.int64


def prep(fn, mt=(), every2=()):
    def run(*xs):
        xs = list(xs)
        for i in mt:
            xs[i] = xs[i].transpose(-2, -1)
        for i in every2:
            xs[i] = xs[i][::2]
        return fn(*xs)
    return run


def case(op, fn, args, mt=(), every2=(), **attrs):
    if mt:
        attrs["mt"] = list(mt)
    if every2:
        attrs["every2"] = list(every2)
    return g.case(op, prep(fn, mt, every2), args, **attrs)


def t(shape, dtype=f32, layout="c"):
    return ("t", shape, dtype, layout)


def out_of(kind, fn):
    """`fn(*xs, out=...)`: a fresh empty(0) out (c) or a transposed out of the result's size (t)."""
    def run(*xs):
        if kind == "c":
            out = torch.empty(0, dtype=xs[0].dtype)
        else:
            shape = fn(*xs).shape
            out = torch.empty(shape[1], shape[0], dtype=xs[0].dtype).t()
        return fn(*xs, out=out)
    return run


# ---- mm ----
for d in ALL:
    case("mm", torch.mm, [t((3, 4), d, "t"), t((4, 5), d, "c")])
    case("mm", torch.mm, [t((3, 4), d, "c"), t((4, 5), d, "t")])
case("mm", torch.mm, [t((33, 70), bf16), t((70, 19), bf16, "t")])
case("mm", torch.mm, [t((40, 130), f32, "t"), t((130, 90), f32, "t")])
case("mm_out", out_of("c", torch.mm), [t((3, 4)), t((4, 5))], out="c")
case("mm_out", out_of("t", torch.mm), [t((3, 4), bf16), t((4, 5), bf16, "t")], out="t")
case("mm", torch.mm, [t((2, 3)), t((3, 4), f64)])

# ---- addmm ----
for d in ALL:
    case("addmm", torch.addmm, [t((3, 5), d), t((3, 4), d), t((4, 5), d)])
    case("addmm", lambda s, a, b: torch.addmm(s, a, b, beta=2, alpha=3), [t((5,), d), t((3, 4), d, "t"), t((4, 5), d, "t")], beta=2, alpha=3)
for d in F:
    case("addmm", lambda s, a, b: torch.addmm(s, a, b, beta=0.5, alpha=-1.5), [t((3, 1), d), t((3, 4), d), t((4, 5), d, "t")], beta=0.5, alpha=-1.5)
# Integer products truncate float scalars; bool scalars are 0/1.
case("addmm", lambda s, a, b: torch.addmm(s, a, b, beta=2.5, alpha=1.5), [t((3, 5), i64), t((3, 4), i64), t((4, 5), i64)], beta=2.5, alpha=1.5)
case("addmm", lambda s, a, b: torch.addmm(s, a, b, beta=0.5), [t((3, 5), i64), t((3, 4), i64), t((4, 5), i64)], beta=0.5)
case("addmm", lambda s, a, b: torch.addmm(s, a, b, beta=True, alpha=False), [t((2, 2)), t((2, 3)), t((3, 2))], beta=True, alpha=False)
# beta = 0 ignores self, NaN included; alpha = 0 does not compute the product (inf * 0).
nan = torch.full((2, 3), float("nan"))
case("addmm", lambda s, a, b: torch.addmm(s, a, b, beta=0), [("v", nan), t((2, 4)), t((4, 3))], beta=0)
case("addmm", lambda s, a, b: torch.addmm(s, a, b, beta=0, alpha=0), [("v", nan), t((2, 4)), t((4, 3))], beta=0, alpha=0)
case("addmm", lambda s, a, b: torch.addmm(s, a, b, alpha=0), [t((2, 3)), ("v", torch.full((2, 4), float("inf"))), t((4, 3))], alpha=0)
case("addmm", torch.addmm, [t(()), t((2, 3)), t((3, 4))])
case("addmm", torch.addmm, [t((2, 3), bf16), t((2, 0), bf16), t((0, 3), bf16)])
case("addmm", lambda s, a, b: torch.addmm(s, a, b, beta=2), [t((2, 3), i64), t((2, 0), i64), t((0, 3), i64)], beta=2)
case("addmm", torch.addmm, [t((0, 3)), t((0, 4)), t((4, 3))])
case("addmm", torch.addmm, [t((33, 19), bf16), t((33, 70), bf16), t((70, 19), bf16, "t")])
case("addmm", lambda s, a, b: torch.addmm(s, a, b, beta=0.25, alpha=2), [t((19,), f32), t((33, 70), f32), t((70, 19), f32, "t")], beta=0.25, alpha=2)
case("addmm_", lambda s, a, b: s.clone().addmm_(a, b, beta=0.5, alpha=2), [t((3, 5)), t((3, 4)), t((4, 5))], beta=0.5, alpha=2)
case("addmm_", lambda s, a, b: s.clone().addmm_(a, b), [t((3, 5), bf16, "t"), t((3, 4), bf16), t((4, 5), bf16)])
case("addmm_", lambda s, a, b: s.clone().addmm_(a, b), [t((5,)), t((3, 4)), t((4, 5))])
case("addmm_out", out_of("c", lambda s, a, b, out: torch.addmm(s, a, b, beta=2, out=out)), [t((5,)), t((3, 4)), t((4, 5))], beta=2, out="c")
case("addmm_out", out_of("t", torch.addmm), [t((3, 5), f64), t((3, 4), f64), t((4, 5), f64)], out="t")
# Errors, in PyTorch's order.
case("addmm", torch.addmm, [t((2, 3)), t((2, 3)), t((4, 3))])
case("addmm", torch.addmm, [t((4, 3)), t((2, 3)), t((3, 3))])
case("addmm", torch.addmm, [t((1, 2, 3)), t((2, 3)), t((3, 3))])
case("addmm", torch.addmm, [t((3,)), t((2, 3)), t((3, 3), f64)])
case("addmm", torch.addmm, [t((3,)), t((2, 3), f64), t((3, 3))])
case("addmm", torch.addmm, [t((2, 3)), t((3,)), t((3, 3))])
case("addmm", torch.addmm, [t((2, 3)), t((2, 3)), t((3,))])
case("addmm", torch.addmm, [t((2, 3), torch.bool), t((2, 3), torch.bool), t((3, 3), torch.bool)])
case("addmm_", lambda s, a, b: s.clone().addmm_(a, b), [t((3,)), t((2, 3)), t((3, 3))])

# ---- bmm ----
for d in ALL:
    case("bmm", torch.bmm, [t((2, 3, 4), d), t((2, 4, 5), d)])
    case("bmm", torch.bmm, [t((2, 4, 3), d), t((2, 5, 4), d)], mt=(0, 1))
case("bmm", torch.bmm, [t((3, 2, 4)), t((3, 5, 4))], mt=(1,))
case("bmm", torch.bmm, [t((32, 17, 40), bf16), t((32, 40, 9), bf16)])
case("bmm", torch.bmm, [t((0, 3, 4)), t((0, 4, 5))])
case("bmm", torch.bmm, [t((2, 3, 0), f64), t((2, 0, 5), f64)])
case("bmm_out", out_of("c", torch.bmm), [t((2, 3, 4)), t((2, 4, 5))], out="c")
case("bmm", torch.bmm, [t((2, 3, 4)), t((2, 5, 6))])
case("bmm", torch.bmm, [t((2, 3, 4)), t((3, 4, 6))])
case("bmm", torch.bmm, [t((3, 4)), t((3, 4, 6))])
case("bmm", torch.bmm, [t((2, 3, 4)), t((4, 6))])
case("bmm", torch.bmm, [t((2, 3, 4)), t((2, 4, 6), f64)])
case("bmm", torch.bmm, [t((2, 3, 4), i64), t((2, 4, 6))])
case("bmm", torch.bmm, [t((2, 3, 4), torch.bool), t((2, 4, 6), torch.bool)])

# ---- dot ----
for d in ALL:
    case("dot", torch.dot, [t((7,), d), t((7,), d)])
    case("dot", torch.dot, [t((10,), d), t((5,), d)], every2=(0,))
case("dot", torch.dot, [t((1000,), f32), t((1000,), f32)])
case("dot", torch.dot, [t((700,), bf16), t((1400,), bf16)], every2=(1,))
case("dot", torch.dot, [("v", torch.tensor([2 ** 62, 3])), ("v", torch.tensor([4, 5]))])
case("dot", torch.dot, [t((0,)), t((0,))])
case("dot_out", out_of("c", torch.dot), [t((5,)), t((5,))], out="c")
case("dot", torch.dot, [t((3,)), t((4,))])
case("dot", torch.dot, [t((3,)), t((3, 1))])
case("dot", torch.dot, [t((3,)), t((3,), f64)])
case("dot", torch.dot, [t((3,)), t((4,), f64)])
case("dot", torch.dot, [t((3,), torch.bool), t((3,), torch.bool)])

# ---- mv ----
for d in ALL:
    case("mv", torch.mv, [t((3, 4), d), t((4,), d)])
    case("mv", torch.mv, [t((3, 4), d, "t"), t((8,), d)], every2=(1,))
case("mv", torch.mv, [t((70, 33), bf16, "t"), t((33,), bf16)])
case("mv", torch.mv, [t((2, 0)), t((0,))])
case("mv", torch.mv, [t((0, 3)), t((3,))])
case("mv_out", out_of("c", torch.mv), [t((3, 4)), t((4,))], out="c")
case("mv", torch.mv, [t((2, 3)), t((4,))])
case("mv", torch.mv, [t((2, 3)), t((3, 1))])
case("mv", torch.mv, [t((3,)), t((3,))])
case("mv", torch.mv, [t((2, 3)), t((3,), f64)])
case("mv", torch.mv, [t((2, 3), f64), t((3,))])
case("mv", torch.mv, [t((2, 3), torch.bool), t((3,), torch.bool)])

# ---- matmul: every dispatch branch ----
mm_shapes = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((2, 2, 3), (3, 4)), ((2, 2, 3), (3,)),            # folded into one mm / mv
    ((2, 3), (5, 3, 4)), ((3,), (2, 3, 4)),            # bmm after expanding the smaller operand
    ((2, 2, 3), (2, 3, 4)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 1, 2, 3), (1, 4, 3, 2)),
    ((2, 1, 4, 3), (3,)), ((3,), (2, 1, 3, 4)),
]
for a, b in mm_shapes:
    for d in ALL:
        case("matmul", torch.matmul, [t(a, d), t(b, d)])
case("matmul", torch.matmul, [t((2, 4, 3)), t((3, 5))], mt=(0,))
case("matmul", torch.matmul, [t((2, 3, 4)), t((5, 4))], mt=(1,))
case("matmul", torch.matmul, [t((4, 3)), t((2, 5, 4))], mt=(0, 1))
case("matmul", torch.matmul, [t((3, 5, 0)), t((0, 0))])
case("matmul", torch.matmul, [t((0, 2, 3)), t((3, 4))])
case("matmul", torch.matmul, [t((0, 1, 2, 3)), t((5, 3, 4))])
case("matmul", torch.matmul, [t((2, 3, 0), bf16), t((2, 0, 4), bf16)])
for a, b in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)),
             ((2, 2, 3), (3,)), ((3,), (2, 3, 4)), ((2, 2, 3), (2, 3, 4)), ((2, 1, 3, 4), (5, 4, 2))]:
    case("matmul_out", out_of("c", torch.matmul), [t(a), t(b)], out="c")
case("matmul_out", out_of("t", torch.matmul), [t((2, 3)), t((3, 4))], out="t")
case("matmul", torch.matmul, [t(()), t((3,))])
case("matmul", torch.matmul, [t((3,)), t(())])
case("matmul", torch.matmul, [t((3,)), t((4,))])
case("matmul", torch.matmul, [t((2, 3)), t((4,))])
case("matmul", torch.matmul, [t((3,)), t((4, 5))])
case("matmul", torch.matmul, [t((2, 3)), t((4, 5))])
case("matmul", torch.matmul, [t((2, 2, 3)), t((4, 5))])
case("matmul", torch.matmul, [t((2, 4, 3)), t((4,))])
case("matmul", torch.matmul, [t((4,)), t((2, 3, 4))])
case("matmul", torch.matmul, [t((2, 2, 3)), t((2, 4, 4))])
case("matmul", torch.matmul, [t((2, 3, 4, 3)), t((2, 3, 4))])
case("matmul", torch.matmul, [t((2, 2, 3)), t((3, 4), f64)])
case("matmul", torch.matmul, [t((2, 4, 3)), t((2, 3, 4), f64)])
case("matmul", torch.matmul, [t((3,)), t((3,), f64)])
case("matmul", torch.matmul, [t((2, 3)), t((3,), f64)])
case("matmul", torch.matmul, [t((2, 3), i64), t((3, 4))])
case("matmul", torch.matmul, [t((2, 3), torch.bool), t((3, 4), torch.bool)])
case("matmul", torch.matmul, [t((2, 2, 3), torch.bool), t((2, 3, 4), torch.bool)])

# ---- linear ----
lin = torch.nn.functional.linear
lin_b = lambda x, w, b: lin(x, w, b)
for d in ALL:
    case("linear", lin_b, [t((2, 3), d), t((4, 3), d), t((4,), d)], bias=1)
    case("linear", lin_b, [t((5, 2, 3), d), t((4, 3), d), t((4,), d)], bias=1)
    case("linear", lin, [t((5, 2, 3), d), t((4, 3), d)])
case("linear", lin_b, [t((5, 3, 2)), t((4, 3)), t((4,))], mt=(0,), bias=1)
case("linear", lin_b, [t((2, 5, 2, 3)), t((4, 3)), t((4,))], bias=1)
case("linear", lin_b, [t((2, 5, 2, 3)), t((4, 3)), t((2, 4))], bias=1)
case("linear", lin_b, [t((2, 3)), t((4, 3)), t((2, 4))], bias=1)
case("linear", lin, [t((3,)), t((4, 3))])
case("linear", lin_b, [t((3,)), t((4, 3)), t((4,))], bias=1)
case("linear", lin, [t((3,)), t((3,))])
case("linear", lin_b, [t((3,)), t((3,)), t(())], bias=1)
case("linear", lin, [t((2, 3)), t((3,))])
case("linear", lin_b, [t((0, 3)), t((4, 3)), t((4,))], bias=1)
case("linear", lin_b, [t((2, 0)), t((4, 0)), t((4,))], bias=1)
case("linear", lin_b, [t((2, 5, 3), i64), t((4, 3), i64), t((4,), i64)], bias=1)
case("linear_out", out_of("c", lambda x, w, b, out: torch._C._nn.linear(x, w, b, out=out)), [t((2, 3)), t((4, 3)), t((4,))], bias=1, out="c")
case("linear_out", out_of("c", lambda x, w, b, out: torch._C._nn.linear(x, w, b, out=out)), [t((5, 2, 3)), t((4, 3)), t((4,))], bias=1, out="c")
case("linear_out", out_of("c", lambda x, w, out: torch._C._nn.linear(x, w, out=out)), [t((5, 2, 3)), t((4, 3))], out="c")
case("linear", lin, [t(()), t((4, 3))])
case("linear", lin, [t((2, 3)), t((4, 5))])
case("linear", lin_b, [t((2, 3)), t((4, 3)), t((5,))], bias=1)
case("linear", lin_b, [t((2, 3)), t((3,)), t(())], bias=1)
case("linear", lin, [t((2, 3)), t((4, 3), f64)])

# ---- baddbmm, addbmm, outer, cross ----
def t(shape, dtype=f32):
    return ("t", shape, dtype, "c")


for d in ALL:
    case("baddbmm", torch.baddbmm, [t((2, 3, 4), d), t((2, 3, 5), d), t((2, 5, 4), d)])
    case("addbmm", torch.addbmm, [t((3, 4), d), t((2, 3, 5), d), t((2, 5, 4), d)])
for beta, alpha in [(0.5, 2), (0, 1), (1, 0), (-1, 0.25)]:
    case("baddbmm", lambda s, a, b, be=beta, al=alpha: torch.baddbmm(s, a, b, beta=be, alpha=al), [t((3, 4)), t((2, 3, 5)), t((2, 5, 4))], beta=beta, alpha=alpha)
    case("addbmm", lambda s, a, b, be=beta, al=alpha: torch.addbmm(s, a, b, beta=be, alpha=al), [t((4,)), t((2, 3, 5)), t((2, 5, 4))], beta=beta, alpha=alpha)
# beta = 0 ignores NaN and inf in self.
nan_self = ("v", torch.tensor([[float("nan"), float("inf")], [1.0, -float("inf")]]))
case("baddbmm", lambda s, a, b: torch.baddbmm(s, a, b, beta=0), [nan_self, t((1, 2, 3)), t((1, 3, 2))], beta=0)
case("addbmm", lambda s, a, b: torch.addbmm(s, a, b, beta=0), [nan_self, t((2, 2, 3)), t((2, 3, 2))], beta=0)
case("baddbmm", torch.baddbmm, [t((2, 3, 4)), t((2, 3, 5)), t((2, 4, 5))], mt=(2,))
case("baddbmm", torch.baddbmm, [t((2, 3)), t((2, 3)), t((3, 4))])
case("baddbmm", torch.baddbmm, [t((2, 3)), t((2, 2, 3)), t((3, 3, 4))])
case("baddbmm", torch.baddbmm, [t((5, 3)), t((2, 2, 3)), t((2, 3, 4))])
case("baddbmm", torch.baddbmm, [t((2, 4), f64), t((2, 2, 3)), t((2, 3, 4))])
case("baddbmm", torch.baddbmm, [t((0, 3, 4)), t((0, 3, 5)), t((0, 5, 4))])
case("baddbmm", torch.baddbmm, [t((2, 3, 4)), t((2, 3, 0)), t((2, 0, 4))])
case("addbmm", torch.addbmm, [t((3, 3)), t((2, 2, 3)), t((2, 3, 4))])
case("addbmm", torch.addbmm, [t((2, 4)), t((2, 2, 3)), t((3, 3, 4))])
case("addbmm", torch.addbmm, [t((3, 4)), t((0, 3, 5)), t((0, 5, 4))])
for da, db in [(f32, f32), (f64, f64), (i64, i64), (i64, f32), (bf16, bf16), (f32, f64)]:
    case("outer", torch.outer, [t((3,), da), t((4,), db)])
case("outer", torch.outer, [t((2, 3)), t((3,))])
case("outer", torch.outer, [t((3,)), t((2, 3))])
case("outer", torch.outer, [t((0,)), t((3,))])
for d in [f32, f64, i64, bf16]:
    case("linalg_cross", torch.linalg.cross, [t((4, 3), d), t((4, 3), d)])
case("linalg_cross", lambda a, b: torch.linalg.cross(a, b, dim=0), [t((3, 2)), t((3, 2))], dim=0)
case("linalg_cross", torch.linalg.cross, [t((2, 1, 3)), t((1, 4, 3))])
case("linalg_cross", torch.linalg.cross, [t((4, 3)), t((3, 4))], mt=(1,))
case("linalg_cross", torch.linalg.cross, [t((2, 2)), t((2, 2))])
case("linalg_cross", torch.linalg.cross, [t((2, 3)), t((3,))])
case("linalg_cross", torch.linalg.cross, [t((3,), i64), t((3,), f32)])
case("cross", lambda a, b: torch.cross(a, b), [t((3, 2)), t((3, 2))])
case("cross", lambda a, b: torch.cross(a, b, dim=1), [t((2, 3)), t((2, 3))], dim=1)
case("cross", lambda a, b: torch.cross(a, b), [t((2, 2)), t((2, 2))])

# ---- einsum ----
for eq, shapes in [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(5,), (5,)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iji->j", [(3, 2, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...,...->...", [(2, 1), (3,)]),
    ("i...->...", [(2, 3, 4)]),
    ("ij...,jk...->ik", [(2, 3, 4), (3, 5, 4)]),
    ("ba", [(2, 3)]),
    ("Ba,aB->", [(2, 3), (3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("ij,ij->ij", [(2, 1), (1, 3)]),
    ("i,j,k->ijk", [(2,), (3,), (2,)]),
    ("ij,kl->", [(2, 3), (4, 5)]),
    ("ij,jk->ik", [(0, 3), (3, 4)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
    # errors
    ("i,i", [(3,), (4,)]),
    ("ij", [(2, 3), (3,)]),
    ("ij,jk", [(2, 3)]),
    ("ijk", [(2, 3)]),
    ("...ij", [(2,)]),
    ("ii", [(2, 3)]),
    ("i->j", [(3,)]),
    ("i->ii", [(3,)]),
    ("i1", [(3,)]),
]:
    args = [("t", s, f32, "c", -2.0, 2.0) for s in shapes]
    g.case("einsum", lambda *xs, e=eq: torch.einsum(e, *xs), args, equation=eq)
g.case("einsum", lambda a, b: torch.einsum("ij,jk->ik", a, b), [("t", (3, 2), f32, "t", -2.0, 2.0), ("t", (3, 4), f64, "c", -2.0, 2.0)], equation="ij,jk->ik")
g.case("einsum", lambda a, b: torch.einsum("ij,jk->ik", a, b), [("t", (2, 3), i64, "c", -3, 3), ("t", (3, 4), i64, "c", -3, 3)], equation="ij,jk->ik")
g.case("einsum", lambda a, b: torch.einsum("bij,bjk->bik", a, b), [("t", (2, 3, 4), bf16, "c", -2, 2), ("t", (2, 4, 5), bf16, "c", -2, 2)], equation="bij,bjk->bik")

g.save()
