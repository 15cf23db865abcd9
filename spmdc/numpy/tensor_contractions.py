"""Tensor contractions for spmdc.numpy: matmul, dot, vdot, inner, outer, tensordot and
trace, all as dot_general with explicit contracting and batch dimensions, plus kron and
cross (einsum.py builds einsum, vecdot, matvec and vecmat on the same _dot_general).

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
import functools
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.precision import (
    Algorithm,
    check_precision,
    preferred_operands,
    preferred_result,
)
from ..lax.dot import dot_general_checked
from ..transforms.partitioned import place_computed
from .comparisons import where
from .core import _error, _promote, asarray, broadcast_shapes, broadcast_to, result_type
from .reductions import sum
from .shape_ops import _axis, moveaxis, ravel, reshape, stack
from .ufuncs import multiply


def _prepare(op: str, x: Any, y: Any, precision: Any,
             preferred_element_type: Any) -> tuple[Any, Any, Any]:
    """The operands (see preferred_operands) and the canonical precision."""
    precision = check_precision(op, precision)
    x, y = preferred_operands(op, x, y, preferred_element_type)
    return x, y, precision


def _preferred(fn: Any) -> Any:
    """A product whose result is converted to ``preferred_element_type`` if it is not
    already in it (floating operands with an integer type; see preferred_operands)."""
    @functools.wraps(fn)
    def product(x: Any, y: Any, *args: Any, precision: Any = None,
                preferred_element_type: Any = None, **kwargs: Any) -> Any:
        out = fn(x, y, *args, precision=precision,
                 preferred_element_type=preferred_element_type, **kwargs)
        return preferred_result(out, preferred_element_type)
    return product


def _dot_general(x: Any, y: Any, contract: Any, batch: Any, op: str,
                 precision: Any = None) -> Any:
    (x, y), _, _ = _promote(op, x, y)
    x, y = asarray(x), asarray(y)
    xs, ys = x.shape, y.shape
    for (i, j) in zip(*contract, strict=True):
        if xs[i] != ys[j]:
            raise _error(op, f"contracting dimension mismatch: {x.dtype.name}{list(xs)} "
                         f"and {y.dtype.name}{list(ys)} (axis {i} has size {xs[i]}, "
                         f"axis {j} has size {ys[j]})")
    return dot_general_checked(x, y, (contract, batch), precision)


def lax_precision(precision: Any) -> Any:
    """A canonical precision (check_precision's: None, a pair of StableHLO names or an
    Algorithm) as lax's products take it again."""
    if isinstance(precision, Algorithm):
        return precision.preset
    if precision is None:
        return None
    return tuple(lax.Precision[name] for name in precision)


@_preferred
def matmul(x: Any, y: Any, *, precision: Any = None, preferred_element_type: Any = None,
           out_sharding: Any = None) -> Any:
    """``x @ y``; ``out_sharding`` lays the result out (lax.dot_general's)."""
    return place_computed(lambda: _matmul(x, y, precision, preferred_element_type),
                          out_sharding)


def _matmul(x: Any, y: Any, precision: Any, preferred_element_type: Any) -> Any:
    x, y, precision = _prepare("matmul", x, y, precision, preferred_element_type)
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
        return _dot_general(x, y, contract, ((), ()), "matmul", precision)
    if len(ys) == 2:      # [..., m, k] @ [k, n]: one dot over x's last axis, as JAX emits
        return _dot_general(x, y, ((len(xs) - 1,), (0,)), ((), ()), "matmul", precision)
    if len(xs) == 2:      # [m, k] @ [..., k, n]: the same, then m moved among y's dims
        out = _dot_general(x, y, ((1,), (len(ys) - 2,)), ((), ()), "matmul", precision)
        return moveaxis(out, 0, -2)
    batch = broadcast_shapes(xs[:-2], ys[:-2], op="matmul")
    if xs[:-2] != batch:
        x = broadcast_to(x, batch + xs[-2:])
    if ys[:-2] != batch:
        y = broadcast_to(y, batch + ys[-2:])
    nb = len(batch)
    return _dot_general(x, y, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))),
                        "matmul", precision)


@_preferred
def dot(x: Any, y: Any, *, precision: Any = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Any:
    """NumPy's dot; ``out_sharding`` lays the result out (lax.dot_general's)."""
    x, y, precision = _prepare("dot", x, y, precision, preferred_element_type)
    if x.ndim == 0 or y.ndim == 0:
        return place_computed(lambda: multiply(x, y), out_sharding)
    contract = ((x.ndim - 1,), (0,) if y.ndim == 1 else (y.ndim - 2,))
    return place_computed(lambda: _dot_general(x, y, contract, ((), ()), "dot", precision),
                          out_sharding)


def vdot(x: Any, y: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """The dot product of the flattened operands, the first one conjugated (as NumPy)."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        from .complex_ops import conj
        x = conj(x)
    return dot(ravel(x), ravel(y), precision=precision,
               preferred_element_type=preferred_element_type)


@_preferred
def inner(x: Any, y: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    x, y, precision = _prepare("inner", x, y, precision, preferred_element_type)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    return _dot_general(x, y, ((x.ndim - 1,), (y.ndim - 1,)), ((), ()), "inner", precision)


def outer(x: Any, y: Any) -> Any:
    return multiply(reshape(ravel(x), (-1, 1)), reshape(ravel(y), (1, -1)))   # equal ranks


@_preferred
def tensordot(x: Any, y: Any, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """NumPy's tensordot; ``out_sharding`` lays the result out (lax.dot_general's)."""
    x, y, precision = _prepare("tensordot", x, y, precision, preferred_element_type)
    if isinstance(axes, int):
        xa, ya = tuple(range(x.ndim - axes, x.ndim)), tuple(range(axes))
    else:
        xa, ya = (tuple(np.atleast_1d(a).tolist()) for a in axes)
    return place_computed(lambda: _dot_general(x, y, (xa, ya), ((), ()), "tensordot",
                                               precision), out_sharding)


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    x = asarray(x)
    n, m = x.shape[axis1], x.shape[axis2]
    mask = asarray(np.eye(n, m, offset, dtype=bool))
    x = moveaxis(x, (axis1, axis2), (-2, -1))
    return sum(where(mask, x, 0), axis=(-2, -1))


def kron(a: Any, b: Any) -> Any:
    """The Kronecker product: blocks ``a[i, j] * b``."""
    a, b = asarray(a), asarray(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    a_view = reshape(a, tuple(d for s in a.shape for d in (s, 1)))
    b_view = reshape(b, tuple(d for s in b.shape for d in (1, s)))
    return reshape(a_view * b_view, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Cross products of 2- or 3-vectors along the given axes (2-vectors have z = 0; two
    2-vectors give the scalar z component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = asarray(a), asarray(b)
    a = moveaxis(a, _axis(axisa, a.ndim, "cross"), -1)
    b = moveaxis(b, _axis(axisb, b.ndim, "cross"), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross: vector dimensions must be 2 or 3, got {a.shape[-1]} and "
                         f"{b.shape[-1]}")
    dtype = result_type(a, b)
    a, b = a.astype(dtype), b.astype(dtype)
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    a2 = a[..., 2] if a.shape[-1] == 3 else np.zeros((), dtype)
    b2 = b[..., 2] if b.shape[-1] == 3 else np.zeros((), dtype)
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z], axis=-1)
    return moveaxis(out, -1, _axis(axisc, out.ndim, "cross"))


