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

# The 1-d and 3-d layers, the transposed convolutions, adaptive max pooling, local response
# norm and EmbeddingBag (tests/tests/nn_modules.rs, `nd_layers_match_pytorch`).
OUT3 = OUT.with_name("nn_layers_nd.safetensors")
torch.manual_seed(2)
x1, x2, x3 = torch.randn(2, 4, 9), torch.randn(2, 4, 6, 7), torch.randn(2, 4, 5, 6, 7)
layers = {
    "conv1": (nn.Conv1d(4, 6, 3, stride=2, padding=1), x1),
    "conv3": (nn.Conv3d(4, 6, (2, 3, 2), stride=(1, 2, 1), padding=(1, 0, 1), dilation=(2, 1, 1)), x3),
    "convg3": (nn.Conv3d(4, 6, 2, groups=2, bias=False), x3),
    "convt1": (nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1), x1),
    "convt2": (nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1), x2),
    "convt3": (nn.ConvTranspose3d(4, 6, (2, 3, 2), stride=(2, 1, 2), padding=(0, 1, 1), output_padding=(1, 0, 1)), x3),
    "maxp1": (nn.MaxPool1d(3, stride=2, padding=1), x1),
    "maxp3": (nn.MaxPool3d(3, stride=2, padding=1, ceil_mode=True), x3),
    "avgp1": (nn.AvgPool1d(3, stride=2, padding=1), x1),
    "avgp3": (nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False), x3),
    "aavg1": (nn.AdaptiveAvgPool1d(4), x1),
    "aavg3": (nn.AdaptiveAvgPool3d((2, 3, 4)), x3),
    "amax1": (nn.AdaptiveMaxPool1d(4), x1),
    "amax2": (nn.AdaptiveMaxPool2d((4, 5)), x2),
    "amax3": (nn.AdaptiveMaxPool3d((2, 3, 4)), x3),
    "lrn": (nn.LocalResponseNorm(3, alpha=0.1, beta=0.6, k=2.0), x3),
    "inorm1": (nn.InstanceNorm1d(4, affine=True), x1),
    "inorm3": (nn.InstanceNorm3d(4), x3[0]),
}
state = {"__x1": x1, "__x2": x2, "__x3": x3}
with torch.no_grad():
    for name, (layer, x) in layers.items():
        for pname, p in layer.named_parameters():
            p.copy_(torch.randn_like(p))
            state[f"{name}.{pname}"] = p.detach().clone()
        state[f"__out_{name}"] = layer(x)
    bags = {"bag_max": nn.EmbeddingBag(7, 3, mode="max"), "bag_sum": nn.EmbeddingBag(7, 3, mode="sum"),
            "bag_mean": nn.EmbeddingBag(7, 3, mode="mean", padding_idx=2)}
    idx2 = torch.tensor([[0, 6, 2], [3, 3, 1]])
    idx1, offsets, psw = torch.tensor([1, 2, 4, 5, 4, 3, 2, 0]), torch.tensor([0, 2, 2, 5]), torch.randn(8)
    for name, bag in bags.items():
        state[f"{name}.weight"] = bag.weight.detach().clone()
    state["__out_bag_max"] = bags["bag_max"](idx2)
    state["__out_bag_sum"] = bags["bag_sum"](idx1, offsets, per_sample_weights=psw)
    state["__out_bag_mean"] = bags["bag_mean"](idx1, offsets)
state.update({"__idx2": idx2, "__idx1": idx1, "__offsets": offsets, "__psw": psw})
save_file({k: v.contiguous() for k, v in state.items()}, str(OUT3))
print(f"wrote {OUT3}: {sorted(state)}")
