"""The programs of the export tests (tests/export/test_export_jax.py): each is exported by
JAX 0.10.2 (tools/recorders/exports.py writes its serialized bytes and JAX's values into
tests/data/exports_reference.json) and by spmdc, and called on the other side. The
functions take ``np`` (NumPy's ``jax.numpy`` or spmdc's) and the ``lax`` module, so one
definition serves both; nothing here imports jax.
"""
from __future__ import annotations

import collections
from typing import Any

import numpy as np

Pair = collections.namedtuple("Pair", ["first", "second"])
PAIR_NAME = "tests.export_cases.Pair"

X = np.linspace(-1.5, 2.0, 6, dtype=np.float32).reshape(2, 3)
Y = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
W = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.6]], np.float32)
SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)


def tree_program(jnp: Any, lax: Any) -> Any:
    def f(x, y):
        return {"s": jnp.sin(x) * y, "t": (x.sum(), y @ y.T)}
    return f


def dense_program(jnp: Any, lax: Any) -> Any:
    def dense(w, x):
        return jnp.tanh(x @ w).sum(axis=0)
    return dense


def kwargs_program(jnp: Any, lax: Any) -> Any:
    def scaled(x, *, scale):
        return jnp.exp(x) * scale
    return scaled


def pair_program(jnp: Any, lax: Any) -> Any:
    def swap(p):
        return Pair(p.second * 2.0, p.first + 1.0)
    return swap


def cholesky_program(jnp: Any, lax: Any) -> Any:
    def chol(a):
        return jnp.linalg.cholesky(a)
    return chol


def int_program(jnp: Any, lax: Any) -> Any:
    def count(x, i):
        return x * i.astype(x.dtype), i + 1
    return count


def special_program(jnp: Any, lax: Any) -> Any:
    def special(x):                     # CHLO ops: composites in the portable artifact
        return lax.erf(x) + lax.lgamma(x + 2.0)
    return special


# name -> (program, args, kwargs, platforms, differentiable: the gradient of the sum of
# the first output leaf is recorded with respect to the first argument)
CASES: dict[str, tuple[Any, tuple[Any, ...], dict[str, Any], tuple[str, ...], bool]] = {
    "tree": (tree_program, (X, Y), {}, ("cpu",), True),
    "dense": (dense_program, (W, X), {}, ("cpu",), True),
    "kwargs": (kwargs_program, (X,), {"scale": np.float32(1.5)}, ("cpu",), True),
    "pair": (pair_program, (Pair(X, Y),), {}, ("cpu",), False),
    "cholesky": (cholesky_program, (SPD,), {}, ("cpu",), False),
    "ints": (int_program, (X, np.int32(3)), {}, ("cpu",), True),
    "two_platforms": (dense_program, (W, X), {}, ("cpu", "cuda"), True),
    "special": (special_program, (X,), {}, ("cpu",), True),
}
