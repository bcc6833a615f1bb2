"""Joins criterion's output (target/criterion/*/new/estimates.json medians) with the PyTorch
timings and prints a markdown table.

PyTorch lines are `name seconds`, or `name seconds divisor` for a case that also gets a row
with both times divided by `divisor` (the autograd chain's time per node)."""
import json
import pathlib
import sys

FMT = "| {:<40} | {:>12} | {:>12} | {:>9} |"


def human(s):
    for unit, f in (("s", 1), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9)):
        if s * f >= 1:
            return f"{s * f:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


def main():
    torch_file = pathlib.Path(sys.argv[2])
    torch_times, header = {}, ""
    for line in torch_file.read_text().splitlines():
        if line.startswith("#"):
            header = line[2:]
            continue
        k, v, *per = line.split()
        torch_times[k] = (float(v), int(per[0]) if per else None)
    root = pathlib.Path("target/criterion")
    print(f"PyTorch: {header}\n")
    print(FMT.format("case", "oxten", "PyTorch", "speed-up"))
    print(FMT.format("-" * 40, "-" * 12, "-" * 12, "-" * 9))
    for name, (t_torch, per) in torch_times.items():
        est = root / name / "new" / "estimates.json"
        if not est.exists():
            continue
        ours = json.loads(est.read_text())["median"]["point_estimate"] * 1e-9
        print(FMT.format(name, human(ours), human(t_torch), f"{t_torch / ours:.2f}x"))
        if per:
            row = f"{name} ÷ {per}"
            print(FMT.format(row, human(ours / per), human(t_torch / per), f"{t_torch / ours:.2f}x"))


if __name__ == "__main__":
    main()
