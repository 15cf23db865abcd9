"""Linear algebra for spmdc.numpy: matmul, dot, vdot, inner, outer, tensordot and
trace, all as dot_general with explicit contracting and batch dimensions (einsum_impl.py
builds einsum on the same _dot_general).

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..compiler.primitives.core import registry as _prims
from ..core import dtypes
from ..core.tracing import bind
from .core import _error, _promote, asarray, broadcast_shapes, broadcast_to, multiply, where
from .reductions import sum
from .shape_ops import moveaxis, ravel, reshape

_PRECISIONS = ("default", "high", "highest", "fastest", "bfloat16", "tensorfloat32", "float32",
               "bfloat16_3x", "float32_3x")


def check_precision(op: str, precision: Any) -> None:
    """``precision=`` of dot_general / einsum: None, a precision name, or a pair of them.

    spmdc computes every dot at the full precision of its operands' dtype (what JAX calls
    'highest'; PJRT's CPU backend has no faster, less precise mode), which meets every
    request, so a valid value changes nothing; an invalid one is an error."""
    values = precision if isinstance(precision, (tuple, list)) else (precision,)
    if isinstance(precision, (tuple, list)) and len(precision) != 2:
        raise ValueError(f"{op}: precision must be one value or a pair, got {precision!r}")
    for value in values:
        name = getattr(value, "name", value)
        if value is not None and not (isinstance(name, str) and name.lower() in _PRECISIONS):
            raise ValueError(f"{op}: unknown precision {value!r}; use None or one of "
                             f"{', '.join(_PRECISIONS)}")


def _dot_general(x: Any, y: Any, contract: Any, batch: Any, op: str) -> Any:
    (x, y), dtype, weak = _promote(op, x, y)
    x, y = asarray(x), asarray(y)
    xs, ys = x.shape, y.shape
    for (i, j) in zip(*contract, strict=True):
        if xs[i] != ys[j]:
            raise _error(op, f"contracting dimension mismatch: {x.dtype.name}{list(xs)} "
                         f"and {y.dtype.name}{list(ys)} (axis {i} has size {xs[i]}, "
                         f"axis {j} has size {ys[j]})")
    return bind(_prims["dot_general"], x, y, contract=contract, batch=batch, weak=weak)


def _options(op: str, x: Any, y: Any, precision: Any, preferred_element_type: Any
             ) -> tuple[Any, Any]:
    """The operands of a product with JAX's ``precision`` (checked: every precision is
    full precision here, see check_precision) and ``preferred_element_type`` (the
    operands are converted to it, so the products accumulate in it)."""
    check_precision(op, precision)
    x, y = asarray(x), asarray(y)
    if preferred_element_type is not None:
        dtype = dtypes.canonicalize(preferred_element_type)
        x, y = x.astype(dtype), y.astype(dtype)
    return x, y


def matmul(x: Any, y: Any, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    x, y = _options("matmul", x, y, precision, preferred_element_type)
    xs, ys = x.shape, y.shape
    if not xs or not ys:
        raise _error("matmul", "operands must be at least 1-dimensional, got shapes "
                     f"{xs} and {ys}")
    if xs[-1] != ys[-2 if len(ys) > 1 else 0]:
        raise _error("matmul", f"contracting dimension mismatch: {x.dtype.name}"
                     f"{list(xs)} @ {y.dtype.name}{list(ys)} "
                     f"({xs[-1]} != {ys[-2 if len(ys) > 1 else 0]})")
    # A 1-D operand contracts directly: dot_general puts y's free dims after x's, which
    # is exactly matmul's result shape, so no reshape is needed.
    if len(xs) == 1 or len(ys) == 1:
        contract = ((len(xs) - 1,), (builtins.max(len(ys) - 2, 0),))
        return _dot_general(x, y, contract, ((), ()), "matmul")
    if len(ys) == 2:      # [..., m, k] @ [k, n]: one dot over x's last axis, as JAX emits
        return _dot_general(x, y, ((len(xs) - 1,), (0,)), ((), ()), "matmul")
    if len(xs) == 2:      # [m, k] @ [..., k, n]: the same, then m moved among y's dims
        out = _dot_general(x, y, ((1,), (len(ys) - 2,)), ((), ()), "matmul")
        return moveaxis(out, 0, -2)
    batch = broadcast_shapes(xs[:-2], ys[:-2], op="matmul")
    if xs[:-2] != batch:
        x = broadcast_to(x, batch + xs[-2:])
    if ys[:-2] != batch:
        y = broadcast_to(y, batch + ys[-2:])
    nb = len(batch)
    return _dot_general(x, y, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))),
                        "matmul")


def dot(x: Any, y: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    x, y = _options("dot", x, y, precision, preferred_element_type)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    if y.ndim == 1:
        return _dot_general(x, y, ((x.ndim - 1,), (0,)), ((), ()), "dot")
    return _dot_general(x, y, ((x.ndim - 1,), (y.ndim - 2,)), ((), ()), "dot")


def vdot(x: Any, y: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """The dot product of the flattened arrays, the first conjugated (as NumPy's)."""
    from .complex_ops import conj
    x, y = _options("vdot", x, y, precision, preferred_element_type)
    return dot(ravel(conj(x) if x.dtype.kind == "c" else x), ravel(y))


def inner(x: Any, y: Any, *, precision: Any = None,
          preferred_element_type: Any = None) -> Any:
    x, y = _options("inner", x, y, precision, preferred_element_type)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    return _dot_general(x, y, ((x.ndim - 1,), (y.ndim - 1,)), ((), ()), "inner")


def outer(x: Any, y: Any) -> Any:
    return multiply(reshape(ravel(x), (-1, 1)), ravel(y))


def tensordot(x: Any, y: Any, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    x, y = _options("tensordot", x, y, precision, preferred_element_type)
    if isinstance(axes, int):
        xa, ya = tuple(range(x.ndim - axes, x.ndim)), tuple(range(axes))
    else:
        xa, ya = (tuple(np.atleast_1d(a).tolist()) for a in axes)
    return _dot_general(x, y, (xa, ya), ((), ()), "tensordot")


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    x = asarray(x)
    n, m = x.shape[axis1], x.shape[axis2]
    mask = asarray(np.eye(n, m, offset, dtype=bool))
    x = moveaxis(x, (axis1, axis2), (-2, -1))
    return sum(where(mask, x, 0), axis=(-2, -1))
