"""``spmdc.scipy.ndimage`` (JAX's ``jax.scipy.ndimage``): ``map_coordinates``, the value of
an array at fractional coordinates by nearest-neighbour (``order=0``) or linear
(``order=1``) interpolation, with SciPy's boundary modes.

Higher orders (SciPy's splines) are not supported, as in JAX (NotImplementedError).
A mode maps an out-of-range index back into the array: ``nearest`` clamps, ``wrap`` is
periodic, ``mirror`` reflects about the edge samples (``d c b | a b c d | c b a``),
``reflect`` about the edges between samples (``d c b a | a b c d | d c b a``), and
``constant`` reads ``cval`` outside.
"""
from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core import dtypes

__all__ = ["map_coordinates"]


def _mirror(index: Any, size: int) -> Any:
    period = size - 1                   # the half period of a triangle wave
    return jnp.abs((index + period) % (2 * period) - period)


def _reflect(index: Any, size: int) -> Any:
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


INDEX_MAPS: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(a: Any) -> Any:
    return a if dtypes.issubdtype(a.dtype, np.integer) else lax.round(a)


def _nodes(coordinate: Any, order: int) -> list[tuple[Any, Any]]:
    """(index, weight) of the samples interpolating at ``coordinate``."""
    if order == 0:
        return [(_round_half_away(coordinate).astype(np.int32), coordinate.dtype.type(1))]
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int,  # noqa: A002
                    mode: str = "constant", cval: Any = 0.0) -> Any:
    """``input`` interpolated at the points ``coordinates`` (one array per axis of
    ``input``, all of the output's shape)."""
    array = jnp.asarray(input)
    points = [jnp.asarray(c) for c in coordinates]
    fill = jnp.asarray(cval, array.dtype)
    if len(points) != array.ndim:
        raise ValueError(f"map_coordinates: coordinates must be a sequence of length "
                         f"input.ndim, but {len(points)} != {array.ndim}")
    index_map = INDEX_MAPS.get(mode)
    if index_map is None:
        raise NotImplementedError(
            f"map_coordinates does not support mode {mode!r}; the supported modes are "
            f"{sorted(INDEX_MAPS)}")
    if order not in (0, 1):
        raise NotImplementedError(f"map_coordinates supports order 0 (nearest) and 1 "
                                  f"(linear), got order={order!r}")
    per_axis = []
    for coordinate, size in zip(points, array.shape, strict=True):
        per_axis.append([(index_map(index, size),
                          (index >= 0) & (index < size) if mode == "constant" else None,
                          weight)
                         for index, weight in _nodes(coordinate, order)])
    terms = []
    for corner in itertools.product(*per_axis):
        indices = tuple(index for index, _, _ in corner)
        valid = [v for _, v, _ in corner if v is not None]
        value = array[indices]
        if valid:
            value = jnp.where(functools.reduce(operator.and_, valid), value, fill)
        weight = functools.reduce(operator.mul, [w for _, _, w in corner])
        terms.append(weight * value)
    result = functools.reduce(operator.add, terms)
    if dtypes.issubdtype(array.dtype, np.integer):
        result = _round_half_away(result)
    return result.astype(array.dtype)
