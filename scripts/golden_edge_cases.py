#!/usr/bin/env python3
"""Golden values for edge cases PyTorch 2.15 answers that oxten once got wrong (tests/golden/
edge_cases.txt, replayed by tests/tests/edge_cases.rs): reductions over size-0 dimensions and
their gradients, clamp / maximum / minimum gradients at ties and NaN, prod's gradient with
infinities and zeros, integer silu, layer norm of a constant row. `*_grad` cases return the
gradients of `sum(op(inputs))` with respect to every input."""
import torch
import torch.nn.functional as F

from golden_lib import Golden

g = Golden("edge_cases.txt", "scripts/golden_edge_cases.py")
F32, F64 = torch.float32, torch.float64
NAN, INF = float("nan"), float("inf")


def v(x, dtype=F64):
    return ("v", torch.tensor(x, dtype=dtype))


def grads(f):
    def run(*xs):
        ins = [x.clone().requires_grad_() for x in xs]
        f(*ins).sum().backward()
        return tuple(x.grad if x.grad is not None else torch.zeros_like(x) for x in ins)
    return run


E = ("v", torch.zeros(0, 3, dtype=F64))
E2 = ("v", torch.zeros(2, 0, 3, dtype=F64))
# Reductions over and beside size-0 dimensions.
g.case("sum_dim", lambda x: x.sum(1), [E], dim=1)
g.case("sum_dim", lambda x: x.sum(0), [E], dim=0)
g.case("sum_dim", lambda x: x.sum(2), [E2], dim=2)
g.case("mean_dim", lambda x: x.mean(0), [E], dim=0)
g.case("mean_dim", lambda x: x.mean(2), [E2], dim=2)
g.case("mean_dim", lambda x: x.mean(1), [E2], dim=1)
g.case("logsumexp", lambda x: torch.logsumexp(x, 0), [E], dim=0)
g.case("logsumexp", lambda x: torch.logsumexp(x, 1), [E], dim=1)
g.case("logsumexp", lambda x: torch.logsumexp(x, 2), [E2], dim=2)
g.case("amax", lambda x: x.amax(1), [E], dim=1)
g.case("amax", lambda x: x.amax(0), [E], dim=0)
g.case("var_dim", lambda x: x.var(1), [E], dim=1)
# Their gradients.
g.case("sum_dim_grad", grads(lambda x: x.sum(1)), [E], dim=1)
g.case("mean_dim_grad", grads(lambda x: x.mean(2)), [E2], dim=2)
g.case("logsumexp_grad", grads(lambda x: torch.logsumexp(x, 1)), [E], dim=1)
g.case("amax_grad", grads(lambda x: x.amax(1)), [E], dim=1)
g.case("amin_grad", grads(lambda x: x.amin(2)), [E2], dim=2)
g.case("var_dim_grad", grads(lambda x: x.var(1)), [E], dim=1)
g.case("expand_grad", grads(lambda x: x.expand(2, 0, 3)), [v([[1.0, 2.0, 3.0]])])
# clamp, maximum, minimum at the bounds, ties and NaN.
X = v([-1.0, 0.0, 0.5, 1.0, NAN, 2.0])
g.case("clamp_grad", grads(lambda x: torch.clamp(x, 0.0, 1.0)), [X], min=0.0, max=1.0)
g.case("clamp_grad", grads(lambda x: torch.clamp(x, min=0.5)), [X], min=0.5)
g.case("clamp_grad", grads(lambda x: torch.clamp(x, max=0.5)), [X], max=0.5)
g.case("clamp_grad", grads(lambda x: torch.clamp(x, min=NAN)), [X], min=NAN)
g.case("clamp_grad", grads(lambda x: torch.clamp(x, 0.0, NAN)), [X], min=0.0, max=NAN)
A, B = v([1.0, NAN, 2.0, 3.0, NAN]), v([NAN, 1.0, 2.0, 1.0, NAN])
g.case("maximum_grad", grads(torch.maximum), [A, B])
g.case("minimum_grad", grads(torch.minimum), [A, B])
# prod's gradient with an infinity in one slice and a zero in another (and both in one).
P = v([[2.0, INF, 3.0], [1.0, 0.0, 3.0], [2.0, INF, 0.0], [0.0, 0.0, 2.0]])
g.case("prod_dim_grad", grads(lambda x: x.prod(1)), [P], dim=1)
g.case("prod_grad", grads(lambda x: x.prod()), [v([[2.0, INF], [1.0, 3.0]])])
g.case("prod_grad", grads(lambda x: x.prod()), [v([[2.0, 0.0], [1.0, 3.0]])])
# Integer silu is an error; layer norm of a constant row is exactly 0.
g.case("silu", F.silu, [v([1, 2], torch.int64)])
g.case("silu", F.silu, [v([True, False], torch.bool)])
g.case("layer_norm", lambda x: F.layer_norm(x, (5,)), [v([[0.1] * 5, [3.0] * 5], F32)])
g.case("layer_norm", lambda x: F.layer_norm(x, (5,)), [v([[0.1] * 5, [-7.25] * 5], F64)])
g.save()
