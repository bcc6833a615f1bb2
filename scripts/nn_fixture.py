"""Writes tests/golden/digits_cnn.safetensors: a small CNN's state_dict (PyTorch's names) after a
few training steps in PyTorch, plus an input batch (`__input`) and the model's eval-mode output
on it (`__expected`). tests/tests/nn_modules.rs loads the state into the same model built with
oxten::nn and checks that it gives the same output. Run: python3 scripts/nn_fixture.py
(needs torch and safetensors).
"""
import pathlib

import torch
from safetensors.torch import save_file
from torch import nn

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "digits_cnn.safetensors"
torch.manual_seed(0)
net = nn.Sequential(
    nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(4 * 4 * 4, 10),
)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):  # moves the weights and the running statistics away from their defaults
    x = torch.rand(8, 1, 8, 8)
    loss = nn.functional.cross_entropy(net(x), torch.randint(0, 10, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
net.eval()
x = torch.rand(5, 1, 8, 8)
with torch.no_grad():
    y = net(x)
state = {k: v.contiguous() for k, v in net.state_dict().items()}
state["__input"] = x
state["__expected"] = y
save_file(state, str(OUT))
print(f"wrote {OUT}: {sorted(state)}")

# The other layers, each with its parameters moved off their defaults, on one input: their
# eval-mode outputs (tests/tests/nn_modules.rs, `more_layers_match_pytorch`).
OUT2 = OUT.with_name("nn_layers.safetensors")
torch.manual_seed(1)
layers = {
    "ln": nn.LayerNorm([4, 6]),
    "gn": nn.GroupNorm(2, 4),
    "avg": nn.AvgPool2d(2),
    "ada": nn.AdaptiveAvgPool2d((3, 2)),
}
emb = nn.Embedding(7, 3)
state = {}
x = torch.randn(2, 4, 4, 6)
idx = torch.tensor([[0, 6, 2], [3, 3, 1]])
with torch.no_grad():
    for name, layer in layers.items():
        for pname, p in layer.named_parameters():
            p.copy_(torch.randn_like(p))
            state[f"{name}.{pname}"] = p.detach().clone()
        state[f"__out_{name}"] = layer(x)
    state["emb.weight"] = emb.weight.detach().clone()
    state["__out_emb"] = emb(idx)
state["__x"] = x
state["__idx"] = idx
save_file(state, str(OUT2))
print(f"wrote {OUT2}: {sorted(state)}")
