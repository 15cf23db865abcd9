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

from ..core.tree import tree_flatten, tree_unflatten
from .core import _arr

__all__ = ["associative_scan", "cumlogsumexp"]


def _slice(xs: list[Any], axis: int, start: int, stop: int | None, step: int) -> list[Any]:
    from .ops import slice_in_dim
    out = []
    for x in xs:
        n = x.shape[axis]
        end = n if stop is None else (stop + n if stop < 0 else stop)
        out.append(slice_in_dim(x, start, max(start, end), step, axis))
    return out


def _interleave(evens: Any, odds: Any, axis: int) -> Any:
    """evens[0], odds[0], evens[1], odds[1], ... (evens may be one longer)."""
    from ..numpy.shape_ops import pad, reshape, stack
    n = evens.shape[axis] + odds.shape[axis]
    if odds.shape[axis] < evens.shape[axis]:
        widths = [(0, 0)] * odds.ndim
        widths[axis] = (0, 1)
        odds = pad(odds, widths)
    pairs = stack([evens, odds], axis=axis + 1)
    shape = evens.shape[:axis] + (2 * evens.shape[axis],) + evens.shape[axis + 1:]
    from .ops import slice_in_dim
    return slice_in_dim(reshape(pairs, shape), 0, n, 1, axis)


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
    from ..numpy.shape_ops import concatenate, flip
    if reverse:
        leaves = [flip(x, axis) for x in leaves]

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
        evens = [concatenate([first, e], axis=axis)
                 for first, e in zip(_slice(xs, axis, 0, 1, 1), evens, strict=True)]
        return [_interleave(e, o, axis) for e, o in zip(evens, odds, strict=True)]

    out = scan(leaves)
    if reverse:
        out = [flip(x, axis) for x in out]
    return tree_unflatten(treedef, out)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """``log(cumsum(exp(x)))`` along ``axis``, computed stably (an associative scan of
    logaddexp)."""
    from ..numpy.math_extra import logaddexp
    x = _arr(operand)
    if x.dtype.kind not in "fc" and str(x.dtype) != "bfloat16":
        raise TypeError(f"lax.cumlogsumexp needs a floating operand, got {x.dtype}")
    return associative_scan(logaddexp, x, reverse, axis)
