"""lax.associative_scan and lax.cumlogsumexp.

associative_scan computes all prefix combinations ``fn(...fn(fn(x0, x1), x2)..., xi)`` of
an associative ``fn`` with O(log n) levels of vectorised calls: combine neighbouring pairs,
scan the half-length result recursively (the odd positions), then combine each of those
with the next element (the even positions) and interleave. ``fn`` is traced once per
level on whole arrays, so it must be elementwise along the scanned axis (as in JAX).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..compiler.primitives.structural import pad_p
from ..core.operands import asarray as _arr
from ..core.tracing import bind
from ..core.tree import tree_flatten, tree_unflatten
from .complex_parts import imag, real
from .elementwise import _where, exp, is_finite, log1p, stop_gradient
from .elementwise import max as lax_max
from .shape import _concatenate, _reshape, rev
from .slicing import slice_in_dim

__all__ = ["associative_scan", "cumlogsumexp"]


def _slice(xs: list[Any], axis: int, start: int, stop: int | None, step: int) -> list[Any]:
    out = []
    for x in xs:
        n = x.shape[axis]
        end = n if stop is None else (stop + n if stop < 0 else stop)
        out.append(slice_in_dim(x, start, max(start, end), step, axis))
    return out


def _interleave(evens: Any, odds: Any, axis: int) -> Any:
    """evens[0], odds[0], evens[1], odds[1], ... (evens may be one longer)."""
    n = evens.shape[axis] + odds.shape[axis]
    if odds.shape[axis] < evens.shape[axis]:
        widths = [(0, 0, 0)] * odds.ndim
        widths[axis] = (0, 1, 0)
        odds = bind(pad_p, odds, np.zeros((), odds.dtype), padding_config=tuple(widths),
                    weak=odds.weak)
    pairs = _concatenate([_reshape(v, v.shape[:axis + 1] + (1,) + v.shape[axis + 1:])
                          for v in (evens, odds)], axis + 1)
    shape = evens.shape[:axis] + (2 * evens.shape[axis],) + evens.shape[axis + 1:]
    return slice_in_dim(_reshape(pairs, shape), 0, n, 1, axis)


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """Inclusive prefix combination of the pytree ``elems`` along ``axis`` with the
    associative ``fn`` (from the end if ``reverse``)."""
    leaves, treedef = tree_flatten(elems)
    leaves = [_arr(x) for x in leaves]
    if not leaves:
        raise ValueError("lax.associative_scan: elems has no arrays")
    ndim = leaves[0].ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"lax.associative_scan: axis {axis} is out of bounds for rank {ndim}")
    axis %= ndim
    n = leaves[0].shape[axis]
    if any(x.shape[axis] != n for x in leaves):
        raise ValueError("lax.associative_scan: every array of elems needs the same size "
                         f"along axis {axis}, got {[x.shape for x in leaves]}")
    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out, out_tree = tree_flatten(fn(tree_unflatten(treedef, a),
                                        tree_unflatten(treedef, b)))
        if out_tree != treedef or len(out) != len(a):
            raise TypeError("lax.associative_scan: fn must return a pytree of the same "
                            "structure as elems")
        return [_arr(x) for x in out]

    def scan(xs: list[Any]) -> list[Any]:
        size = xs[0].shape[axis]
        if size < 2:
            return xs
        pairs = combine(_slice(xs, axis, 0, -1, 2), _slice(xs, axis, 1, None, 2))
        odds = scan(pairs)
        if size % 2 == 0:
            evens = combine(_slice(odds, axis, 0, -1, 1), _slice(xs, axis, 2, None, 2))
        else:
            evens = combine(odds, _slice(xs, axis, 2, None, 2))
        evens = [_concatenate([first, e], axis)
                 for first, e in zip(_slice(xs, axis, 0, 1, 1), evens, strict=True)]
        return [_interleave(e, o, axis) for e, o in zip(evens, odds, strict=True)]

    out = scan(leaves)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_unflatten(treedef, out)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """``log(cumsum(exp(x)))`` along ``axis``, computed stably (an associative scan of
    logaddexp)."""
    x = _arr(operand)
    if x.dtype.kind not in "fc" and str(x.dtype) != "bfloat16":
        raise TypeError(f"lax.cumlogsumexp needs a floating operand, got {x.dtype}")
    return associative_scan(_logaddexp, x, reverse, axis)


def _logaddexp(x1: Any, x2: Any) -> Any:
    """``log(exp(x1) + exp(x2))`` of two arrays of one dtype, as jnp.logaddexp computes it
    for complex operands (Note [logaddexp gradient] in numpy/float_ufuncs.py)."""
    m = stop_gradient(lax_max(x1, x2))
    finite = is_finite(m) if m.dtype.kind != "c" else is_finite(real(m)) & is_finite(imag(m))
    m = _where(finite, m, np.zeros((), m.dtype))
    return m + log1p(exp(x1 - m) + exp(x2 - m) - 1)
