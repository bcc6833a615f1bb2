#!/usr/bin/env python3
"""Writes kernels/special/src/tests.rs's reference values: oxten-special's functions at chosen
points, computed by mpmath with 40 significant digits (pip install mpmath; it comes with torch).

Run from the repository root; the test body below the table is kept as it is.
"""
import mpmath as mp

mp.mp.dps = 40
rows = []


def add(f, args, v):
    rows.append((f, args, float(v)))


for x in [0.1, 0.5, 1, 1.5, 2.5, 7.3, 10, 11.2, 123.4, -0.3, -2.7, -10.5, 1e-8]:
    add("lgamma", [x], mp.log(abs(mp.gamma(x))))
    add("digamma", [x], mp.digamma(x))
    add("trigamma", [x], mp.psi(1, x))
for n in [2, 3, 5]:
    for x in [0.2, 1.7, 4.5, 13.0, -1.5]:
        add("polygamma", [n, x], mp.psi(n, x))
for s, q in [(2, 1), (3.5, 0.2), (1.5, 7.0), (10, 2.5), (4, -1.5), (2.2, 30.0)]:
    add("zeta", [s, q], mp.zeta(s, q))
for x in [0.0, 0.3, 1, 5, 15, 19.9, 20.1, 35, 100, -7.5, 700]:
    add("i0", [x], mp.besseli(0, x))
    add("i1", [x], mp.besseli(1, x))
    add("i0e", [x], mp.besseli(0, x) * mp.exp(-abs(x)))
    add("i1e", [x], mp.besseli(1, x) * mp.exp(-abs(x)))

path = "kernels/special/src/tests.rs"
old = open(path).read()
body = old[old.index("];\n") + 3:]
out = [
    "//! Reference values from mpmath (40 digits), rounded to f64: `scripts/special_reference.py`.",
    "",
    "use super::*;",
    "",
    "/// (function, arguments, value).",
    "#[rustfmt::skip]",
    "const CASES: &[(&str, &[f64], f64)] = &[",
]
for f, a, v in rows:
    out.append(f'    ("{f}", &[{", ".join(repr(float(x)) for x in a)}], {v!r}),')
out.append("];")
open(path, "w").write("\n".join(out) + "\n" + body)
