"""Writes tests/golden/rnn_layers.safetensors: PyTorch's RNN, LSTM and GRU modules and cells
(float32, parameters as initialised under a fixed seed), their inputs and initial states, their
outputs and final states, and the gradients of a weighted sum of the outputs with respect to the
input and every parameter. tests/tests/rnn.rs loads the parameters into oxten's modules and
checks the same values. Run: python3 scripts/rnn_fixture.py (needs torch and safetensors).
"""
import pathlib

import torch
from safetensors.torch import save_file
from torch import nn

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "rnn_layers.safetensors"
torch.manual_seed(0)
state = {}


def record(name, module, x, states, run):
    """Parameters as `{name}.{param}`, the input and states, the outputs `__{name}_out{i}` and the
    gradients `__{name}_grad_{param}` of `Σ_i Σ (out_i · w_i)` with fixed random weights `w_i`."""
    x = x.clone().requires_grad_(True)
    outs = run(module, x, states)
    loss = 0
    for i, o in enumerate(outs):
        w = torch.randn_like(o)
        state[f"__{name}_w{i}"] = w
        state[f"__{name}_out{i}"] = o.detach().clone()
        loss = loss + (o * w).sum()
    params = dict(module.named_parameters())
    grads = torch.autograd.grad(loss, [x] + list(params.values()))
    state[f"__{name}_x"] = x.detach().clone()
    state[f"__{name}_grad_x"] = grads[0]
    for (pname, p), g in zip(params.items(), grads[1:]):
        state[f"{name}.{pname}"] = p.detach().clone()
        state[f"__{name}_grad_{pname}"] = g
    for i, s in enumerate(states):
        state[f"__{name}_s{i}"] = s


def seq(module, x, states):
    if not states:
        out, h = module(x)
    elif len(states) == 1:
        out, h = module(x, states[0])
    else:
        out, h = module(x, tuple(states))
    return [out] + (list(h) if isinstance(h, tuple) else [h])


def cell(module, x, states):
    r = module(x, tuple(states) if len(states) == 2 else states[0])
    return list(r) if isinstance(r, tuple) else [r]


record("lstm", nn.LSTM(3, 4, num_layers=2, bidirectional=True), torch.randn(5, 2, 3),
       [torch.randn(4, 2, 4), torch.randn(4, 2, 4)], seq)
record("gru", nn.GRU(3, 4, batch_first=True, bias=False), torch.randn(2, 5, 3), [], seq)
record("rnn_relu", nn.RNN(3, 4, num_layers=2, nonlinearity="relu"), torch.randn(5, 3), [torch.randn(2, 4)], seq)
record("rnn_bi", nn.RNN(3, 4, bidirectional=True, batch_first=True), torch.randn(2, 6, 3), [torch.randn(2, 2, 4)], seq)
record("lstm_cell", nn.LSTMCell(3, 4), torch.randn(2, 3), [torch.randn(2, 4), torch.randn(2, 4)], cell)
record("gru_cell", nn.GRUCell(3, 4), torch.randn(3), [torch.randn(4)], cell)
record("rnn_cell", nn.RNNCell(3, 4), torch.randn(2, 3), [torch.randn(2, 4)], cell)
save_file({k: v.contiguous() for k, v in state.items()}, str(OUT))
print(f"wrote {OUT}: {len(state)} tensors")
