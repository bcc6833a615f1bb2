"""Records PyTorch's own OpInfo samples as golden files for oxten's OpInfo replay test.

Walks `op_db` (torch.testing._internal.common_methods_invocations), and for every OpInfo whose
aten operator oxten declares (the same rule as scripts/opinfo_coverage.py):
- binds each sample (`sample_inputs`, plus `reference_inputs` where the OpInfo has them) to an
  aten overload that oxten also declares, the way PyTorch's argument parser does (strict types:
  a Tensor parameter takes a tensor, a Scalar a number, an int list an int or a list …);
- calls that overload in every dtype both libraries support and records the result — and
  checks it against the OpInfo's own call, so a sample whose Python wrapper means something
  else than the aten schema is not recorded as that schema's answer;
- records the non-contiguous variant PyTorch's tests build (`SampleInput.noncontiguous()`),
  gradients of the float64 samples (random `grad_output`, `torch.autograd.grad`), and the
  `error_inputs` (the error class PyTorch raises);
- counts what it cannot record, by reason, in the index's first line.

Output (commit it; the Rust test needs no PyTorch):
  tests/golden/opinfo/cases.jsonl        one case a line; the first line is the summary
  tests/golden/opinfo/tensors.safetensors every tensor the cases name

A case: {"op": OpInfo name (+ "." variant), "schema": "add.Tensor", "dtype", "kind": sample |
noncontiguous | reference | grad | error, "args": [[name, value, is_default], ...] in schema
order, "out": [...] or "error": class, "grad_out"/"grads" for grad cases, "random": true when
the op draws random numbers (only shapes and dtypes are comparable)}. A tensor value is
{"t": key, "sizes", "strides"[, "offset"][, "grad": true][, "id": n][, "s": n]}: the stored
1-D buffer viewed with those sizes and strides (and storage offset, 0 when absent), so
non-contiguous and expanded inputs keep their layout. Buffers are stored once per content, so
one key may serve many cases; arguments that are one tensor in PyTorch (`add(x, x)`) carry the
same "id", arguments that view one storage (`take(x, i, out=x[2:])`) the same "s".

Run: pip install torch numpy expecttest; python3 scripts/opinfo_golden.py [--only NAME]
"""
import collections
import hashlib
import json
import math
import os
import pathlib
import re
import struct
import sys
import warnings

# Some sample generators iterate over sets of strings: a fixed hash seed keeps their order, and
# so the golden files, the same from run to run.
if __name__ == "__main__" and os.environ.get("PYTHONHASHSEED") != "0":
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})

import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from opinfo_coverage import CONVERSIONS, aten_name  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "golden" / "opinfo"
# The dtypes oxten has, with their safetensors names.
ST = {
    torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}
NAME = {d: str(d).replace("torch.", "") for d in ST}
# Samples kept per (OpInfo, dtype, kind): OpInfo sample lists run to hundreds for some ops;
# the first ones cover their shapes and arguments, and the file stays small.
MAX_SAMPLES = {"sample": 16, "reference": 8, "noncontiguous": 6, "grad": 8, "error": 12}
# Full sample sets in these dtypes; the others get a few samples each (they share the loops).
MAIN_DTYPES = {torch.float32, torch.float64, torch.int64, torch.bool}
MINOR_SAMPLES = 3
# Operators that read their input's storage beyond the view (inputs are recorded whole).
WHOLE_STORAGE = {"as_strided", "as_strided_copy", "as_strided_scatter"}
# Operators whose result is uninitialized memory: only its shape and dtype compare.
UNINITIALIZED = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted"}
# The largest case recorded (the bytes of its new buffers: inputs, outputs and gradients).
MAX_CASE_BYTES = 256_000


class NoBind(Exception):
    pass


def oxten_overloads():
    """base name -> overload names oxten declares (functional and out= ones, YAML order; the
    out= ones, declared or derived by `autogen:`, bind only calls that pass `out=`)."""
    out = collections.defaultdict(list)
    for line in (ROOT / "native_functions.yaml").read_text().splitlines():
        m = re.match(r"  autogen: (.*)", line)
        if m:
            for name in m.group(1).split(","):
                base, overload = name.strip().split(".")
                out[base].append(overload)
            continue
        m = re.match(r"- func: ([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\((.*)", line)
        if not m or m.group(1).endswith("_"):
            continue
        if "!" in m.group(3).split("*")[0] and m.group(1) not in MUTATING_RECORDABLE:
            continue
        out[m.group(1)].append(m.group(2) or "default")
        SCHEMAS[(m.group(1), m.group(2) or "default")] = line[len("- func: "):]
    return out


# Operators that write a positional argument but can be recorded like functional ones: the
# arguments are recorded after the call, and their outputs never depend on what they write
# (the batch-norm forms update the running statistics only in training, where the output is
# computed from the batch statistics).
MUTATING_RECORDABLE = {"_native_batch_norm_legit", "_batch_norm_with_update"}
# (base, overload) -> oxten's schema line, for the operators PyTorch has only in Python.
SCHEMAS = {}
# The Python function of the OpInfo being recorded (set per OpInfo).
PYTHON_FUNCTION = [None]


class PythonFunction:
    """An oxten operator that PyTorch has only as a Python function (`nn.functional.softsign`,
    `gaussian_nll_loss`): bound to oxten's schema, called as the OpInfo's function (its first
    argument positionally, the rest by name, `reduction` as its string)."""

    def __init__(self, schema, fn):
        self._schema = torch._C.parse_schema("oxten::" + schema)
        self.fn = fn
        self.tags = []

    def __call__(self, *args, **kwargs):
        names = [a.name for a in self._schema.arguments]
        values = dict(zip(names, args), **kwargs)
        first = values.pop(names[0])
        # TensorOptions the Python function has no parameter for, or defaults otherwise than
        # to None (`layout=torch.strided`), are left to it.
        for k in ("layout", "pin_memory"):
            if values.get(k, 0) is None:
                values.pop(k)
        if is_int(values.get("reduction")):
            values["reduction"] = {v: k for k, v in REDUCTIONS.items()}.get(values["reduction"], values["reduction"])
        return self.fn(first, **values)


class Recorder:
    def __init__(self):
        self.tensors = {}
        # Buffers are stored once per content (many samples share inputs and results): the
        # digest of a buffer's dtype and bytes maps to its key, and back for rollbacks.
        self.key_of = {}
        self.digest_of = {}
        self.bytes = 0
        self.whole_storage = False

    def tensor(self, t, grad=False, view=True, whole=False):
        if view and (self.whole_storage or whole) and t.numel():
            # as_strided reads the input's storage, not just the view: keep all of it.
            base = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
            ref = self.tensor(base.detach().clone(), grad, view=False)
            ref.update(sizes=list(t.shape), strides=list(t.stride()), offset=t.storage_offset())
            return ref
        t = t.detach()
        if t.dtype not in ST:
            raise NoBind(f"dtype {t.dtype}")
        # The smallest piece of storage that the view reaches, stored as a 1-D buffer.
        if t.numel() == 0:
            buf = torch.empty(0, dtype=t.dtype)
        else:
            extent = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
            buf = torch.as_strided(t, (extent,), (1,), t.storage_offset()).clone()
        digest = hashlib.sha1(ST[t.dtype].encode() + raw_bytes(buf)).digest()
        key = self.key_of.get(digest)
        if key is None:
            key = f"t{len(self.tensors)}"
            self.tensors[key] = buf
            self.key_of[digest] = key
            self.digest_of[key] = digest
            self.bytes += buf.numel() * buf.element_size()
        ref = {"t": key, "sizes": list(t.shape), "strides": list(t.stride())}
        if grad:
            ref["grad"] = True
        return ref

    def mark(self):
        return len(self.tensors), self.bytes

    def rollback(self, mark):
        n, self.bytes = mark
        for k in list(self.tensors)[n:]:
            del self.tensors[k]
            del self.key_of[self.digest_of.pop(k)]

    def save(self, path):
        header, blobs, pos = {}, [], 0
        for k, t in self.tensors.items():
            data = raw_bytes(t)
            header[k] = {"dtype": ST[t.dtype], "shape": list(t.shape), "data_offsets": [pos, pos + len(data)]}
            blobs.append(data)
            pos += len(data)
        h = json.dumps(header, separators=(",", ":")).encode()
        h += b" " * (-len(h) % 8)
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(h)))
            f.write(h)
            for b in blobs:
                f.write(b)


def raw_bytes(t):
    return t.contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check(ty, v):
    """Whether value `v` fits schema type `ty` (a torch JIT type), PyTorch's parser's rules."""
    kind = ty.kind()
    if kind == "OptionalType":
        return v is None or check(ty.getElementType(), v)
    s = str(ty)
    if kind == "TensorType":
        return isinstance(v, torch.Tensor)
    if kind == "ListType":
        el = ty.getElementType()
        if isinstance(v, torch.Tensor) or not isinstance(v, (list, tuple)):
            # An int for an int list (`dim=1` for `int[1]`), as PyTorch's parser allows.
            return str(el) in ("int", "SymInt") and is_int(v)
        return all(check(el, x) for x in v)
    if s in ("int", "SymInt"):
        return is_int(v)
    if s == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if s == "bool":
        return isinstance(v, bool)
    if kind == "NumberType":
        return isinstance(v, (int, float, bool))
    if s == "str":
        return isinstance(v, str)
    if s == "ScalarType":
        return isinstance(v, torch.dtype)
    if s == "MemoryFormat":
        return isinstance(v, torch.memory_format)
    if s == "Layout":
        return isinstance(v, torch.layout)
    if s == "Device":
        return isinstance(v, (torch.device, str))
    return False


# Python-level keyword arguments the aten schemas spell differently or do not have.
RENAMED_KWARGS = {"training": "train"}
# Dropped when they have these values (they do not change the result).
PYTHON_ONLY_KWARGS = {"inplace": False, "as_tuple": False, "requires_grad": None, "return_indices": False,
                      "size_average": None, "reduce": None, "weight": None}
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


# The defaults of the Python function being bound (set per OpInfo).
PYTHON_DEFAULTS = [{}]


def python_defaults(fn):
    import inspect
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}


def adapt_kwargs(schema, kwargs):
    """The Python call's keywords as the aten schema names them (None: cannot be said)."""
    names = {a.name for a in schema.arguments}
    outs = [a.name for a in schema.arguments if a.is_out]
    kw = {}
    for k, v in kwargs.items():
        if k == "out" and "out" not in names:
            # `out=(values, indices)`: the schema's out= arguments, in order.
            v = list(v) if isinstance(v, (list, tuple)) else [v]
            if len(v) != len(outs) or not outs:
                return None
            kw.update(zip(outs, v))
        elif k in names:
            kw[k] = v
        elif k in RENAMED_KWARGS and RENAMED_KWARGS[k] in names:
            kw[RENAMED_KWARGS[k]] = v
        elif k == "unbiased" and "correction" in names and isinstance(v, bool):
            kw["correction"] = int(v)
        elif k in PYTHON_ONLY_KWARGS and (k == "requires_grad" or v == PYTHON_ONLY_KWARGS[k]):
            continue
        else:
            return None
    return kw


def coerce(a, v):
    """A value the way PyTorch's parser passes it on: `reduction="sum"` as its enum, an int for
    an `int[N]` as N copies."""
    ty = a.real_type
    if ty.kind() == "OptionalType" and v is not None:
        ty = ty.getElementType()
    if a.name == "reduction" and isinstance(v, str) and str(ty) == "int":
        return REDUCTIONS.get(v, v)
    if a.name == "p" and v == "fro":
        # `torch.norm(x, "fro", dim)` is the 2-norm over `dim` (the recorded answer is checked
        # against the Python call's).
        return 2.0
    if ty.kind() == "ListType" and is_int(v) and str(ty.getElementType()) in ("int", "SymInt"):
        return [v] * (a.N or 1)
    return v


def bind(schema, args, kwargs):
    """The schema's arguments bound to a Python call, defaults filled in, or None."""
    kwargs = adapt_kwargs(schema, kwargs)
    if kwargs is None:
        return None
    pos, kw, bound = list(args), dict(kwargs), []
    for a in schema.arguments:
        if not a.kwarg_only and pos:
            v, default = pos.pop(0), False
        elif a.name in kw:
            v, default = kw.pop(a.name), False
        elif a.has_default_value():
            v, default = a.default_value, True
        elif a.name in PYTHON_DEFAULTS[0]:
            # Required in aten, defaulted by the Python function (`poisson_nll_loss`'s `full`).
            v, default = PYTHON_DEFAULTS[0][a.name], False
        else:
            return None
        if not default:
            v = coerce(a, v)
            if not check(a.real_type, v):
                return None
        bound.append((a, v, default))
    return None if pos or kw else bound


def resolve(bases, overloads, args, kwargs):
    """The first (aten overload, its name, bound arguments) of the candidate base names."""
    for base in bases:
        r = resolve_one(base, overloads.get(base, []), args, kwargs)
        if r is not None:
            return r
    return None


def varargs_forms(schema, args):
    """The call as written, then with trailing positional arguments packed into one list
    (`block_diag(a, b, c)`, `sum_to_size(2, 3)`, `meshgrid(x)`) for a list parameter at that
    position."""
    yield args
    params = [a for a in schema.arguments if not a.kwarg_only]
    for k in range(min(len(params), len(args))):
        ty = params[k].real_type
        if ty.kind() != "ListType":
            continue
        # One argument alone is packed only into a tensor list (`meshgrid(x)`, `atleast_1d(x)`).
        if k < len(args) - 1 or str(ty.getElementType()) == "Tensor":
            yield list(args[:k]) + [list(args[k:])]


def tensordot_dims(args, kwargs):
    """`tensordot(a, b, dims=n)` or `dims=([..], [..])` as aten's `dims_self`/`dims_other`."""
    if "dims" not in kwargs or len(args) < 2:
        return args, kwargs
    kwargs = dict(kwargs)
    dims = kwargs.pop("dims")
    a, b = args[0], args[1]
    if is_int(dims):
        kwargs["dims_self"] = list(range(a.dim() - dims, a.dim()))
        kwargs["dims_other"] = list(range(dims))
    else:
        kwargs["dims_self"], kwargs["dims_other"] = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    return args, kwargs


def resolve_one(base, overloads, args, kwargs):
    if base == "tensordot":
        args, kwargs = tensordot_dims(args, kwargs)
    packet = getattr(torch.ops.aten, base, None)
    if packet is None and PYTHON_FUNCTION[0] is None:
        return None
    for name in overloads:
        try:
            op = getattr(packet, name) if packet is not None else PythonFunction(SCHEMAS[(base, name)], PYTHON_FUNCTION[0])
        except AttributeError:
            continue
        for form in varargs_forms(op._schema, args):
            b = bind(op._schema, form, kwargs)
            if b is not None:
                return op, base if name == "default" else f"{base}.{name}", b
        b = method_bind(op._schema, args, kwargs)
        if b is not None:
            return op, base if name == "default" else f"{base}.{name}", b
    return None


def method_bind(schema, args, kwargs):
    """The call bound as the Tensor method (`x.polygamma(n)`): where `self` is not the schema's
    first argument (`polygamma(int n, Tensor self)`), the sample's tensor is `self` and the
    other arguments fill the remaining positions in order."""
    names = [a.name for a in schema.arguments]
    if not args or "self" not in names or names[0] == "self" or "self" in kwargs:
        return None
    if not isinstance(args[0], torch.Tensor):
        return None
    return bind(schema, list(args[1:]), {**kwargs, "self": args[0]})


class Memo:
    """The tensors of one case's arguments: `refs` maps the id of each tensor already recorded
    to its reference, so a tensor passed twice (`add(x, x)`) is one tensor in oxten too (its
    reference gets an "id": buffers are shared by content, so the key alone does not say that
    two arguments are one tensor); `shared` holds the storages that several of the arguments
    view (`take(x, i, out=x[2:])`), recorded whole with a storage number "s", so that they are
    views of one tensor in oxten too."""

    def __init__(self, values):
        self.refs = {}
        objects = {id(t): t for t in tensors_in(values) if t.numel()}.values()
        count = collections.Counter(t.untyped_storage().data_ptr() for t in objects)
        self.shared = {p: n for n, p in enumerate(p for p, c in count.items() if c > 1)}


def tensors_in(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in tensors_in(x)]
    return []


def encode(rec, v, memo, grad_inputs=None, out=False):
    """A JSON value for argument `v` (tensors through `memo`, a `Memo`). An `out=` tensor's
    values are recorded as zeros (an out= operator only writes it; samples often make it with
    `torch.empty`, and its leftover memory would change the golden files from run to run)."""
    if isinstance(v, torch.Tensor):
        if id(v) in memo.refs:
            ref = memo.refs[id(v)]
            if "id" not in ref:
                ref["id"] = sum("id" in r for r in memo.refs.values())
            return ref
        g = grad_inputs is not None and v.requires_grad
        if g:
            grad_inputs.append(v)
        storage = memo.shared.get(v.untyped_storage().data_ptr()) if v.numel() else None
        written = v
        if out and storage is None and v.numel():
            extent = 1 + sum((s - 1) * st for s, st in zip(v.shape, v.stride()))
            written = torch.as_strided(torch.zeros(extent, dtype=v.dtype), v.shape, v.stride())
        ref = rec.tensor(written, grad=g, whole=storage is not None)
        if storage is not None:
            ref["s"] = storage
        memo.refs[id(v)] = ref
        return ref
    if isinstance(v, (list, tuple)):
        return [encode(rec, x, memo, grad_inputs) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return {"float": repr(v)}
    if isinstance(v, torch.dtype):
        if v not in ST:
            raise NoBind(f"dtype {v}")
        return {"dtype": NAME[v]}
    if isinstance(v, torch.memory_format):
        return {"memory_format": str(v).replace("torch.", "")}
    if isinstance(v, torch.layout) and v != torch.strided:
        # oxten's tensors are strided only: the call does not compile in Rust.
        raise NoBind(f"layout {v}")
    if isinstance(v, (torch.layout, torch.device)):
        return {"str": str(v).replace("torch.", "")}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise NoBind(f"argument of type {type(v).__name__}")


# Schema defaults of enum types come as their integer codes (`ScalarType dtype=4`).
SCALAR_TYPE_CODES = {0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64,
                     5: torch.float16, 6: torch.float32, 7: torch.float64, 11: torch.bool, 15: torch.bfloat16}
MEMORY_FORMAT_CODES = {0: torch.contiguous_format, 1: torch.preserve_format, 2: torch.channels_last,
                       3: torch.channels_last_3d}


def typed(a, v):
    s = str(a.real_type)
    if is_int(v) and "ScalarType" in s:
        return SCALAR_TYPE_CODES.get(v, v)
    if is_int(v) and "MemoryFormat" in s:
        return MEMORY_FORMAT_CODES.get(v, v)
    if is_int(v) and "Layout" in s:
        return torch.strided
    return v


def encode_args(rec, bound, grad_inputs=None):
    memo = Memo([v for _, v, _ in bound])
    return [[a.name, encode(rec, typed(a, v), memo, grad_inputs, getattr(a, "is_out", False)), d]
            for a, v, d in bound]


def flatten(r):
    if isinstance(r, (list, tuple)):
        return [x for y in r for x in flatten(y)]
    return [r]


def encode_out(rec, r):
    out = []
    for x in flatten(r):
        if isinstance(x, torch.Tensor):
            out.append(rec.tensor(x))
        elif isinstance(x, float) and not math.isfinite(x):
            out.append({"float": repr(x)})
        elif x is None or isinstance(x, (bool, int, float)):
            out.append(x)
        else:
            raise NoBind(f"return of type {type(x).__name__}")
    return out


def same(a, b):
    a, b = flatten(a), flatten(b)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            if not torch.equal(x, y) and not torch.allclose(x.double(), y.double(), equal_nan=True, rtol=1e-3, atol=1e-3):
                return False
        elif isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            return False
        elif x != y and not (isinstance(x, float) and math.isnan(x) and math.isnan(y)):
            return False
    return True


def call_bound(op, bound):
    args, kwargs = [], {}
    for a, v, _ in bound:
        if a.kwarg_only:
            kwargs[a.name] = v
        else:
            args.append(v)
    return op(*args, **kwargs)


def is_random(op, bound):
    torch.manual_seed(1)
    a = call_bound(op, bound)
    torch.manual_seed(2)
    b = call_bound(op, bound)
    return not same(a, b)


def main():
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    overloads = oxten_overloads()
    rec = Recorder()
    cases, skipped, names = [], collections.Counter(), set()
    counted = collections.Counter()

    by_op = collections.Counter()
    current = [""]

    def skip(reason, n=1):
        skipped[reason] += n
        by_op[(reason, current[0])] += n

    for info in op_db:
        base = aten_name(info)
        if base not in overloads or (only and info.name != only):
            continue
        # The Python function's own name binds where the OpInfo's aten name is an inner op
        # (`nn.functional.pad` tests `constant_pad_nd` but calls `pad`).
        python_base = info.name.split(".")[-1]
        bases = [base] + [python_base] * (python_base != base and python_base in overloads)
        full = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
        current[0] = full
        names.add(info.name)
        rec.whole_storage = base in WHOLE_STORAGE
        PYTHON_DEFAULTS[0] = python_defaults(info.op)
        PYTHON_FUNCTION[0] = info.op
        dtypes = [d for d in ST if info.supports_dtype(d, "cpu")]
        kinds = [("sample", lambda d: info.sample_inputs("cpu", d))]
        if info.reference_inputs_func is not None:
            kinds.append(("reference", lambda d: info.reference_inputs("cpu", d)))
        kinds.append(("noncontiguous", lambda d: (s.noncontiguous() for s in info.sample_inputs("cpu", d))))
        for dtype in dtypes:
            for kind, gen in kinds:
                if kind != "sample" and dtype != torch.float32:
                    continue
                limit = MAX_SAMPLES[kind] if dtype in MAIN_DTYPES else MINOR_SAMPLES
                torch.manual_seed(0)
                n = 0
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        samples = list(gen(dtype))
                    except Exception as e:  # a sample generator that fails in this torch build
                        skip(f"sample generator raised {type(e).__name__}")
                        continue
                for s in samples:
                    if n >= limit:
                        break
                    counted[kind] += 1
                    n += 1
                    case = bounded(rec, skip, lambda: record_sample(rec, info, bases, overloads, s, dtype, kind, skip))
                    if case:
                        case["op"] = full
                        cases.append(case)
            if dtype == torch.float64 and info.supports_autograd:
                torch.manual_seed(0)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        samples = list(info.sample_inputs("cpu", dtype, requires_grad=True))
                    except Exception as e:
                        skip(f"sample generator raised {type(e).__name__}")
                        samples = []
                for s in samples[: MAX_SAMPLES["grad"]]:
                    counted["grad"] += 1
                    case = bounded(rec, skip, lambda: record_grad(rec, info, bases, overloads, s, skip))
                    if case:
                        case["op"] = full
                        cases.append(case)
        if info.error_inputs_func is not None:
            torch.manual_seed(0)
            try:
                errs = list(info.error_inputs("cpu"))
            except Exception as e:
                skip(f"error generator raised {type(e).__name__}")
                errs = []
            for e in errs[: MAX_SAMPLES["error"]]:
                counted["error"] += 1
                case = bounded(rec, skip, lambda: record_error(rec, info, bases, overloads, e, skip))
                if case:
                    case["op"] = full
                    cases.append(case)

    OUT.mkdir(parents=True, exist_ok=True)
    summary = {
        "summary": True,
        "opinfo_names": len({i.name for i in op_db}),
        "names_covered": len(names),
        "samples": sum(counted.values()),
        "by_kind": dict(counted),
        "recorded": len(cases),
        "not_recorded": dict(sorted(skipped.items(), key=lambda kv: -kv[1])),
        "torch": torch.__version__,
    }
    if not only:
        with open(OUT / "cases.jsonl", "w") as f:
            f.write(json.dumps(summary) + "\n")
            for c in cases:
                f.write(json.dumps(c, separators=(",", ":")) + "\n")
        rec.save(OUT / "tensors.safetensors")
    print(json.dumps(summary, indent=1))
    if "--why" in sys.argv:
        for (reason, op), n in sorted(by_op.items(), key=lambda kv: -kv[1]):
            print(f"{n:6} {op}: {reason}")
    print(f"tensor data: {rec.bytes / 1e6:.1f} MB")


def bounded(rec, skip, record):
    """Records a case unless its tensors pass MAX_CASE_BYTES (a few samples are large)."""
    mark = rec.mark()
    case = record()
    if case and rec.bytes - mark[1] > MAX_CASE_BYTES:
        rec.rollback(mark)
        skip(f"sample over {MAX_CASE_BYTES // 1000} kB of tensors, left out to keep the golden files small")
        return None
    return case


# Python functions that return (values, indices) when `return_indices` (at this position, the
# input being 0) is true and the values alone otherwise: aten's `*_with_indices` (or its
# tuple-returning operator) answers the first, and its values the second.
RETURN_INDICES_AT = {"max_pool1d": 6, "max_pool2d": 6, "max_pool3d": 6,
                     "adaptive_max_pool1d": 2, "adaptive_max_pool2d": 2, "adaptive_max_pool3d": 2}


def embedding_bag_call(args, kwargs):
    """`F.embedding_bag(indices, weight, ...)` (the OpInfo passes the weight first) as aten's
    `embedding_bag.padding_idx`: 2-D indices as 1-D bags of equal size, `mode` as its code,
    `padding_idx` as given (aten counts a negative one from the end). `max_norm` renormalizes
    the weight in Python: not bound."""
    weight, indices = args[0], args[1]
    kw = dict(kwargs)
    if kw.pop("max_norm", None) is not None:
        return args, {"max_norm": True}
    kw.pop("norm_type", None)
    offsets = kw.pop("offsets", None)
    psw = kw.pop("per_sample_weights", None)
    if indices.dim() == 2:
        offsets = torch.arange(0, indices.numel(), indices.size(1))
        indices = indices.reshape(-1)
        psw = None if psw is None else psw.reshape(-1)
    padding_idx = kw.pop("padding_idx", None)
    return [weight, indices, offsets], {
        "scale_grad_by_freq": kw.pop("scale_grad_by_freq", False),
        "mode": {"sum": 0, "mean": 1, "max": 2}[kw.pop("mode", "mean")],
        "sparse": kw.pop("sparse", False),
        "per_sample_weights": psw,
        "include_last_offset": kw.pop("include_last_offset", False),
        "padding_idx": padding_idx,
        **kw,
    }


# Reflected operators: `x.__rpow__(y)` is `pow(y, x)`.
REFLECTED = {"__rmatmul__", "__rpow__", "__rmod__"}
# `cdist`'s `compute_mode` string as aten's int (None: decide by size).
CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
               "donot_use_mm_for_euclid_dist": 2}
# Python functions whose positional parameters come in another order than aten's: the call is
# passed by name, and aten's `cudnn_enabled` (no Python counterpart; unused on the CPU) added.
BY_NAME = {"batch_norm": ["input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"],
           "instance_norm": ["input", "running_mean", "running_var", "weight", "bias", "use_input_stats",
                             "momentum", "eps"]}


def reordered_call(name, args, kwargs):
    """The OpInfo's call with its arguments where the aten schema has them: reflected operators
    swapped, `where(self, condition, other)` and `einsum(tensors, equation)` as aten orders them,
    `x.to("cpu", dtype, ...)` without the device, `cdist`'s mode as its code, and the norms'
    Python parameters by name."""
    if name in REFLECTED and len(args) == 2:
        return [args[1], args[0]], kwargs
    if name == "where" and len(args) == 3:
        return [args[1], args[0], args[2]], kwargs
    if name == "einsum" and len(args) == 2 and isinstance(args[1], str):
        return [args[1], args[0]], kwargs
    if name == "to" and len(args) > 1 and isinstance(args[1], (str, torch.device)) and torch.device(args[1]).type == "cpu":
        return [args[0], *args[2:]], kwargs
    if name == "cdist":
        kwargs = dict(kwargs)
        if len(args) > 3:
            kwargs["compute_mode"] = args.pop(3)
        if isinstance(kwargs.get("compute_mode"), str):
            kwargs["compute_mode"] = CDIST_MODES.get(kwargs["compute_mode"], kwargs["compute_mode"])
        return args, kwargs
    if name in BY_NAME:
        names = BY_NAME[name]
        kwargs = dict(zip(names[1:], args[1:]), **kwargs)
        kwargs.setdefault("cudnn_enabled", False)
        return args[:1], kwargs
    return args, kwargs


def max_pool2d_backward_call(args, kwargs):
    """The OpInfo of `max_pool2d_with_indices_backward` takes a pooling sample and runs the
    forward pool itself: the call it makes, with the gradient of ones and the indices it builds
    as arguments."""
    inp = args[0]
    pool = {"kernel_size": (), "stride": (), "padding": (0,), "dilation": (1,), "ceil_mode": False}
    pool.update({k: v for k, v in kwargs.items() if k != "return_indices"})
    with torch.no_grad():
        out, indices = torch.nn.functional.max_pool2d_with_indices(inp, return_indices=True, **pool)
    stride = pool["kernel_size"] if pool["stride"] is None else pool["stride"]
    return [torch.ones_like(out), inp, pool["kernel_size"], stride, pool["padding"], pool["dilation"],
            pool["ceil_mode"], indices], {}


def max_unpool_call(name, args, kwargs):
    """`F.max_unpool2d/3d(input, indices, kernel_size, stride, padding, output_size)` as the aten
    call it makes: the output size worked out as the Python function works it out."""
    from torch.nn.functional import _unpool_output_size
    from torch.nn.modules.utils import _pair, _triple
    n = 2 if name == "max_unpool2d" else 3
    tup = _pair if n == 2 else _triple
    names = ["kernel_size", "stride", "padding", "output_size"]
    kw = {**dict(zip(names, args[2:])), **kwargs}
    kernel = tup(kw["kernel_size"])
    stride = kernel if kw.get("stride") is None else tup(kw["stride"])
    padding = tup(kw.get("padding", 0))
    size = _unpool_output_size(args[0], kernel, stride, padding, kw.get("output_size"))
    if n == 2:
        return [args[0], args[1], size], {}
    return [args[0], args[1], size, list(stride), list(padding)], {}


def fractional_max_pool_call(name, args, kwargs):
    """`F.fractional_max_pool2d/3d(input, kernel_size, output_size, output_ratio, return_indices,
    _random_samples)` as the aten call it makes: the output size from the ratio, and the samples
    drawn as the OpInfo's call draws them (`rand` after `manual_seed(42)`), so that the recorded
    call is the one PyTorch made."""
    n = 2 if name.endswith("2d") else 3
    names = ["kernel_size", "output_size", "output_ratio", "return_indices", "_random_samples"]
    kw = {**dict(zip(names, args[1:])), **kwargs}
    x = args[0]
    listed = lambda v, conv: [conv(v)] * n if isinstance(v, (int, float)) else [conv(e) for e in v]
    size = kw.get("output_size")
    if size is None:
        ratio = listed(kw["output_ratio"], float)
        size = [int(x.size(-n + i) * ratio[i]) for i in range(n)]
    samples = kw.get("_random_samples")
    if samples is None:
        batch = 1 if x.dim() == n + 1 else x.size(0)
        samples = torch.rand(batch, x.size(-n - 1), n, dtype=x.dtype,
                             generator=torch.Generator().manual_seed(42))
    return [x, listed(kw["kernel_size"], int), listed(size, int), samples], {}, bool(kw.get("return_indices"))


def interpolate_call(args, kwargs):
    """`F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
    antialias)` as the aten call it makes: (aten base name, args) or a reason it has none here."""
    names = ["size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias"]
    kw = {**dict(zip(names, args[1:])), **kwargs}
    x, n = args[0], args[0].dim() - 2
    mode, size, factor = kw.get("mode", "nearest"), kw.get("size"), kw.get("scale_factor")
    if kw.get("antialias"):
        return "antialiased resampling is not in oxten yet", None
    output_size = None if size is None else [size] * n if isinstance(size, int) else list(size)
    scales = None if factor is None else [float(factor)] * n if isinstance(factor, (int, float)) else \
        [float(v) for v in factor]
    if scales is not None and (kw.get("recompute_scale_factor") or mode == "area"):
        output_size = [math.floor(float(x.shape[i + 2]) * scales[i]) for i in range(n)]
        scales = None
    align = bool(kw.get("align_corners"))
    suffix = {1: "1d", 2: "2d", 3: "3d"}.get(n)
    if suffix is None:
        return "interpolate of a tensor with no spatial dimension", None
    if mode == "nearest":
        return f"upsample_nearest{suffix}", [x, output_size, scales]
    if mode == "nearest-exact":
        return f"_upsample_nearest_exact{suffix}", [x, output_size, scales]
    if mode == "area":
        return f"adaptive_avg_pool{suffix}", [x, output_size]
    linear = {"linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d", "trilinear": "upsample_trilinear3d",
              "bicubic": "upsample_bicubic2d"}
    if mode in linear and linear[mode].endswith(suffix):
        return linear[mode], [x, output_size, align, scales]
    return f"mode {mode} of a {x.dim()}-D input (PyTorch raises in Python)", None


def python_call(s, info):
    """The sample as a call: (args, kwargs, return_indices or None where the function has none).
    An adaptive pool's `None` output size is the input's size, as the Python function reads it;
    `embedding_bag` returns only the first of aten's four outputs (`ri` False)."""
    args, kwargs = [s.input, *s.args], dict(s.kwargs)
    name = info.name.split(".")[-1]
    if name == "embedding_bag":
        return (*embedding_bag_call(args, kwargs), False)
    if name == "max_pool2d_with_indices_backward":
        return (*max_pool2d_backward_call(args, kwargs), None)
    if name in ("max_unpool2d", "max_unpool3d"):
        return (*max_unpool_call(name, args, kwargs), None)
    if name in ("fractional_max_pool2d", "fractional_max_pool3d"):
        return fractional_max_pool_call(name, args, kwargs)
    args, kwargs = reordered_call(name, args, kwargs)
    at = RETURN_INDICES_AT.get(name)
    ri = None
    if at is not None:
        ri = args.pop(at) if len(args) > at else kwargs.pop("return_indices", False)
    if name.startswith("adaptive_") and len(args) > 1 and isinstance(args[1], (list, tuple)) and None in args[1]:
        n = len(args[1])
        args[1] = [s.input.shape[-n + i] if v is None else v for i, v in enumerate(args[1])]
    return args, kwargs, ri


def with_indices_first(bases, overloads, ri):
    """`max_pool3d` asked for its indices binds `max_pool3d_with_indices` first."""
    if ri and bases[0] + "_with_indices" in overloads:
        return [bases[0] + "_with_indices", *bases]
    return bases


def uninitialized_as_zeros(name, result):
    """`empty`'s memory is whatever was there: zeros are recorded instead (only shapes and
    dtypes compare), so the golden files are the same on every run."""
    if name.split(".")[0] not in UNINITIALIZED:
        return result
    if isinstance(result, torch.Tensor) and result.numel():
        extent = 1 + sum((s - 1) * st for s, st in zip(result.shape, result.stride()))
        zeros = torch.zeros(extent, dtype=result.dtype)
        return torch.as_strided(zeros, result.shape, result.stride())
    return result


# The decompositions whose vectors are unique only up to sign: what is recorded and compared is
# their magnitudes (and only the first k = min(m, n) singular vectors, the others being any
# orthonormal completion); gradients are those of these functions. The replay applies the same.
GAUGE = {"linalg_svd": "svd", "_linalg_svd": "svd", "svd": "svd_v", "linalg_eigh": "eigh", "_linalg_eigh": "eigh"}


def gauge_fixed(name, result):
    kind = GAUGE.get(name.split(".")[0])
    if kind is None or not isinstance(result, tuple):
        return result
    if kind == "eigh":
        values, vectors = result
        return (values, vectors.abs())
    u, s, v = result
    k = s.shape[-1]
    if kind == "svd":
        return (u[..., :k].abs(), s, v[..., :k, :].abs())
    return (u[..., :k].abs(), s, v[..., :k].abs())


def compared(info, result):
    """The outputs the replay compares: `embedding_bag`'s first only (its other three are
    PyTorch's bookkeeping, empty or not depending on the kernel it picks)."""
    if info.name.endswith("embedding_bag") and isinstance(result, tuple):
        return result[:1]
    return result


def values_only(result, ri):
    """What the Python function returns without `return_indices`: the values of a tuple."""
    if ri is False and isinstance(result, tuple):
        return result[0]
    return result


def python_outputs(info, s, result):
    """The part of aten's result that the OpInfo's Python function returns: `torch.unique` and
    `unique_consecutive` return the inverse and counts only when asked for them."""
    if info.name not in ("unique", "unique_consecutive") or not isinstance(result, tuple):
        return result
    picked = [result[0]] + [result[1]] * bool(s.kwargs.get("return_inverse")) + \
        [result[2]] * bool(s.kwargs.get("return_counts"))
    return picked[0] if len(picked) == 1 else tuple(picked)


def aten_route(info, args, kwargs, bases):
    """The Python call rerouted to the aten operators it reaches where they are not the OpInfo's
    own: (args, kwargs, bases), or (reason, None, None) when it reaches none that oxten has."""
    if info.name == "nonzero" and kwargs.get("as_tuple"):
        # `nonzero(as_tuple=True)` is aten's `nonzero_numpy`.
        return args, {k: v for k, v in kwargs.items() if k != "as_tuple"}, ["nonzero_numpy"]
    if info.name in CONVERSIONS:
        return args, {**kwargs, "dtype": getattr(torch, CONVERSIONS[info.name])}, bases
    if info.name.endswith(("interpolate", "upsample_nearest", "upsample_bilinear")):
        # The deprecated `upsample_*` functions are `interpolate` with a fixed mode.
        if info.name.endswith("upsample_nearest"):
            kwargs = {**kwargs, "mode": "nearest"}
        elif info.name.endswith("upsample_bilinear"):
            kwargs = {**kwargs, "mode": "bilinear", "align_corners": True}
        base, call = interpolate_call(args, kwargs)
        return (base, None, None) if call is None else (call, {}, [base])
    if info.name == "nn.functional.grid_sample":
        # `F.grid_sample(input, grid, mode, padding_mode, align_corners)` is aten's `grid_sampler`
        # with the modes as integers and `align_corners=None` as False.
        kw = {**dict(zip(["mode", "padding_mode", "align_corners"], args[2:])), **kwargs}
        modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
        paddings = {"zeros": 0, "border": 1, "reflection": 2}
        call = {"interpolation_mode": modes[kw.get("mode", "bilinear")],
                "padding_mode": paddings[kw.get("padding_mode", "zeros")],
                "align_corners": bool(kw.get("align_corners"))}
        return args[:2], call, ["grid_sampler"]
    if info.name == "lu":
        # `torch.lu(A, pivot, get_infos)` is aten's `_lu_with_info(A, pivot, check_errors=not get_infos)`.
        args, kwargs = list(args), dict(kwargs)
        get_infos = args.pop(2) if len(args) > 2 else kwargs.pop("get_infos", False)
        return args, {**kwargs, "check_errors": not get_infos}, ["_lu_with_info"]
    if info.name == "norm" and (kwargs.get("p") == "nuc" or (len(args) > 1 and args[1] == "nuc")):
        # `torch.norm(x, 'nuc', dim, keepdim)` is aten's `nuclear_norm` (`nuclear_norm.dim`).
        args, kwargs = list(args), dict(kwargs)
        if kwargs.pop("p", None) is None:
            args.pop(1)
        dim = kwargs.pop("dim", None)
        if dim is None and len(args) > 1:
            dim = args.pop(1)
        return ([args[0]] + ([list(dim)] if dim is not None else []) + args[1:]), kwargs, ["nuclear_norm"]
    if info.name == "unique":
        # `torch.unique` is aten's `_unique2`, or `unique_dim` when given a dimension.
        kwargs = dict(kwargs)
        if kwargs.get("dim") is None:
            kwargs.pop("dim", None)
            return args, kwargs, ["_unique2"]
        return args, kwargs, ["unique_dim"]
    return args, kwargs, bases


def bind_and_call(info, bases, overloads, s, skip):
    """The prologue of the sample and gradient records: the sample bound to an aten overload
    oxten declares and called (seeded). Returns (op, schema name, bound, result, ri) or None."""
    args, kwargs, ri = python_call(s, info)
    args, kwargs, bases = aten_route(info, args, kwargs, bases)
    if kwargs is None:
        skip(args)
        return None
    r = resolve(with_indices_first(bases, overloads, ri), overloads, args, kwargs)
    if r is None:
        skip("no overload oxten declares binds the Python call")
        return None
    op, name, bound = r
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            result = call_bound(op, bound)
    except Exception as e:
        # PyTorch itself refuses (a dtype the OpInfo lists through another path).
        skip(f"the aten overload raised {type(e).__name__}")
        return None
    return op, name, bound, result, ri


def record_sample(rec, info, bases, overloads, s, dtype, kind, skip):
    called = bind_and_call(info, bases, overloads, s, skip)
    if called is None:
        return None
    op, name, bound, result, ri = called
    if name.split(".")[0] in GAUGE:
        if not random_free_same(info, s, result, ri):
            skip("the OpInfo's Python call is not the aten overload")
            return None
        result = gauge_fixed(name, result)
    random = name.split('.')[0] in UNINITIALIZED or torch.Tag.nondeterministic_seeded in op.tags or is_random(op, bound)
    if not random and name.split(".")[0] not in GAUGE:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = info.op(s.input, *s.args, **s.kwargs)
            if not same(python_outputs(info, s, values_only(result, ri)), theirs):
                skip("the OpInfo's Python call is not the aten overload")
                return None
        except Exception:
            skip("the OpInfo's Python call raised")
            return None
    try:
        case = {
            "schema": name,
            "dtype": NAME[dtype],
            "kind": kind,
            "args": encode_args(rec, bound),
            "out": encode_out(rec, compared(info, uninitialized_as_zeros(name, result))),
        }
        if compared(info, result) is not result:
            case["compare"] = 1
        if name.split(".")[0] in GAUGE:
            case["gauge"] = 1
    except NoBind as e:
        skip(f"unsupported {e}")
        return None
    if random:
        case["random"] = True
    elif dtype in (torch.float16, torch.bfloat16, torch.float32) and not rec.whole_storage:
        # (Not for operators that read the input's storage: the upcast copies are contiguous.)
        # The same call in float64: a low-precision answer passes when it is as close to this
        # as PyTorch's own (kernels that accumulate differently round differently). Kept for
        # float32 only where PyTorch's own answer is off by more than the float32 tolerance
        # (long sums with cancellation).
        try:
            exact = flatten(gauge_fixed(name, call_bound(op, [(a, upcast(v), d) for a, v, d in bound])))
            if dtype != torch.float32 or any(far_from(x, y) for x, y in zip(exact, flatten(result))):
                case["exact"] = [rec.tensor(x.float()) if isinstance(x, torch.Tensor) and x.is_floating_point()
                                 else None for x in exact]
        except Exception:
            pass
    return case


def random_free_same(info, s, result, ri):
    """For the decompositions with sign freedom: the OpInfo's Python call gives the aten
    overload's answer up to the signs of the vectors."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = info.op(s.input, *s.args, **s.kwargs)
        mine = python_outputs(info, s, values_only(result, ri))
        if isinstance(mine, tuple) and isinstance(theirs, tuple) and len(mine) == len(theirs):
            return all(same(a.abs(), b.abs()) if isinstance(a, torch.Tensor) else same(a, b) for a, b in zip(mine, theirs))
        return same(mine, theirs)
    except Exception:
        return False


def far_from(exact, got):
    """Whether a float32 answer is not well inside the replay's float32 tolerance (1e-5) of the
    float64 one: within a quarter of it, another summation order cannot push oxten out."""
    if not (isinstance(exact, torch.Tensor) and isinstance(got, torch.Tensor) and got.dtype == torch.float32):
        return False
    if exact.shape != got.shape:
        return False
    return not torch.allclose(got.double(), exact.double(), rtol=2.5e-6, atol=2.5e-6, equal_nan=True)


def upcast(v):
    if isinstance(v, torch.Tensor) and v.dtype in (torch.float16, torch.bfloat16, torch.float32):
        return v.detach().double()
    if isinstance(v, (list, tuple)):
        return [upcast(x) for x in v]
    return v


def record_grad(rec, info, bases, overloads, s, skip):
    called = bind_and_call(info, bases, overloads, s, skip)
    if called is None:
        return None
    op, name, bound, result, _ = called
    if is_random(op, bound):
        skip("random op: gradients not comparable")
        return None
    result = gauge_fixed(name, result)
    outs = [x for x in flatten(result) if isinstance(x, torch.Tensor) and x.requires_grad]
    if not outs:
        skip("no differentiable output")
        return None
    inputs = []
    try:
        enc_args = encode_args(rec, bound, inputs)
    except NoBind as e:
        skip(f"unsupported {e}")
        return None
    gen = torch.Generator().manual_seed(7)
    grad_out = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in outs]
    try:
        grads = torch.autograd.grad(outs, inputs, grad_out, allow_unused=True)
    except Exception as e:
        skip(f"PyTorch's backward raised {type(e).__name__}")
        return None
    case = {
        "schema": name,
        "dtype": "float64",
        "kind": "grad",
        "args": enc_args,
        "out": encode_out(rec, compared(info, result)),
        "grad_out": [rec.tensor(g) for g in grad_out],
        "grads": [None if g is None else rec.tensor(g) for g in grads],
    }
    if compared(info, result) is not result:
        case["compare"] = 1
    if name.split(".")[0] in GAUGE:
        case["gauge"] = 1
    return case


def record_error(rec, info, bases, overloads, e, skip):
    s = e.sample_input
    args, kwargs, ri = python_call(s, info)
    args, kwargs, bases = aten_route(info, args, kwargs, bases)
    if kwargs is None:
        skip(f"error input: {args}")
        return None
    r = resolve(with_indices_first(bases, overloads, ri), overloads, args, kwargs)
    if r is None:
        skip(f"error input: {why_unbound(info, s)}")
        return None
    op, name, bound = r
    if any(t.device.type != "cpu" for t in tensors_in([v for _, v, _ in bound])):
        skip("error input: a tensor on another device than the CPU")
        return None
    try:
        call_bound(op, bound)
    except Exception as ex:
        try:
            return {
                "schema": name,
                "dtype": "",
                "kind": "error",
                "args": encode_args(rec, bound),
                "error": type(ex).__name__,
                "message": str(ex).split("\n")[0][:200],
            }
        except NoBind as ex2:
            skip(f"unsupported {ex2}")
            return None
    skip("error input: the aten overload does not raise (the check is in the Python wrapper)")
    return None


def why_unbound(info, s):
    """Why an error input binds to no aten overload: Python's argument parser refuses its types
    (`atan2(1, 2)`: in Rust, a call that does not compile), the Python function refuses a string
    that aten takes as an enum (`reduction="abc"`), or an overload oxten lacks."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            info.op(s.input, *s.args, **s.kwargs)
    except TypeError:
        return "Python's argument parser refuses the argument types (a Rust call that does not compile)"
    except ValueError as e:
        if "reduction" in str(e) or "is not valid" in str(e):
            return "the Python function refuses a `reduction` string (aten takes the enum)"
    except Exception:
        pass
    return "no overload oxten declares binds the Python call"


if __name__ == "__main__":
    main()
