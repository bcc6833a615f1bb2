"""Counts PyTorch's OpInfo operator names (torch.testing._internal's op_db) that oxten declares.

An OpInfo counts when the aten operator it tests (its `aten_name`, else its name with
`nn.functional.` dropped and `.` as `_`) is a base name in native_functions.yaml; dunder
variants (`__radd__`) count through their operator. Prints the count, then the names missing.
This is the coverage half of issue 24's OpInfo suite; replaying the samples is not built yet.

Run: pip install torch numpy expecttest; python3 scripts/opinfo_coverage.py [--missing]
"""
import pathlib
import re
import sys

from torch.testing._internal.common_methods_invocations import op_db

ROOT = pathlib.Path(__file__).resolve().parent.parent
DUNDER = {"radd": "add", "rand": "bitwise_and", "rdiv": "div", "rmatmul": "matmul", "rmod": "remainder",
          "rmul": "mul", "ror": "bitwise_or", "rpow": "pow", "rsub": "rsub", "rxor": "bitwise_xor"}


def oxten_bases():
    bases = set()
    for line in (ROOT / "native_functions.yaml").read_text().splitlines():
        m = re.match(r"- func: ([A-Za-z0-9_]+)[.(]", line)
        if m:
            bases.add(m.group(1).rstrip("_") if not m.group(1).startswith("__") else m.group(1))
    return bases


# OpInfos whose aten operator has another name.
ATEN_ALIASES = {"cross_entropy": "cross_entropy_loss", "dropout2d": "feature_dropout", "dropout3d": "feature_dropout",
                "unique": "_unique2", "upsample_nearest": "upsample_nearest2d",
                "upsample_bilinear": "upsample_bilinear2d", "interpolate": "upsample_nearest2d",
                "lu": "_lu_with_info", "T": "numpy_T", "H": "matrix_H",
                # `torch.zero_(x.clone())`, `x.clone().resize_(shape)`: the in-place forms of
                # aten's functional `zero`, `resize` and `resize_as`.
                "zero_": "zero", "resize_": "resize", "resize_as_": "resize_as",
                # `F.grid_sample` spells aten's `grid_sampler`'s integer modes as strings.
                "grid_sample": "grid_sampler"}
# `Tensor.float()` and the other dtype methods: aten's `to.dtype` with the method's dtype.
CONVERSIONS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16", "bool": "bool",
               "byte": "uint8", "char": "int8", "short": "int16", "int": "int32", "long": "int64"}
ATEN_ALIASES.update({name: "to" for name in CONVERSIONS})


def aten_name(op):
    m = re.fullmatch(r"__(\w+)__", op.name)
    if m:
        return DUNDER.get(m.group(1), m.group(1))
    name = getattr(op, "aten_name", None) or op.name
    # `torch.ops.aten.X.default` (and an `aten_name` of `aten.X`) test aten's X itself.
    name = re.sub(r"^(torch\.ops\.)?aten\.", "", name).removesuffix(".default")
    name = name.replace("nn.functional.", "").replace(".", "_")
    return ATEN_ALIASES.get(name, name)


def main():
    bases = oxten_bases()
    names = sorted({op.name: aten_name(op) for op in op_db}.items())
    have = [n for n, a in names if a in bases]
    print(f"oxten declares the operators of {len(have)} of PyTorch's {len(names)} OpInfo operator names")
    if "--missing" in sys.argv:
        print(" ".join(n for n, a in names if a not in bases))


if __name__ == "__main__":
    main()
