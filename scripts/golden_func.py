#!/usr/bin/env python3
"""Golden values for forward-mode AD and oxten::func (tests/golden/func.txt, replayed by
tests/tests/forward_ad.rs): torch.func.jvp, jacfwd, jacrev, hessian and hvp of an MLP, softmax
cross-entropy, layer norm, a convolution, batch and group norm, and reductions, in float64."""
import torch
import torch.nn.functional as F
from torch.func import grad, hessian, jacfwd, jacrev, jvp

from golden_lib import Golden

g = Golden("func.txt", "scripts/golden_func.py")
F64 = torch.float64


def t(shape, lo=-1.0, hi=1.0):
    return ("t", shape, F64, "c", lo, hi)


def mlp(x, w1, b1, w2):
    return torch.tanh(x @ w1.T + b1) @ w2.T


def mlp_loss(x, w1, b1, w2):
    return (mlp(x, w1, b1, w2) ** 2).mean()


def ce(logits, target):
    return F.cross_entropy(logits, target)


def jvp_case(name, f, primals, tangents, **attrs):
    """Inputs: the primals then the tangents; outputs: the values then the JVPs."""
    n = len(primals)

    def run(*xs):
        values, tans = jvp(f, tuple(xs[:n]), tuple(xs[n:]))
        values = values if isinstance(values, tuple) else (values,)
        tans = tans if isinstance(tans, tuple) else (tans,)
        return values + tans

    g.case(name, run, primals + tangents, **attrs)


MLP = [t((4, 3)), t((5, 3)), t((5,)), t((2, 5))]
jvp_case("jvp_mlp", mlp, MLP, [t((4, 3)), t((5, 3)), t((5,)), t((2, 5))])
jvp_case("jvp_mlp_loss", mlp_loss, MLP, [t((4, 3)), t((5, 3)), t((5,)), t((2, 5))])
g.case("jvp_cross_entropy", lambda x, y, v: jvp(lambda a: ce(a, y), (x,), (v,)),
       [t((4, 5)), ("v", torch.tensor([0, 3, 1, 4])), t((4, 5))])
jvp_case("jvp_layer_norm", lambda x, w, b: F.layer_norm(x, (6,), w, b), [t((3, 6)), t((6,)), t((6,))],
         [t((3, 6)), t((6,)), t((6,))])
jvp_case("jvp_conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1), [t((2, 3, 5, 5)), t((4, 3, 3, 3)), t((4,))],
         [t((2, 3, 5, 5)), t((4, 3, 3, 3)), t((4,))])
jvp_case("jvp_batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         [t((4, 3, 2)), t((3,)), t((3,))], [t((4, 3, 2)), t((3,)), t((3,))])
jvp_case("jvp_group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [t((2, 4, 3)), t((4,)), t((4,))],
         [t((2, 4, 3)), t((4,)), t((4,))])
jvp_case("jvp_softmax_logsumexp", lambda x: (torch.softmax(x, 1), torch.logsumexp(x, 1), torch.log_softmax(x, 0)),
         [t((3, 4))], [t((3, 4))])
jvp_case("jvp_reductions", lambda x: (x.amax(1), x.std(0), x.norm(), x.prod(1), x.max(0).values, torch.var_mean(x, 1)[0]),
         [t((3, 4), 0.5, 2.0)], [t((3, 4))])
jvp_case("jvp_max_pool", lambda x: F.max_pool2d(x, 2), [t((1, 2, 4, 4))], [t((1, 2, 4, 4))])
g.case("jacfwd_mlp", lambda x, w1, b1, w2: jacfwd(mlp)(x, w1, b1, w2), MLP)
g.case("jacrev_mlp", lambda x, w1, b1, w2: jacrev(mlp, argnums=(0, 1))(x, w1, b1, w2), MLP)
g.case("hessian_mlp_loss", lambda x, w1, b1, w2: hessian(mlp_loss, argnums=(0, 2))(x, w1, b1, w2)[1][1], MLP)
def hvp(f, primals, tangents):
    """Forward-over-reverse, as torch.func's docs build it: the JVP of the gradient."""
    return jvp(grad(f, argnums=tuple(range(len(primals)))), primals, tangents)[1]


g.case("hvp_mlp_loss", lambda x, w1, b1, w2, v1, v2: hvp(lambda a, b: mlp_loss(a, b, b1, w2), (x, w1), (v1, v2)),
       MLP + [t((4, 3)), t((5, 3))])
# Forward-over-reverse through the backward operators of layer norm, convolution, batch norm,
# group norm and attention.
g.case("hvp_layer_norm", lambda x, w, gam, v: hvp(lambda a: (F.layer_norm(a @ w.T, (5,), gam, None) ** 2).sum(), (x,), (v,)),
       [t((3, 4)), t((5, 4)), t((5,)), t((3, 4))])
g.case("hvp_conv_batch_norm", lambda x, w, v: hvp(lambda k: (F.batch_norm(F.conv2d(x, k, padding=1), None, None, training=True) ** 3).mean(), (w,), (v,)),
       [t((2, 2, 4, 4)), t((3, 2, 3, 3)), t((3, 2, 3, 3))])
g.case("hvp_group_norm", lambda x, v: hvp(lambda a: torch.tanh(F.group_norm(a, 2)).pow(2).sum(), (x,), (v,)),
       [t((2, 4, 3)), t((2, 4, 3))])


def hvp_attention(q, k, val, v):
    # PyTorch's fused CPU kernel has no forward AD; its math path computes the same function.
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.MATH):
        return hvp(lambda a: torch.tanh(F.scaled_dot_product_attention(a, k, val, is_causal=True)).sum(), (q,), (v,))


g.case("hvp_attention", hvp_attention, [t((1, 2, 3, 4)), t((1, 2, 3, 4)), t((1, 2, 3, 4)), t((1, 2, 3, 4))])
g.save()
