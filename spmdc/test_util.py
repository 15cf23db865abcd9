"""spmdc.test_util: ``check_grads``, the numerical check of forward- and reverse-mode
derivatives against central finite differences that JAX users call in their tests."""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# See Note [test_util under pytest]: absolute imports, so a copy loaded as jax.test_util
# still finds spmdc's floors.
from spmdc.core import dtypes
from spmdc.core.tree import tree_leaves, tree_map
from spmdc.transforms.forward import jvp
from spmdc.transforms.grad import vjp

# Note [test_util under pytest]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# pytest rewrites the asserts of every module whose file name matches its test-file
# patterns (test_*.py), and its import hook, first on sys.meta_path, loads such a module
# itself from the parent package's path. Under the alias (sys.modules['jax'] = spmdc), a
# library that imports jax.test_util in its tests (chex's asserts.py does, at import)
# so gets this file as a second module named jax.test_util, whose package is `jax`:
# relative imports would then read `jax.core`, which is JAX's names
# (spmdc/_src/core.py), not spmdc's core. Its imports are absolute, so that copy works
# as spmdc.test_util does (JAX's own jax/test_util.py is rewritten the same way).

__all__ = ["check_grads", "check_jvp", "check_vjp"]

_DEFAULT_TOL = {np.dtype(np.float64): 1e-5, np.dtype(np.complex128): 1e-5}
_LOW_TOL = 1e-1          # bfloat16, float16
_F32_TOL = 2e-2          # float32 and complex64 (finite differences in float32 are rough)


def _tolerance(trees: Sequence[Any], given: float | None) -> float:
    if given is not None:
        return given
    tol = 0.0
    for x in tree_leaves(list(trees)):
        d = np.asarray(x).dtype
        tol = max(tol, _DEFAULT_TOL.get(d, _LOW_TOL if d.itemsize <= 2 else _F32_TOL))
    return tol or _F32_TOL


def _random_like(rng: np.random.RandomState, tree: Any) -> Any:
    def draw(x: Any) -> Any:
        a = np.asarray(x)
        if not dtypes.is_inexact(a.dtype):
            raise TypeError(f"check_grads needs floating-point arguments, got {a.dtype}")
        v = rng.standard_normal(a.shape)
        if dtypes.is_complex(a.dtype):
            v = v + 1j * rng.standard_normal(a.shape)
        return v.astype(a.dtype)
    return tree_map(draw, tree)


def _axpy(a: float, x: Any, y: Any) -> Any:
    return tree_map(lambda xi, yi: (np.asarray(yi, np.float64 if np.isrealobj(yi) else
                                               np.complex128) + a * np.asarray(xi)
                                    ).astype(np.asarray(yi).dtype), x, y)


def _inner(x: Any, y: Any) -> complex:
    return sum(np.vdot(np.asarray(a, np.complex128).ravel(),
                       np.asarray(b, np.complex128).ravel())
               for a, b in zip(tree_leaves(x), tree_leaves(y), strict=True))


def _close(what: str, got: Any, want: Any, atol: float, rtol: float, err_msg: str) -> None:
    for g, w in zip(tree_leaves(got), tree_leaves(want), strict=True):
        g64, w64 = np.asarray(g, np.complex128), np.asarray(w, np.complex128)
        # NaN where finite differences give NaN too is a match, as in JAX's check (which
        # is NumPy's assert_allclose: equal_nan=True).
        if not np.allclose(g64, w64, atol=atol, rtol=rtol, equal_nan=True):
            raise AssertionError(f"{err_msg}{what} does not match finite differences "
                                 f"(atol={atol}, rtol={rtol}):\n got  {g64}\n want {w64}")


def _numerical_jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
                   eps: float) -> Any:
    plus = f(*_axpy(eps, tangents, primals))
    minus = f(*_axpy(-eps, tangents, primals))
    return tree_map(lambda p, m: (np.asarray(p, np.complex128) - np.asarray(m, np.complex128))
                    / (2 * eps), plus, minus)


def check_jvp(f: Callable[..., Any], f_jvp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None,
              eps: float | None = None, err_msg: str = "") -> None:
    """``f_jvp(primals, tangents)`` (like ``partial(jvp, f)``) against finite differences."""
    args = tuple(args)
    rng = np.random.RandomState(0)
    tangent = _random_like(rng, args)
    value, jvp_out = f_jvp(args, tangent)
    atol, rtol = _tolerance([value, *args], atol), _tolerance([value, *args], rtol)
    _close("the primal output of jvp", value, f(*args), atol, rtol, err_msg)
    numerical = _numerical_jvp(f, args, tangent, eps or 1e-4)
    _close("jvp", jvp_out, numerical, atol, rtol, err_msg)


def check_vjp(f: Callable[..., Any], f_vjp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None,
              eps: float | None = None, err_msg: str = "") -> None:
    """``f_vjp(*primals) -> (out, vjp_fn)`` (like ``partial(vjp, f)``): checks
    ``<vjp_fn(ct), t> == <ct, J t>`` with J t from finite differences."""
    args = tuple(args)
    rng = np.random.RandomState(0)
    value, vjp_fn = f_vjp(*args)
    atol, rtol = _tolerance([value, *args], atol), _tolerance([value, *args], rtol)
    _close("the primal output of vjp", value, f(*args), atol, rtol, err_msg)
    tangent = _random_like(rng, args)
    cotangent = _random_like(rng, value)
    pulled = vjp_fn(cotangent)
    numerical = _numerical_jvp(f, args, tangent, eps or 1e-4)
    lhs, rhs = _inner(tangent, pulled), _inner(cotangent, numerical)
    _close("the vjp (as <vjp(ct), t> against <ct, J t>)", lhs, rhs, atol, rtol, err_msg)


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None) -> None:
    """Check ``f``'s derivatives up to ``order`` in forward (``"fwd"``) and reverse
    (``"rev"``) mode against central finite differences; raises AssertionError."""
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads modes are 'fwd' and 'rev', got {sorted(unknown)}")
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"check_grads order must be a positive int, got {order!r}")
    tols = dict(atol=atol, rtol=rtol, eps=eps)

    def check(f: Callable[..., Any], args: tuple[Any, ...], order: int, msg: str) -> None:
        if "fwd" in modes:
            fwd_msg = f"{msg}JVP of order {order}: " if msg else ""
            check_jvp(f, functools.partial(jvp, f), args, err_msg=fwd_msg, **tols)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"{msg}VJP of order {order}: " if msg else ""
            check_vjp(f, functools.partial(vjp, f), args, err_msg=rev_msg, **tols)
            if order > 1:
                def f_vjp(*primals: Any) -> Any:
                    out, vjp_fn = vjp(f, *primals)
                    return vjp_fn(out)
                check(f_vjp, args, order - 1, rev_msg)

    check(f, tuple(args), order, "")
