"""The tests' oracles, in one place: JAX's recorded answers, and central finite differences.

Recorded answers. tools/record.py runs the cases of a case set on JAX 0.10.2 and writes
the answers under tests/data/ (``tools/record.py --list`` names the files); the tests
never import jax. ``recorded(file)`` loads a file (JSON as a dict, ``.npz`` as NumPy's
archive); ``recorded_cases(file)`` is a JSON file's ``"cases"``. The value recorders
store a leaf either as ``{"shape", "dtype", "real", "imag"}`` (any dtype, complex
included) or as ``{"shape", "values"}`` (float64, NaN as null); ``assert_matches_recorded``
and ``assert_matches_recorded_real`` compare spmdc's values with them, and
``assert_close`` an array with one of an ``.npz`` archive's (or NumPy's), dtype included.

Finite differences. ``numeric_grad(f, x)`` is the gradient of a scalar function of one
array by central differences in float64, the reference for gradients with no recorded
answer.

The NumPy reference interpreter. ``interpreted(fun, *args)`` is a whole program's
outputs as compiler/interpreter.py computes them from the primitives' NumPy impls, the
reference for programs built of control flow. (The one-primitive checks against it,
lowering, vmap, grad and jvp, are tests/primcheck.py's.)
"""
from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np

import spmdc
from spmdc.compiler.interpreter import evaluate

DATA = pathlib.Path(__file__).resolve().parent / "data"


def recorded(file: str) -> Any:
    """A recorded file under tests/data/: a JSON file's content, or an ``.npz`` archive."""
    path = DATA / file
    if path.suffix == ".npz":
        return np.load(path)
    return json.loads(path.read_text(encoding="utf-8"))


def recorded_cases(file: str) -> dict[str, Any]:
    """The ``"cases"`` table of a recorded JSON file: case name -> what JAX gave."""
    return recorded(file)["cases"]


def one_per_method(names: Any) -> list[Any]:
    """``names`` (recorded case names ``function.method.variant...``) as pytest parameters:
    the first case of each ``function.method`` runs with ``make test``, the other variants
    only with ``make test-slow`` (marked ``slow``), so every method keeps a case in the
    quick suite."""
    import pytest
    seen: set[str] = set()
    params = []
    for name in sorted(names):
        method = ".".join(name.split(".")[:2])
        params.append(name if method not in seen else pytest.param(name, marks=pytest.mark.slow))
        seen.add(method)
    return params


def recorded_value(leaf: dict[str, Any]) -> np.ndarray:
    """A ``{"shape", "dtype", "real", "imag"}`` leaf's values, flat: float64, or complex128
    for a complex dtype."""
    real = np.asarray(leaf["real"], np.float64)
    return real + 1j * np.asarray(leaf["imag"]) if leaf["dtype"].startswith("complex") else real


def assert_matches_recorded(got: Any, leaves: list[dict[str, Any]] | dict[str, Any],
                            what: str, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """spmdc's value (one array, or a tuple of arrays: a list is one array, as the
    recorder takes it) has the recorded leaves' dtypes and shapes, the same integers and
    booleans, and floats within tolerance (NaN where JAX gave NaN). ``leaves`` may be one
    leaf, for one array."""
    if isinstance(leaves, dict):
        got, leaves = (got,), [leaves]
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(leaves), f"{what}: {len(got)} outputs, JAX gave {len(leaves)}"
    for k, (g, w) in enumerate(zip(got, leaves, strict=True)):
        g = np.asarray(g)
        assert g.dtype.name == w["dtype"] and list(g.shape) == w["shape"], \
            (what, k, g.dtype.name, g.shape, w["dtype"], w["shape"])
        value = recorded_value(w)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g.ravel(), value.astype(g.dtype), err_msg=what)
        else:
            np.testing.assert_allclose(g.ravel(), value, rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=f"{what} output {k}")


def assert_matches_recorded_real(got: list[Any], leaves: list[dict[str, Any]], what: str,
                                 rtol: float, atol: float) -> None:
    """spmdc's leaves have the shapes of the recorded ``{"shape", "values"}`` leaves and
    their values (in float64) within tolerance; a null value is NaN."""
    assert len(got) == len(leaves), f"{what}: {len(got)} leaves, JAX gave {len(leaves)}"
    for k, (g, w) in enumerate(zip(got, leaves, strict=True)):
        assert list(np.shape(g)) == w["shape"], (what, k, np.shape(g), w["shape"])
        want = np.array([np.nan if v is None else v for v in w["values"]], np.float64)
        np.testing.assert_allclose(np.ravel(np.asarray(g, np.float64)), want, rtol=rtol,
                                   atol=atol, err_msg=f"{what} leaf {k}")


def assert_close(got: Any, want: Any, rtol: float, atol: float) -> None:
    """spmdc's array has the shape and dtype of ``want`` (a recorded or NumPy value) and its
    values within tolerance, NaN where ``want`` has NaN."""
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def numeric_grad(f, x, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of a scalar function of one array, in float64: ``x`` is
    converted to float64 and so is each ``f(x +- eps e_i)``. A float32 program takes
    ``lambda v: f(v.astype(np.float32))`` and a larger ``eps``."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        dx = np.zeros_like(x)
        dx[i] = eps
        g[i] = (float(f(x + dx)) - float(f(x - dx))) / (2 * eps)
    return g


def interpreted(fun, *args) -> list[np.ndarray]:
    """``fun``'s outputs for ``args`` (flat), traced by jit and run by the NumPy reference
    interpreter (each primitive's impl) instead of being compiled."""
    lowered = spmdc.jit(fun).lower(*args)
    return evaluate(lowered.func, *args, *(np.asarray(c) for c in lowered.consts))


def bit_pattern(x: Any) -> tuple[str, np.ndarray]:
    """An array's dtype name and its bits: floats (and each half of a complex) as unsigned
    integers of their width, so recorded random draws compare bit for bit."""
    x = np.asarray(x)
    if x.dtype.kind in "fc" or x.dtype.name == "bfloat16":
        width = x.dtype.itemsize // (2 if x.dtype.kind == "c" else 1)
        return x.dtype.name, np.ascontiguousarray(x).view(f"u{width}")
    return x.dtype.name, x


def ordered_bits(bits: np.ndarray) -> np.ndarray:
    """Float bit patterns as integers in the floats' order (so ulps are differences)."""
    width = bits.dtype.itemsize * 8
    b = bits.astype(np.int64)
    sign = np.int64(1) << (width - 1)
    return np.where(b & sign, -(b & (sign - 1)), b)
