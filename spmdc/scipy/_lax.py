"""The special-function primitives as user-level operations (JAX's ``lax.erf``,
``lax.lgamma`` ...), shared by ``spmdc.scipy`` and ``spmdc.nn``.

This is the one module of those packages that binds primitives directly; everything
else is written with ``spmdc.numpy`` and ``spmdc.lax``. Integer and boolean operands
become the default float dtype, as in JAX's ``promote_args_inexact``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.compiler.primitives.core import registry
from spmdc.core.tracing import bind


def inexact(*args: Any) -> list[Any]:
    """``args`` as arrays of one inexact dtype (their promoted one, or the default float)."""
    arrays = [jnp.asarray(a) for a in args]
    dtype = jnp.result_type(*args)
    if not jnp.issubdtype(dtype, np.inexact):
        dtype = jnp.zeros((), float).dtype
    return [a if a.dtype == dtype else a.astype(dtype) for a in arrays]


def _unary(name: str, prim: str):
    def op(x: Any) -> Any:
        (x,) = inexact(x)
        return bind(registry[prim], x, weak=x.weak)
    op.__name__ = name
    return op


erf = _unary("erf", "erf")
erfc = _unary("erfc", "erfc")
erf_inv = _unary("erf_inv", "erf_inv")
lgamma = _unary("lgamma", "lgamma")
digamma = _unary("digamma", "digamma")
logistic = _unary("logistic", "logistic")
bessel_i0e = _unary("bessel_i0e", "bessel_i0e")
bessel_i1e = _unary("bessel_i1e", "bessel_i1e")


def polygamma(m: Any, x: Any) -> Any:
    m, x = inexact(m, x)
    shape = jnp.broadcast_shapes(m.shape, x.shape)
    m, x = jnp.broadcast_to(m, shape), jnp.broadcast_to(x, shape)
    return bind(registry["polygamma"], m, x, weak=m.weak and x.weak)
