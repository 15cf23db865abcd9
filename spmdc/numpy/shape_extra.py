"""More of spmdc.numpy's array building and splitting, composed from shape_ops.py and
indexing: array_split, h/v/dsplit, dstack, column_stack, append, unstack,
broadcast_arrays, take_along_axis, indices, ix_, unravel_index, ravel_multi_index,
vander, select, plus the dtype helpers JAX exports (astype, copy, promote_types,
can_cast, iscomplexobj, isrealobj, isscalar) and NumPy's remaining dtype names.
"""
from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import dtypes
from .comparisons import where
from .core import _iota, _is_array, asarray, broadcast_shapes, broadcast_to, check_flag, result_type
from .shape_ops import _axis, _slice_axis, concatenate, ravel, reshape

__all__ = ["array_split", "hsplit", "vsplit", "dsplit", "dstack", "column_stack", "append",
           "unstack", "broadcast_arrays", "take_along_axis", "indices", "ix_",
           "unravel_index", "ravel_multi_index", "vander", "select", "astype", "copy",
           "promote_types", "can_cast", "isrealobj", "isscalar", "bool",
           "uint", "complex_", "double", "single", "cdouble", "csingle", "generic"]

bool = np.bool_          # noqa: A001  (NumPy 2's name)
uint = np.dtype(np.uint64).type
complex_ = np.complex128
double, single, cdouble, csingle = np.float64, np.float32, np.complex128, np.complex64
generic = np.generic


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """split that also allows sections that do not divide the axis: the first
    ``n % sections`` pieces are one longer."""
    x = asarray(ary)
    axis = _axis(axis, x.ndim, "array_split")
    n = x.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("array_split: number of sections must be larger than 0")
        size, extra = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + size + (1 if i < extra else 0))
    else:
        bounds = [0, *[builtins.min(builtins.max(int(i) + (n if i < 0 else 0), 0), n)
                       for i in indices_or_sections], n]
    return [_slice_axis(x, axis, a, builtins.max(a, b))
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _split_on(op: str, axis: int, min_ndim: int) -> Any:
    def fn(ary: Any, indices_or_sections: Any) -> list[Any]:
        from .shape_ops import split
        x = asarray(ary)
        if x.ndim < min_ndim:
            raise ValueError(f"{op}: needs an array of at least {min_ndim} dimensions, got "
                             f"shape {x.shape}")
        return split(x, indices_or_sections, 0 if x.ndim == 1 and op == "hsplit" else axis)
    fn.__name__ = op
    return fn


hsplit, vsplit, dsplit = _split_on("hsplit", 1, 1), _split_on("vsplit", 0, 2), \
    _split_on("dsplit", 2, 3)


def dstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """Stack along a third axis (1-d (n,) -> (1, n, 1), 2-d (m, n) -> (m, n, 1))."""
    from .math_extra import atleast_3d
    out = concatenate([atleast_3d(a) for a in tup], axis=2)
    return out if dtype is None else out.astype(dtype)


def column_stack(tup: Sequence[Any]) -> Any:
    """1-d arrays become columns of a 2-d array; others are concatenated on axis 1."""
    arrays = [asarray(a) for a in tup]
    arrays = [reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrays]
    return concatenate(arrays, axis=1)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` appended to ``arr`` (both flattened if ``axis`` is None)."""
    if axis is None:
        return concatenate([ravel(asarray(arr)), ravel(asarray(values))])
    return concatenate([asarray(arr), asarray(values)], axis=axis)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple."""
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("unstack: needs an array of at least one dimension")
    axis = _axis(axis, x.ndim, "unstack")
    from .shape_ops import squeeze
    return tuple(squeeze(_slice_axis(x, axis, i, i + 1), axis) for i in range(x.shape[axis]))


def broadcast_arrays(*args: Any) -> list[Any]:
    arrays = [asarray(a) for a in args]
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: Any = None,
                    fill_value: Any = None) -> Any:
    """``arr`` indexed by ``indices`` along ``axis``, matching the other dimensions (which
    broadcast). Out-of-bounds indices follow ``mode`` as in ``take`` ('fill' by default)."""
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        arr, axis = ravel(arr), 0
        indices = ravel(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take_along_axis: indices must be integers, got {indices.dtype}")
    if arr.ndim != indices.ndim:
        raise ValueError(f"take_along_axis: indices of rank {indices.ndim} for an array of "
                         f"rank {arr.ndim}; they must have the same rank")
    axis = _axis(axis, arr.ndim, "take_along_axis")
    shape = tuple(builtins.max(a, i) if d != axis else i for d, (a, i) in
                  enumerate(zip(arr.shape, indices.shape, strict=True)))
    index = []
    for d in range(arr.ndim):
        if d == axis:
            index.append(broadcast_to(indices, shape))
        else:
            index.append(broadcast_to(_iota(dtypes.default_int(), shape, d), shape)
                         if arr.shape[d] != 1 else broadcast_to(
                             asarray(np.zeros((), dtypes.default_int())), shape))
    from .indexing import advanced_getitem
    return advanced_getitem(arr, tuple(index), mode="fill" if mode is None else mode,
                            fill_value=fill_value)


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


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays from 1-d sequences (for ``x[ix_(rows, cols)]``)."""
    out = []
    for k, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise ValueError(f"ix_: argument {k} has shape {a.shape}; each must be 1-d")
        out.append(reshape(a, tuple(-1 if j == k else 1 for j in range(len(args)))))
    return tuple(out)


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    """The coordinates in an array of ``shape`` of flat ``indices``; out-of-range indices
    are clamped into the array (JAX's choice; NumPy raises)."""
    idx = asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, got {idx.dtype}")
    shape = tuple(int(s) for s in shape)
    total = int(np.prod(shape, dtype=np.int64))
    idx = where(idx < 0, idx + total, idx)
    idx = where(idx < 0, 0, where(idx > total - 1, total - 1, idx))
    out = []
    for s in reversed(shape):
        out.append(idx % s)
        idx = idx // s
    return tuple(reversed(out))


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C") -> Any:
    """Flat indices of coordinates ``multi_index`` in an array of shape ``dims``; mode is
    'clip' or 'wrap' ('raise' works only on concrete indices)."""
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    dims = tuple(int(d) for d in dims)
    coords = [asarray(i) for i in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(coords)} coordinates for {len(dims)} dims")
    if mode == "raise":
        from ..core.tracing import Tracer
        for c, d in zip(coords, dims, strict=True):
            if isinstance(c, Tracer):
                raise TypeError("ravel_multi_index: mode='raise' needs concrete indices; use "
                                "mode='clip' or 'wrap' under jit")
            if np.any((np.asarray(c) < 0) | (np.asarray(c) >= d)):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
    elif mode == "clip":
        coords = [where(c < 0, 0, where(c > d - 1, d - 1, c)) for c, d in
                  zip(coords, dims, strict=True)]
    elif mode == "wrap":
        coords = [c % d for c, d in zip(coords, dims, strict=True)]
    else:
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'clip' or 'wrap', "
                         f"got {mode!r}")
    order_dims = list(range(len(dims)))[::-1] if order == "C" else list(range(len(dims)))
    out, stride = None, 1
    for d in order_dims:
        term = coords[d].astype(dtypes.default_int()) * stride
        out = term if out is None else out + term
        stride *= dims[d]
    return out


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Columns ``x**(N-1), ..., x, 1`` (reversed if ``increasing``)."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be 1-d, got shape {x.shape}")
    n = x.shape[0] if N is None else int(N)
    columns = []
    power = None
    for _ in range(n):
        power = (x * 0 + 1) if power is None else power * x
        columns.append(power)
    from .shape_ops import stack
    out = stack(columns, axis=1) if columns else reshape(x[:0], (x.shape[0], 0))
    return out if increasing or not columns else out[:, ::-1]


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """The element of the first choice whose condition holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: {len(condlist)} conditions for {len(choicelist)} choices")
    if not condlist:
        raise ValueError("select: condlist must not be empty")
    choices = [asarray(c) for c in choicelist]
    dtype = result_type(*choices, default)
    out = asarray(default).astype(dtype)
    for cond, choice in zip(reversed(condlist), reversed(choices), strict=True):
        cond = asarray(cond)
        if cond.dtype != np.bool_:
            raise TypeError(f"select: conditions must be boolean, got {cond.dtype}")
        out = where(cond, choice.astype(dtype), out)
    return out


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    if device is not None:
        raise ValueError("astype: device= is not supported")
    check_flag("astype", "copy", copy)             # arrays are immutable: either way
    return asarray(x).astype(dtype)


def copy(a: Any, order: Any = None) -> Any:
    """``a`` as a new array (spmdc arrays are immutable, so this is ``asarray``)."""
    if order not in (None, "K", "C"):
        raise ValueError(f"copy: order {order!r} is not supported")
    return asarray(a)


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype both promote to, by JAX's promotion table."""
    return result_type(np.empty((), np.dtype(a)), np.empty((), np.dtype(b)))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> builtins.bool:
    from_ = from_.dtype if _is_array(from_) or isinstance(from_, np.ndarray) else from_
    return builtins.bool(np.can_cast(np.dtype(from_), np.dtype(to), casting))


def iscomplexobj(x: Any) -> builtins.bool:
    kind = (x.dtype if _is_array(x) else np.asarray(x).dtype).kind
    return kind == "c"


def isrealobj(x: Any) -> builtins.bool:
    return not iscomplexobj(x)


def isscalar(element: Any) -> builtins.bool:
    """True for Python and NumPy scalars and 0-d arrays (JAX's definition)."""
    if _is_array(element):
        return element.ndim == 0
    return builtins.bool(np.isscalar(element)) or (isinstance(element, np.ndarray)
                                                    and element.ndim == 0)

