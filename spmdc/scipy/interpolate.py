"""``spmdc.scipy.interpolate`` (JAX's ``jax.scipy.interpolate``): ``RegularGridInterpolator``,
linear or nearest-neighbour interpolation on a rectilinear grid, a pytree (its grid, values
and fill value are leaves) so it passes through ``jit``.

As in JAX, points outside the grid get ``fill_value`` (NaN by default; ``None``
extrapolates linearly), and ``bounds_error=True`` is NotImplementedError: a compiled
program cannot raise on values.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core import dtypes
from spmdc.core.operands import inexact
from spmdc.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

METHODS = ("linear", "nearest")


def _points_array(points: Any, ndim: int) -> Any:
    """Sample points as an array ``(..., ndim)``: one array of coordinates, or a tuple of
    one array per dimension."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        arrays = jnp.broadcast_arrays(*points)
        return jnp.stack([a.astype(dtypes.default_float()) for a in arrays], axis=-1)
    points = jnp.asarray(points)
    return points.reshape(-1, ndim) if points.ndim == 1 else points


class RegularGridInterpolator:
    """Interpolates ``values`` given on the grid ``points`` (one increasing 1-D array per
    leading dimension of ``values``)."""

    def __init__(self, points: Any, values: Any, method: str = "linear",
                 bounds_error: bool = False, fill_value: Any = np.nan):
        if method not in METHODS:
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined; "
                             f"use 'linear' or 'nearest'")
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True cannot "
                                      "take effect under jit; leave it False and test the "
                                      "points against the grid outside")
        values = jnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(f"RegularGridInterpolator: there are {len(points)} point "
                             f"arrays, but values has {values.ndim} dimensions")
        (values,) = inexact(values)
        if fill_value is not None:
            fill_value = jnp.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("RegularGridInterpolator: fill_value must be either None "
                                 f"or of a type compatible with values ({values.dtype}), "
                                 f"got {fill_value.dtype}")
        self.method = method
        self.bounds_error = bounds_error
        self.fill_value = fill_value
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        method = self.method if method is None else method
        if method not in METHODS:
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined; "
                             f"use 'linear' or 'nearest'")
        ndim = len(self.grid)
        xi = _points_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"RegularGridInterpolator: the requested sample points xi have "
                             f"dimension {xi.shape[-1]}, but this RegularGridInterpolator "
                             f"has dimension {ndim}")
        shape = xi.shape
        xi = xi.reshape(-1, shape[-1])
        indices, distances, outside = self._cells(xi.T)
        if method == "linear":
            result = self._linear(indices, distances)
        else:
            result = self.values[tuple(jnp.where(d <= 0.5, i, i + 1)
                                       for i, d in zip(indices, distances, strict=True))]
        if self.fill_value is not None:
            outside = outside.reshape(result.shape[:1] + (1,) * (result.ndim - 1))
            result = jnp.where(outside, self.fill_value, result)
        return result.reshape(shape[:-1] + self.values.shape[ndim:])

    def _cells(self, xi: Any) -> tuple[list[Any], list[Any], Any]:
        """Per dimension, each point's cell (the index of its lower grid line, clamped to
        the grid) and its distance from that line in cell widths; and which points fall
        outside the grid."""
        indices, distances = [], []
        outside = jnp.zeros((xi.shape[1],), bool)
        for x, g in zip(xi, self.grid, strict=True):
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
            indices.append(i)
            distances.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, distances, outside

    def _linear(self, indices: list[Any], distances: list[Any]) -> Any:
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        result = jnp.asarray(0.0)
        for corner in itertools.product(*[(i, i + 1) for i in indices]):
            weight = jnp.asarray(1.0)
            for at, i, d in zip(corner, indices, distances, strict=True):
                weight = weight * (1 - d if at is i else d)   # the lower or upper line
            result = result + self.values[corner] * weight[trailing]
        return result


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(*children[:2], *aux, *children[2:]),
)
