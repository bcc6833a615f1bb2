"""Regenerates tests/golden/autocast.txt: PyTorch's outputs under CPU autocast.

Each case runs one operator inside `torch.autocast("cpu", dtype=...)` (attribute `region`: bf16,
the default, f16, or `off` for a nested `enabled=False` region) and records its inputs and
PyTorch's output dtype, shape, strides and values, or its error (format: scripts/golden_lib.py).
tests/tests/autocast.rs replays every case through oxten inside the same region.
Run: python3 scripts/golden_autocast.py  (needs torch).
"""
import torch
import torch.nn.functional as F

from golden_lib import Golden

g = Golden("autocast.txt", "scripts/golden_autocast.py")
f32, f64, f16, bf16, i64 = torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64
REGION = {"bf16": bf16, "f16": f16}


def case(op, fn, args, region="bf16", **attrs):
    """`fn` run inside the autocast region `region`."""

    def run(*xs):
        with torch.autocast("cpu", dtype=REGION.get(region, bf16)):
            if region == "off":
                with torch.autocast("cpu", enabled=False):
                    return fn(*xs)
            return fn(*xs)

    g.case(op, run, args, region=region, **attrs)


def t(shape, dtype=f32, layout="c", lo=-3.0, hi=3.0):
    return ("t", shape, dtype, layout, lo, hi)


# ---- lower_precision_fp: matrix products and convolutions ----
for d in [f32, bf16, f16]:
    case("mm", torch.mm, [t((3, 4), d), t((4, 5), d)])
case("mm", torch.mm, [t((3, 4), f32, "t"), t((4, 5), f32, "t")])
case("mm", torch.mm, [t((0, 4)), t((4, 5))])
case("mm", torch.mm, [t((3, 4), f64), t((4, 5), f64)])  # f64 is never cast
case("mm", torch.mm, [t((3, 4), f32), t((4, 5), f64)])  # f32 -> bf16, f64 kept: a dtype error
case("mm", torch.mm, [t((3, 4)), t((4, 5))], region="f16")
case("mm", torch.mm, [t((3, 4), bf16), t((4, 5), bf16)], region="f16")
case("mm", torch.mm, [t((3, 4)), t((4, 5))], region="off")
case("mm_sum", lambda a, b: torch.mm(a, b).sum(), [t((3, 4)), t((4, 5))])  # sum has no CPU policy
case("bmm", torch.bmm, [t((2, 3, 4)), t((2, 4, 5))])
case("addmm", torch.addmm, [t((5,)), t((3, 4)), t((4, 5))])
case("addmm", lambda a, b, c: torch.addmm(a, b, c, beta=0.5, alpha=2), [t((3, 5)), t((3, 4), bf16), t((4, 5))], beta=0.5, alpha=2)
case("matmul", torch.matmul, [t((2, 3, 4)), t((4, 5))])
case("matmul", torch.matmul, [t((4,)), t((4,))])
case("linear", F.linear, [t((3, 4)), t((5, 4)), t((5,))])
case("linear", F.linear, [t((2, 3, 4)), t((5, 4))])
case("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1), [t((2, 3, 5, 5)), t((4, 3, 3, 3)), t((4,))], padding=1)
case("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1), [t((2, 3, 5, 5), f32, "cl"), t((4, 3, 3, 3)), t((4,))], padding=1)
case("conv2d_same", lambda x, w: F.conv2d(x, w, padding="same"), [t((1, 2, 4, 4)), t((3, 2, 3, 3))])
case("conv1d", lambda x, w: F.conv1d(x, w, stride=2), [t((2, 3, 7)), t((4, 3, 3))], stride=2)
case("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2), [t((1, 3, 3, 3)), t((3, 2, 2, 2)), t((2,))], stride=2)

# ---- fp32: losses and prod ----
case("cross_entropy", F.cross_entropy, [t((4, 5), bf16), ("v", torch.tensor([0, 4, 2, 1]))])
case("cross_entropy", F.cross_entropy, [t((4, 5)), ("v", torch.tensor([0, 4, 2, 1]))])
case("mse_loss", F.mse_loss, [t((3, 4), bf16), t((3, 4), bf16)])
case("mse_loss", F.mse_loss, [t((3, 4), bf16), t((3, 4), f64)])
case("nll_loss", F.nll_loss, [t((4, 5), bf16), ("v", torch.tensor([0, 4, 2, 1]))])
case("bce_with_logits", F.binary_cross_entropy_with_logits, [t((3, 4), bf16), t((3, 4), bf16, "c", 0.0, 1.0)])
case("prod", torch.prod, [t((5,), bf16, "c", 0.5, 1.5)])
case("prod_dim", lambda x: torch.prod(x, 1), [t((3, 4), bf16, "c", 0.5, 1.5)], dim=1)
case("prod_dtype", lambda x: torch.prod(x, dtype=bf16), [t((5,), f32, "c", 0.5, 1.5)], dtype="bfloat16")

# ---- promote: cat and stack ----
case("cat", lambda a, b: torch.cat([a, b]), [t((2, 3), bf16), t((1, 3), f32)])
case("cat", lambda a, b: torch.cat([a, b]), [t((2, 3), bf16), t((1, 3), bf16)])
case("cat", lambda a, b: torch.cat([a, b], 1), [t((2, 3), f64), t((2, 2), f32)], dim=1)
case("cat", lambda a, b: torch.cat([a, b]), [t((2, 3), i64), t((1, 3), bf16)])
case("cat", lambda a, b: torch.cat([a, b]), [t((2, 3), f16), t((1, 3), f16)])  # f16 in a bf16 region
case("cat", lambda a, b: torch.cat([a, b]), [t((2, 3), f16), t((1, 3), bf16)], region="f16")
case("stack", lambda a, b: torch.stack([a, b]), [t((2, 3), bf16), t((2, 3), f32)])

# ---- no policy: fall through, in the dtypes given ----
case("sum", torch.sum, [t((3, 4))])
case("sum", torch.sum, [t((3, 4), bf16)])
case("relu", torch.relu, [t((3, 4))])
case("softmax", lambda x: torch.softmax(x, 1), [t((3, 4), bf16)], dim=1)

# ---- in-place and out= variants are not autocast ----
case("addmm_", lambda a, b, c: a.clone().addmm_(b, c), [t((3, 5)), t((3, 4)), t((4, 5))])
case("mm_out", lambda a, b: torch.mm(a, b, out=torch.empty(0)), [t((3, 4)), t((4, 5))])

# ---- a small network: conv, batch norm on bf16 activations with f32 parameters, pool, linear ----


def net(x, cw, cb, bw, bb, lw, lb, y):
    h = F.conv2d(x, cw, cb, padding=1)
    h = F.batch_norm(h, torch.zeros(4), torch.ones(4), bw, bb, training=True)
    h = F.max_pool2d(F.relu(h), 2).flatten(1)
    logits = F.linear(h, lw, lb)
    return logits, F.cross_entropy(logits, y)


case("net", net, [t((3, 1, 4, 4)), t((4, 1, 3, 3)), t((4,)), t((4,), f32, "c", 0.5, 1.5), t((4,)), t((5, 16)), t((5,)),
                  ("v", torch.tensor([0, 3, 4]))])

g.save()
