#!/usr/bin/env python3
"""Golden values for GradScaler (tests/golden/amp.txt, replayed by tests/tests/amp.rs): short
SGD and Adam runs of a least-squares model under torch.amp.GradScaler on the CPU, with infs
injected into the loss at given steps, recording the scale after every update, the growth
tracker and the final weights."""
import torch

from golden_lib import Golden

g = Golden("amp.txt", "scripts/golden_amp.py")


def run(optimizer, steps, inf_steps, growth_interval, init_scale=2.0 ** 16):
    def f(w0, x, y):
        w = w0.clone().requires_grad_(True)
        opt = torch.optim.SGD([w], lr=0.1) if optimizer == "sgd" else torch.optim.Adam([w], lr=0.05)
        scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=growth_interval)
        scales = []
        for step in range(steps):
            loss = ((x @ w - y) ** 2).mean()
            if step in inf_steps:
                loss = loss * float("inf")
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
            scales.append(scaler.get_scale())
        return torch.tensor(scales, dtype=torch.float64), torch.tensor([scaler._get_growth_tracker()], dtype=torch.int64), w.detach()
    return f


inputs = [("t", (4,), torch.float32, "c"), ("t", (6, 4), torch.float32, "c"), ("t", (6,), torch.float32, "c")]
for optimizer, steps, inf_steps, interval in [
    ("sgd", 8, (2, 5), 3),
    ("sgd", 6, (), 2),
    ("adam", 9, (0, 1, 6), 2),
]:
    g.case("grad_scaler", run(optimizer, steps, inf_steps, interval), inputs, optimizer=optimizer, steps=steps,
           inf_steps=list(inf_steps) if inf_steps else "-", growth_interval=interval)
g.save()
