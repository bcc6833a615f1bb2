"""Regenerates tests/golden/attention.txt: PyTorch's scaled_dot_product_attention outputs and
gradients, replayed by tests/tests/attention.rs.

Cases: "sdpa" records the output; "sdpa_grad" records the output and the gradients of query,
key and value for a recorded output gradient (the last input). Attributes: is_causal, scale,
enable_gqa, mask ("none", "bool" or "float": then the input after value is the mask).
Run: python3 scripts/golden_attention.py
"""
import torch
import torch.nn.functional as F

from golden_lib import Golden

g = Golden("attention.txt", "scripts/golden_attention.py")
case = g.case
F32, F64, BF16, B = torch.float32, torch.float64, torch.bfloat16, torch.bool


def t(shape, dtype=F32, lo=-2.0, hi=2.0):
    return ("t", shape, dtype, "c", lo, hi)


def sdpa(mask, causal, scale, gqa):
    def f(q, k, v, *rest):
        m = rest[0] if mask != "none" else None
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal, scale=scale, enable_gqa=gqa)
    return f


def sdpa_grad(mask, causal, scale, gqa):
    def f(q, k, v, *rest):
        m = rest[0] if mask != "none" else None
        go = rest[-1]
        q, k, v = (x.detach().requires_grad_(True) for x in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal, scale=scale, enable_gqa=gqa)
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), go)
        return out, dq, dk, dv
    return f


def add(op, fn_of, b, hq, hk, l, s, e, ev, dtype=F32, mask="none", causal=False, scale=None, gqa=False):
    args = [t((b, hq, l, e), dtype), t((b, hk, s, e), dtype), t((b, hk, s, ev), dtype)]
    if mask == "bool":
        args.append(t((l, s), B))
    elif mask == "float":
        args.append(t((1, hq, l, s), dtype, -1.0, 1.0))
    if op == "sdpa_grad":
        args.append(t((b, hq, l, ev), dtype))
    attrs = dict(is_causal=causal, mask=mask, enable_gqa=gqa)
    if scale is not None:
        attrs["scale"] = scale
    case(op, fn_of(mask, causal, scale, gqa), args, **attrs)


for op, fn_of in [("sdpa", sdpa), ("sdpa_grad", sdpa_grad)]:
    add(op, fn_of, 2, 3, 3, 5, 7, 4, 6)
    add(op, fn_of, 1, 2, 2, 9, 9, 8, 8, causal=True)
    add(op, fn_of, 1, 2, 2, 6, 4, 3, 5, causal=True)
    add(op, fn_of, 2, 2, 2, 5, 7, 4, 4, mask="bool")
    add(op, fn_of, 1, 2, 2, 5, 7, 4, 4, mask="float")
    add(op, fn_of, 1, 2, 2, 4, 6, 4, 4, scale=0.3)
    add(op, fn_of, 1, 4, 2, 5, 5, 4, 4, causal=True, gqa=True)
    add(op, fn_of, 1, 2, 2, 5, 7, 4, 4, dtype=F64, causal=True)
    # Longer than one block of queries (64) and keys (128): the online softmax across blocks.
    add(op, fn_of, 1, 1, 1, 150, 300, 8, 8, causal=True)
add("sdpa", sdpa, 1, 2, 2, 70, 140, 16, 16, dtype=BF16, causal=True)
# A bool mask with a row that attends to nothing: zeros, not NaN.
dead = torch.ones(3, 4, dtype=torch.bool)
dead[1] = False
case("sdpa", sdpa("bool", False, None, False), [t((1, 1, 3, 2)), t((1, 1, 4, 2)), t((1, 1, 4, 2)), ("v", dead)],
     is_causal=False, mask="bool", enable_gqa=False)
# Errors.
case("sdpa", sdpa("bool", True, None, False), [t((1, 1, 3, 2)), t((1, 1, 4, 2)), t((1, 1, 4, 2)), t((3, 4), B)],
     is_causal=True, mask="bool", enable_gqa=False)
case("sdpa", sdpa("none", False, None, False), [t((1, 1, 3, 2)), t((1, 1, 4, 2), F64), t((1, 1, 4, 2))],
     is_causal=False, mask="none", enable_gqa=False)
g.save()
