"""Regenerates tests/golden/nn.txt: PyTorch's outputs for the nn family (activations, the softmax
family, logsumexp and the losses), replayed by tests/tests/nn_ops.rs.

Format: scripts/golden_lib.py. Op parameters are attributes (reduction as PyTorch's int: 0 none,
1 mean, 2 sum); class targets are recorded tensors ("v"). Run: python3 scripts/golden_nn.py
"""
import torch
import torch.nn.functional as F

from golden_lib import Golden

g = Golden("nn.txt", "scripts/golden_nn.py")
case = g.case
aten = torch.ops.aten

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, U8, B = torch.int64, torch.int32, torch.uint8, torch.bool
FLOATS = [F32, F64, F16, BF16]
INF = float("inf")


def t(shape, dtype=F32, layout="c", lo=-3.0, hi=3.0):
    return ("t", shape, dtype, layout, lo, hi)


def v(x):
    return ("v", x)


def longs(*xs):
    return v(torch.tensor(xs, dtype=torch.int64))


# ---------------------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------------------
for d in FLOATS:
    case("elu", lambda x: F.elu(x), [t((3, 4), d)])
    case("leaky_relu", lambda x: F.leaky_relu(x), [t((3, 4), d)])
    case("hardtanh", lambda x: F.hardtanh(x), [t((3, 4), d)])
    case("softplus", lambda x: F.softplus(x), [t((3, 4), d)])
for a, s, i in [(1.3, 0.7, 1.6), (0.5, 1, 1), (2, 1.0507, 1), (-1, 1, 1)]:
    case("elu", lambda x, a=a, s=s, i=i: torch._C._nn.elu(x, a, s, i), [t((8,))], alpha=a, scale=s, input_scale=i)
case("elu", lambda x: F.elu(x), [t((4, 5), F32, "t")])
case("elu", lambda x: F.elu(x), [t((2, 3, 2, 2), F32, "cl")])
case("elu", lambda x: F.elu(x), [t((0, 3))])
for d in [I64, B]:
    case("elu", lambda x: F.elu(x), [t((4,), d)])
    case("leaky_relu", lambda x: F.leaky_relu(x), [t((4,), d)])
    case("softplus", lambda x: F.softplus(x), [t((4,), d)])
for slope in [0.2, -0.5, 3]:
    case("leaky_relu", lambda x, s=slope: F.leaky_relu(x, s), [t((6,))], negative_slope=slope)
    case("leaky_relu", lambda x, s=slope: F.leaky_relu(x, s), [t((6,), BF16)], negative_slope=slope)
case("leaky_relu", lambda x: F.leaky_relu(x), [t((4, 5), F32, "t")])
case("leaky_relu", lambda x: F.leaky_relu(x), [t((2, 3, 2, 2), F16, "cl")])
case("leaky_relu_out", lambda x, o: torch._C._nn.leaky_relu(x, 0.1, out=o), [t((2, 3)), t((5,))], negative_slope=0.1)
for lo, hi in [(-0.5, 2), (0, 6), (1.5, -1.5)]:
    case("hardtanh", lambda x, lo=lo, hi=hi: torch._C._nn.hardtanh(x, lo, hi), [t((8,))], min_val=lo, max_val=hi)
    case("hardtanh", lambda x, lo=lo, hi=hi: torch._C._nn.hardtanh(x, lo, hi), [t((8,), F16)], min_val=lo, max_val=hi)
for d in [I64, I32, U8]:
    case("hardtanh", lambda x: F.hardtanh(x), [t((8,), d)])
    case("hardtanh", lambda x: F.hardtanh(x, -1.5, 2.5), [t((8,), d)], min_val=-1.5, max_val=2.5)
case("hardtanh", lambda x: F.hardtanh(x), [t((4,), B)])
case("hardtanh", lambda x: F.hardtanh(x), [v(torch.tensor([float("nan"), 2.0, -2.0, 0.5]))])
case("hardtanh", lambda x: F.hardtanh(x), [t((4, 5), F32, "t")])
case("hardtanh_", lambda x: torch._C._nn.hardtanh_(x.clone(), -0.5, 0.5), [t((6,))], min_val=-0.5, max_val=0.5)
case("hardtanh_", lambda x: torch._C._nn.hardtanh_(x.clone(), -1.5, 1.5), [t((6,), I64)], min_val=-1.5, max_val=1.5)
case("hardtanh_out", lambda x, o: torch._C._nn.hardtanh(x, -1, 1, out=o), [t((2, 3)), t((2, 3), F64)])
for b_, th in [(2, 10), (0.5, 1), (1, 2), (-1, 20)]:
    case("softplus", lambda x, b_=b_, th=th: F.softplus(x, b_, th), [t((10,), F32, "c", -30, 30)], beta=b_,
         threshold=th)
    case("softplus", lambda x, b_=b_, th=th: F.softplus(x, b_, th), [t((10,), F64, "c", -30, 30)], beta=b_,
         threshold=th)
case("softplus", lambda x: F.softplus(x), [t((4, 5), F32, "t")])
case("softplus", lambda x: F.softplus(x), [t((2, 3, 2, 2), BF16, "cl")])

# backward kernels
for d in FLOATS:
    case("elu_backward", lambda go, x: aten.elu_backward(go, 1.3, 0.7, 1.6, False, x), [t((3, 4), d), t((3, 4), d)],
         alpha=1.3, scale=0.7, input_scale=1.6, is_result=0)
    case("elu_backward", lambda go, x: aten.elu_backward(go, 1.0, 1, 1, True, x), [t((3, 4), d), t((3, 4), d, "c", -1, 3)],
         alpha=1.0, scale=1, input_scale=1, is_result=1)
    case("leaky_relu_backward", lambda go, x: aten.leaky_relu_backward(go, x, 0.2, False), [t((3, 4), d), t((3, 4), d)],
         negative_slope=0.2, self_is_result=0)
    case("hardtanh_backward", lambda go, x: aten.hardtanh_backward(go, x, -1, 1), [t((3, 4), d), t((3, 4), d)],
         min_val=-1, max_val=1)
    case("softplus_backward", lambda go, x: aten.softplus_backward(go, x, 2, 3), [t((3, 4), d), t((3, 4), d)],
         beta=2, threshold=3)
case("elu_backward", lambda go, x: aten.elu_backward(go, -1.0, 1, 1, True, x), [t((3,)), t((3,))], alpha=-1.0, scale=1,
     input_scale=1, is_result=1)
case("elu_backward", lambda go, x: aten.elu_backward(go, 1.0, 1, 1, False, x), [t((3,), F64), t((2, 3))], alpha=1.0,
     scale=1, input_scale=1, is_result=0)
case("elu_backward", lambda go, x: aten.elu_backward(go, 1.0, 1, 1, False, x), [t((3,), I64), t((3,), I64)], alpha=1.0,
     scale=1, input_scale=1, is_result=0)
case("leaky_relu_backward", lambda go, x: aten.leaky_relu_backward(go, x, -0.1, True), [t((3,)), t((3,))],
     negative_slope=-0.1, self_is_result=1)
case("leaky_relu_backward", lambda go, x: aten.leaky_relu_backward(go, x, 0.1, False), [t((3,), F64), t((2, 3))],
     negative_slope=0.1, self_is_result=0)
case("leaky_relu_backward", lambda go, x: aten.leaky_relu_backward(go, x, 0.1, False), [t((4, 3), F32, "t"), t((4, 3))],
     negative_slope=0.1, self_is_result=0)
case("leaky_relu_backward", lambda go, x: aten.leaky_relu_backward(go, x, 0.1, False), [t((3,), I64), t((3,), I64)],
     negative_slope=0.1, self_is_result=0)
case("hardtanh_backward", lambda go, x: aten.hardtanh_backward(go, x, -1, 1), [t((5,)), t((2, 5), F64)], min_val=-1,
     max_val=1)
case("hardtanh_backward", lambda go, x: aten.hardtanh_backward(go, x, -1, 1), [t((5,), I64), t((5,), I64)], min_val=-1,
     max_val=1)
case("hardtanh_backward", lambda go, x: aten.hardtanh_backward(go, x, -1, 1),
     [v(torch.ones(5)), v(torch.tensor([-2, -1.0, 0, 1, 2]))], min_val=-1, max_val=1)
case("softplus_backward", lambda go, x: aten.softplus_backward(go, x, 1, 20), [t((4,), F64), t((4,), F32, "c", -30, 30)],
     beta=1, threshold=20)
case("softplus_backward", lambda go, x: aten.softplus_backward(go, x, 1, 20), [t((4,), I64), t((4,), I64)], beta=1,
     threshold=20)

for d in FLOATS:
    case("threshold_backward", lambda go, x: aten.threshold_backward(go, x, 0.5), [t((3, 4), d), t((3, 4), d)],
         threshold=0.5)
case("threshold_backward", lambda go, x: aten.threshold_backward(go, x, 0), [t((4, 3), F32, "t"), t((4, 3))], threshold=0)
case("threshold_backward", lambda go, x: aten.threshold_backward(go, x, 0),
     [v(torch.ones(5)), v(torch.tensor([float("nan"), -1.0, 0, 1e-30, INF]))], threshold=0)
case("threshold_backward", lambda go, x: aten.threshold_backward(go, x, 1), [t((2, 3), F64), t((3,))], threshold=1)
case("threshold_backward", lambda go, x: aten.threshold_backward(go, x, 0), [t((2, 3, 2, 2), BF16, "cl"),
     t((2, 3, 2, 2), BF16, "cl")], threshold=0)
case("threshold_backward", lambda go, x: aten.threshold_backward(go, x, 1), [t((5,), I64), t((5,), I64)], threshold=1)
case("threshold_backward", lambda go, x: aten.threshold_backward(go, x, 0), [t((5,), B), t((5,), B)], threshold=0)

# ---------------------------------------------------------------------------------------------
# softmax family
# ---------------------------------------------------------------------------------------------
for name, fn in [("_softmax", torch._softmax), ("_log_softmax", torch._log_softmax)]:
    for d in FLOATS:
        for dim in [0, 1, -1]:
            case(name, lambda x, dim=dim, fn=fn: fn(x, dim, False), [t((3, 5), d)], dim=dim)
    for dim in [0, 1, 2]:
        case(name, lambda x, dim=dim, fn=fn: fn(x, dim, False), [t((2, 3, 4))], dim=dim)
        case(name, lambda x, dim=dim, fn=fn: fn(x, dim, False), [t((2, 3, 4), BF16)], dim=dim)
    case(name, lambda x, fn=fn: fn(x, 1, False), [t((4, 6), F32, "t")], dim=1)
    case(name, lambda x, fn=fn: fn(x, 0, False), [t((4, 6), F64, "t")], dim=0)
    case(name, lambda x, fn=fn: fn(x, 1, False), [t((2, 3, 2, 2), F32, "cl")], dim=1)
    case(name, lambda x, fn=fn: fn(x, 3, False), [t((2, 3, 2, 2), F16, "cl")], dim=3)
    # Long rows and many columns: the vectorized and parallel paths.
    case(name, lambda x, fn=fn: fn(x, -1, False), [t((70, 1000))], dim=-1)
    case(name, lambda x, fn=fn: fn(x, 0, False), [t((300, 130))], dim=0)
    case(name, lambda x, fn=fn: fn(x, 1, False), [t((3, 37, 150), BF16)], dim=1)
    # Stability: large magnitudes, infinities.
    case(name, lambda x, fn=fn: fn(x, 1, False), [t((3, 6), F32, "c", -1000, 1000)], dim=1)
    case(name, lambda x, fn=fn: fn(x, 0, False), [t((6, 3), F16, "c", -60000, 60000)], dim=0)
    case(name, lambda x, fn=fn: fn(x, 1, False), [v(torch.tensor([[-INF, -INF, -INF], [0.0, -INF, 1.0], [INF, 0, 1]]))],
         dim=1)
    case(name, lambda x, fn=fn: fn(x, 0, False), [v(torch.tensor([[-INF, 0.0], [-INF, 1.0], [2.0, -INF]]))], dim=0)
    case(name, lambda x, fn=fn: fn(x, 0, False), [t((), F32)], dim=0)
    case(name, lambda x, fn=fn: fn(x, -1, False), [t((), F64)], dim=-1)
    case(name, lambda x, fn=fn: fn(x, 1, False), [t((0, 3))], dim=1)
    case(name, lambda x, fn=fn: fn(x, 1, False), [t((2, 0))], dim=1)
    case(name, lambda x, fn=fn: fn(x, 1, False), [t((2, 3), I64)], dim=1)
    case(name, lambda x, fn=fn: fn(x, 0, False), [t((2, 3), I64)], dim=0)
    case(name, lambda x, fn=fn: fn(x, 0, False), [t((3,), B)], dim=0)
    case(name, lambda x, fn=fn: fn(x, 0, False), [t((0,), I64)], dim=0)
    case(name, lambda x, fn=fn: fn(x, 0, True), [t((3,), F16)], dim=0, half_to_float=1)
    case(name, lambda x, fn=fn: fn(x, 2, False), [t((3, 4))], dim=2)
    case(name, lambda x, fn=fn: fn(x, -3, False), [t((3, 4))], dim=-3)
    # (A non-contiguous `out=` gets the values in its own layout; PyTorch's `_softmax.out` writes
    # them in contiguous order into it, so that case is tested through `softmax.int_out` below.)
    case(name + "_out", lambda x, o, fn=fn: fn(x, 1, False, out=o), [t((3, 4)), t((3, 4))], dim=1)
for name, fn in [("softmax", torch.softmax), ("log_softmax", torch.log_softmax)]:
    case(name, lambda x, fn=fn: fn(x, 1), [t((3, 4))], dim=1)
    case(name, lambda x, fn=fn: fn(x, 1, dtype=F64), [t((3, 4))], dim=1, dtype="float64")
    case(name, lambda x, fn=fn: fn(x, 0, dtype=F32), [t((3, 4), I64)], dim=0, dtype="float32")
    case(name, lambda x, fn=fn: fn(x, -1, dtype=F32), [t((3, 4), F16)], dim=-1, dtype="float32")
    case(name, lambda x, fn=fn: fn(x, 0), [t((3, 4), I64)], dim=0)
    case(name + "_int_out", lambda x, o, fn=fn: fn(x, 1, dtype=F64, out=o), [t((3, 4)), t((3, 4), F64)], dim=1,
         dtype="float64")
    case(name + "_int_out", lambda x, o, fn=fn: fn(x, 1, out=o), [t((3, 4)), t((3, 4), F32, "t")], dim=1)

for name, fn in [("_softmax_backward_data", torch._softmax_backward_data),
                 ("_log_softmax_backward_data", torch._log_softmax_backward_data)]:
    for d in FLOATS:
        for dim in [0, 1]:
            case(name, lambda go, y, dim=dim, d=d, fn=fn: fn(go, y, dim, d), [t((3, 5), d), t((3, 5), d, "c", 0, 1)],
                 dim=dim, input_dtype=str(d).split(".")[1])
    case(name, lambda go, y, fn=fn: fn(go, y, 1, F32), [t((2, 3, 4)), t((2, 3, 4), F32, "c", 0, 1)], dim=1,
         input_dtype="float32")
    case(name, lambda go, y, fn=fn: fn(go, y, -1, F32), [t((4, 6), F32, "t"), t((4, 6), F32, "c", 0, 1)], dim=-1,
         input_dtype="float32")
    case(name, lambda go, y, fn=fn: fn(go, y, 0, F64), [t((50, 700), F64), t((50, 700), F64, "c", 0, 1)], dim=0,
         input_dtype="float64")
    # A real (log-)softmax output: random `output` values make the sums cancel badly, and then
    # no two f32 implementations agree.
    z = torch.rand(70, 1000, generator=torch.Generator().manual_seed(3)) * 6 - 3
    y = torch.softmax(z, 1) if name == "_softmax_backward_data" else torch.log_softmax(z, 1)
    case(name, lambda go, y, fn=fn: fn(go, y, 1, F32), [t((70, 1000)), v(y)], dim=1, input_dtype="float32")
    case(name, lambda go, y, fn=fn: fn(go, y, 0, F32), [t(()), t((), F32, "c", 0, 1)], dim=0, input_dtype="float32")
    case(name, lambda go, y, fn=fn: fn(go, y, 0, F32), [t((3,)), t((3,), F64)], dim=0, input_dtype="float32")
    case(name, lambda go, y, fn=fn: fn(go, y, 0, F16), [t((3,)), t((3,))], dim=0, input_dtype="float16")
    case(name, lambda go, y, fn=fn: fn(go, y, 0, I64), [t((3,), I64), t((3,), I64)], dim=0, input_dtype="int64")
    case(name, lambda go, y, fn=fn: fn(go, y, 2, F32), [t((3,)), t((3,))], dim=2, input_dtype="float32")
    case(name, lambda go, y, fn=fn: fn(go, y, 0, F32), [t((0, 2)), t((0, 2))], dim=0, input_dtype="float32")
case("_softmax_backward_data", lambda go, y: torch._softmax_backward_data(go, y, 0, F32), [t((3,)), t((4,))], dim=0,
     input_dtype="float32")

for d in FLOATS:
    case("logsumexp", lambda x: torch.logsumexp(x, 1), [t((3, 5), d)], dim=1)
for dims, keep in [((0,), 0), ((1,), 1), ((0, 2), 0), ((-1, 0), 1), ((0, 1, 2), 0)]:
    case("logsumexp", lambda x, dims=dims, keep=keep: torch.logsumexp(x, dims, bool(keep)), [t((2, 3, 4))], dim=dims,
         keepdim=keep)
case("logsumexp", lambda x: torch.logsumexp(x, 0), [t((4, 6), F32, "t")], dim=0)
case("logsumexp", lambda x: torch.logsumexp(x, 1), [t((3, 5), F32, "c", -2000, 2000)], dim=1)
case("logsumexp", lambda x: torch.logsumexp(x, 1), [v(torch.tensor([[-INF, -INF], [INF, 0.0], [-INF, 1.0], [INF, -INF]]))],
     dim=1)
case("logsumexp", lambda x: torch.logsumexp(x, 1), [t((3, 4), I64)], dim=1)
case("logsumexp", lambda x: torch.logsumexp(x, 0), [t((3,), B)], dim=0)
case("logsumexp", lambda x: torch.logsumexp(x, 0), [t(())], dim=0)
case("logsumexp", lambda x: torch.logsumexp(x, 1), [t((2, 0))], dim=1)
case("logsumexp", lambda x: torch.logsumexp(x, 1), [t((0, 2))], dim=1)
case("logsumexp", lambda x: torch.logsumexp(x, ()), [t((2, 3))], dim=())
case("logsumexp", lambda x: torch.logsumexp(x, (1, 1)), [t((2, 3))], dim=(1, 1))
case("logsumexp", lambda x: torch.logsumexp(x, 2), [t((2, 3))], dim=2)
case("logsumexp_out", lambda x, o: torch.logsumexp(x, 1, out=o), [t((2, 3)), t((2,), I64)], dim=1)
# f32 input, f64 out: exp runs in f32, where libm and SLEEF may differ by an ulp that the f64
# tolerance would see; equal entries per row make every exp exactly 1.
case("logsumexp_out", lambda x, o: torch.logsumexp(x, 1, out=o),
     [v(torch.tensor([[0.5, 0.5, 0.5], [-2.0, -2.0, -2.0]])), t((2,), F64)], dim=1)

# ---------------------------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------------------------
w4 = v(torch.tensor([0.5, 2.0, 1.5, 0.25]))
tg = longs(0, 3, 1)
for d in FLOATS:
    for red in [0, 1, 2]:
        case("nll_loss_forward", lambda x, t_, red=red: aten.nll_loss_forward(x, t_, None, red, -100), [t((3, 4), d), tg],
             reduction=red, ignore_index=-100)
        case("nll_loss_forward", lambda x, t_, w, red=red: aten.nll_loss_forward(x, t_, w, red, -100),
             [t((3, 4), d), tg, v(torch.tensor([0.5, 2.0, 1.5, 0.25], dtype=d))], reduction=red, ignore_index=-100,
             weight=1)
for red in [0, 1, 2]:
    case("nll_loss_forward", lambda x, t_, w, red=red: aten.nll_loss_forward(x, t_, w, red, 1),
         [t((5, 4)), longs(1, 0, 1, 3, 2), w4], reduction=red, ignore_index=1, weight=1)
    case("nll_loss_forward", lambda x, t_, red=red: aten.nll_loss_forward(x, t_, None, red, -100),
         [t((4,)), v(torch.tensor(2))], reduction=red, ignore_index=-100)
    case("nll_loss_forward", lambda x, t_, red=red: aten.nll_loss_forward(x, t_, None, red, -100),
         [t((4,)), longs(2)], reduction=red, ignore_index=-100)
    case("nll_loss_forward", lambda x, t_, red=red: aten.nll_loss_forward(x, t_, None, red, -100),
         [t((0, 4)), v(torch.zeros(0, dtype=torch.long))], reduction=red, ignore_index=-100)
    case("nll_loss_forward", lambda x, t_, red=red: aten.nll_loss_forward(x, t_, None, red, -100),
         [t((3, 4), F32, "t"), tg], reduction=red, ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((3, 4)), longs(-100, -100, -100)],
     reduction=1, ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100),
     [t((3, 4)), v(torch.tensor([0, 3, 1], dtype=torch.uint8))], reduction=1, ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 5, -100), [t((3, 4)), tg], reduction=5,
     ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((300, 50)),
     v(torch.randint(0, 50, (300,), generator=torch.Generator().manual_seed(5)))], reduction=1, ignore_index=-100)
# errors
for red in [0, 1]:
    case("nll_loss_forward", lambda x, t_, red=red: aten.nll_loss_forward(x, t_, None, red, -100), [t((3, 4)), longs(0, 4, 1)],
         reduction=red, ignore_index=-100)
    case("nll_loss_forward", lambda x, t_, red=red: aten.nll_loss_forward(x, t_, None, red, -100),
         [t((3, 4)), longs(0, -1, 1)], reduction=red, ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((3, 4)), v(torch.tensor([0, 3, 1],
     dtype=torch.int32))], reduction=1, ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((3, 4)), t((3,))], reduction=1,
     ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((2, 3, 4)), tg], reduction=1,
     ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t(()), tg], reduction=1,
     ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((3, 4)), v(torch.zeros(3, 1,
     dtype=torch.long))], reduction=1, ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((3, 4)), longs(0, 1)], reduction=1,
     ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((3, 4)), v(torch.tensor(1))],
     reduction=1, ignore_index=-100)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((4,)), longs(1, 2)], reduction=1,
     ignore_index=-100)
case("nll_loss_forward", lambda x, t_, w: aten.nll_loss_forward(x, t_, w, 1, -100), [t((3, 4)), tg, t((3,))],
     reduction=1, ignore_index=-100, weight=1)
case("nll_loss_forward", lambda x, t_, w: aten.nll_loss_forward(x, t_, w, 1, -100), [t((3, 4)), tg, t((2, 2))],
     reduction=1, ignore_index=-100, weight=1)
case("nll_loss_forward", lambda x, t_, w: aten.nll_loss_forward(x, t_, w, 1, -100), [t((3, 4)), tg, t((4,), F64)],
     reduction=1, ignore_index=-100, weight=1)
case("nll_loss_forward", lambda x, t_: aten.nll_loss_forward(x, t_, None, 1, -100), [t((3, 4), I64), tg], reduction=1,
     ignore_index=-100)

for d in FLOATS:
    case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 1, -100, tw),
         [t((), d), t((3, 4), d), tg, v(torch.tensor(3.0, dtype=d))], reduction=1, ignore_index=-100)
    case("nll_loss_backward", lambda go, x, t_, w, tw: aten.nll_loss_backward(go, x, t_, w, 0, -100, tw),
         [t((3,), d), t((3, 4), d), tg, v(torch.tensor([0.5, 2.0, 1.5, 0.25], dtype=d)), v(torch.tensor(0.0, dtype=d))],
         reduction=0, ignore_index=-100, weight=1)
case("nll_loss_backward", lambda go, x, t_, w, tw: aten.nll_loss_backward(go, x, t_, w, 1, 1, tw),
     [t(()), t((5, 4)), longs(1, 0, 1, 3, 2), w4, v(torch.tensor(2.25))], reduction=1, ignore_index=1, weight=1)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 2, -100, tw),
     [t((1,)), t((4,)), v(torch.tensor(2)), v(torch.tensor(1.0))], reduction=2, ignore_index=-100)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 0, -100, tw),
     [t((1,)), t((4,)), v(torch.tensor(2)), v(torch.tensor(1.0))], reduction=0, ignore_index=-100)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 1, -100, tw),
     [t(()), t((4,)), v(torch.tensor(-100)), v(torch.tensor(0.0))], reduction=1, ignore_index=-100)
# errors
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 1, -100, tw),
     [t((2,)), t((3, 4)), tg, v(torch.tensor(3.0))], reduction=1, ignore_index=-100)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 0, -100, tw),
     [t((2,)), t((3, 4)), tg, v(torch.tensor(3.0))], reduction=0, ignore_index=-100)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 1, -100, tw),
     [t(()), t((3, 4)), tg, v(torch.ones(2))], reduction=1, ignore_index=-100)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 1, -100, tw),
     [t(()), t((3, 4)), longs(0, 5, 1), v(torch.tensor(3.0))], reduction=1, ignore_index=-100)
case("nll_loss_backward", lambda go, x, t_, w, tw: aten.nll_loss_backward(go, x, t_, w, 1, -100, tw),
     [t(()), t((3, 4)), tg, t((3,)), v(torch.tensor(3.0))], reduction=1, ignore_index=-100, weight=1)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 1, -100, tw),
     [t((), F64), t((3, 4)), tg, v(torch.tensor(3.0))], reduction=1, ignore_index=-100)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 1, -100, tw),
     [t(()), t((3, 4)), v(torch.tensor([0, 1, 2], dtype=torch.int32)), v(torch.tensor(3.0))], reduction=1,
     ignore_index=-100)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 1, -100, tw),
     [t((), I64), t((3, 4), I64), tg, v(torch.tensor(3))], reduction=1, ignore_index=-100)
case("nll_loss_backward", lambda go, x, t_, tw: aten.nll_loss_backward(go, x, t_, None, 1, -100, tw),
     [t(()), t((4,)), longs(2), v(torch.tensor(1.0))], reduction=1, ignore_index=-100)

# nll_loss / nll_loss_nd (any rank)
for red in [0, 1, 2]:
    case("nll_loss_nd", lambda x, t_, red=red: aten.nll_loss_nd(x, t_, None, red, -100),
         [t((2, 3, 4)), v(torch.tensor([[0, 2, 1, 1], [2, 0, 0, 1]]))], reduction=red, ignore_index=-100)
    case("nll_loss_nd", lambda x, t_, w, red=red: aten.nll_loss_nd(x, t_, w, red, 2),
         [t((2, 4, 3, 2)), v(torch.tensor([[[0, 2], [1, 3], [2, 1]], [[3, 3], [0, 2], [1, 0]]])), w4], reduction=red,
         ignore_index=2, weight=1)
    case("nll_loss_nd", lambda x, t_, red=red: aten.nll_loss_nd(x, t_, None, red, -100),
         [t((2, 3, 2, 1, 2)), v(torch.tensor([[[[0, 1]], [[2, 2]]], [[[1, 0]], [[0, 2]]]]))], reduction=red,
         ignore_index=-100)
    case("nll_loss", lambda x, t_, red=red: aten.nll_loss(x, t_, None, red, -100), [t((3, 4)), tg], reduction=red,
         ignore_index=-100)
case("nll_loss_nd", lambda x, t_: aten.nll_loss_nd(x, t_, None, 1, -100), [t((2, 3, 4)), v(torch.zeros(2, 5,
     dtype=torch.long))], reduction=1, ignore_index=-100)
case("nll_loss_nd", lambda x, t_: aten.nll_loss_nd(x, t_, None, 1, -100), [t((2, 3, 4, 5)), v(torch.zeros(2, 4, 6,
     dtype=torch.long))], reduction=1, ignore_index=-100)
case("nll_loss_nd", lambda x, t_: aten.nll_loss_nd(x, t_, None, 1, -100), [t((2, 3, 4, 5)), v(torch.zeros(2, 4,
     dtype=torch.long))], reduction=1, ignore_index=-100)
case("nll_loss_nd", lambda x, t_: aten.nll_loss_nd(x, t_, None, 1, -100), [t((2, 3, 4)), v(torch.zeros(3, 4,
     dtype=torch.long))], reduction=1, ignore_index=-100)
case("nll_loss_nd", lambda x, t_: aten.nll_loss_nd(x, t_, None, 1, -100), [t(()), v(torch.tensor(0))], reduction=1,
     ignore_index=-100)
case("nll_loss_nd", lambda x, t_: aten.nll_loss_nd(x, t_, None, 1, -100), [t((2, 3, 2)), v(torch.tensor([[0, 3], [1, 1]]))],
     reduction=1, ignore_index=-100)

# cross_entropy_loss
ce = aten.cross_entropy_loss
for d in FLOATS:
    case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 0.0), [t((3, 4), d), tg], reduction=1,
         ignore_index=-100, label_smoothing=0.0)
    case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 0.1), [t((3, 4), d), tg], reduction=1,
         ignore_index=-100, label_smoothing=0.1)
for red in [0, 1, 2]:
    for ls in [0.0, 0.2]:
        case("cross_entropy_loss", lambda x, t_, w, red=red, ls=ls: ce(x, t_, w, red, -100, ls),
             [t((4, 4)), longs(1, -100, 3, 0), w4], reduction=red, ignore_index=-100, label_smoothing=ls, weight=1)
        case("cross_entropy_loss", lambda x, t_, red=red, ls=ls: ce(x, t_, None, red, 2, ls),
             [t((2, 3, 2, 2)), v(torch.tensor([[[0, 2], [1, 1]], [[2, 0], [0, 1]]]))], reduction=red, ignore_index=2,
             label_smoothing=ls)
        case("cross_entropy_loss", lambda x, t_, red=red, ls=ls: ce(x, t_, None, red, -100, ls),
             [t((3, 4)), t((3, 4), F32, "c", 0, 1)], reduction=red, ignore_index=-100, label_smoothing=ls)
        case("cross_entropy_loss", lambda x, t_, w, red=red, ls=ls: ce(x, t_, w, red, -100, ls),
             [t((2, 4, 3)), t((2, 4, 3), F32, "c", 0, 1), w4], reduction=red, ignore_index=-100, label_smoothing=ls,
             weight=1)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 0.0), [t((4,)), v(torch.tensor(1))], reduction=1,
     ignore_index=-100, label_smoothing=0.0)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 0.0), [t((0, 4)), t((0, 4), F32, "c", 0, 1)], reduction=1,
     ignore_index=-100, label_smoothing=0.0)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 0.0), [t((4, 5), F32, "t"), longs(0, 4, 2, 1)],
     reduction=1, ignore_index=-100, label_smoothing=0.0)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 1.1), [t((3, 4)), tg], reduction=1, ignore_index=-100,
     label_smoothing=1.1)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 1.5), [t((3, 4)), t((3, 4))], reduction=1,
     ignore_index=-100, label_smoothing=1.5)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 0.0), [t((3, 4)), t((3, 4), I64)], reduction=1,
     ignore_index=-100, label_smoothing=0.0)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, 1, 0.0), [t((3, 4)), t((3, 4))], reduction=1, ignore_index=1,
     label_smoothing=0.0)
case("cross_entropy_loss", lambda x, t_, w: ce(x, t_, w, 1, -100, 0.0), [t((3, 4)), t((3, 4)), t((3,))], reduction=1,
     ignore_index=-100, label_smoothing=0.0, weight=1)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 0.0), [t((3, 4), I64), tg], reduction=1,
     ignore_index=-100, label_smoothing=0.0)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 5, -100, 0.2), [t((3, 4)), tg], reduction=5, ignore_index=-100,
     label_smoothing=0.2)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 5, -100, 0.0), [t((3, 4)), t((3, 4))], reduction=5,
     ignore_index=-100, label_smoothing=0.0)
case("cross_entropy_loss", lambda x, t_: ce(x, t_, None, 1, -100, 0.0), [t((3, 4)), longs(0, 7, 1)], reduction=1,
     ignore_index=-100, label_smoothing=0.0)

# mse_loss
ms = aten.mse_loss
for d in FLOATS:
    for red in [0, 1, 2]:
        case("mse_loss", lambda a, b, red=red: ms(a, b, red), [t((3, 4), d), t((3, 4), d)], reduction=red)
for red in [0, 1, 2]:
    case("mse_loss", lambda a, b, red=red: ms(a, b, red), [t((3, 4)), t((4,), F64)], reduction=red)
    case("mse_loss", lambda a, b, red=red: ms(a, b, red), [t((3, 4), F32, "t"), t((3, 4))], reduction=red)
    case("mse_loss", lambda a, b, red=red: ms(a, b, red), [t((0,)), t((0,))], reduction=red)
    case("mse_loss", lambda a, b, red=red: ms(a, b, red), [t((3,), I64), t((3,))], reduction=red)
case("mse_loss", lambda a, b: ms(a, b, 1), [t((3,), I64), t((3,), I64)], reduction=1)
case("mse_loss", lambda a, b: ms(a, b, 0), [t((3,), B), t((3,), B)], reduction=0)
case("mse_loss", lambda a, b: ms(a, b, 1), [t((3, 4)), t((5,))], reduction=1)
case("mse_loss", lambda a, b: ms(a, b, 1), [t((100, 300)), t((100, 300))], reduction=1)
case("mse_loss_out", lambda a, b, o: ms(a, b, 1, out=o), [t((3, 4)), t((3, 4)), t((), F64)], reduction=1)
case("mse_loss_out", lambda a, b, o: ms(a, b, 1, out=o), [t((3, 4)), t((3, 4)), t((), I64)], reduction=1)
case("mse_loss_out", lambda a, b, o: ms(a, b, 0, out=o), [t((3, 4)), t((3, 4)), t((3, 4), F64)], reduction=0)
mb = aten.mse_loss_backward
for d in FLOATS:
    for red in [0, 1, 2]:
        go = t((3, 4), d) if red == 0 else t((), d)
        case("mse_loss_backward", lambda g_, a, b, red=red: mb(g_, a, b, red), [go, t((3, 4), d), t((3, 4), d)],
             reduction=red)
case("mse_loss_backward", lambda g_, a, b: mb(g_, a, b, 1), [t(()), t((3, 4)), t((4,))], reduction=1)
case("mse_loss_backward", lambda g_, a, b: mb(g_, a, b, 1), [t(()), t((3, 4), F32, "t"), t((3, 4))], reduction=1)
case("mse_loss_backward", lambda g_, a, b: mb(g_, a, b, 2), [t(()), t((3,)), t((3,), F64)], reduction=2)
case("mse_loss_backward", lambda g_, a, b: mb(g_, a, b, 2), [t((), I64), t((3,), I64), t((3,), I64)], reduction=2)

# binary_cross_entropy_with_logits
bce = aten.binary_cross_entropy_with_logits
for d in FLOATS:
    for red in [0, 1, 2]:
        case("bce_with_logits", lambda x, y, red=red: bce(x, y, None, None, red), [t((3, 4), d), t((3, 4), d, "c", 0, 1)],
             reduction=red)
for red in [0, 1, 2]:
    case("bce_with_logits", lambda x, y, w, pw, red=red: bce(x, y, w, pw, red),
         [t((3, 4)), t((3, 4), F32, "c", 0, 1), w4, v(torch.tensor([1.5, 0.5, 3.0, 1.0]))], reduction=red, weight=1,
         pos_weight=1)
    case("bce_with_logits", lambda x, y, pw, red=red: bce(x, y, None, pw, red),
         [t((3, 4)), t((3, 4), F32, "c", 0, 1), v(torch.tensor([2.0]))], reduction=red, pos_weight=1)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 0), [v(torch.tensor([100.0, -100.0, 30.0, -30.0, 0.0])),
     v(torch.tensor([0.0, 1.0, 0.0, 1.0, 0.5]))], reduction=0)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 0), [t((4,)), t((3, 4), F32, "c", 0, 1)], reduction=0)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 0), [t((3, 4)), t((4,), F32, "c", 0, 1)], reduction=0)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 1), [t((3, 4), F32, "t"), t((3, 4), F32, "c", 0, 1)],
     reduction=1)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 1), [t((3, 4), F64), t((3, 4), F32, "c", 0, 1)], reduction=1)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 1), [t((0,)), t((0,))], reduction=1)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 3), [t((3,)), t((3,), F32, "c", 0, 1)], reduction=3)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 1), [t((3, 4)), t((3, 4), I64)], reduction=1)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 1), [t((3, 4), I64), t((3, 4))], reduction=1)
case("bce_with_logits", lambda x, y: bce(x, y, None, None, 1), [t((3,)), t((4,))], reduction=1)

# ---------------------------------------------------------------------------------------------
# distances
# ---------------------------------------------------------------------------------------------
for d in [F32, F64, BF16]:
    case("cosine_similarity", F.cosine_similarity, [t((4, 5), d), t((4, 5), d)])
    case("pairwise_distance", F.pairwise_distance, [t((4, 5), d), t((4, 5), d)])
case("cosine_similarity", lambda a, b: F.cosine_similarity(a, b, dim=-1), [t((2, 3)), t((3,))], dim=-1)
case("cosine_similarity", lambda a, b: F.cosine_similarity(a, b, dim=0), [t((3, 2, 2), F64), t((3, 1, 2), F64)], dim=0)
case("cosine_similarity", lambda a, b: F.cosine_similarity(a, b, eps=0.5), [v(torch.tensor([[1e-5, 0.0], [3.0, 4.0]])), v(torch.tensor([[1e-5, 0.0], [0.0, 0.0]]))], eps=0.5)
case("cosine_similarity", lambda a, b: F.cosine_similarity(a, b), [v(torch.tensor([[1e-5, 0.0]])), v(torch.tensor([[1e-5, 0.0]]))])
case("cosine_similarity", F.cosine_similarity, [t((1, 2), I64), t((1, 2), I64)])
case("cosine_similarity", lambda a, b: F.cosine_similarity(a, b, dim=2), [t((2, 3)), t((2, 3))], dim=2)
for p in [1.0, 3.0, 0.5, float("inf")]:
    case("pairwise_distance", lambda a, b, p=p: F.pairwise_distance(a, b, p=p), [t((3, 4)), t((3, 4))], p=p)
case("pairwise_distance", lambda a, b: F.pairwise_distance(a, b, keepdim=True), [t((3, 4)), t((4,))], keepdim=1)
case("pairwise_distance", lambda a, b: F.pairwise_distance(a, b, eps=0.0), [t((5,)), t((5,))], eps=0.0)
case("pairwise_distance", F.pairwise_distance, [t((1, 2), I64), t((1, 2), I64)])
case("pairwise_distance", F.pairwise_distance, [t(()), t(())])


def cos_grads(a, b, eps=1e-8):
    """The gradients of cosine_similarity(a, b).sum() (PyTorch clamps the norms below eps but
    passes the gradient through the clamp)."""
    a, b = a.clone().requires_grad_(), b.clone().requires_grad_()
    F.cosine_similarity(a, b, eps=eps).sum().backward()
    return a.grad, b.grad


case("cosine_similarity_grad", lambda a, b: cos_grads(a, b, 0.5),
     [v(torch.tensor([[1e-5, 0.0], [3.0, 4.0]], dtype=F64)), v(torch.tensor([[0.2, 0.1], [0.3, -0.4]], dtype=F64))],
     eps=0.5)
case("cosine_similarity_grad", cos_grads,
     [v(torch.tensor([[1e-9, 2e-9, -1e-9], [1.0, 2.0, 3.0]], dtype=F64)),
      v(torch.tensor([[0.5, 0.1, 0.3], [1e-10, 0.0, 1e-10]], dtype=F64))])
case("cosine_similarity_grad", cos_grads, [t((3, 4), F64), t((3, 4), F64)])


# ---- hardshrink / softshrink and their backward kernels (declared by `pointwise:`) ----
EDGES = [0.0, -0.0, 0.5, -0.5, 0.49, -0.51, 2.0, -3.0, float("inf"), float("-inf"), float("nan")]
for name, fn in [("hardshrink", F.hardshrink), ("softshrink", F.softshrink)]:
    for d in FLOATS:
        case(name, fn, [t((3, 4), d)])
    case(name, fn, [v(torch.tensor(EDGES))])
    case(name, lambda x, f=fn: f(x, 1.5), [t((8,))], lambd=1.5)
    case(name, lambda x, f=fn: f(x, 0.0), [v(torch.tensor(EDGES, dtype=F64))], lambd=0.0)
    case(name, fn, [t((4, 5), F32, "t")])
    case(name, fn, [t((4,), I64)])
    case(name + "_backward", lambda g, x, n=name: getattr(torch.ops.aten, n + "_backward")(g, x, 0.5),
         [t((6,)), v(torch.tensor(EDGES[:6]))], lambd=0.5)
case("softshrink", lambda x: F.softshrink(x, -1.0), [t((4,))], lambd=-1.0)
case("hardshrink", lambda x: x.clone().hardshrink(0.25), [t((5,), BF16)], lambd=0.25)


# ---- threshold (declared by `pointwise:`) ----
for d in FLOATS:
    case("threshold", lambda x: F.threshold(x, 0.5, -2.0), [t((3, 4), d)], threshold=0.5, value=-2.0)
case("threshold", lambda x: F.threshold(x, 1, 7), [t((6,), I64)], threshold=1, value=7)
case("threshold", lambda x: F.threshold(x, 0.5, 7), [t((6,), I64)], threshold=0.5, value=7)
case("threshold", lambda x: F.threshold(x, 0.5, 7), [t((6,), U8, "c", 0, 3)], threshold=0.5, value=7)
case("threshold", lambda x: F.threshold(x, 0, 1), [t((4,), B)], threshold=0, value=1)
case("threshold", lambda x: F.threshold(x, 0.5, -2.0), [v(torch.tensor(EDGES))], threshold=0.5, value=-2.0)
case("threshold", lambda x: F.threshold(x, 0.0, 0.0), [t((4, 5), F32, "t")], threshold=0.0, value=0.0)
case("threshold_", lambda x: torch.threshold_(x.clone(), 0.1, 3.0), [t((5,))], threshold=0.1, value=3.0)
case("threshold_out", lambda x, o: torch.threshold(x, 0.1, 3.0, out=o), [t((2, 3)), t((5,))],
     threshold=0.1, value=3.0)


g.save()
