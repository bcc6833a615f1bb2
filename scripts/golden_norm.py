"""Regenerates tests/golden/norm.txt: PyTorch's outputs for the normalization operators.

Cases (format: scripts/golden_lib.py), replayed by tests/tests/norm_ops.rs:
- native_batch_norm / batch_norm: outputs, then the running statistics after the call (extra
  outputs: training updates them in place); attrs training, momentum, eps and which optional
  inputs are given (w, b, stats: present ones follow the input in that order);
- native_layer_norm / layer_norm (attr ns = normalized_shape), native_group_norm / group_norm;
- *_backward: the forward op, then its backward op with grad_out (first input) and output mask
  `mask`; only the outputs the mask asks for are recorded;
- norm_grad2: second derivatives. `gx, gw, gb = autograd.grad(y, [x, w, b], v, create_graph=True)`
  through the forward op (attr kind = bn, ln or gn), then `autograd.grad(loss, [x, w, v])` for
  `loss = sum(gx²)` (plus `sum(gw²) + sum(gb²)` when attr pen=1); outputs contiguous, zeros for
  unused inputs. The first input is `v`. oxten replays the batch and layer norm cases through the
  forward op (its create_graph backward records the backward op's node); group norm cases with
  via=bwd call `native_group_norm_backward` directly (PyTorch cannot differentiate it, so the
  values come from its differentiable group norm backward);
- f32/f64/bf16/f16, channels_last (layout cl) and transposed (t) inputs, mixed bf16/f16 input
  with f32 parameters, empty inputs, and errors (PyTorch's message must appear in oxten's).
Run: python3 scripts/golden_norm.py  (needs torch).
"""
import torch

from golden_lib import Golden

g = Golden("norm.txt", "scripts/golden_norm.py")
case = g.case

F32, F64, BF16, F16 = torch.float32, torch.float64, torch.bfloat16, torch.float16
FLOATS = [F32, F64, BF16, F16]


def flags(w, b, stats):
    return dict(w=int(w), b=int(b), stats=int(stats))


def bn_args(shape, dt, layout, w, b, stats, pdt=None):
    """Inputs of a batch-norm case: x, then weight, bias, running_mean, running_var if given."""
    pdt = pdt or dt
    c = shape[1]
    args = [("t", shape, dt, layout)]
    if w:
        args.append(("t", (c,), pdt, "c", 0.5, 1.5))
    if b:
        args.append(("t", (c,), pdt, "c"))
    if stats:
        args.append(("t", (c,), pdt, "c", -0.5, 0.5))
        args.append(("t", (c,), pdt, "c", 0.5, 2.0))
    return args


def split(a, w, b, stats):
    """(x, weight, bias, running_mean, running_var) from the built inputs."""
    it = iter(a)
    x = next(it)
    wt = next(it) if w else None
    bt = next(it) if b else None
    rm = next(it) if stats else None
    rv = next(it) if stats else None
    return x, wt, bt, rm, rv


def bn_case(op, shape, dt, layout, training, w=True, b=True, stats=True, momentum=0.1, eps=1e-5, pdt=None):
    def fn(*a):
        x, wt, bt, rm, rv = split(a, w, b, stats)
        if op == "batch_norm":
            outs = (torch.batch_norm(x, wt, bt, rm, rv, training, momentum, eps, False),)
        elif op == "batch_norm_f":
            outs = (torch.nn.functional.batch_norm(x, rm, rv, wt, bt, training, momentum, eps),)
        else:
            outs = tuple(torch.native_batch_norm(x, wt, bt, rm, rv, training, momentum, eps))
        return outs + ((rm, rv) if stats else ())

    case(op, fn, bn_args(shape, dt, layout, w, b, stats, pdt), training=int(training), momentum=momentum, eps=eps,
         **flags(w, b, stats))


# ---- native_batch_norm: dtypes, ranks, training and evaluation ----
for dt in FLOATS:
    for shape in [(6, 3), (4, 3, 5), (2, 3, 4, 5)]:
        for training in [True, False]:
            bn_case("native_batch_norm", shape, dt, "c", training)
for dt in [F32, F64, BF16]:
    for training in [True, False]:
        bn_case("native_batch_norm", (2, 3, 4, 5), dt, "cl", training)
        bn_case("native_batch_norm", (3, 4, 2, 3), dt, "cl", training, w=False, b=False)
bn_case("native_batch_norm", (5, 4), F32, "t", True)
bn_case("native_batch_norm", (5, 4), F64, "t", False)
bn_case("native_batch_norm", (2, 3, 2, 2, 2), F32, "c", True)
bn_case("native_batch_norm", (2, 3, 2, 2, 2), F64, "c", False)
bn_case("native_batch_norm", (2, 5, 3), F32, "c", True, w=False, b=False, stats=False)
bn_case("native_batch_norm", (2, 5, 3), BF16, "c", True, w=False, b=False, stats=False)
bn_case("native_batch_norm", (4, 5), F64, "c", True, w=True, b=False, stats=False)
bn_case("native_batch_norm", (4, 5), F64, "c", True, w=False, b=True, stats=True, momentum=0.3)
bn_case("native_batch_norm", (4, 5), F32, "c", False, w=False, b=False, stats=True, eps=0.01)
# A batch of one value per channel: the unbiased variance of the running update is NaN.
bn_case("native_batch_norm", (1, 3), F64, "c", True)
# Mixed types: bf16/f16 input with f32 parameters and running statistics.
for dt in [BF16, F16]:
    for training in [True, False]:
        bn_case("native_batch_norm", (2, 3, 4, 5), dt, "c", training, pdt=F32)
    bn_case("native_batch_norm", (2, 3, 4, 5), dt, "cl", True, pdt=F32)
bn_case("native_batch_norm", (2, 3, 4), BF16, "c", True, w=False, b=False, stats=True, pdt=F32)
# Empty input in evaluation mode.
bn_case("native_batch_norm", (0, 3), F32, "c", False)
# ---- native_batch_norm errors ----
bn_case("native_batch_norm", (0, 3), F32, "c", True)
bn_case("native_batch_norm", (4, 3), F32, "c", False, stats=False)
bn_case("native_batch_norm", (4, 3), F32, "c", True, pdt=F64)
bn_case("native_batch_norm", (4, 3), F64, "c", True, pdt=F32)
bn_case("native_batch_norm", (4, 3), BF16, "c", True, pdt=F16)
case("native_batch_norm", lambda x, rm, rv: torch.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5),
     [("t", (4, 3), F32, "c"), ("t", (3,), F32, "c"), ("t", (3,), F64, "c", 0.5, 2.0)], training=1, momentum=0.1,
     eps=1e-5, w=0, b=0, stats=1)
case("native_batch_norm", lambda x: torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5),
     [("t", (4, 3), torch.int64, "c")], training=1, momentum=0.1, eps=1e-5, w=0, b=0, stats=0)
case("native_batch_norm", lambda x: torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5),
     [("t", (3,), F32, "c")], training=1, momentum=0.1, eps=1e-5, w=0, b=0, stats=0)

# ---- batch_norm (composite) ----
bn_case("batch_norm", (4, 3, 5), F32, "c", True)
bn_case("batch_norm", (2, 3, 4, 5), F32, "cl", False)
bn_case("batch_norm", (2, 3, 4, 5), BF16, "cl", True, pdt=F32)
bn_case("batch_norm", (0, 3, 2), F32, "c", True)
for name, bad in [("weight", 1), ("bias", 2), ("running_mean", 3), ("running_var", 4)]:
    def bad_fn(*a, bad=bad):
        a = list(a)
        a[bad] = torch.cat([a[bad], a[bad][:1]])
        x, wt, bt, rm, rv = a
        return torch.batch_norm(x, wt, bt, rm, rv, True, 0.1, 1e-5, False)
    case("batch_norm", bad_fn, bn_args((4, 3), F32, "c", True, True, True), training=1, momentum=0.1, eps=1e-5,
         w=1, b=1, stats=1, grow=bad)
bn_case("batch_norm", (4, 3), F32, "c", False, stats=False)


# torch.nn.functional.batch_norm's check; its message ends with a Python `torch.Size(...)`, so the
# recorded message stops before the sizes.
def one_value_per_channel(x):
    try:
        torch.nn.functional.batch_norm(x, None, None, training=True)
    except ValueError as e:
        raise ValueError(str(e).split(", got")[0]) from e


case("batch_norm", one_value_per_channel, [("t", (1, 3), F32, "c")], training=1, momentum=0.1, eps=1e-5, w=0, b=0,
     stats=0)
case("batch_norm", one_value_per_channel, [("t", (1, 3, 1, 1), F32, "c")], training=1, momentum=0.1, eps=1e-5,
     w=0, b=0, stats=0)


# ---- native_batch_norm_backward ----
def bn_back_case(shape, dt, layout, training, w=True, stats=True, mask=(1, 1, 1), pdt=None, go_layout=None):
    eps = 1e-5
    pdt = pdt or dt

    def fn(go, *a):
        x, wt, _, rm, rv = split(a, w, False, stats)
        _, sm, si = torch.native_batch_norm(x, wt, None, rm, rv, training, 0.1, eps)
        outs = torch.ops.aten.native_batch_norm_backward(go, x, wt, rm, rv, sm if training else None,
                                                         si if training else None, training, eps,
                                                         [bool(m) for m in mask])
        return tuple(o for o in outs if o is not None)

    args = [("t", shape, dt, go_layout or layout)] + bn_args(shape, dt, layout, w, False, stats, pdt)
    case("native_batch_norm_backward", fn, args, training=int(training), eps=eps, mask=list(mask), w=int(w), b=0,
         stats=int(stats))


for dt in FLOATS:
    for training in [True, False]:
        bn_back_case((4, 3, 5), dt, "c", training)
for dt in [F32, F64, BF16]:
    bn_back_case((2, 3, 4, 5), dt, "cl", True)
    bn_back_case((2, 3, 4, 5), dt, "cl", False)
bn_back_case((2, 3, 4, 5), F32, "cl", True, go_layout="c")
bn_back_case((2, 3, 4, 5), F32, "c", True, go_layout="cl")
bn_back_case((6, 4), F64, "t", True)
bn_back_case((6, 4), F64, "c", True, w=False, stats=False)
bn_back_case((6, 4), F64, "c", True, mask=(1, 0, 0))
bn_back_case((6, 4), F64, "c", True, mask=(0, 1, 1))
bn_back_case((6, 4), F32, "c", False, mask=(1, 0, 1))
bn_back_case((2, 3, 4, 5), BF16, "c", True, pdt=F32)
bn_back_case((2, 3, 4, 5), BF16, "cl", False, pdt=F32)
bn_back_case((2, 3, 4), BF16, "c", True, w=False, pdt=F32)


# ---- native_layer_norm ----
def ln_case(op, shape, ns, dt, layout, w=True, b=True, eps=1e-5, pdt=None, wshape=None, bshape=None):
    pdt = pdt or dt
    args = [("t", shape, dt, layout)]
    if w:
        args.append(("t", tuple(wshape or ns), pdt, "c", 0.5, 1.5))
    if b:
        args.append(("t", tuple(bshape or ns), pdt, "c"))

    def fn(*a):
        x, wt, bt, _, _ = split(a, w, b, False)
        if op == "layer_norm":
            return torch.layer_norm(x, list(ns), wt, bt, eps)
        return torch.native_layer_norm(x, list(ns), wt, bt, eps)

    case(op, fn, args, ns=list(ns), eps=eps, **flags(w, b, False))


for dt in FLOATS:
    ln_case("native_layer_norm", (4, 5), [5], dt, "c")
    ln_case("native_layer_norm", (2, 3, 4), [3, 4], dt, "c")
    ln_case("native_layer_norm", (2, 3, 4), [4], dt, "c", w=False, b=False)
ln_case("native_layer_norm", (2, 3, 4, 5), [5], F32, "cl")
ln_case("native_layer_norm", (2, 3, 4, 5), [4, 5], BF16, "cl")
ln_case("native_layer_norm", (5, 4), [4], F64, "t")
ln_case("native_layer_norm", (3, 7), [7], F32, "c", w=True, b=False, eps=0.1)
ln_case("native_layer_norm", (3, 7), [7], F64, "c", w=False, b=True)
ln_case("native_layer_norm", (2, 3, 4), [2, 3, 4], F32, "c")
ln_case("native_layer_norm", (2, 3, 4), [3, 4], BF16, "c", pdt=F32)
ln_case("native_layer_norm", (2, 3, 4), [4], F16, "c", pdt=F32)
ln_case("native_layer_norm", (0, 5), [5], F32, "c")
ln_case("native_layer_norm", (3, 0), [0], F32, "c")
# errors
ln_case("native_layer_norm", (4, 6, 5), [4], F32, "c", w=False, b=False)
ln_case("native_layer_norm", (4, 6, 5), [], F32, "c", w=False, b=False)
ln_case("native_layer_norm", (6, 5), [3, 6, 5], F32, "c", w=False, b=False)
ln_case("native_layer_norm", (4, 5), [5], F32, "c", w=True, b=False, wshape=[4])
ln_case("native_layer_norm", (4, 6, 5), [6, 5], F32, "c", w=False, b=True, bshape=[30])
ln_case("native_layer_norm", (4, 5), [5], torch.int64, "c", w=False, b=False)
ln_case("native_layer_norm", (4, 5), [5], F32, "c", pdt=BF16)
ln_case("native_layer_norm", (4, 5), [5], F64, "c", pdt=F32)
# composite
ln_case("layer_norm", (2, 3, 4), [4], F32, "c")
ln_case("layer_norm", (2, 3, 4, 5), [4, 5], F32, "cl", w=False, b=False)
ln_case("layer_norm", (2, 3), [2], F32, "c", w=False, b=False)


# ---- native_layer_norm_backward ----
def ln_back_case(shape, ns, dt, layout, w=True, b=True, mask=(1, 1, 1), pdt=None):
    pdt = pdt or dt
    args = [("t", shape, dt, layout), ("t", shape, dt, layout)]
    if w:
        args.append(("t", tuple(ns), pdt, "c", 0.5, 1.5))
    if b:
        args.append(("t", tuple(ns), pdt, "c"))

    def fn(go, *a):
        x, wt, bt, _, _ = split(a, w, b, False)
        _, mean, rstd = torch.native_layer_norm(x, list(ns), wt, bt, 1e-5)
        outs = torch.ops.aten.native_layer_norm_backward(go, x, list(ns), mean, rstd, wt, bt, [bool(m) for m in mask])
        if pdt != dt:
            # PyTorch's mixed-type kernel rounds each dy·xhat product to the input's dtype before
            # summing; oxten sums in f32. Compare those gradients at the input's precision.
            outs = (outs[0],) + tuple(None if o is None else o.to(dt) for o in outs[1:])
        return tuple(o for o in outs if o is not None)

    case("native_layer_norm_backward", fn, args, ns=list(ns), eps=1e-5, mask=list(mask), **flags(w, b, False))


for dt in FLOATS:
    ln_back_case((4, 5), [5], dt, "c")
    ln_back_case((2, 3, 4), [3, 4], dt, "c")
ln_back_case((2, 3, 4, 5), [5], F32, "cl")
ln_back_case((5, 4), [4], F64, "t")
ln_back_case((3, 6), [6], F64, "c", w=False, b=False, mask=(1, 0, 0))
ln_back_case((3, 6), [6], F64, "c", mask=(0, 1, 1))
ln_back_case((3, 6), [6], F32, "c", mask=(1, 0, 1))
ln_back_case((2, 3, 4), [3, 4], BF16, "c", pdt=F32)


# ---- native_group_norm ----
def gn_case(op, shape, group, dt, layout, w=True, b=True, eps=1e-5, pdt=None, wsize=None, bsize=None, nchw=None):
    pdt = pdt or dt
    c = shape[1] if len(shape) > 1 else shape[0]
    args = [("t", shape, dt, layout)]
    if w:
        args.append(("t", (wsize or c,), pdt, "c", 0.5, 1.5))
    if b:
        args.append(("t", (bsize or c,), pdt, "c"))
    n, c2, hxw = nchw or (shape[0], shape[1], int(torch.tensor(shape[2:]).prod().item()) if len(shape) > 2 else 1)

    def fn(*a):
        x, wt, bt, _, _ = split(a, w, b, False)
        if op == "group_norm":
            return torch.group_norm(x, group, wt, bt, eps)
        if op == "group_norm_f":
            return torch.nn.functional.group_norm(x, group, wt, bt, eps)
        return torch.native_group_norm(x, wt, bt, n, c2, hxw, group, eps)

    case(op, fn, args, group=group, N=n, C=c2, HxW=hxw, eps=eps, **flags(w, b, False))


for dt in FLOATS:
    gn_case("native_group_norm", (2, 6, 5), 3, dt, "c")
    gn_case("native_group_norm", (2, 4, 3, 3), 2, dt, "c", w=False, b=False)
for dt in [F32, F64, BF16]:
    gn_case("native_group_norm", (2, 6, 3, 4), 3, dt, "cl")
gn_case("native_group_norm", (2, 6, 3, 4), 6, F32, "cl", w=False)
gn_case("native_group_norm", (3, 4), 2, F32, "c")
gn_case("native_group_norm", (3, 4), 2, F64, "t")
gn_case("native_group_norm", (2, 4, 2, 2, 2), 4, F32, "c")
gn_case("native_group_norm", (2, 4, 5), 1, F64, "c", w=True, b=False, eps=0.1)
gn_case("native_group_norm", (2, 6, 5), 3, BF16, "c", pdt=F32)
gn_case("native_group_norm", (2, 6, 3, 4), 2, F16, "cl", pdt=F32)
gn_case("native_group_norm", (0, 6, 2), 3, F32, "c")
gn_case("native_group_norm", (6,), 3, F32, "c", w=False, b=False, nchw=(1, 6, 1))
# errors
gn_case("native_group_norm", (4, 6, 5), 4, F32, "c", w=False, b=False)
gn_case("native_group_norm", (4, 6, 5), 3, F32, "c", w=False, b=False, nchw=(3, 6, 5))
gn_case("native_group_norm", (4, 6, 5), 3, F32, "c", w=True, b=False, wsize=5)
gn_case("native_group_norm", (4, 6, 5), 3, torch.int64, "c", w=False, b=False)
gn_case("native_group_norm", (4, 6, 5), 3, F32, "c", pdt=BF16)
gn_case("native_group_norm", (4, 6, 5), 3, F32, "c", pdt=F64)
gn_case("native_group_norm", (2, 6, 1), 3, F32, "c", w=False, b=False, nchw=(2, 6, 0))
# composite
gn_case("group_norm", (2, 6, 5), 2, F32, "c")
gn_case("group_norm", (2, 6, 3, 4), 3, F32, "cl")
gn_case("group_norm", (3, 4, 2, 2), 2, F64, "c", w=False, b=False)
gn_case("group_norm", (4, 6, 5), 4, F32, "c", w=False, b=False)
gn_case("group_norm", (4, 6, 5), 3, F32, "c", w=False, b=True, bsize=5)
gn_case("group_norm", (4, 6, 5), 0, F32, "c", w=False, b=False)
gn_case("group_norm", (2, 6, 0), 3, F32, "c", w=False, b=False)
gn_case("group_norm", (2, 0, 2), 1, F32, "c", w=False, b=False)
gn_case("group_norm", (0, 6, 2), 3, F32, "c", w=False, b=False)
gn_case("group_norm_f", (6,), 3, F32, "c", w=False, b=False, nchw=(1, 6, 1))


# ---- native_group_norm_backward ----
def gn_back_case(shape, group, dt, layout, w=True, mask=(1, 1, 1), pdt=None, go_layout=None):
    pdt = pdt or dt
    n, c = shape[0], shape[1]
    hxw = int(torch.tensor(shape[2:]).prod().item()) if len(shape) > 2 else 1
    args = [("t", shape, dt, go_layout or layout), ("t", shape, dt, layout)]
    if w:
        args.append(("t", (c,), pdt, "c", 0.5, 1.5))

    def fn(go, x, *a):
        wt = a[0] if w else None
        _, mean, rstd = torch.native_group_norm(x, wt, None, n, c, hxw, group, 1e-5)
        outs = torch.ops.aten.native_group_norm_backward(go, x, mean, rstd, wt, n, c, hxw, group,
                                                         [bool(m) for m in mask])
        return tuple(o for o in outs if o is not None)

    case("native_group_norm_backward", fn, args, group=group, N=n, C=c, HxW=hxw, eps=1e-5, mask=list(mask), w=int(w),
         b=0, stats=0)


for dt in FLOATS:
    gn_back_case((2, 6, 5), 3, dt, "c")
for dt in [F32, F64, BF16]:
    gn_back_case((2, 6, 3, 4), 2, dt, "cl")
gn_back_case((2, 6, 3, 4), 3, F32, "cl", go_layout="c")
gn_back_case((2, 6, 3, 4), 3, F32, "c", go_layout="cl")
gn_back_case((3, 4), 2, F64, "c", w=False)
gn_back_case((2, 4, 5), 2, F64, "c", mask=(1, 0, 0))
gn_back_case((2, 4, 5), 2, F64, "c", mask=(0, 1, 1))
gn_back_case((2, 6, 5), 3, BF16, "c", pdt=F32)


# ---- second derivatives (norm_grad2) ----
def grad2_case(kind, shape, dt, layout, w=True, b=True, stats=False, training=True, pen=True, ns=None, group=None,
               via="fwd"):
    eps = 1e-5
    stats = stats or (kind == "bn" and not training)  # evaluation needs running statistics
    if kind == "bn":
        args = bn_args(shape, dt, layout, w, b, stats)
    else:
        wshape = tuple(ns) if kind == "ln" else (shape[1],)
        args = [("t", shape, dt, layout)]
        if w:
            args.append(("t", wshape, dt, "c", 0.5, 1.5))
        if b:
            args.append(("t", wshape, dt, "c"))
    n, c = shape[0], shape[1]
    hxw = int(torch.tensor(shape[2:]).prod().item()) if len(shape) > 2 else 1

    def fn(v, *a):
        x, wt, bt, rm, rv = split(a, w, b, stats)
        params = [t.requires_grad_() for t in (x, wt, bt) if t is not None]
        v.requires_grad_()
        if kind == "bn":
            y = torch.native_batch_norm(x, wt, bt, rm, rv, training, 0.1, eps)[0]
        elif kind == "ln":
            y = torch.native_layer_norm(x, list(ns), wt, bt, eps)[0]
        else:
            y = torch.native_group_norm(x, wt, bt, n, c, hxw, group, eps)[0]
        gs = torch.autograd.grad(y, params, v, create_graph=True)
        loss = gs[0].pow(2).sum()
        if pen:
            for gp in gs[1:]:
                loss = loss + gp.pow(2).sum()
        wrt = [x] + ([wt] if w else []) + [v]
        outs = torch.autograd.grad(loss, wrt, allow_unused=True, materialize_grads=True)
        return tuple(o.contiguous() for o in outs)

    attrs = dict(kind=kind, eps=eps, pen=int(pen), **flags(w, b, stats))
    if kind == "bn":
        attrs["training"] = int(training)
    elif kind == "ln":
        attrs["ns"] = list(ns)
    else:
        attrs.update(group=group, N=n, C=c, HxW=hxw, via=via)
    case("norm_grad2", fn, [("t", shape, dt, layout)] + args, **attrs)


for training in [True, False]:
    for pen in [True, False]:
        grad2_case("bn", (4, 3, 5), F64, "c", training=training, pen=pen)
    grad2_case("bn", (4, 3, 5), F64, "c", training=training, w=False, b=False)
    grad2_case("bn", (6, 4), F64, "t", training=training, w=True, b=False)
    grad2_case("bn", (2, 3, 2, 3), F64, "cl", training=training)
    # (pen=False: PyTorch's batchnorm_double_backward fails on a bias gradient without a weight.)
    grad2_case("bn", (3, 2, 2, 2), F64, "c", training=training, w=False, b=True, stats=True, pen=False)
grad2_case("bn", (4, 3, 5), F64, "c", stats=True)
grad2_case("bn", (4, 3, 5), F32, "c", training=True)
for pen in [True, False]:
    grad2_case("ln", (3, 5), F64, "c", ns=[5], pen=pen)
grad2_case("ln", (2, 3, 4), F64, "c", ns=[3, 4])
grad2_case("ln", (2, 3, 4), F64, "c", ns=[4], w=False, b=False)
grad2_case("ln", (5, 4), F64, "t", ns=[4], b=False)
grad2_case("ln", (2, 3, 2, 3), F64, "cl", ns=[2, 3])
grad2_case("ln", (3, 5), F32, "c", ns=[5])
for via in ["fwd", "bwd"]:
    for pen in [True, False]:
        grad2_case("gn", (2, 6, 5), F64, "c", group=3, pen=pen, via=via)
    grad2_case("gn", (2, 4, 3), F64, "c", group=2, w=False, b=False, via=via)
    grad2_case("gn", (2, 6, 2, 3), F64, "cl", group=2, via=via)
    grad2_case("gn", (4, 6), F64, "t", group=3, b=False, via=via)
grad2_case("gn", (2, 4, 3), F32, "c", group=2)

g.save()
