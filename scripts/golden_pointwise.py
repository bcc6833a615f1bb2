"""Regenerates tests/golden/pointwise.txt: PyTorch's outputs for the special functions,
interpolation, fused multiply-adds, tensor-bound clamp, scalar where and the hard activations,
replayed by tests/tests/pointwise_math.rs.

Format: scripts/golden_lib.py. Run: python3 scripts/golden_pointwise.py  (needs torch).
"""
import torch
import torch.nn.functional as F

from golden_lib import Golden

g = Golden("pointwise.txt", "scripts/golden_pointwise.py")
case = g.case
aten = torch.ops.aten

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, I16, I8, U8, B = torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool
FLOATS = [F32, F64, F16, BF16]
INF, NAN = float("inf"), float("nan")


def t(shape, dtype=F32, layout="c", lo=-3.0, hi=3.0):
    return ("t", shape, dtype, layout, lo, hi)


def v(x, dtype=F32):
    return ("v", torch.tensor(x, dtype=dtype))


# ---- unary special functions ----
UNARY = {
    "log1p": (torch.log1p, -0.9, 3.0),
    "expm1": (torch.expm1, -3.0, 3.0),
    "erf": (torch.erf, -3.0, 3.0),
    "erfinv": (torch.erfinv, -1.0, 1.0),
    "mish": (F.mish, -5.0, 5.0),
    "hardswish": (F.hardswish, -5.0, 5.0),
    "hardsigmoid": (F.hardsigmoid, -5.0, 5.0),
    "logit": (torch.logit, 0.0, 1.0),
}
for name, (fn, lo, hi) in UNARY.items():
    for d in FLOATS + [I64, B]:
        case(name, fn, [t((3, 4), d, "c", lo, hi)])
    case(name, fn, [t((4, 5), F32, "t", lo, hi)])
    case(name, fn, [t((2, 3, 2, 2), F32, "cl", lo, hi)])
    case(name, fn, [t((), F64, "c", lo, hi)])
# Edges: tiny arguments, the ends of erfinv's domain, infinities and NaN.
case("log1p", torch.log1p, [v([1e-10, -1e-10, -1.0, -2.0, INF, NAN, 0.0])])
case("log1p", torch.log1p, [v([1e-300, -0.5, 1e300], F64)])
case("expm1", torch.expm1, [v([1e-10, -1e-10, 100.0, -INF, INF, NAN, -0.0])])
case("erf", torch.erf, [v([0.0, -0.0, 1e-20, 4.0, -6.0, INF, -INF, NAN])])
case("erfinv", torch.erfinv, [v([-1.0, 1.0, 1.5, -2.0, 0.0, -0.0, 0.999999, 1e-7, NAN])])
case("erfinv", torch.erfinv, [v([1 - 1e-15, -(1 - 1e-12), 0.5, 1e-300], F64)])
case("mish", F.mish, [v([-100.0, -20.0, 25.0, 100.0, INF, -INF, NAN])])
case("hardswish", F.hardswish, [v([-3.0, 3.0, -3.5, 3.5, 0.0, INF, -INF, NAN])])
case("hardsigmoid", F.hardsigmoid, [v([-3.0, 3.0, -3.5, 3.5, 0.0, INF, NAN])])
case("logit", torch.logit, [v([0.0, 1.0, -0.5, 1.5, 0.5, NAN])])
for eps in [0.0, 0.1, 0.49, -0.1]:
    case("logit", lambda x, e=eps: torch.logit(x, e), [v([0.0, 0.05, 0.5, 0.95, 1.0, NAN])], eps=eps)
    case("logit", lambda x, e=eps: torch.logit(x, e), [t((6,), F64, "c", -0.5, 1.5)], eps=eps)
case("logit", lambda x: torch.logit(x, 0.2), [t((3, 4), BF16, "c", 0.0, 1.0)], eps=0.2)
case("logit", lambda x: torch.logit(x, 0.2), [t((3, 4), I64, "c", 0.0, 2.0)], eps=0.2)

# ---- in-place and out= forms ----
for name in ["log1p", "expm1", "erf", "erfinv"]:
    fn = getattr(torch, name)
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3, 4), F32, "c", -0.9, 0.9)])
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3,), I64, "c", 0, 3)])
    case(name + "_out", lambda x, o, f=fn: f(x, out=o), [t((2, 3), F64, "c", -0.9, 0.9), t((7,), F32)])
    case(name + "_out", lambda x, o, f=fn: f(x, out=o), [t((2, 3), F32, "c", -0.9, 0.9), t((6,), I64)])
for name, fn in [("mish", F.mish), ("hardswish", F.hardswish), ("hardsigmoid", F.hardsigmoid)]:
    case(name + "_", lambda x, f=fn: f(x.clone(), inplace=True), [t((3, 4), F32, "c", -5, 5)])
case("logit_", lambda x: x.clone().logit_(0.1), [t((3, 4), F32, "c", 0, 1)], eps=0.1)
case("logit_", lambda x: x.clone().logit_(), [t((3,), I64, "c", 0, 2)])

# ---- binary special functions ----
for name in ["atan2", "hypot", "logaddexp"]:
    fn = getattr(torch, name)
    for da, db in [(F32, F32), (F32, F64), (F16, F16), (BF16, BF16), (BF16, F32), (I64, I64), (I32, F32), (B, B)]:
        case(name, fn, [t((2, 3), da), t((2, 3), db)])
    case(name, fn, [t((3, 1), F32), t((1, 4), F32)])
    case(name, fn, [t((4, 3), F32, "t"), t((4, 3), F64)])
    case(name, fn, [t((2, 3, 2, 2), F32, "cl"), t((1, 3, 1, 1), F32)])
    case(name, fn, [t((4,), F32), t((), F64)])
    if name != "logaddexp":
        case(name + "_", lambda a, b, n=name: getattr(a.clone(), n + "_")(b), [t((2, 3), F32), t((3,), F32)])
        case(name + "_", lambda a, b, n=name: getattr(a.clone(), n + "_")(b), [t((2, 3), F32), t((3,), F64)])
    case(name + "_out", lambda a, b, o, f=fn: f(a, b, out=o), [t((2, 3), F64), t((2, 3), F64), t((1,), F32)])
case("atan2", torch.atan2, [v([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, INF, NAN]), v([0.0, 0.0, -0.0, -0.0, 0.0, 0.0, INF, 1.0])])
case("hypot", torch.hypot, [v([3e30, 1e-30, INF, NAN, 0.0, INF]), v([4e30, 1e-30, NAN, INF, -0.0, -INF])])
case("hypot", torch.hypot, [v([3e300, 1e-300], F64), v([4e300, 1e-300], F64)])
case("logaddexp", torch.logaddexp, [v([INF, -INF, INF, -INF, 1.0, 100.0, NAN, 0.0]), v([INF, -INF, -INF, 2.0, INF, -100.0, 1.0, 0.0])])
case("logaddexp", torch.logaddexp, [v([1000.0, -1000.0, 1e-10]), v([1000.5, -999.0, -1e-10])])

# ---- lerp ----
for d in FLOATS:
    for w in [0.25, 0.75, 1.0, 0.0, -0.5, 1.5]:
        case("lerp_scalar", lambda a, b, w=w: torch.lerp(a, b, w), [t((2, 3), d), t((2, 3), d)], weight=w)
    case("lerp_tensor", torch.lerp, [t((2, 3), d), t((2, 3), d), t((2, 3), d, "c", -0.5, 1.5)])
case("lerp_scalar", lambda a, b: torch.lerp(a, b, 2), [t((3, 1), F32), t((1, 4), F32)], weight=2)
case("lerp_scalar", lambda a, b: torch.lerp(a, b, 0.5), [t((4, 3), F32, "t"), t((4, 3), F32)], weight=0.5)
case("lerp_tensor", torch.lerp, [t((3, 1), F32), t((1, 4), F32), t((4,), F32, "c", 0, 1)])
case("lerp_tensor", torch.lerp, [t((3,), F32), t((3,), F32), t((), F32, "c", 0, 1)])
case("lerp_scalar", lambda a, b: torch.lerp(a, b, 0.5), [t((3,), I64), t((3,), I64)], weight=0.5)
case("lerp_scalar", lambda a, b: torch.lerp(a, b, 0.5), [t((3,), F32), t((3,), F64)], weight=0.5)
case("lerp_scalar", lambda a, b: torch.lerp(a, b, 0.5), [t((3,), F64), t((3,), F32)], weight=0.5)
case("lerp_tensor", torch.lerp, [t((3,), F32), t((3,), F32), t((3,), F64)])
case("lerp_tensor", torch.lerp, [t((3,), I64), t((3,), I64), t((3,), I64)])
case("lerp_scalar_", lambda a, b: a.clone().lerp_(b, 0.3), [t((2, 3), F32), t((3,), F32)], weight=0.3)
case("lerp_tensor_", lambda a, b, w: a.clone().lerp_(b, w), [t((2, 3), F32), t((3,), F32), t((2, 1), F32)])
case("lerp_scalar_", lambda a, b: a.clone().lerp_(b, 0.3), [t((3,), F32), t((2, 3), F32)], weight=0.3)

# ---- addcmul / addcdiv ----
for name in ["addcmul", "addcdiv"]:
    fn = getattr(torch, name)
    for val in [1, 0.5, -2, True]:
        case(name, lambda a, b, c, f=fn, x=val: f(a, b, c, value=x), [t((2, 3)), t((2, 3)), t((2, 3), F32, "c", 0.5, 2)], value=val)
    for ds in [(F64, F64, F64), (F16, F16, F16), (BF16, BF16, BF16), (F32, I64, I64), (I64, F32, F32),
               (I64, I64, I64), (I32, I64, U8), (B, B, B), (F32, B, B), (F16, F32, F32)]:
        case(name, fn, [t((2, 3), ds[0]), t((2, 3), ds[1], "c", 1, 3), t((2, 3), ds[2], "c", 1, 3)])
    case(name, lambda a, b, c, f=fn: f(a, b, c, value=0.5), [t((3,), I64), t((3,), I64, "c", 1, 3), t((3,), I64, "c", 1, 3)], value=0.5)
    case(name, fn, [t((3, 1)), t((1, 4)), t((4,), F32, "c", 0.5, 2)])
    case(name, fn, [t((4, 3), F32, "t"), t((4, 3)), t((4, 3), F32, "c", 0.5, 2)])
    case(name + "_", lambda a, b, c, n=name: getattr(a.clone(), n + "_")(b, c, value=0.5), [t((2, 3)), t((3,)), t((2, 1), F32, "c", 0.5, 2)], value=0.5)
    case(name + "_", lambda a, b, c, n=name: getattr(a.clone(), n + "_")(b, c), [t((3,)), t((2, 3)), t((3,), F32, "c", 0.5, 2)])
    case(name + "_", lambda a, b, c, n=name: getattr(a.clone(), n + "_")(b, c), [t((3,), I64), t((3,), F32), t((3,), F32, "c", 0.5, 2)])
    case(name + "_out", lambda a, b, c, o, f=fn: f(a, b, c, out=o), [t((2, 3), F64), t((2, 3), F64), t((2, 3), F64, "c", 0.5, 2), t((1,), F32)])

# ---- clamp with tensor bounds ----
case("clamp_tensor", lambda x, lo, hi: torch.clamp(x, lo, hi), [t((3, 4)), t((3, 4), F32, "c", -2, 0), t((4,), F32, "c", 0, 2)], has_min=1, has_max=1)
case("clamp_tensor", lambda x, lo: torch.clamp(x, min=lo), [t((3, 4)), t((3, 1))], has_min=1)
case("clamp_tensor", lambda x, hi: torch.clamp(x, max=hi), [t((3, 4)), t((4,))], has_max=1)
case("clamp_tensor", lambda x, lo: torch.clamp(x, min=lo), [t((4,), I64), v(0.5)], has_min=1)
case("clamp_tensor", lambda x, lo: torch.clamp(x, min=lo), [t((4,), I64), t((4,), F64)], has_min=1)
case("clamp_tensor", lambda x, lo: torch.clamp(x, min=lo), [t((4,), F16), v(0.5, F64)], has_min=1)
case("clamp_tensor", lambda x, lo, hi: torch.clamp(x, lo, hi), [v([NAN, 1.0, 2.0, 5.0]), v([0.0, NAN, 0.0, 0.0]), v([3.0, 3.0, NAN, 3.0])], has_min=1, has_max=1)
case("clamp_tensor", lambda x, lo, hi: torch.clamp(x, lo, hi), [t((4,)), v([1.0]), v([-1.0])], has_min=1, has_max=1)
case("clamp_tensor", lambda x: torch.clamp(x, min=None, max=None), [t((4,))])

# ---- where with scalar branches ----
for d in [F32, F16, BF16, I64, I32, B]:
    for s in [2.5, 2, True]:
        case("where_scalar_other", lambda c, x, s=s: torch.where(c, x, s), [t((2, 3), B), t((2, 3), d), ("s", s)])
        case("where_scalar_self", lambda c, s, x: torch.where(c, s, x), [t((2, 3), B), ("s", s), t((2, 3), d)])
case("where_scalar_other", lambda c, x, s: torch.where(c, x, s), [t((3, 1), B), t((1, 4)), ("s", 0.0)])
for a, b in [(1, 2), (1, 2.5), (True, False), (True, 2), (-1.5, 0.5)]:
    case("where_scalar", lambda c, a, b: torch.where(c, a, b), [t((2, 3), B), ("s", a), ("s", b)])
case("where_scalar_other", lambda c, x, s: torch.where(c, x, s), [t((2, 3), F32), t((2, 3)), ("s", 1.0)])

# ---- hard activations' backward kernels ----
for name in ["hardswish_backward", "hardsigmoid_backward"]:
    fn = getattr(aten, name)
    for d in FLOATS:
        case(name, fn, [t((3, 4), d), t((3, 4), d, "c", -5, 5)])
    case(name, fn, [t((3, 4), F32), t((3, 4), F64, "c", -5, 5)])
    case(name, fn, [t((4,), F32), v([-3.0, 3.0, -3.5, 3.5])])
    case(name, fn, [t((3,), I64), t((3,), I64)])


# ---- tan, reciprocal: declared by `pointwise:` alone ----
for name, fn, lo, hi in [("tan", torch.tan, -1.4, 1.4), ("reciprocal", torch.reciprocal, 0.2, 3.0)]:
    for d in FLOATS + [I64, B]:
        case(name, fn, [t((3, 4), d, "c", lo, hi)])
    case(name, fn, [t((4, 5), F32, "t", lo, hi)])
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3, 4), F32, "c", lo, hi)])
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3,), I64, "c", 1, 3)])
    case(name + "_out", lambda x, o, f=fn: f(x, out=o), [t((2, 3), F64, "c", lo, hi), t((7,), F32)])
case("reciprocal", torch.reciprocal, [v([0.0, -0.0, INF, -INF, NAN, 1e-40, -3.0])])
case("tan", torch.tan, [v([0.0, -0.0, 1.5707963267948966, INF, NAN, -1e-30], F64)])


# ---- gradients of clamp with tensor bounds, at ties and with min > max ----
def clamp_grads(x, lo=None, hi=None):
    ins = [a.clone().requires_grad_() if a is not None else None for a in (x, lo, hi)]
    torch.clamp(*ins).sum().backward()
    return tuple(a.grad if a.grad is not None else torch.zeros_like(a) for a in ins if a is not None)


X, LO, HI = [1.0, 2.0, 3.0, 5.0, 0.5, 4.0], [1.0, 0.0, 4.0, 6.0, 0.0, 2.0], [3.0, 2.0, 4.0, 5.5, 1.0, 2.0]
case("clamp_tensor_grad", clamp_grads, [v(X, F64), v(LO, F64), v(HI, F64)], has_min=1, has_max=1)
case("clamp_tensor_grad", lambda x, lo: clamp_grads(x, lo), [v(X, F64), v(LO, F64)], has_min=1)
case("clamp_tensor_grad", lambda x, hi: clamp_grads(x, None, hi), [v(X, F64), v(HI, F64)], has_max=1)
case("clamp_tensor_grad", clamp_grads, [v([[1.0, 2.0], [0.0, 3.0]], F64), v([1.0], F64), v([2.0, 2.5], F64)],
     has_min=1, has_max=1)



# ---- inverse trigonometric, hyperbolic, log2/log10/exp2: declared by `pointwise:` alone ----
for name, lo, hi in [("asin", -0.95, 0.95), ("acos", -0.95, 0.95), ("atan", -3.0, 3.0),
                     ("sinh", -3.0, 3.0), ("cosh", -3.0, 3.0), ("asinh", -4.0, 4.0),
                     ("acosh", 1.0, 5.0), ("atanh", -0.95, 0.95), ("log2", 0.1, 9.0),
                     ("log10", 0.1, 9.0), ("exp2", -5.0, 5.0)]:
    fn = getattr(torch, name)
    for d in FLOATS + [I64, B]:
        case(name, fn, [t((3, 4), d, "c", lo, hi)])
    case(name, fn, [t((4, 5), F32, "t", lo, hi)])
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3, 4), F32, "c", lo, hi)])
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3,), I64, "c", 1, 3)])
    case(name + "_out", lambda x, o, f=fn: f(x, out=o), [t((2, 3), F64, "c", lo, hi), t((7,), F32)])
    edges = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, INF, -INF, NAN, 1e-30, 100.0, -100.0]
    case(name, fn, [v(edges)])
    case(name, fn, [v(edges, F64)])


# ---- deg2rad, rad2deg: declared by `pointwise:` alone ----
for name in ["deg2rad", "rad2deg"]:
    fn = getattr(torch, name)
    for d in FLOATS + [I64, B]:
        case(name, fn, [t((3, 4), d, "c", -400.0, 400.0)])
    case(name, fn, [t((4, 5), F32, "t")])
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3, 4), F16, "c")])
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3,), I64, "c", 1, 3)])
    case(name + "_out", lambda x, o, f=fn: f(x, out=o), [t((2, 3), F64, "c"), t((7,), F32)])
    case(name, fn, [v([0.0, -0.0, 180.0, 1e38, INF, -INF, NAN])])


# ---- rounding, sign, sinc, predicates: declared by `pointwise:` alone ----
EDGES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 2.7, 0.0, -0.0, INF, -INF, NAN, 1e20, 8388609.0, -1e-30]
ALL = FLOATS + [I64, I32, I16, I8, U8, B]
for name in ["floor", "ceil", "trunc", "round", "frac", "sign", "sgn", "sinc"]:
    fn = getattr(torch, name)
    for d in ALL:
        case(name, fn, [t((3, 4), d, "c", -4.0, 4.0)])
    case(name, fn, [t((4, 5), F32, "t", -4.0, 4.0)])
    case(name, fn, [t((2, 3, 2, 2), F32, "cl", -4.0, 4.0)])
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3, 4), F32, "c", -4.0, 4.0)])
    case(name + "_", lambda x, n=name: getattr(x.clone(), n + "_")(), [t((3,), I64, "c", -3, 3)])
    case(name + "_out", lambda x, o, f=fn: f(x, out=o), [t((2, 3), F64, "c", -4.0, 4.0), t((7,), F32)])
    case(name, fn, [v(EDGES)])
    case(name, fn, [v(EDGES, F64)])
for dec in [0, 1, 2, 3, -1, -2]:
    rd = lambda x, d=dec: torch.round(x, decimals=d)
    case("round_decimals", rd, [v([1.2345, -2.5, 0.125, 1234.5, 15.0, 25.0, -0.05, NAN, INF, 1e30])], decimals=dec)
    case("round_decimals", rd, [v([1.2345, -2.5, 0.125, 1234.5, 15.0, 25.0, -0.05, 1e300], F64)], decimals=dec)
    case("round_decimals", rd, [t((3, 4), BF16, "c", -40.0, 40.0)], decimals=dec)
case("round_decimals", lambda x: torch.round(x, decimals=1), [t((3,), I64)], decimals=1)
case("round_decimals_", lambda x: x.clone().round_(decimals=2), [t((3, 4), F32, "t")], decimals=2)
for name in ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"]:
    fn = getattr(torch, name)
    for d in ALL:
        case(name, fn, [t((3, 4), d, "c")])
    case(name, fn, [v(EDGES)])
    case(name, fn, [v(EDGES, F64)])
    case(name, fn, [v(EDGES, F16)])
    case(name, fn, [v([-0.0, NAN, 0.0, -INF, 1e-40], BF16)])
    case(name, fn, [t((4, 5), F32, "t")])


# ---- remainder, fmod, floor_divide: integer division semantics ----
NUM = [7.0, -7.0, 7.5, -7.5, 0.0, -0.0, 3.0, INF, NAN, 1e-30, 5.0]
DEN = [2.0, 2.0, -2.0, -2.0, 3.0, -3.0, 0.0, 2.0, 2.0, -1.0, INF]
INUM = [7, -7, 7, -7, 0, 3, -128, 127, 5]
IDEN = [2, 2, -2, -2, 3, -3, -1, 4, 5]
for name in ["remainder", "fmod", "floor_divide"]:
    fn = getattr(torch, name)
    for d in [F32, F64]:
        case(name, fn, [v(NUM, d), v(DEN, d)])
    for d in [F16, BF16]:
        case(name, fn, [t((3, 4), d, "c", -5, 5), t((3, 4), d, "c", 0.5, 3)])
    for d in [I64, I32, I16, I8, U8]:
        nums = [abs(x) for x in INUM] if d == U8 else INUM
        dens = [abs(x) for x in IDEN] if d == U8 else IDEN
        case(name, fn, [v(nums, d), v(dens, d)])
        case(name, fn, [v(nums, d), ("s", 3)], other=3)
        case(name, fn, [v(nums, d), ("s", -2)], other=-2)
        case(name, fn, [v(nums, d), v([1, 0, 2, 1, 1, 1, 1, 1, 1], d)])
        case(name, fn, [v(nums, d), ("s", 0)], other=0)
    case(name, fn, [v([7, -7, 3], I8), v([-128, -128, -1], I8)])
    case(name, fn, [v([-128, 5], I8), v([-1, -1], I8)])
    case(name, fn, [v([True, False], B), v([True, True], B)])
    case(name, fn, [v(INUM, I64), ("s", 2.5)], other=2.5)
    case(name, fn, [v(NUM), ("s", -1.5)], other=-1.5)
    case(name, fn, [v(NUM), ("s", 0.0)], other=0.0)
    case(name, fn, [t((3, 1), F32, "c", -5, 5), t((4,), F64, "c", 0.5, 3)])
    case(name, fn, [t((4, 5), F32, "t", -5, 5), t((5,), I64, "c", 1, 4)])
    case(name + "_", lambda x, y, n=name: getattr(x.clone(), n + "_")(y), [t((3, 4), F32), t((4,), F32, "c", 0.5, 2)])
    case(name + "_", lambda x, y, n=name: getattr(x.clone(), n + "_")(y), [v(INUM, I64), v(IDEN, I64)])
    case(name + "_", lambda x, y, n=name: getattr(x.clone(), n + "_")(y), [v(INUM, I64), v(IDEN, F32)])
    case(name + "_out", lambda x, y, o, f=fn: f(x, y, out=o), [t((2, 3), F64), t((3,), F64, "c", 0.5, 2), t((1,), F32)])
case("remainder_scalar_tensor", lambda o: torch.remainder(5, o), [v([2, -3, 4, 7], I64)], scalar=5)
case("remainder_scalar_tensor", lambda o: torch.remainder(-5.5, o), [v([2.0, -3.0, 0.0, INF])], scalar=-5.5)
case("remainder_scalar_tensor", lambda o: torch.remainder(5, o), [v([2, 0], I64)], scalar=5)


# ---- copysign, fmax, fmin, xlogy, heaviside ----
SGN = [1.0, -1.0, 0.0, -0.0, INF, -INF, NAN, -5.0, 2.0, -3.0, 0.5]
MAG = [2.0, 2.0, -3.0, 3.0, 0.0, -0.0, 1.0, 1.0, NAN, INF, -INF]
for d in [F32, F64]:
    case("copysign", torch.copysign, [v(MAG, d), v(SGN, d)])
    case("fmax", torch.fmax, [v(MAG, d), v(SGN, d)])
    case("fmin", torch.fmin, [v(MAG, d), v(SGN, d)])
    case("xlogy", torch.xlogy, [v([0.0, 0.0, 1.0, 2.0, -1.0, 0.0, 3.0, NAN, 2.0, 0.0, 1.0], d), v([0.0, NAN, 0.0, 3.0, 2.0, INF, -1.0, 1.0, NAN, -1.0, INF], d)])
for d in [F16, BF16, I64, I32, U8, B]:
    case("copysign", torch.copysign, [t((3, 4), d), t((3, 4), d)])
    case("fmax", torch.fmax, [t((3, 4), d), t((3, 4), d)])
    case("fmin", torch.fmin, [t((3, 4), d), t((3, 4), d)])
    case("xlogy", torch.xlogy, [t((3, 4), d, "c", 0, 3), t((3, 4), d, "c", 0, 3)])
    case("heaviside", torch.heaviside, [t((3, 4), d), t((4,), d)])
case("heaviside", torch.heaviside, [v([-1.0, 0.0, -0.0, 2.0, NAN, -INF, INF]), v([0.5])])
case("heaviside", torch.heaviside, [v([-1.0, 0.0, 2.0]), v([1], I64)])
case("copysign_scalar", lambda x: torch.copysign(x, -0.0), [v(MAG)], other=-0.0)
case("copysign_scalar", lambda x: torch.copysign(x, 2), [v([-3, 0, 4], I64)], other=2)
case("copysign", torch.copysign, [t((3, 1), F32), t((4,), F64)])
case("fmax", torch.fmax, [t((3, 1), F32), t((4,), I64)])
case("fmin", torch.fmin, [t((4, 5), F32, "t"), v([NAN, 1.0, -1.0, 0.0, 2.0])])
case("xlogy", torch.xlogy, [t((4, 5), F32, "t", 0, 3), t((5,), F64, "c", 0, 3)])
case("xlogy_scalar_other", lambda x: torch.xlogy(x, 3.0), [v([0.0, 1.0, NAN, -2.0])], other=3.0)
case("xlogy_scalar_other", lambda x: torch.xlogy(x, 0), [v([0, 1, 2], I64)], other=0)
case("xlogy_scalar_self", lambda y: torch.xlogy(2.0, y), [v([0.0, 1.0, NAN, -2.0, INF])], scalar=2.0)
case("xlogy_scalar_self", lambda y: torch.xlogy(0, y), [v([0.0, 1.0, NAN])], scalar=0)
for name, fn in [("copysign_", lambda x, y: x.clone().copysign_(y)), ("xlogy_", lambda x, y: x.clone().xlogy_(y)),
                 ("heaviside_", lambda x, y: x.clone().heaviside_(y))]:
    case(name, fn, [t((3, 4), F32, "c", 0, 3), t((4,), F32)])
    case(name, fn, [t((3,), I64, "c", 0, 3), t((3,), F32)])
for name, fn in [("copysign_out", torch.copysign), ("fmax_out", torch.fmax), ("fmin_out", torch.fmin),
                 ("xlogy_out", torch.xlogy)]:
    case(name, lambda x, y, o, f=fn: f(x, y, out=o), [t((2, 3), F64, "c", 0, 3), t((3,), F64), t((1,), F32)])
# PyTorch also rejects an `out` of another dtype; oxten casts into it, as for other pointwise ops.
case("heaviside_out", lambda x, y, o: torch.heaviside(x, y, out=o), [t((2, 3), F64), t((3,), F64), t((1,), F64)])


# ---- activations composed of others, log_sigmoid ----
ACT = {"relu6": F.relu6, "selu": torch.selu, "celu": torch.celu, "log_sigmoid": F.logsigmoid}
for name, fn in ACT.items():
    for d in FLOATS + [I64, B]:
        case(name, fn, [t((3, 4), d, "c", -8.0, 8.0)])
    # PyTorch's log_sigmoid returns a contiguous result; oxten keeps the input's layout, as its
    # other pointwise ops do, so only the values of non-contiguous inputs are compared there.
    if name != "log_sigmoid":
        case(name, fn, [t((4, 5), F32, "t", -8.0, 8.0)])
        case(name, fn, [t((2, 3, 2, 2), F32, "cl", -8.0, 8.0)])
    case(name, fn, [v([-100.0, -20.0, -0.0, 0.0, 3.0, 6.0, 7.5, 50.0, INF, -INF, NAN])])
    case(name, fn, [v([-100.0, -1e-300, 0.5, 700.0, -745.0, NAN], F64)])
for alpha in [2.5, 0.0, -1.5]:
    case("celu", lambda x, a=alpha: torch.celu(x, a), [t((3, 4), F64, "c", -5.0, 5.0)], alpha=alpha)
case("relu6_", lambda x: F.relu6(x.clone(), inplace=True), [t((3, 4), F32, "t", -8.0, 8.0)])
for name in ["selu_", "celu_"]:
    case(name, lambda x, n=name: getattr(torch, n)(x.clone()), [t((3, 4), F32, "t", -8.0, 8.0)])
case("relu6_", lambda x: F.relu6(x.clone(), inplace=True), [t((5,), I64, "c", -9, 9)])
case("celu_", lambda x: torch.celu_(x.clone(), 0.5), [t((3, 4), F64, "c", -5.0, 5.0)], alpha=0.5)
for d in FLOATS + [I64]:
    case("glu", lambda x: F.glu(x), [t((3, 4), d)], dim=-1)
case("glu", lambda x: F.glu(x, 0), [t((4, 3), F32, "t")], dim=0)
case("glu", lambda x: F.glu(x, 1), [t((2, 6, 2, 2), F32, "cl")], dim=1)
case("glu", lambda x: F.glu(x, 1), [t((3, 3), F32)], dim=1)
case("glu", lambda x: F.glu(x, 0), [t((), F32)], dim=0)
case("glu", lambda x: F.glu(x, -1), [t((2, 0), F32)], dim=-1)
for d in FLOATS:
    case("prelu", F.prelu, [t((2, 3, 4), d), t((3,), d, "c", 0.0, 1.0)])
case("prelu", F.prelu, [t((2, 3), F32), t((1,), F32)])
case("prelu", F.prelu, [t((4,), F32), t((1,), F32)])
case("prelu", F.prelu, [t((2, 3, 2, 2), F32, "cl"), t((3,), F32)])
case("prelu", F.prelu, [t((4, 3), F32, "t"), t((3,), F32)])
case("prelu", F.prelu, [t((2, 3), F32), t((), F32)])
case("prelu", F.prelu, [t((4,), F32), t((4,), F32)])
case("prelu", F.prelu, [t((2, 3), F32), t((3, 1), F32)])
case("prelu", F.prelu, [t((), F32), t((3,), F32)])
case("prelu", F.prelu, [t((2, 3), F32), t((3,), F64)])
case("prelu", F.prelu, [t((2, 3), I64), t((3,), I64)])
case("prelu", F.prelu, [v([-INF, -0.0, NAN, 2.0]), v([0.5])])
case("rrelu", lambda x: F.rrelu(x), [t((3, 4), F32, "c", -5.0, 5.0)], lower=0.125, upper=1 / 3)
case("rrelu", lambda x: F.rrelu(x, 0.1, 0.3), [t((3, 4), F64, "c", -5.0, 5.0)], lower=0.1, upper=0.3)
case("rrelu", lambda x: F.rrelu(x), [t((3,), I64)], lower=0.125, upper=1 / 3)
case("rrelu_", lambda x: F.rrelu(x.clone(), 0.2, 0.4, inplace=True), [t((3, 4), F32, "c", -5.0, 5.0)], lower=0.2,
     upper=0.4)


# ---- clamp_min, clamp_max: declared by `pointwise:` alone ----
for name, fn in [("clamp_min", torch.clamp_min), ("clamp_max", torch.clamp_max)]:
    for d in FLOATS + [I64, U8]:
        case(name, lambda x, f=fn: f(x, 1), [t((3, 4), d)], bound=1)
    case(name, lambda x, f=fn: f(x, 1.5), [t((3, 4), I64)], bound=1.5)
    case(name, lambda x, f=fn: f(x, NAN), [t((3,), F32)], bound=NAN)
    case(name, lambda x, f=fn: f(x, -0.5), [v([NAN, -1.0, 0.0, INF, -INF])], bound=-0.5)
    case(name + "_tensor", fn, [t((3, 4), F32, "t"), t((4,), F32)])
    case(name + "_tensor", fn, [t((3, 1), I64), t((4,), F64)])
    case(name + "_tensor", fn, [v([NAN, 1.0, 2.0]), v([0.0, NAN, 3.0])])
    case(name + "_", lambda x, f=name: getattr(x.clone(), f + "_")(0.25), [t((3, 4), F32)], bound=0.25)
    case(name + "_", lambda x, f=name: getattr(x.clone(), f + "_")(2), [t((3,), I64)], bound=2)
    case(name + "_tensor_", lambda x, y, f=name: getattr(x.clone(), f + "_")(y), [t((3, 4), F32), t((4,), F32)])
    # PyTorch also rejects an `out` of another dtype here; oxten casts into it.
    case(name + "_out", lambda x, o, f=fn: f(x, 0.5, out=o), [t((2, 3), F64), t((1,), F64)], bound=0.5)
    case(name + "_tensor_out", lambda x, y, o, f=fn: f(x, y, out=o), [t((2, 3), F64), t((3,), F64), t((1,), F64)])


# ---- square, fix: composites ----
for d in FLOATS + [I64, I8, U8, B]:
    case("square", torch.square, [t((3, 4), d)])
    case("fix", torch.fix, [t((3, 4), d)])
case("square", torch.square, [t((4, 5), F32, "t")])
case("square", torch.square, [v([INF, -INF, NAN, 1e20, -0.0])])
case("square_", lambda x: x.clone().square_(), [t((3, 4), F32)])
case("square_", lambda x: x.clone().square_(), [t((3,), I64)])
case("square_", lambda x: x.clone().square_(), [t((3,), B)])
case("square_out", lambda x, o: torch.square(x, out=o), [t((2, 3), F64), t((1,), F64)])
case("fix", torch.fix, [v(EDGES)])
case("fix_", lambda x: x.clone().fix_(), [t((3, 4), F32, "t")])
case("fix_out", lambda x, o: torch.fix(x, out=o), [t((2, 3), F64), t((1,), F32)])


# ---- div with a rounding mode ----
for mode in ["trunc", "floor", None]:
    m = mode or "none"
    dv = lambda x, y, md=mode: torch.div(x, y, rounding_mode=md)
    for d in [F32, F64]:
        case("div_mode", dv, [v(NUM, d), v(DEN, d)], mode=m)
    for d in [F16, BF16]:
        case("div_mode", dv, [t((3, 4), d, "c", -5, 5), t((3, 4), d, "c", 0.5, 3)], mode=m)
    for d in [I64, I8, U8]:
        nums = [abs(x) for x in INUM] if d == U8 else INUM
        dens = [abs(x) for x in IDEN] if d == U8 else IDEN
        case("div_mode", dv, [v(nums, d), v(dens, d)], mode=m)
        case("div_mode_scalar", lambda x, md=mode: torch.div(x, -3, rounding_mode=md), [v(nums, d)], mode=m, other=-3)
        case("div_mode", dv, [v(nums, d), v([1, 0, 2, 1, 1, 1, 1, 1, 1], d)], mode=m)
        case("div_mode_scalar", lambda x, md=mode: torch.div(x, 0, rounding_mode=md), [v(nums, d)], mode=m, other=0)
    case("div_mode", dv, [v([True, False], B), v([True, True], B)], mode=m)
    case("div_mode", dv, [t((4, 5), F32, "t"), t((5,), I64, "c", 1, 4)], mode=m)
    case("div_mode_scalar", lambda x, md=mode: torch.div(x, 2.5, rounding_mode=md), [v(INUM, I64)], mode=m, other=2.5)
    case("div_mode_", lambda x, y, md=mode: x.clone().div_(y, rounding_mode=md), [v(INUM, I64), v(IDEN, I64)], mode=m)
    case("div_mode_", lambda x, y, md=mode: x.clone().div_(y, rounding_mode=md), [t((3, 4), F32), t((4,), F32)],
         mode=m)
    case("div_mode_scalar_", lambda x, md=mode: x.clone().div_(-2, rounding_mode=md), [v(INUM, I64)], mode=m,
         other=-2)
    case("div_mode_out", lambda x, y, o, md=mode: torch.div(x, y, rounding_mode=md, out=o),
         [t((2, 3), F64), t((3,), F64, "c", 0.5, 2), t((1,), F64)], mode=m)
    case("div_mode_scalar_out", lambda x, o, md=mode: torch.div(x, 1.5, rounding_mode=md, out=o),
         [t((2, 3), F64), t((1,), F64)], mode=m, other=1.5)
case("div_mode", lambda x, y: torch.div(x, y, rounding_mode="round"), [t((3,), F32), t((3,), F32)], mode="round")


# ---- logical and bitwise ops ----
LA = [0.0, 2.0, NAN, -0.0, 1.0, 0.0]
LB = [1.0, 0.0, 1.0, 3.0, -INF, 0.0]
for name in ["logical_and", "logical_or", "logical_xor"]:
    fn = getattr(torch, name)
    case(name, fn, [v(LA), v(LB)])
    for d in [F64, F16, BF16, I64, I8, U8, B]:
        case(name, fn, [t((3, 4), d, "c", -2, 2), t((4,), d, "c", -2, 2)])
    case(name, fn, [t((3, 4), I32, "c", -2, 2), t((3, 1), F32, "c", -2, 2)])
    case(name, fn, [t((4, 5), F32, "t", -1, 1), t((5,), B)])
    case(name + "_", lambda x, y, n=name: getattr(x.clone(), n + "_")(y), [t((3, 4), F32, "c", -1, 1), t((4,), I64)])
    case(name + "_out", lambda x, y, o, f=fn: f(x, y, out=o), [t((2, 3), I64, "c", -1, 1), t((3,), I64), t((1,), F32)])
IA = [-8, 3, 127, -128, 0, 5, -1, 64]
IB = [1, 7, 8, -1, 3, 9, 63, 2]
for name in ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]:
    fn = getattr(torch, name)
    for d in [I64, I32, I16, I8]:
        case(name, fn, [v(IA, d), v(IB, d)])
    case(name, fn, [v([200, 3, 255, 1, 0, 128, 7, 64], U8), v([1, 8, 9, 200, 3, 7, 2, 255], U8)])
    case(name, fn, [v([True, False, True, False], B), v([True, True, False, False], B)])
    case(name, fn, [t((3, 4), F32), t((3, 4), F32)])
    case(name, fn, [t((3, 4), I64, "t", -50, 50), t((4,), I8, "c", 0, 6)])
    case(name, fn, [t((3,), I64), t((3,), F64)])
    case(name + "_scalar", lambda x, f=fn: f(x, 3), [v(IA, I64)], other=3)
    case(name + "_scalar", lambda x, f=fn: f(x, -2), [v(IA, I16)], other=-2)
    case(name + "_scalar", lambda x, y, f=fn: f(x, y), [v([True, False], B), ("s", True)])
    case(name + "_scalar", lambda x, f=fn: f(x, 2.5), [v(IA, I64)], other=2.5)
    case(name + "_scalar_tensor", lambda y, f=fn: f(6, y), [v([1, 2, 3, 70], I64)], scalar=6)
    case(name + "_", lambda x, y, n=name: getattr(x.clone(), n + "_")(y), [v(IA, I32), v(IB, I32)])
    case(name + "_", lambda x, y, n=name: getattr(x.clone(), n + "_")(y), [v(IA, I32), v(IB, I64)])
    case(name + "_out", lambda x, y, o, f=fn: f(x, y, out=o), [v(IA, I64), v(IB, I64), t((1,), I64)])
case("bitwise_not", torch.bitwise_not, [v(IA, I64)])
for d in [I32, I16, I8, U8, B, F32]:
    case("bitwise_not", torch.bitwise_not, [t((3, 4), d, "c", -9, 9)])
case("bitwise_not", torch.bitwise_not, [t((4, 5), I64, "t", -9, 9)])
case("bitwise_not_", lambda x: x.clone().bitwise_not_(), [v([True, False], B)])
case("bitwise_not_out", lambda x, o: torch.bitwise_not(x, out=o), [v(IA, I64), t((1,), I64)])


g.save()
