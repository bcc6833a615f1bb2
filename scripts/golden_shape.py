"""Regenerates tests/golden/shape.txt: PyTorch's outputs for padding, resampling and patch ops
(pad in four modes, constant_pad_nd, upsample_nearest2d/bilinear2d, pixel_shuffle/unshuffle,
im2col/col2im), the diagonal views (diagonal, unfold, diag_embed), narrow_copy, meshgrid and
triu/tril_indices, replayed by tests/tests/shape_ops.rs.

Format: scripts/golden_lib.py. Run: python3 scripts/golden_shape.py  (needs torch).
"""
import torch
import torch.nn.functional as F

from golden_lib import Golden

g = Golden("shape.txt", "scripts/golden_shape.py")
case = g.case

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, B = torch.int64, torch.bool


def t(shape, dtype=F32, layout="c", lo=-3.0, hi=3.0):
    return ("t", shape, dtype, layout, lo, hi)


def lst(v):
    return ",".join(str(x) for x in v)


# ---- pad ----
for mode in ["constant", "reflect", "replicate", "circular"]:
    for shape, pad in [((1, 2, 5), [2, 1]), ((1, 2, 4, 5), [1, 2, 2, 0]), ((2, 4, 5), [1, 1, 3, 2]),
                       ((1, 1, 3, 4, 5), [1, 0, 2, 1, 1, 2]), ((2, 5), [0, 3])]:
        case("pad", lambda x, p=pad, m=mode: F.pad(x, p, mode=m), [t(shape)], pad=lst(pad), mode=mode)
case("pad", lambda x: F.pad(x, [1, 2], value=7.5), [t((2, 3))], pad="1,2", mode="constant", value=7.5)
case("pad", lambda x: F.pad(x, [-1, 2, 1, -1]), [t((3, 4))], pad="-1,2,1,-1", mode="constant")
case("pad", lambda x: F.pad(x, [1, 1]), [t((2, 3), I64)], pad="1,1", mode="constant")
case("pad", lambda x: F.pad(x, [1, 1], mode="reflect"), [t((2, 3), F64, "t")], pad="1,1", mode="reflect")
case("pad", lambda x: F.pad(x, [-1, 2], mode="circular"), [t((1, 2, 4))], pad="-1,2", mode="circular")
case("pad", lambda x: F.pad(x, [1]), [t((2, 3))], pad="1", mode="constant")
case("pad", lambda x: F.pad(x, [1, 1, 1, 1]), [t((3,))], pad="1,1,1,1", mode="constant")
case("pad", lambda x: F.pad(x, [3, 3], mode="reflect"), [t((1, 3))], pad="3,3", mode="reflect")
case("pad", lambda x: F.pad(x, [1, 1], mode="reflect"), [t((3,))], pad="1,1", mode="reflect")
case("pad", lambda x: F.pad(x, [1, 1, 1, 1, 1, 1], mode="reflect"), [t((1, 2, 3))], pad="1,1,1,1,1,1", mode="reflect")
case("pad", lambda x: F.pad(x, [1, 1], mode="edge"), [t((1, 3))], pad="1,1", mode="edge")
case("pad", lambda x: F.pad(x, [4, 0], mode="circular"), [t((1, 1, 3))], pad="4,0", mode="circular")
case("pad", lambda x: F.pad(x, [1, 1], mode="reflect", value=1.0), [t((1, 3))], pad="1,1", mode="reflect", value=1.0)
case("pad", lambda x: F.pad(x, [-4, 0]), [t((2, 3))], pad="-4,0", mode="constant")

# ---- upsampling ----
up_n = torch._C._nn.upsample_nearest2d
up_b = torch._C._nn.upsample_bilinear2d
for size in [(4, 6), (3, 5), (1, 1), (7, 2)]:
    case("upsample_nearest", lambda x, s=size: up_n(x, list(s), None), [t((2, 3, 3, 4))], size=lst(size))
    for ac in [False, True]:
        case("upsample_bilinear", lambda x, s=size, a=ac: up_b(x, list(s), a, None), [t((2, 3, 3, 4))], size=lst(size), align_corners=ac)
for scale in [(2.0, 2.0), (1.5, 0.5), (0.6, 1.7)]:
    case("upsample_nearest", lambda x, s=scale: up_n(x, None, list(s)), [t((1, 2, 5, 4))], scales=lst(scale))
    case("upsample_bilinear", lambda x, s=scale: up_b(x, None, False, list(s)), [t((1, 2, 5, 4))], scales=lst(scale), align_corners=False)
case("upsample_bilinear", lambda x: up_b(x, [5, 7], False, None), [t((1, 2, 3, 4), F64)], size="5,7", align_corners=False)
case("upsample_bilinear", lambda x: up_b(x, [5, 7], True, None), [t((1, 2, 3, 4), BF16)], size="5,7", align_corners=True)
case("upsample_nearest", lambda x: up_n(x, [4, 3], None), [t((1, 2, 3, 2), I64)], size="4,3")
case("upsample_nearest", lambda x: up_n(x, [2, 2], [1.0, 1.0]), [t((1, 1, 2, 2))], size="2,2", scales="1.0,1.0")
case("upsample_nearest", lambda x: up_n(x, None, None), [t((1, 1, 2, 2))])
case("upsample_nearest", lambda x: up_n(x, [0, 2], None), [t((1, 1, 2, 2))], size="0,2")

# ---- pixel shuffle, im2col / col2im ----
case("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), [t((2, 8, 2, 3))], r=2)
case("pixel_shuffle", lambda x: F.pixel_shuffle(x, 3), [t((9, 2, 2))], r=3)
case("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), [t((1, 6, 2, 2))], r=2)
case("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), [t((4, 2))], r=2)
case("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), [t((2, 2, 4, 6))], r=2)
case("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), [t((1, 1, 3, 4))], r=2)
for k, d, p, s in [((2, 2), (1, 1), (0, 0), (1, 1)), ((3, 2), (1, 2), (1, 0), (2, 1)), ((2, 3), (2, 1), (1, 1), (1, 2))]:
    attrs = dict(k=lst(k), d=lst(d), p=lst(p), s=lst(s))
    case("im2col", lambda x, k=k, d=d, p=p, s=s: F.unfold(x, k, d, p, s), [t((2, 3, 5, 6))], **attrs)
    x = torch.randn(2, 3, 5, 6)
    cols = F.unfold(x, k, d, p, s)
    case("col2im", lambda c, k=k, d=d, p=p, s=s: F.fold(c, (5, 6), k, d, p, s), [t(tuple(cols.shape))], out="5,6", **attrs)
case("im2col", lambda x: F.unfold(x, 2), [t((3, 4, 4))], k="2,2", d="1,1", p="0,0", s="1,1")
case("im2col", lambda x: F.unfold(x, 3), [t((1, 1, 2, 2))], k="3,3", d="1,1", p="0,0", s="1,1")
case("col2im", lambda c: F.fold(c, (3, 3), 2), [t((1, 5, 4))], out="3,3", k="2,2", d="1,1", p="0,0", s="1,1")
case("col2im", lambda c: F.fold(c, (3, 3), 2), [t((1, 4, 5))], out="3,3", k="2,2", d="1,1", p="0,0", s="1,1")

# ---- diagonal views, narrow_copy, diag_embed ----
for off, d1, d2 in [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (2, 1, 0), (0, -1, -2), (5, 0, 1)]:
    case("diagonal", lambda x, o=off, a=d1, b=d2: torch.diagonal(x, o, a, b), [t((3, 4))], offset=off, dim1=d1, dim2=d2)
case("diagonal", lambda x: torch.diagonal(x, 1, 0, 2), [t((3, 2, 4))], offset=1, dim1=0, dim2=2)
case("diagonal", lambda x: torch.diagonal(x, 0, 0, 1), [t((4, 3), F32, "t")], offset=0, dim1=0, dim2=1)
case("diagonal", lambda x: torch.diagonal(x, 0, 0, 0), [t((3, 4))], offset=0, dim1=0, dim2=0)
for dim, size, step in [(0, 2, 1), (1, 3, 2), (-1, 4, 4), (0, 5, 1)]:
    case("unfold", lambda x, a=dim, b=size, c=step: x.unfold(a, b, c), [t((5, 4))], dim=dim, size=size, step=step)
case("unfold", lambda x: x.unfold(0, 6, 1), [t((5,))], dim=0, size=6, step=1)
case("unfold", lambda x: x.unfold(0, 2, 0), [t((5,))], dim=0, size=2, step=0)
case("unfold", lambda x: x.unfold(0, 2, 1), [t((5, 3), F32, "t")], dim=0, size=2, step=1)
case("narrow_copy", lambda x: x.narrow_copy(1, 1, 2), [t((3, 4))], dim=1, start=1, length=2)
case("narrow_copy", lambda x: x.narrow_copy(1, 1, 5), [t((3, 4))], dim=1, start=1, length=5)
for off, d1, d2 in [(0, -2, -1), (1, -2, -1), (-2, -2, -1), (1, 0, 2), (0, 1, 1)]:
    case("diag_embed", lambda x, o=off, a=d1, b=d2: torch.diag_embed(x, o, a, b), [t((2, 3))], offset=off, dim1=d1, dim2=d2)

# ---- meshgrid, triu/tril_indices ----
for ix in ["ij", "xy"]:
    case("meshgrid", lambda a, b, c, i=ix: torch.meshgrid(a, b, c, indexing=i), [t((2,)), t((3,)), t(())], indexing=ix)
case("meshgrid", lambda a, b: torch.meshgrid(a, b, indexing="yx"), [t((2,)), t((3,))], indexing="yx")
case("meshgrid", lambda a, b: torch.meshgrid(a, b, indexing="ij"), [t((2,)), t((3,), F64)], indexing="ij")
for row, col, off in [(3, 4, 0), (3, 4, 1), (4, 3, -1), (3, 3, 5), (0, 3, 0)]:
    case("triu_indices", lambda r=row, c=col, o=off: torch.triu_indices(r, c, o), [], row=row, col=col, offset=off)
    case("tril_indices", lambda r=row, c=col, o=off: torch.tril_indices(r, c, o), [], row=row, col=col, offset=off)
case("triu_indices", lambda: torch.triu_indices(-1, 4), [], row=-1, col=4, offset=0)

g.save()
