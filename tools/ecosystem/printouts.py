"""Comparing what an example of examples/ecosystem/ prints under JAX and under spmdc: the
same lines with the same words, and every number within a tolerance (training a few steps
in float32 rounds differently when the compiler fuses differently)."""
from __future__ import annotations

import math
import re

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf")
RTOL, ATOL = 2e-3, 1e-5


def _numbers(line: str) -> tuple[str, list[float]]:
    return NUMBER.sub("#", line), [float(x) for x in NUMBER.findall(line)]


def compare_printouts(expected: str, actual: str, rtol: float = RTOL,
                      atol: float = ATOL) -> str:
    """The empty string when ``actual`` prints what ``expected`` does, numbers within
    ``rtol``/``atol``; else the first difference, said in one line."""
    want = [line.rstrip() for line in expected.strip().splitlines()]
    got = [line.rstrip() for line in actual.strip().splitlines()]
    if len(want) != len(got):
        return f"{len(got)} lines where JAX prints {len(want)}"
    for number, (a, b) in enumerate(zip(want, got, strict=True), 1):
        (shape_a, xs), (shape_b, ys) = _numbers(a), _numbers(b)
        if shape_a != shape_b or len(xs) != len(ys):
            return f"line {number}: {b!r} where JAX prints {a!r}"
        for x, y in zip(xs, ys, strict=True):
            if math.isnan(x) and math.isnan(y):
                continue
            if not abs(x - y) <= atol + rtol * abs(x):
                return f"line {number}: {y} where JAX prints {x} (in {a!r})"
    return ""
