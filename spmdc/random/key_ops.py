"""The ``spmdc.numpy`` shape functions on typed key arrays: reshape, ravel, transpose,
moveaxis, swapaxes, expand_dims, squeeze, flip, concatenate, stack, take and where, and
``equal``/``not_equal``, as JAX allows them on keys (registered in
``extended_array_rules``, spmdc/numpy/core.py).

Note [shape functions on keys]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A key array of shape ``s`` is its data ``uint32[*s, 2]`` (Note [typed keys] in
spmdc/random/keys.py). Every function here is the same function on the data with the
axes the user gave made non-negative against the key array's rank, so that none of them
can reach the trailing data axis; the result is wrapped as keys again. Operands that are
not keys where keys are needed (``jnp.concatenate([key, x])``) are a TypeError naming
the dtypes, as in JAX.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .. import numpy as jnp
from ..numpy.core import extended_array_rules
from . import key_reuse
from .keys import KEY_DTYPE, PRNGKeyArray


def _axis(axis: Any, ndim: int) -> int:
    return normalize_axis_index(int(axis), ndim)


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(_axis(a, ndim) for a in axes)


def _keys(name: str, xs: Sequence[Any], consume: bool = False) -> list[Any]:
    """The data of ``xs``, which must all be key arrays; ``consume``: the operation
    consumes them, as JAX's ``concatenate`` of keys does (Note [key reuse] in
    random/key_reuse.py)."""
    for x in xs:
        if not isinstance(x, PRNGKeyArray):
            raise TypeError(f"{name} does not accept dtypes {KEY_DTYPE}, "
                            f"{getattr(x, 'dtype', type(x).__name__)}: every operand must "
                            "be a key array (random.wrap_key_data makes keys from uint32 "
                            "data)")
    if consume and len(xs) > 1 and key_reuse.checking():
        key_reuse.consume_all(name, list(xs))
    return [x._base for x in xs]


def _wrap(data: Any) -> PRNGKeyArray:
    return PRNGKeyArray._wrap(data)


def _reshape(x: PRNGKeyArray, shape: Any, order: str = "C") -> PRNGKeyArray:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if order == "F":
        return _transpose(_reshape(_transpose(x), tuple(reversed(shape))))
    return x._forward(jnp.reshape(x._base, (*shape, 2), order=order))


def _ravel(x: PRNGKeyArray, order: str = "C") -> PRNGKeyArray:
    return _reshape(x, (-1,), order)


def _transpose(x: PRNGKeyArray, axes: Any = None) -> PRNGKeyArray:
    perm = tuple(reversed(range(x.ndim))) if axes is None else _axes(axes, x.ndim)
    return _wrap(jnp.transpose(x._base, (*perm, x.ndim)))


def _moveaxis(x: PRNGKeyArray, source: Any, destination: Any) -> PRNGKeyArray:
    return _wrap(jnp.moveaxis(x._base, _axes(source, x.ndim), _axes(destination, x.ndim)))


def _swapaxes(x: PRNGKeyArray, axis1: Any, axis2: Any) -> PRNGKeyArray:
    return _wrap(jnp.swapaxes(x._base, _axis(axis1, x.ndim), _axis(axis2, x.ndim)))


def _expand_dims(x: PRNGKeyArray, axis: Any) -> PRNGKeyArray:
    count = 1 if isinstance(axis, (int, np.integer)) else len(tuple(axis))
    return x._forward(jnp.expand_dims(x._base, _axes(axis, x.ndim + count)))


def _squeeze(x: PRNGKeyArray, axis: Any = None) -> PRNGKeyArray:
    axes = tuple(i for i, d in enumerate(x.shape) if d == 1) if axis is None \
        else _axes(axis, x.ndim)
    return x._forward(jnp.squeeze(x._base, axes))


def _flip(x: PRNGKeyArray, axis: Any = None) -> PRNGKeyArray:
    return _wrap(jnp.flip(x._base, _axes(axis, x.ndim)))


def _concatenate(arrays: Sequence[Any], axis: Any = 0) -> PRNGKeyArray:
    data = _keys("concatenate", arrays, consume=axis is not None)
    if axis is None:
        return _concatenate([_ravel(a) for a in arrays], 0)
    ndim = data[0].ndim - 1
    if ndim == 0:
        raise ValueError("concatenate: zero-dimensional key arrays cannot be concatenated; "
                         "use jnp.stack")
    return _wrap(jnp.concatenate(data, _axis(axis, ndim)))


def _stack(arrays: Sequence[Any], axis: Any = 0) -> PRNGKeyArray:
    data = _keys("stack", arrays, consume=True)
    return _wrap(jnp.stack(data, _axis(axis, data[0].ndim)))


def _take(a: PRNGKeyArray, indices: Any, axis: Any = None, **kwargs: Any) -> PRNGKeyArray:
    if axis is None:
        a, axis = _ravel(a), 0
    return _wrap(jnp.take(a._base, indices, axis=_axis(axis, a.ndim), **kwargs))


def _where(condition: Any, x: Any, y: Any) -> PRNGKeyArray:
    xd, yd = _keys("where", (x, y))
    return _wrap(jnp.where(jnp.expand_dims(jnp.asarray(condition), -1), xd, yd))


def _equal(x: Any, y: Any) -> Any:
    a, b = _keys("equal", (x, y))
    return jnp.all(a == b, axis=-1)


def _not_equal(x: Any, y: Any) -> Any:
    a, b = _keys("not_equal", (x, y))
    return jnp.any(a != b, axis=-1)


extended_array_rules[PRNGKeyArray].update({
    "equal": _equal, "not_equal": _not_equal,
    "reshape": _reshape, "ravel": _ravel, "transpose": _transpose, "moveaxis": _moveaxis,
    "swapaxes": _swapaxes, "expand_dims": _expand_dims, "squeeze": _squeeze,
    "flip": _flip, "concatenate": _concatenate, "stack": _stack, "take": _take,
    "where": _where})
