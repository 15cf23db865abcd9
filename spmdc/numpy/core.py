"""spmdc.numpy: NumPy's API over spmdc primitives (users import it as ``jnp``).

Every function is a thin wrapper: promote dtypes (JAX's lattice, weak Python scalars),
broadcast shapes (NumPy's rules, made explicit with broadcast_in_dim), then apply lax
operations. The same code runs while tracing (equations) and eagerly (one cached
executable per primitive). This module holds the base the rest stands on: dtype names and
constants, conversion (asarray, array, result_type), broadcast_to, the one elementwise
wrapper (_elementwise) and size/shape/ndim; the other modules of spmdc.numpy build on it.
"""
from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core import rank_promotion as _rank_promotion
from ..core.devices import device_put as _device_put
from ..core.operands import (
    ARRAY_TYPES,
    asarray,
    broadcast_shapes,
    check_flag,  # noqa: F401  (spmdc.numpy's modules use it)
    result_type,  # noqa: F401  (spmdc.numpy's modules use it)
)
from ..core.operands import broadcast_to as _broadcast_to
from ..core.operands import error as _error
from ..core.operands import iota as _iota  # noqa: F401  (spmdc.numpy's modules use it)
from ..core.operands import is_array as _is_array
from ..core.operands import operand as _operand  # noqa: F401  (spmdc.numpy's modules use it)
from ..core.operands import promote as _promote  # noqa: F401  (spmdc.numpy's modules use it)
from ..core.operands import promote_operands as _promote_operands
from ..core.operands import shape_arg as _shape_arg
from ..core.operands import shape_of as _shape
from ..dtypes import issubdtype as _issubdtype
from ..runtime.array import Array
from ..transforms.jit import jit

ndarray = Array

# --- dtypes and constants ----------------------------------------------------------------

# See Note [jnp scalar types] (scalar_types.py)
from .scalar_types import (  # noqa: E402, F401  (spmdc.numpy exports them)
    bfloat16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)

dtype = np.dtype
float_ = float64
int_ = int64
pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma
newaxis = None
finfo, iinfo = dtypes.finfo, dtypes.iinfo
issubdtype = _issubdtype     # jax.dtypes': it knows extended dtypes (PRNG keys)
floating, integer, inexact, number, signedinteger, unsignedinteger, complexfloating = (
    np.floating, np.integer, np.inexact, np.number, np.signedinteger, np.unsignedinteger,
    np.complexfloating)


_ARRAY_TYPES = ARRAY_TYPES


# --- conversion --------------------------------------------------------------------------

def array(x: Any, dtype: Any = None, copy: bool = True, *, device: Any = None) -> Any:
    """``x`` as an spmdc array; with ``copy=True`` (the default) an spmdc Array given as
    it is comes back in a buffer of its own (Note [copies are new buffers]); ``device``
    (a device or a sharding) places it, as ``device_put`` does."""
    if copy not in (True, False, None):
        raise _error("array", f"copy must be True, False or None, got {copy!r}")
    out = asarray(x, dtype)
    out = copied(out) if copy and out is x else out
    return out if device is None else _device_put(out, device)


# Note [copies are new buffers]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# spmdc's values are immutable, so a copy and its original hold the same numbers for
# ever; but a buffer can be donated (``jit(..., donate_argnums=...)``) or deleted, and
# then an alias is seen: Equinox's tests donate ``jax.tree.map(jnp.copy, tree)`` and read
# the original afterwards. So, as in JAX, ``jnp.copy(x)``, ``x.copy()`` and
# ``jnp.array(x)`` of an spmdc Array give an Array with a buffer of its own: the
# compiled identity program, whose result XLA writes to a new buffer (as JAX's copy
# primitive lowers). Under a trace a copy is the traced value itself: nothing there can
# be donated apart from the program's own arguments.

_identity = jit(lambda x: x)


def copied(x: Any) -> Any:
    """``x`` in a buffer of its own if it is an spmdc Array, else ``x`` (Note [copies
    are new buffers])."""
    return _identity(x) if isinstance(x, Array) else x


extended_array_rules: dict[type, dict[str, Callable[..., Any]]] = {}
"""For an array class whose elements NumPy has no dtype for (spmdc/random/keys.py's
typed keys), the ``spmdc.numpy`` functions that act on it: ``{class: {name: rule}}``,
each rule taking the function's arguments."""


def extended_rule(name: str, *xs: Any) -> Callable[..., Any] | None:
    """The rule ``extended_array_rules`` has for ``name`` on one of ``xs``, if any."""
    for x in xs:
        rules = extended_array_rules.get(type(x))
        if rules is not None and name in rules:
            return rules[name]
    return None


def broadcast_to(array: Any, shape: Sequence[int]) -> Any:
    x = array          # JAX's parameter name: broadcast_to(array=..., shape=...)
    rule = extended_rule("broadcast_to", x)
    if rule is not None:
        return rule(x, shape)
    x = asarray(x)
    shape = _shape_arg(shape, "broadcast_to")
    broadcast_shapes(x.shape, shape, op="broadcast_to")
    if x.shape == shape:
        return x
    if x.ndim == 0:
        return lax.broadcast_in_dim(x, shape, ())
    return _broadcast_to(x, shape)


def _elementwise(op: str, lax_fn: Callable[..., Any], *args: Any,
                 kinds: str | None = None) -> Any:
    """NumPy's ``op``: ``args`` promoted (their dtype's kind among ``kinds``, if given) and
    broadcast, then the lax function ``lax_fn``, whose result is weak iff every operand
    is (Note [weak literals] in core/operands.py)."""
    args_, dtype, _ = _promote_operands(op, *args)
    if kinds is not None and dtypes.kind(dtype) not in kinds:
        raise _error(op, f"not defined for dtype {np.dtype(dtype).name}")
    # After promotion every operand is an array (ours, or NumPy) or a weak Python scalar.
    shapes = [_shape(a) for a in args_]
    if shapes.count(shapes[0]) != len(shapes):      # else nothing to broadcast
        _rank_promotion.check(op, shapes)           # See Note [rank promotion]
        shape = broadcast_shapes(*shapes, op=op)
        args_ = [_broadcast_to(a, shape) for a in args_]
    if not isinstance(args_[0], _ARRAY_TYPES) and not builtins.any(_is_array(a) for a in args_):
        args_[0] = asarray(args_[0])
    return lax_fn(*args_)


# --- shapes and sizes --------------------------------------------------------------------

def operator_index(d: Any) -> int:
    return operator.index(d)


def size(x: Any, axis: int | Sequence[int] | None = None) -> int:
    """The number of elements of ``x``, or of its ``axis`` (an int or several, as JAX)."""
    dims = _shape(x)
    if axis is None:
        return int(np.prod(dims))
    axes = np.lib.array_utils.normalize_axis_tuple(axis, len(dims))
    return math.prod(dims[d] for d in axes)


def shape(x: Any) -> tuple[int, ...]:
    return _shape(x)


def ndim(x: Any) -> int:
    return len(_shape(x))


bool = bool_            # noqa: A001  (NumPy 2's name)


uint = uint64


complex_ = complex128


double, single, cdouble, csingle = float64, float32, complex128, complex64


generic = np.generic


character, flexible, object_ = np.character, np.flexible, np.object_


ComplexWarning = np.exceptions.ComplexWarning


def _no_out(op: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(*_error(op, "the out= argument is not supported: spmdc "
                                          "arrays are immutable; use the returned value").args)


def _static_int(op: str, what: str, value: Any) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {what} must be a static Python integer, got "
                        f"{type(value).__name__}") from None
