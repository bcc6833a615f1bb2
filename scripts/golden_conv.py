"""Regenerates tests/golden/conv.txt: PyTorch's outputs for the convolution and pooling family.

Covers conv1d/conv2d (int and string padding), conv_transpose2d, convolution and
convolution_backward, max_pool2d(_with_indices)(_backward), avg_pool2d(_backward) and
(_)adaptive_avg_pool2d(_backward): dtypes, strides/padding/dilation/groups, channels_last
inputs and weights (output strides included), unbatched and empty inputs, and error messages.
Format: scripts/golden_lib.py. Replayed by tests/tests/conv_pool.rs. Run: python3 scripts/golden_conv.py
"""
import warnings

import torch
import torch.nn.functional as F

from golden_lib import Golden

warnings.filterwarnings("ignore")
g = Golden("conv.txt", "scripts/golden_conv.py")
case = g.case
f32, f64, f16, bf16, i64 = torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64
aten = torch.ops.aten


def T(shape, dtype=f32, layout="c", lo=-1.0, hi=1.0):
    return ("t", shape, dtype, layout, lo, hi)


def fmt(a, lay):
    """`a` in channels_last when `lay` is "cl" (inputs given as values arrive contiguous)."""
    return a.contiguous(memory_format=torch.channels_last) if lay == "cl" else a


def lst(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


# ---- conv2d ----
def conv2d_case(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    args = [x, w] + ([b] if b else [])
    fn = lambda *a: F.conv2d(a[0], a[1], a[2] if len(a) > 2 else None, stride, padding, dilation, groups)
    case("conv2d", fn, args, stride=lst(stride), padding=lst(padding), dilation=lst(dilation), groups=groups,
         bias=int(b is not None))


for dt in [f32, f64, bf16, f16]:
    conv2d_case(T((2, 4, 6, 7), dt), T((5, 4, 3, 3), dt), T((5,), dt), padding=1)
    conv2d_case(T((2, 4, 6, 7), dt, "cl"), T((5, 4, 3, 3), dt), T((5,), dt), stride=2, padding=1)
    conv2d_case(T((2, 4, 5, 5), dt), T((6, 2, 3, 2), dt), None, stride=(2, 1), padding=(1, 0), groups=2)
for xl, wl in [("c", "c"), ("cl", "c"), ("c", "cl"), ("cl", "cl")]:
    conv2d_case(T((2, 6, 7, 5), f32, xl), T((4, 3, 3, 3), f32, wl), T((4,)), padding=(2, 1), dilation=(2, 1), groups=2)
    conv2d_case(T((2, 6, 7, 5), f64, xl), T((4, 6, 1, 1), f64, wl), None)
    conv2d_case(T((3, 8, 4, 4), bf16, xl), T((8, 8, 1, 1), bf16, wl), T((8,), bf16), stride=2)
conv2d_case(T((2, 6, 5, 5)), T((6, 1, 3, 3)), T((6,)), padding=1, groups=6)
conv2d_case(T((2, 6, 5, 5), f32, "cl"), T((12, 1, 3, 3)), None, padding=1, groups=6)
conv2d_case(T((1, 3, 9, 8)), T((4, 3, 5, 3)), T((4,)), stride=(3, 2), padding=(2, 1), dilation=(1, 2))
conv2d_case(T((3, 7, 6)), T((2, 3, 3, 3)), T((2,)), padding=1)
conv2d_case(T((4, 1, 1, 1)), T((3, 1, 1, 1)), None)
conv2d_case(T((2, 3, 1, 1), f32, "cl"), T((5, 3, 1, 1)), T((5,)))
conv2d_case(T((0, 4, 5, 6)), T((6, 4, 3, 3)), T((6,)))
conv2d_case(T((0, 4, 5, 6), f32, "cl"), T((6, 4, 3, 3)), None, padding=1)
conv2d_case(T((2, 3, 4, 4), i64, "c", -3, 3), T((2, 3, 2, 2), i64, "c", -3, 3), T((2,), i64, "c", -3, 3), padding=1)
conv2d_case(T((1, 2, 4, 4), i64, "c", -3, 3), T((2, 1, 2, 2), i64, "c", -3, 3), None, stride=2, groups=2)
# errors
conv2d_case(T((2, 4, 5, 6)), T((6, 4, 3, 3), f64))
conv2d_case(T((2, 4, 5, 6), f64), T((6, 4, 3, 3)))
conv2d_case(T((2, 4, 5, 6), bf16), T((6, 4, 3, 3)))
conv2d_case(T((2, 4, 5, 6)), T((6, 4, 3, 3)), T((6,), f64))
conv2d_case(T((2, 4, 5, 6)), T((6, 4, 3, 3)), T((5,)))
conv2d_case(T((2, 4, 5, 6)), T((6, 3, 3, 3)))
conv2d_case(T((2, 4, 5, 6)), T((6, 4, 3, 3)), None, groups=3)
conv2d_case(T((2, 4, 5, 6)), T((6, 2, 3, 3)), None, groups=0)
conv2d_case(T((2, 4, 5, 6)), T((6, 4, 3, 3)), None, stride=0)
conv2d_case(T((2, 4, 5, 6)), T((6, 4, 3, 3)), None, padding=-1)
conv2d_case(T((2, 4, 5, 6)), T((6, 4, 3, 3)), None, dilation=0)
conv2d_case(T((2, 4, 5, 6)), T((6, 4, 7, 7)))
conv2d_case(T((5,)), T((6, 4, 3, 3)))
conv2d_case(T((2, 4, 5, 6)), T((0, 4, 3, 3)))
conv2d_case(T((2, 4, 5, 6), torch.bool, "c"), T((6, 4, 3, 3), torch.bool, "c"))
case("convolution", lambda x, w: torch.convolution(x, w, None, [1, 1, 1], [0], [1], False, [0], 1),
     [T((2, 4, 5, 6)), T((6, 4, 3, 3))], stride=[1, 1, 1], padding=[0], dilation=[1], transposed=0, output_padding=[0], groups=1)
case("convolution", lambda x, w: torch.convolution(x, w, None, [1], [0], [1], False, [0], 1),
     [T((2, 4, 5, 6)), T((6, 4))], stride=[1], padding=[0], dilation=[1], transposed=0, output_padding=[0], groups=1)
case("convolution", lambda x, w: torch.convolution(x, w, None, [2], [1], [1], True, [1], 1),
     [T((2, 6, 3, 4)), T((6, 4, 3, 3))], stride=[2], padding=[1], dilation=[1], transposed=1, output_padding=[1], groups=1)
case("convolution", lambda x, w: torch.convolution(x, w, None, [2], [0], [1], True, [2], 1),
     [T((2, 6, 3, 4)), T((6, 4, 3, 3))], stride=[2], padding=[0], dilation=[1], transposed=1, output_padding=[2], groups=1)
case("convolution", lambda x, w: torch.convolution(x, w, None, [1], [0], [1], True, [0], 1),
     [T((2, 4, 3, 4)), T((6, 4, 3, 3))], stride=[1], padding=[0], dilation=[1], transposed=1, output_padding=[0], groups=1)
case("convolution", lambda x, w: torch.convolution(x, w, None, [1], [0], [1], False, [-1], 1),
     [T((2, 4, 5, 6)), T((6, 4, 3, 3))], stride=[1], padding=[0], dilation=[1], transposed=0, output_padding=[-1], groups=1)


# ---- conv1d ----
def conv1d_case(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    args = [x, w] + ([b] if b else [])
    fn = lambda *a: F.conv1d(a[0], a[1], a[2] if len(a) > 2 else None, stride, padding, dilation, groups)
    case("conv1d", fn, args, stride=lst(stride), padding=lst(padding), dilation=lst(dilation), groups=groups,
         bias=int(b is not None))


for dt in [f32, f64, bf16]:
    conv1d_case(T((2, 4, 9), dt), T((6, 2, 3), dt), T((6,), dt), stride=2, padding=2, dilation=2, groups=2)
conv1d_case(T((4, 9)), T((3, 4, 2)), None, padding=1)
conv1d_case(T((4, 9), f32, "t"), T((3, 4, 1)), T((3,)))
conv1d_case(T((2, 4, 9, 3)), T((3, 4, 1)))


# ---- conv2d / conv1d with string padding ----
def conv_padding_case(name, fn, x, w, b=None, padding="same", stride=1, dilation=1, groups=1):
    args = [x, w] + ([b] if b else [])
    f = lambda *a: fn(a[0], a[1], a[2] if len(a) > 2 else None, stride, padding, dilation, groups)
    case(name, f, args, padding=padding, stride=lst(stride), dilation=lst(dilation), groups=groups, bias=int(b is not None))


conv_padding_case("conv2d_padding", F.conv2d, T((2, 4, 6, 7)), T((5, 4, 3, 3)), T((5,)))
conv_padding_case("conv2d_padding", F.conv2d, T((2, 4, 6, 7), f32, "cl"), T((5, 4, 2, 4)), None)
conv_padding_case("conv2d_padding", F.conv2d, T((2, 4, 6, 7)), T((6, 2, 2, 3)), T((6,)), dilation=(1, 2), groups=2)
conv_padding_case("conv2d_padding", F.conv2d, T((2, 4, 6, 7)), T((5, 4, 3, 3)), T((5,)), padding="valid", stride=2)
conv_padding_case("conv2d_padding", F.conv2d, T((4, 6, 7)), T((5, 4, 4, 4)), None)
conv_padding_case("conv2d_padding", F.conv2d, T((2, 4, 6, 7)), T((5, 4, 3, 3)), None, stride=2)
conv_padding_case("conv2d_padding", F.conv2d, T((2, 4, 6, 7)), T((5, 4, 3, 3)), None, padding="full")
conv_padding_case("conv1d_padding", F.conv1d, T((2, 4, 9)), T((3, 4, 4)), T((3,)), dilation=3)
conv_padding_case("conv1d_padding", F.conv1d, T((2, 4, 9)), T((3, 4, 4)), None, padding="valid")


# ---- conv_transpose2d ----
def convt_case(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    args = [x, w] + ([b] if b else [])
    fn = lambda *a: F.conv_transpose2d(a[0], a[1], a[2] if len(a) > 2 else None, stride, padding, output_padding,
                                       groups, dilation)
    case("conv_transpose2d", fn, args, stride=lst(stride), padding=lst(padding), output_padding=lst(output_padding),
         groups=groups, dilation=lst(dilation), bias=int(b is not None))


for dt in [f32, f64, bf16]:
    convt_case(T((2, 4, 3, 4), dt), T((4, 3, 3, 3), dt), T((3,), dt), stride=2, padding=1, output_padding=1)
for xl, wl in [("c", "c"), ("cl", "c"), ("c", "cl")]:
    convt_case(T((2, 4, 3, 4), f32, xl), T((4, 2, 3, 2), f32, wl), T((4,)), stride=(2, 3), padding=(1, 0),
               output_padding=(0, 2), groups=2, dilation=(1, 2))
    convt_case(T((2, 4, 3, 4), f64, xl), T((4, 5, 1, 1), f64, wl), None)
convt_case(T((4, 3, 4)), T((4, 2, 2, 2)), None, stride=2)
convt_case(T((2, 4, 3, 3)), T((4, 2, 3, 3)), None, stride=1, padding=2, dilation=2)
convt_case(T((2, 3, 3, 3)), T((4, 2, 3, 3)))
convt_case(T((2, 4, 3, 3)), T((4, 2, 3, 3)), None, stride=2, output_padding=2)


# ---- convolution_backward ----
def conv_bwd_case(_go_shape, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
                  mask, dt=f32, gol="c"):
    # grad_output has the forward's output shape (computed here; the first argument is ignored).
    y = torch.convolution(torch.zeros(x[1], dtype=f64), torch.zeros(w[1], dtype=f64), None, stride, padding,
                          dilation, transposed, output_padding, groups)
    go_shape = tuple(y.shape)

    def fn(go, xx, ww):
        r = aten.convolution_backward(go, xx, ww, bias_sizes, stride, padding, dilation, transposed, output_padding,
                                      groups, mask)
        return [t for t, m in zip(r, mask) if m]
    case("convolution_backward", fn, [T(go_shape, dt, gol), x, w], bias_sizes=bias_sizes or [], stride=stride,
         padding=padding, dilation=dilation, transposed=int(transposed), output_padding=output_padding, groups=groups,
         mask=[int(m) for m in mask])


for dt in [f32, f64, bf16]:
    conv_bwd_case((2, 5, 6, 7), T((2, 4, 6, 7), dt), T((5, 4, 3, 3), dt), [5], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                  [True, True, True], dt)
for xl, wl in [("c", "c"), ("cl", "c"), ("c", "cl")]:
    conv_bwd_case((2, 6, 3, 5), T((2, 4, 7, 5), f32, xl), T((6, 2, 3, 2), f32, wl), [6], [2, 1], [1, 0], [1, 2], False,
                  [0, 0], 2, [True, True, True])
    conv_bwd_case((2, 6, 5, 5), T((2, 6, 5, 5), f64, xl), T((6, 6, 1, 1), f64, wl), None, [1, 1], [0, 0], [1, 1], False,
                  [0, 0], 1, [True, True, False], f64)
conv_bwd_case((2, 6, 5, 5), T((2, 6, 5, 5)), T((6, 6, 1, 1)), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
              [True, True, False], f32, "cl")
conv_bwd_case((2, 4, 7, 9), T((2, 6, 3, 4)), T((6, 2, 3, 3)), [4], [2, 2], [1, 0], [1, 1], True, [1, 0], 2,
              [True, True, True])
conv_bwd_case((2, 3, 7, 9), T((2, 6, 3, 4), f32, "cl"), T((6, 3, 3, 3)), None, [2, 2], [1, 0], [1, 1], True, [1, 0], 1,
              [True, False, False])
conv_bwd_case((2, 3, 7, 9), T((2, 6, 3, 4)), T((6, 3, 3, 3)), [3], [2, 2], [1, 0], [1, 1], True, [1, 0], 1,
              [False, True, True])
conv_bwd_case((2, 3, 5), T((2, 4, 9)), T((3, 4, 3)), [3], [2], [1], [2], False, [0], 1, [True, True, True])
conv_bwd_case((0, 3, 5, 5), T((0, 4, 5, 5)), T((3, 4, 1, 1)), [3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
              [True, True, True])
case("convolution_backward",
     lambda go, x, w: aten.convolution_backward(go, x, w, None, [1, 1], [1, 1], [1, 1], False, [1, 0], 1,
                                                [True, True, False])[:2],
     [T((2, 5, 6, 7)), T((2, 4, 6, 7)), T((5, 4, 3, 3))], bias_sizes=[], stride=[1, 1], padding=[1, 1],
     dilation=[1, 1], transposed=0, output_padding=[1, 0], groups=1, mask=[1, 1, 0])


# ---- pooling ----
def mp_case(x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    fn = lambda a: aten.max_pool2d_with_indices(a, lst(kernel), lst(stride), lst(padding), lst(dilation), ceil_mode)
    case("max_pool2d_with_indices", fn, [x], kernel=lst(kernel), stride=lst(stride), padding=lst(padding),
         dilation=lst(dilation), ceil_mode=int(ceil_mode))
    return fn


for dt in [f32, f64, bf16, f16, i64]:
    mp_case(T((2, 3, 6, 7), dt, "c", -5, 5), 2)
    mp_case(T((2, 3, 6, 7), dt, "cl", -5, 5), 3, 2, 1, 1, True)
for lay in ["c", "cl"]:
    mp_case(T((2, 5, 9, 8), f32, lay), (3, 2), (2, 1), (1, 1), (2, 1), False)
    mp_case(T((2, 5, 9, 8), f32, lay), (3, 3), (2, 2), (1, 0), (1, 2), True)
    mp_case(T((1, 16, 5, 5), f32, lay), (2, 2), (2, 2), (1, 1), 1, True)
# channels_last with channel counts that are not a multiple of the vector width.
for dt in [f32, f64, bf16, f16, i64]:
    mp_case(T((2, 37, 5, 6), dt, "cl", -5, 5), 2)
mp_case(T((3, 6, 7)), 2, 1)
mp_case(T((0, 3, 6, 7)), 2)
mp_case(("v", torch.tensor([[[[1.0, float("nan"), 3.0], [4.0, 5.0, float("nan")], [7.0, 8.0, 9.0]]]])), 2, 1)
mp_case(("v", torch.tensor([[[[-3.0, -2.0], [-5.0, -1.0]]]])), 2)
mp_case(("v", torch.tensor([[[[-3, -2], [-5, -1]]]])), 2)
mp_case(("v", torch.full((1, 1, 3, 3), float("-inf"))), 2, 1)
for bad in [dict(kernel=(2, 2, 2)), dict(kernel=2, stride=(3, 3, 3)), dict(kernel=2, padding=(1, 1, 1)),
            dict(kernel=2, dilation=(1, 1, 1)), dict(kernel=(0, 2)), dict(kernel=2, stride=(0, 1)),
            dict(kernel=2, padding=2), dict(kernel=2, padding=-1), dict(kernel=2, dilation=(0, 1))]:
    mp_case(T((2, 4, 5, 6)), **bad)
mp_case(T((2, 4, 1, 1)), 2)
mp_case(T((4, 5)), 2)
mp_case(T((2, 0, 5, 5)), 2)
mp_case(T((2, 4, 0, 5)), 2)
mp_case(T((4, 5, 5), torch.bool, "c"), 2)
for lay in ["c", "cl"]:
    case("max_pool2d", lambda a: F.max_pool2d(a, (3, 2), (2, 1), 1, 1, True), [T((2, 3, 7, 6), f32, lay)],
         kernel=[3, 2], stride=[2, 1], padding=[1], dilation=[1], ceil_mode=1)


def mp_bwd_case(shape, dt, lay, kernel, stride, padding, dilation, ceil_mode):
    x, _ = g.make(shape, dt, lay, -5, 5)
    out, idx = aten.max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil_mode)
    fn = lambda go, a, i: aten.max_pool2d_with_indices_backward(go, fmt(a, lay), kernel, stride, padding, dilation,
                                                                ceil_mode, i)
    case("max_pool2d_with_indices_backward", fn, [T(tuple(out.shape), dt, lay if out.dim() == 4 else "c"), ("v", x),
                                                   ("v", idx)],
         kernel=kernel, stride=stride, padding=padding, dilation=dilation, ceil_mode=int(ceil_mode), layout=lay)


for dt in [f32, f64, bf16]:
    for lay in ["c", "cl"]:
        mp_bwd_case((2, 3, 7, 6), dt, lay, [3, 2], [2, 1], [1, 1], [1, 1], True)
        mp_bwd_case((2, 3, 7, 6), dt, lay, [2, 2], [1, 1], [0, 0], [2, 2], False)
mp_bwd_case((3, 7, 6), f32, "c", [2, 2], [2, 2], [0, 0], [1, 1], False)


def ap_case(x, kernel, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    fn = lambda a: aten.avg_pool2d(a, lst(kernel), lst(stride), lst(padding), ceil_mode, count_include_pad,
                                   divisor_override)
    attrs = dict(kernel=lst(kernel), stride=lst(stride), padding=lst(padding), ceil_mode=int(ceil_mode),
                 count_include_pad=int(count_include_pad))
    if divisor_override is not None:
        attrs["divisor_override"] = divisor_override
    case("avg_pool2d", fn, [x], **attrs)


for dt in [f32, f64, bf16, f16, i64]:
    ap_case(T((2, 3, 6, 7), dt, "c", -5, 5), 2)
    ap_case(T((2, 3, 6, 7), dt, "cl", -5, 5), 3, 2, 1, True, False)
for lay in ["c", "cl"]:
    for cip in [True, False]:
        for ceil in [True, False]:
            ap_case(T((2, 5, 9, 8), f32, lay), (3, 2), (2, 3), (1, 1), ceil, cip)
    ap_case(T((2, 5, 9, 8), f32, lay), (3, 3), (2, 2), (1, 0), True, True, 5)
    ap_case(T((2, 5, 9, 8), f64, lay), (2, 2), (), 0, False, False, -3)
ap_case(T((3, 6, 7)), 3, 1, 1)
ap_case(T((0, 3, 6, 7)), 2)
for bad in [dict(kernel=(2, 2, 2)), dict(kernel=2, stride=(3, 3, 3)), dict(kernel=2, padding=(1, 1, 1)),
            dict(kernel=2, padding=2), dict(kernel=2, divisor_override=0), dict(kernel=(0, 2))]:
    ap_case(T((2, 4, 5, 6)), **bad)
ap_case(T((2, 4, 5, 6)), 7)
ap_case(T((4, 5)), 2)
ap_case(T((2, 0, 5, 5)), 2)
ap_case(T((4, 5, 5), torch.bool, "c"), 2)


def ap_bwd_case(shape, dt, lay, kernel, stride, padding, ceil_mode, cip, div):
    x, _ = g.make(shape, dt, lay, -5, 5)
    out = aten.avg_pool2d(x, kernel, stride, padding, ceil_mode, cip, div)
    fn = lambda go, a: aten.avg_pool2d_backward(go, fmt(a, lay), kernel, stride, padding, ceil_mode, cip, div)
    attrs = dict(kernel=kernel, stride=stride, padding=padding, ceil_mode=int(ceil_mode), count_include_pad=int(cip))
    if div is not None:
        attrs["divisor_override"] = div
    case("avg_pool2d_backward", fn, [T(tuple(out.shape), dt, lay if out.dim() == 4 else "c"), ("v", x)], layout=lay,
         **attrs)


for dt in [f32, f64, bf16]:
    for lay in ["c", "cl"]:
        ap_bwd_case((2, 3, 7, 6), dt, lay, [3, 2], [2, 1], [1, 1], True, False, None)
        ap_bwd_case((2, 3, 7, 6), dt, lay, [2, 2], [1, 2], [0, 1], False, True, 3)
ap_bwd_case((3, 7, 6), f32, "c", [2, 2], [2, 2], [0, 0], False, True, None)

for name, fn in [("adaptive_avg_pool2d", aten.adaptive_avg_pool2d), ("_adaptive_avg_pool2d", aten._adaptive_avg_pool2d)]:
    for dt in [f32, f64, bf16, f16]:
        case(name, lambda a: fn(a, [3, 4]), [T((2, 3, 7, 6), dt, "c", -5, 5)], output_size=[3, 4])
        case(name, lambda a: fn(a, [4, 5]), [T((2, 3, 7, 6), dt, "cl", -5, 5)], output_size=[4, 5])
    for lay in ["c", "cl"]:
        case(name, lambda a: fn(a, [1, 1]), [T((2, 5, 7, 6), f32, lay)], output_size=[1, 1])
        case(name, lambda a: fn(a, [9, 2]), [T((2, 5, 7, 6), f32, lay)], output_size=[9, 2])
    case(name, lambda a: fn(a, [2, 3]), [T((5, 7, 6))], output_size=[2, 3])
    case(name, lambda a: fn(a, [1, 1]), [T((5, 7, 6))], output_size=[1, 1])
    case(name, lambda a: fn(a, [2, 3]), [T((0, 5, 7, 6))], output_size=[2, 3])
    case(name, lambda a: fn(a, [2, 3]), [T((2, 0, 7, 6))], output_size=[2, 3])
    case(name, lambda a: fn(a, [0, 3]), [T((2, 5, 7, 6))], output_size=[0, 3])
    case(name, lambda a: fn(a, [3]), [T((2, 3, 7, 6))], output_size=[3])
    case(name, lambda a: fn(a, [2, 2]), [T((5,))], output_size=[2, 2])
    case(name, lambda a: fn(a, [2, 2]), [T((2, 4, 0, 5))], output_size=[2, 2])
    case(name, lambda a: fn(a, [2, 2]), [T((2, 4, 5, 5), i64, "c", -5, 5)], output_size=[2, 2])
    if name == "adaptive_avg_pool2d":
        case(name, lambda a: fn(a, [-1, 2]), [T((2, 4, 5, 5))], output_size=[-1, 2])
    case(name, lambda a: fn(a, [1, 1]), [T((2, 4, 0, 5))], output_size=[1, 1])


def aap_bwd_case(shape, dt, lay, osize):
    x, _ = g.make(shape, dt, lay, -5, 5)
    out = aten._adaptive_avg_pool2d(x, osize)
    fn = lambda go, a: aten._adaptive_avg_pool2d_backward(go, fmt(a, lay))
    case("_adaptive_avg_pool2d_backward", fn, [T(tuple(out.shape), dt, lay if out.dim() == 4 else "c"), ("v", x)],
         layout=lay)


for dt in [f32, f64, bf16]:
    for lay in ["c", "cl"]:
        aap_bwd_case((2, 3, 7, 6), dt, lay, [3, 4])
        aap_bwd_case((2, 3, 5, 6), dt, lay, [7, 8])
aap_bwd_case((3, 7, 6), f32, "c", [2, 5])

g.save()
