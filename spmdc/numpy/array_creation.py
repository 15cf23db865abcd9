"""Array creation: full/zeros/ones/empty and their *_like forms, arange, linspace, eye,
identity, logspace, geomspace, tri/tril/triu and their index functions, diag_indices, diag,
diagflat (and diagonal, diag's inverse), meshgrid, indices, fromfunction, frombuffer,
fromstring, from_dlpack.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.devices import device_put
from ..core.explicit_sharding import share_type
from ..core.operands import asarray, result_type
from ..core.operands import dtype_of as _dtype_of
from ..core.operands import error as _error
from ..core.operands import full as _full
from ..core.operands import iota as _iota
from ..core.operands import shape_arg as _shape_arg
from ..core.operands import shape_of as _shape
from ..core.operands import weakly_typed as _weakly_typed
from ..core.tracing import Tracer, current_trace
from ..core.tracing import where as _where
from ..runtime.array import Array
from ..runtime.sharding import Mesh, NamedSharding
from ..transforms.partitioned import place_computed
from .comparisons import where
from .core import _is_array, _static_int, broadcast_to, check_flag
from .indexing import take
from .shape_ops import _axis, moveaxis, reshape
from .ufuncs import abs as jnp_abs
from .ufuncs import exp, floor, log


def _dtype_or(dtype: Any, default: np.dtype) -> np.dtype:
    return dtypes.canonicalize(dtype if dtype is not None else default)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value``, laid out by ``out_sharding``
    (a NamedSharding or PartitionSpec; None: as any new array)."""
    return place_computed(lambda: _full(_shape_arg(shape), fill_value, dtype), out_sharding)


def zeros(shape: Any, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    return full(shape, 0, _dtype_or(dtype, dtypes.default_float()), out_sharding=out_sharding)


def ones(shape: Any, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    return full(shape, 1, _dtype_or(dtype, dtypes.default_float()), out_sharding=out_sharding)


def empty(shape: Any, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    return zeros(shape, dtype, out_sharding=out_sharding)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``,
    laid out as ``x`` where JAX keeps its layout. See Note [the layout of a *_like array]."""
    out = _laid_out_like(x, full(_shape(x) if shape is None else shape, fill_value,
                                 dtype if dtype is not None else _dtype_of(x)))
    # weakly typed as x is when it keeps x's dtype, as JAX's (jnp.ones_like(1) is weak);
    # an object standing for an array (__jax_array__: Flax's hijax Variable) is its array
    like = x.__jax_array__() if hasattr(x, "__jax_array__") else x
    return _weakly_typed(out) if dtype is None and dtypes.dtype_and_weak(like)[1] else out


def _laid_out_like(x: Any, out: Any) -> Any:
    """Note [the layout of a *_like array]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    As JAX's ``full_like`` (and so ``zeros_like`` and ``ones_like``), the result of a
    concrete, strongly typed Array laid out by a NamedSharding over a mesh has that
    layout when it has the array's shape (Optax's optimizer states, made with
    ``zeros_like`` of the parameters, are laid out as the parameters); otherwise, and
    while tracing, the result is placed as any new array, its type taking ``x``'s
    sharding over Explicit axes (Note [shardings in types]). An object standing for an
    array (``__jax_array__``: Flax's hijax ``Variable``) is laid out as the array it
    stands for, as JAX reads such an object's ``sharding``."""
    if type(x) is not Array and not isinstance(x, Tracer) and hasattr(x, "__jax_array__"):
        x = x.__jax_array__()
    if isinstance(out, Tracer) and isinstance(x, Tracer):
        share_type(out, x)
        return out
    sharding = getattr(x, "_sharding", None)
    if type(x) is not Array or not isinstance(sharding, NamedSharding) \
            or not isinstance(sharding.mesh, Mesh) or x._weak or out.shape != x.shape \
            or isinstance(out, Tracer):
        return out
    return device_put(out, sharding)


def zeros_like(x: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(x, 0, dtype, shape)


def ones_like(x: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(x, 1, dtype, shape)


empty_like = zeros_like


def iota(dtype: Any, size: int) -> Any:
    return _iota(dtypes.canonicalize(dtype), (size,), 0)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise _error("arange", "arguments must be concrete Python numbers, not traced "
                         "values (the result's size must be known when tracing)")
    if dtype is None:
        value = np.arange(start, stop, step)
    elif dtypes.canonicalize(dtype) in dtypes.NARROW_FLOATS:
        # ml_dtypes' arange steps in the narrow type itself (e8m0's 1 + 1 is NaN); JAX's
        # values are the exact ones rounded once.
        value = np.arange(start, stop, step).astype(dtypes.canonicalize(dtype))
    else:
        value = np.arange(start, stop, step, dtype=dtypes.canonicalize(dtype))
    if dtype is None and value.dtype.kind == "f":
        value = value.astype(dtypes.default_float())
    value = value.astype(dtypes.canonicalize(value.dtype))
    if stop is None and step is None and value.dtype.kind in "iu" and current_trace():
        return _iota(value.dtype, value.shape, 0)       # arange(n) in a program, as JAX
    return asarray(value)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (array bounds broadcast, the
    new axis at ``axis``), computed as JAX does: ``start * (1 - t) + stop * t`` for
    ``t = i / div``, and ``stop`` itself as the last value when ``endpoint``, so that a
    histogram's last edge is exactly the data's maximum."""
    num = operator.index(num)
    if num < 0:
        raise _error("linspace", f"num must be non-negative, got {num}")
    start, stop = asarray(start), asarray(stop)
    if dtype is None:
        dtype = result_type(start, stop)
        if not dtypes.is_inexact(dtype):
            dtype = dtypes.default_float()
    dtype = dtypes.canonicalize(dtype)
    compute = dtype if dtypes.is_inexact(dtype) else dtypes.default_float()
    start, stop = start.astype(compute), stop.astype(compute)
    bounds = list(np.broadcast_shapes(start.shape, stop.shape))
    start, stop = broadcast_to(start, tuple(bounds)), broadcast_to(stop, tuple(bounds))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    shape = [*bounds[:axis], 1, *bounds[axis:]]
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = (stop - start) / asarray(div, compute)
        real = np.dtype(np.float64 if compute in (np.float64, np.complex128) else
                        compute if dtypes.is_float(compute) else np.float32)
        iota_shape = [1] * len(shape)
        iota_shape[axis] = div
        t = (_iota(real, (div,), 0) / asarray(div, real)).reshape(iota_shape).astype(compute)
        out = start.reshape(shape) * (1 - t) + stop.reshape(shape) * t
        if endpoint:
            from .shape_ops import concatenate
            out = concatenate([out, stop.reshape(shape)], axis=axis)
    elif num == 1:
        delta = asarray(np.nan, compute) if endpoint else stop - start
        out = start.reshape(shape)
    else:
        delta = asarray(np.nan, compute)
        out = zeros(tuple(shape[:axis] + [0] + shape[axis + 1:]), compute)
    if dtypes.is_int(dtype) and not dtypes.is_int(out.dtype):
        out = floor(out)
    out = out.astype(dtype)
    return (out, delta) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    M = N if M is None else M
    dtype = _dtype_or(dtype, dtypes.default_float())
    value = np.eye(N, M, k, dtype=dtype)                # (also checks the arguments)
    if current_trace() is None:
        return asarray(value)
    return diagonal_mask(value.shape, operator.index(k), lax.eq).astype(dtype)


def diagonal_mask(shape: tuple[int, int], k: int, compare: Callable[[Any, Any], Any]) -> Any:
    """``compare(row + k, column)`` for every element of an n x m matrix (lax.eq: the k-th
    diagonal, lax.ge: it and below), built in the program being traced from two iotas
    rather than captured as an n x m constant, as JAX builds it."""
    rows = lax.broadcasted_iota(np.int32, shape, 0)
    cols = lax.broadcasted_iota(np.int32, shape, 1)
    if k:
        rows = lax.add(rows, np.int32(k))
    return compare(rows, cols)


def identity(n: int, dtype: Any = None) -> Any:
    return eye(n, dtype=dtype)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """``base ** linspace(start, stop, num)``."""
    from .ufuncs import power
    if axis != 0:
        raise ValueError("logspace: only axis=0 is supported")
    out = power(asarray(base).astype(dtypes.default_float()),
                linspace(start, stop, num, endpoint))
    return out if dtype is None else out.astype(dtype)


def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-d array with the flattened ``v`` on its ``k``-th diagonal."""
    pass
    return diag(reshape(asarray(v), (-1,)), k)


def fromfunction(function: Any, shape: Any, *, dtype: Any = float, **kwargs: Any) -> Any:
    """``function(*indices)`` over a grid of ``shape`` (indices in ``dtype``)."""
    pass
    grids = indices(shape, dtype=dtype)
    return function(*[grids[i] for i in range(len(tuple(shape)))], **kwargs)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """``num`` numbers spaced evenly on a log scale from ``start`` to ``stop`` (both of one
    sign, not zero)."""
    if axis != 0:
        raise ValueError("geomspace: only axis=0 is supported")
    start = asarray(start).astype(dtypes.default_float())
    stop = asarray(stop).astype(dtypes.default_float())
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        if float(start) == 0 or float(stop) == 0:
            raise ValueError("geomspace: start and stop must be non-zero")
    sign = where(start < 0, -1.0, 1.0).astype(start.dtype)
    out = sign * exp(linspace(log(jnp_abs(start)), log(jnp_abs(stop)), num, endpoint))
    if num > 0:               # the ends exactly, as NumPy returns them
        out = out.at[0].set(start)
        if endpoint and num > 1:
            out = out.at[-1].set(stop)
    return out if dtype is None else out.astype(dtype)


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """An Array of the values in ``buffer`` (bytes or any buffer)."""
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """An Array of the numbers in ``string`` separated by ``sep``."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An Array from an object with ``__dlpack__`` (a copy onto the device: spmdc's
    buffers are its own, so ``copy=False`` cannot be honoured and is an error)."""
    if copy is False:
        raise ValueError(f"from_dlpack: copy=False asks to share the memory, which spmdc "
                         f"cannot; use copy=None or True{_where()}")
    value = np.from_dlpack(x)
    if device is None:
        return asarray(value)
    from ..core.devices import device_put
    return device_put(np.array(value), device)


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """A grid of indices: ``out[k][i0, i1, ...] == ik``."""
    dtype = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_int()
    dims = tuple(int(d) for d in dimensions)
    grids = []
    for k, n in enumerate(dims):
        view = tuple(n if j == k else 1 for j in range(len(dims)))
        g = reshape(_iota(np.dtype(dtype), (n,), 0), view)
        grids.append(g if sparse else broadcast_to(g, dims))
    if sparse:
        return tuple(grids)
    from .shape_ops import stack
    return stack(grids) if grids else asarray(np.zeros((0,), dtype))


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
             ) -> list[Any]:
    """Coordinate arrays from 1-d coordinate vectors; ``indexing='xy'`` (Cartesian, the
    default) swaps the first two output dimensions, 'ij' does not."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    check_flag("meshgrid", "copy", copy)          # arrays are immutable: nothing to copy
    check_flag("meshgrid", "sparse", sparse)
    xs = [asarray(x) for x in xi]
    for i, x in enumerate(xs):
        if x.ndim != 1:
            raise ValueError(f"meshgrid: argument {i} has shape {x.shape}; every argument "
                             "must be 1-d (ravel it first)")
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(xs) > 1 else i
        view = [1] * len(xs)
        view[axis] = x.shape[0]
        x = reshape(x, tuple(view))
        out.append(x if sparse else broadcast_to(x, tuple(shape)))
    return out


def _tri_mask(n: int, m: int, k: int) -> Any:
    """Ones at and below the k-th diagonal: on the host, or built in the program being
    traced (not captured as an n x m constant)."""
    if current_trace() is None:
        return np.tri(n, m, k, dtype=bool)
    return diagonal_mask((n, m), k, lax.ge)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """Ones at and below the ``k``-th diagonal of an N x M matrix."""
    N = _static_int("tri", "N", N)
    M = N if M is None else _static_int("tri", "M", M)
    dtype = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float()
    return asarray(_tri_mask(N, M, _static_int("tri", "k", k)).astype(dtype))


def _triangle(op: str, m: Any, k: int, lower: bool) -> Any:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"{op}: needs an array of at least 2 dimensions, got shape {m.shape}")
    k = _static_int(op, "k", k)
    n, c = m.shape[-2:]
    mask = _tri_mask(n, c, k) if lower else ~_tri_mask(n, c, k - 1)
    return where(mask, m, np.zeros((), m.dtype))


def tril(m: Any, k: int = 0) -> Any:
    """``m`` with the elements above the ``k``-th diagonal zeroed (last two axes)."""
    return _triangle("tril", m, k, True)


def triu(m: Any, k: int = 0) -> Any:
    """``m`` with the elements below the ``k``-th diagonal zeroed (last two axes)."""
    return _triangle("triu", m, k, False)


def _indices(rows: np.ndarray, cols: np.ndarray) -> tuple[Any, Any]:
    int_type = dtypes.default_int()
    return asarray(rows.astype(int_type)), asarray(cols.astype(int_type))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _indices(*np.tril_indices(_static_int("tril_indices", "n", n),
                                     _static_int("tril_indices", "k", k), m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _indices(*np.triu_indices(_static_int("triu_indices", "n", n),
                                     _static_int("triu_indices", "k", k), m))


def _shape_2d(op: str, arr: Any) -> tuple[int, int]:
    shape = np.shape(arr) if not _is_array(arr) else arr.shape
    if len(shape) != 2:
        raise ValueError(f"{op}: input must be 2-d, got shape {tuple(shape)}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    n, ndim = _static_int("diag_indices", "n", n), _static_int("diag_indices", "ndim", ndim)
    if n < 0 or ndim < 0:
        raise ValueError(f"diag_indices: n and ndim must be non-negative, got {n}, {ndim}")
    return (asarray(np.arange(n, dtype=dtypes.default_int())),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    shape = arr.shape if _is_array(arr) else np.shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: input must be at least 2-d with all "
                         f"dimensions equal, got shape {tuple(shape)}")
    return diag_indices(shape[0], len(shape))


def diag(v: Any, k: int = 0) -> Any:
    """The ``k``-th diagonal of a 2-d ``v``, or a 2-d array with 1-d ``v`` on it."""
    v = asarray(v)
    k = _static_int("diag", "k", k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {v.shape}")
    length = v.shape[0]
    n = length + builtins.abs(k)
    if length == 0:
        return zeros((n, n), v.dtype)
    on_diagonal = np.eye(n, k=k, dtype=bool)
    # element (i, i + k) is v[i] for k >= 0; element (j - k, j) is v[j] for k < 0
    source = np.broadcast_to(np.arange(n)[:, None] if k >= 0 else np.arange(n)[None, :], (n, n))
    source = np.minimum(source, length - 1).astype(dtypes.default_int())
    return where(on_diagonal, take(v, asarray(source)), np.zeros((), v.dtype))


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset``-th diagonal over ``axis1`` and ``axis2``, as the last axis."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal: needs an array of at least 2 dimensions, got {a.shape}")
    offset = _static_int("diagonal", "offset", offset)
    axis1, axis2 = _axis(axis1, a.ndim, "diagonal"), _axis(axis2, a.ndim, "diagonal")
    if axis1 == axis2:
        raise ValueError("diagonal: axis1 and axis2 must be different")
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = a.shape[-2:]
    rows = np.arange(builtins.max(0, -offset), builtins.min(n, m - offset))
    if rows.size == 0:
        return _full(_shape_arg(a.shape[:-2] + (0,)), 0, a.dtype)
    flat = reshape(a, a.shape[:-2] + (n * m,))
    return take(flat, asarray((rows * m + rows + offset).astype(dtypes.default_int())),
                axis=-1)
