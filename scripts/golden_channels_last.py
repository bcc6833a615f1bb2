"""Regenerates PyTorch's memory-format behaviour for tests/tests/channels_last.rs.

Writes two files:
- tests/golden/channels_last.txt (scripts/golden_lib.py format): single ops on channels_last,
  mixed NCHW/NHWC and ambiguous (C=1, H=W=1, N111) inputs — activations, elementwise unary and
  binary ops (operand order, broadcasting, promotion, in-place and out=), convolution, pooling,
  batch/group norm, dropout, softmax — with PyTorch's values and output strides.
- tests/golden/channels_last_cnn.txt: every intermediate of two small CNNs (one written with
  the functional ops, one with torch.nn modules) run on channels_last and on NCHW input, and the
  gradients after backward. One record a line:
      step RUN NAME DTYPE SIZES STRIDES VALUES...
  VALUES is `-` when the values are not recorded (random initialisation, dropout masks). The
  inputs and parameters of the functional CNN are `det(shape, seed, scale)` (below), which the
  Rust test computes the same way, so its values are compared with PyTorch's too.

Run: python3 scripts/golden_channels_last.py
"""
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

from golden_lib import DT, ROOT, Golden

warnings.filterwarnings("ignore")
torch.manual_seed(0)
f32, f64, f16, bf16, i64 = torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64
CL = torch.channels_last

# ------------------------------------------------------------------------------------------
# Single ops
# ------------------------------------------------------------------------------------------
g = Golden("channels_last.txt", "scripts/golden_channels_last.py")
case = g.case


def T(shape, dtype=f32, layout="c", lo=-2.0, hi=2.0):
    return ("t", shape, dtype, layout, lo, hi)


SHAPES = [  # (shape, what it exercises)
    (2, 3, 4, 5),  # plain
    (2, 1, 4, 5),  # C = 1: NCHW strides are channels_last-contiguous too
    (2, 3, 1, 1),  # H = W = 1: ambiguous
    (1, 3, 1, 1),  # N111-like
    (2, 3, 4, 1),  # W = 1
    (0, 3, 4, 5),  # empty
]

# Unary elementwise ops and activations keep the input's layout.
UNARY = {
    "relu": torch.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 0.75),
    "elu": F.elu,
    "softplus": F.softplus,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "neg": torch.neg,
    "exp": torch.exp,
    "abs": torch.abs,
    "clamp": lambda x: torch.clamp(x, -0.5, 0.5),
    "mul_scalar": lambda x: x * 2.5,
    "add_scalar": lambda x: x + 1,
    "pow": lambda x: x**2,
    "deep_clone": torch.clone,
    "to_f64": lambda x: x.to(f64),
    "eq_scalar": lambda x: x > 0,
    "dropout_eval": lambda x: F.dropout(x, 0.5, False),
}
for name, fn in UNARY.items():
    for shp in SHAPES:
        case(name, fn, [T(shp, f32, "cl")])
for name in ["relu", "gelu", "silu", "leaky_relu", "hardtanh"]:
    for dt in [f64, f16, bf16]:
        case(name, UNARY[name], [T((2, 3, 4, 5), dt, "cl")])
    case(name, UNARY[name], [T((2, 3, 4, 5), f32, "c")])

# Binary ops: the first operand's layout wins when both are full size; a broadcast operand
# defers to the full-size one; ambiguous operands (C=1, H=W=1) defer as PyTorch's stride sort does.
BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "maximum": torch.maximum,
    "eq": torch.eq,
}
PAIRS = [
    ((2, 3, 4, 5), "cl", (2, 3, 4, 5), "c"),
    ((2, 3, 4, 5), "c", (2, 3, 4, 5), "cl"),
    ((2, 3, 4, 5), "cl", (2, 3, 4, 5), "cl"),
    ((2, 3, 4, 5), "cl", (1, 3, 1, 1), "c"),
    ((1, 3, 1, 1), "c", (2, 3, 4, 5), "cl"),
    ((2, 3, 4, 5), "cl", (3, 1, 1), "c"),
    ((2, 3, 4, 5), "cl", (5,), "c"),
    ((2, 3, 4, 5), "cl", (), "c"),
    ((2, 3, 4, 5), "cl", (2, 1, 4, 5), "c"),
    ((2, 1, 4, 5), "c", (2, 3, 4, 5), "cl"),
    ((2, 1, 4, 5), "cl", (2, 1, 4, 5), "c"),
    ((2, 3, 1, 1), "cl", (2, 3, 1, 1), "c"),
    ((2, 3, 1, 1), "c", (2, 3, 1, 1), "cl"),
    ((2, 3, 1, 1), "cl", (2, 3, 4, 5), "c"),
    ((2, 3, 4, 5), "c", (2, 3, 1, 1), "cl"),
    ((2, 3, 4, 1), "cl", (2, 3, 4, 1), "c"),
    ((2, 3, 4, 5), "cl", (2, 3, 4, 1), "c"),
    ((1, 3, 4, 5), "cl", (2, 3, 4, 5), "c"),
    ((2, 3, 4, 5), "c", (1, 3, 4, 5), "cl"),
]
for name, fn in BINARY.items():
    for sa, la, sb, lb in PAIRS:
        case(name, fn, [T(sa, f32, la), T(sb, f32, lb)])
# promotion: the result's layout does not depend on which operand is converted
case("add", torch.add, [T((2, 3, 4, 5), f32, "cl"), T((2, 3, 4, 5), f64, "c")])
case("add", torch.add, [T((2, 3, 4, 5), f64, "c"), T((2, 3, 4, 5), f32, "cl")])
case("add", torch.add, [T((2, 3, 4, 5), i64, "cl"), T((2, 3, 4, 5), f32, "c")])
case("mul", torch.mul, [T((2, 3, 4, 5), bf16, "cl"), T((1, 3, 1, 1), f32, "c")])
case("where", lambda c, a, b: torch.where(c > 0, a, b),
     [T((2, 3, 4, 5), f32, "c"), T((2, 3, 4, 5), f32, "cl"), T((2, 3, 4, 5), f32, "c")])
case("where", lambda c, a, b: torch.where(c > 0, a, b),
     [T((2, 3, 4, 5), f32, "cl"), T((2, 3, 4, 5), f32, "c"), T((1, 3, 1, 1), f32, "c")])


# in-place keeps self; out= of the right size keeps its strides, a resized one gets the computed
def add_inplace(a, b):
    a = a.clone(memory_format=torch.preserve_format)
    return a.add_(b)


def add_out(layout, shape):
    def f(a, b):
        out = torch.empty(shape)
        if layout == "cl":
            out = out.contiguous(memory_format=CL)
        return torch.add(a, b, out=out)

    return f


case("add_inplace", add_inplace, [T((2, 3, 4, 5), f32, "cl"), T((2, 3, 4, 5), f32, "c")])
case("add_inplace", add_inplace, [T((2, 3, 4, 5), f32, "c"), T((2, 3, 4, 5), f32, "cl")])
case("add_out", add_out("c", (2, 3, 4, 5)), [T((2, 3, 4, 5), f32, "cl"), T((2, 3, 4, 5), f32, "cl")], out="c",
     size=[2, 3, 4, 5])
case("add_out", add_out("cl", (2, 3, 4, 5)), [T((2, 3, 4, 5), f32, "c"), T((2, 3, 4, 5), f32, "c")], out="cl",
     size=[2, 3, 4, 5])
case("add_out", add_out("c", (0,)), [T((2, 3, 4, 5), f32, "cl"), T((2, 3, 4, 5), f32, "c")], out="c", size=[0])
case("add_out", add_out("c", (0,)), [T((2, 3, 4, 5), f32, "c"), T((2, 3, 4, 5), f32, "cl")], out="c", size=[0])

# Convolution, pooling, normalization, dropout, softmax.
for xs, ws, kw in [
    ((2, 4, 6, 6), (6, 4, 3, 3), dict(padding=1)),
    ((2, 1, 6, 6), (3, 1, 3, 3), dict(padding=1)),  # C_in = 1
    ((2, 4, 6, 6), (1, 4, 3, 3), dict(padding=1)),  # C_out = 1
    ((2, 4, 6, 6), (6, 2, 3, 3), dict(stride=2, groups=2)),
    ((2, 4, 3, 3), (5, 4, 3, 3), dict()),  # H = W = 1 output
    ((2, 4, 1, 1), (5, 4, 1, 1), dict()),  # H = W = 1 input
]:
    for xl, wl in [("cl", "c"), ("c", "cl"), ("cl", "cl")]:
        for bias in [False, True]:
            args = [T(xs, f32, xl, -1, 1), T(ws, f32, wl, -1, 1)] + ([T((ws[0],), f32, "c", -1, 1)] if bias else [])
            kwargs = dict(stride=1, padding=0, dilation=1, groups=1)
            kwargs.update(kw)
            case("conv2d", lambda x, w, b=None, kwargs=kwargs: F.conv2d(x, w, b, **kwargs), args,
                 stride=[kwargs["stride"]] * 2, padding=[kwargs["padding"]] * 2, groups=kwargs["groups"],
                 bias=int(bias))
for shp in [(2, 3, 6, 6), (2, 1, 6, 6), (1, 3, 2, 2), (2, 3, 2, 2)]:
    for lay in ["cl", "c"]:
        case("max_pool2d", lambda x: F.max_pool2d(x, 2), [T(shp, f32, lay)], kernel=[2, 2], stride=[2, 2],
             padding=[0, 0])
        case("avg_pool2d", lambda x: F.avg_pool2d(x, 2), [T(shp, f32, lay)], kernel=[2, 2], stride=[2, 2],
             padding=[0, 0])
        case("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, 1), [T(shp, f32, lay)], size=[1, 1])
        case("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 1)), [T(shp, f32, lay)], size=[2, 1])
case("max_pool2d", lambda x: F.max_pool2d(x, 3, 1, 1), [T((2, 3, 5, 5), f32, "cl")], kernel=[3, 3], stride=[1, 1],
     padding=[1, 1])
case("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 1, 1), [T((2, 3, 5, 5), f32, "cl")], kernel=[3, 3], stride=[1, 1],
     padding=[1, 1])
for shp in [(2, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (4, 3, 1, 1)]:
    for training in [True, False]:
        c = shp[1]
        case("batch_norm",
             lambda x, w, b, rm, rv, training=training: F.batch_norm(x, rm.clone(), rv.clone(), w, b, training, 0.1,
                                                                       1e-5),
             [T(shp, f32, "cl"), T((c,)), T((c,)), T((c,)), T((c,), f32, "c", 0.5, 2)], training=int(training))
case("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [T((2, 4, 3, 3), f32, "cl"), T((4,)), T((4,))],
     groups=2)
case("group_norm", lambda x, w, b: F.group_norm(x, 1, w, b), [T((2, 4, 1, 1), f32, "cl"), T((4,)), T((4,))],
     groups=1)
for shp in [(2, 3, 4, 5), (2, 3, 1, 1)]:
    case("softmax", lambda x: torch.softmax(x, 1), [T(shp, f32, "cl")], dim=1)
    case("softmax", lambda x: torch.softmax(x, 3), [T(shp, f32, "cl")], dim=3)
    case("log_softmax", lambda x: torch.log_softmax(x, 1), [T(shp, f32, "cl")], dim=1)
case("mean_dim", lambda x: x.mean((2, 3), keepdim=True), [T((2, 3, 4, 5), f32, "cl")], dim=[2, 3], keepdim=1)
case("flatten", lambda x: x.flatten(1), [T((2, 3, 4, 5), f32, "cl")], start=1)
case("flatten", lambda x: x.flatten(1), [T((2, 3, 1, 1), f32, "cl")], start=1)
case("empty_like", lambda x: torch.zeros_like(x), [T((2, 3, 4, 5), f32, "cl")])
case("empty_like", lambda x: torch.zeros_like(x), [T((2, 3, 1, 1), f32, "cl")])
case("empty_like", lambda x: torch.zeros_like(x), [T((2, 1, 4, 5), f32, "cl")])
g.save()

# ------------------------------------------------------------------------------------------
# The CNNs
# ------------------------------------------------------------------------------------------
lines = [f"# generated by scripts/golden_channels_last.py with torch {torch.__version__}; do not edit"]


def det(shape, seed, scale=1.0):
    """Deterministic values: sin(0.7311 i + 1.3 seed) * scale for i in row-major order, in f64
    (Python's math.sin, i.e. the C library's, like Rust's f64::sin), rounded once to f32."""
    n = math.prod(shape)
    v = [math.sin(0.7311 * i + 1.3 * seed) * scale for i in range(n)]
    return torch.tensor(v, dtype=f64).reshape(shape).to(f32)


def record(run, name, t, values=True):
    t = t.detach()
    sizes = ",".join(str(s) for s in t.shape) if t.dim() else "-"
    strides = ",".join(str(s) for s in t.stride()) if t.dim() else "-"
    if values:
        vals = " ".join(f"{v:.9g}" for v in t.contiguous().reshape(-1).tolist())
    else:
        vals = "-"
    lines.append(f"step {run} {name} {DT[t.dtype]} {sizes} {strides} {vals}")


def params(weights_cl):
    p = dict(
        w1=det((6, 4, 3, 3), 2, 0.3), b1=det((6,), 3, 0.1),
        gamma=1 + det((6,), 4, 0.1), beta=det((6,), 5, 0.1),
        w2=det((8, 3, 3, 3), 6, 0.3), b2=det((8,), 7, 0.1),
        ws=det((8, 6, 1, 1), 8, 0.3), scale=1 + det((1, 8, 1, 1), 9, 0.2),
        wl=det((10, 32), 10, 0.2), bl=det((10,), 11, 0.1),
    )
    if weights_cl:
        for k in ["w1", "w2", "ws"]:
            p[k] = p[k].contiguous(memory_format=CL)
    for k in ["w1", "b1", "gamma", "beta", "w2", "b2", "ws", "wl", "bl"]:
        p[k].requires_grad_()
    p["rm"] = torch.zeros(6)
    p["rv"] = torch.ones(6)
    return p


def cnn(x, p, training, rec):
    """The functional CNN; `rec(name, tensor)` sees every intermediate. Dropout is the identity
    here (train=False) so that values are reproducible; dropout_train records a training
    dropout's output separately."""
    h = F.conv2d(x, p["w1"], p["b1"], padding=1); rec("conv1", h)
    h = F.batch_norm(h, p["rm"], p["rv"], p["gamma"], p["beta"], training, 0.1, 1e-5); rec("bn", h)
    h = F.relu(h); rec("relu", h)
    h = F.max_pool2d(h, 2); rec("maxpool", h)
    r = F.conv2d(h, p["ws"], None, stride=2); rec("shortcut", r)
    h = F.conv2d(h, p["w2"], p["b2"], stride=2, padding=1, groups=2); rec("conv2", h)
    h = h + r; rec("residual", h)
    h = h * p["scale"]; rec("scale", h)
    h = p["scale"] * h; rec("scale_rev", h)
    h = F.gelu(h); rec("gelu", h)
    h = F.silu(h); rec("silu", h)
    h = F.leaky_relu(h, 0.1); rec("leaky_relu", h)
    h = F.hardtanh(h, -1.0, 0.9); rec("hardtanh", h)
    rec("dropout_train", F.dropout(h, 0.5, True))
    h = F.dropout(h, 0.5, False); rec("dropout", h)
    h = F.avg_pool2d(h, 3, 1, 1); rec("avgpool", h)
    h = F.adaptive_avg_pool2d(h, (2, 2)); rec("adaptive", h)
    rec("adaptive1", F.adaptive_avg_pool2d(h, 1))
    h = h.flatten(1); rec("flatten", h)
    h = F.linear(h, p["wl"], p["bl"]); rec("linear", h)
    return h


def hook_grads(seen):
    """Registers a hook on every intermediate that is on the loss's path; the returned dict gets
    the gradient flowing into each (as backward computes it)."""
    grads = {}
    for name, t in seen:
        if t.requires_grad and name not in ("dropout_train", "adaptive1"):
            t.register_hook(lambda g, name=name: grads.__setitem__(name, g))
    return grads


def run_cnn(run, x_cl, weights_cl, values):
    x = det((2, 4, 12, 12), 1)
    if x_cl:
        x = x.contiguous(memory_format=CL)
    x.requires_grad_()
    p = params(weights_cl)

    def rec(name, t):
        record(run, name, t, values and name != "dropout_train")

    seen = []

    def rec_and_hook(name, t):
        rec(name, t)
        seen.append((name, t))

    out = cnn(x, p, True, rec_and_hook)
    grads = hook_grads(seen)
    (out * det((2, 10), 12)).sum().backward()
    for name, _ in seen:
        if name in grads:
            record(run, "gradof_" + name, grads[name], values)
    record(run, "grad_x", x.grad, values)
    for k in ["w1", "b1", "gamma", "beta", "w2", "b2", "ws", "wl", "bl"]:
        record(run, "grad_" + k, p[k].grad, values)
    record(run, "running_mean", p["rm"], values)
    record(run, "running_var", p["rv"], values)
    with torch.no_grad():
        cnn(x, p, False, lambda name, t: record(run + "_eval", name, t, values and name != "dropout_train"))


run_cnn("ops_cl", True, False, True)
run_cnn("ops_nchw", False, False, False)
run_cnn("ops_clw", True, True, False)
run_cnn("ops_nchw_clw", False, True, False)


def nn_run(run, x_cl):
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(4, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 8, 3, stride=2, padding=1, groups=2), nn.BatchNorm2d(8), nn.ReLU(),
        nn.AvgPool2d(2), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(8, 10),
    )
    x = torch.randn(2, 4, 16, 16)
    if x_cl:
        x = x.contiguous(memory_format=CL)
    x.requires_grad_()
    for mode in ["train", "eval"]:
        net.train(mode == "train")
        h = x
        seen = []
        for i, layer in enumerate(net):
            h = layer(h)
            record(f"{run}_{mode}", f"layer{i}", h, False)
            seen.append((f"layer{i}", h))
        if mode == "train":
            grads = hook_grads(seen)
            h.sum().backward()
            for name, _ in seen:
                record(run, "gradof_" + name, grads[name], False)
            record(run, "grad_x", x.grad, False)
            record(run, "grad_conv0", net[0].weight.grad, False)
            record(run, "grad_conv4", net[4].weight.grad, False)
            record(run, "grad_linear", net[10].weight.grad, False)


nn_run("nn_cl", True)
nn_run("nn_nchw", False)

out = ROOT / "tests" / "golden" / "channels_last_cnn.txt"
out.write_text("\n".join(lines) + "\n")
print(f"wrote {len(lines) - 1} steps to {out}")
