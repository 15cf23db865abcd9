"""More of jax.numpy: ``array_equiv``, ``block``, ``histogram2d``, ``histogramdd``, the
array API's ``vecdot``, ``matvec``, ``vecmat`` and ``isdtype``, ``einsum_path``, and the
NumPy type names JAX re-exports (``character``, ``flexible``, ``object_``,
``ComplexWarning``)."""
from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import where as _where
from .comparisons import where
from .complex_ops import conj
from .core import asarray, result_type
from .einsum import _broadcast_ellipsis, _parse, contraction_path, einsum, interleaved
from .reductions import all as jnp_all
from .reductions import sum as jnp_sum
from .searching import bincount, histogram_bin_edges, searchsorted
from .shape_extra import ix_, ravel_multi_index
from .shape_ops import concatenate, moveaxis, reshape, stack

__all__ = ["array_equiv", "block", "histogram2d", "histogramdd", "vecdot", "matvec",
           "vecmat", "isdtype", "einsum_path", "character", "flexible", "object_",
           "ComplexWarning", "array_repr", "array_str", "save", "savez", "load", "frombuffer",
           "fromstring", "from_dlpack", "get_printoptions", "printoptions",
           "set_printoptions"]

character, flexible, object_ = np.character, np.flexible, np.object_
ComplexWarning = np.exceptions.ComplexWarning


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether the arrays broadcast together and are equal everywhere (False if they do
    not broadcast)."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return asarray(False)
    return jnp_all(a1 == a2)


def _block(xs: Any) -> tuple[Any, int]:
    if isinstance(xs, tuple):
        raise ValueError(f"block: tuples are not allowed, use lists, got {xs!r}{_where()}")
    if isinstance(xs, list):
        if not xs:
            raise ValueError(f"block: empty lists are not allowed{_where()}")
        parts, depths = zip(*[_block(x) for x in xs], strict=True)
        if any(d != depths[0] for d in depths[1:]):
            raise ValueError(f"block: mismatched list depths{_where()}")
        rank = builtins.max(depths[0], builtins.max(p.ndim for p in parts))
        parts = [reshape(p, (1,) * (rank - p.ndim) + p.shape) for p in parts]
        return concatenate(parts, axis=-depths[0]), depths[0] + 1
    return asarray(xs), 1


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks (the innermost lists along the
    last axis)."""
    out, _ = _block(arrays)
    return out


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, weights: Any = None,
                density: bool | None = None) -> tuple[Any, list[Any]]:
    """The D-dimensional histogram of ``sample`` (N points, shape (N, D)) and the bin
    edges per dimension; ``bins`` an int, or per dimension an int or edges."""
    sample = asarray(sample)
    if weights is not None:
        weights = asarray(weights)
        if weights.shape != sample.shape[:1]:
            raise ValueError(f"histogramdd: there must be one weight per sample, got "
                             f"{weights.shape} for {sample.shape[0]} samples{_where()}")
    dtype = result_type(sample, *([] if weights is None else [weights]))
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    sample = sample.astype(dtype)
    weights = None if weights is None else weights.astype(dtype)
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must have shape (N, D), got {sample.shape}"
                         f"{_where()}")
    n, d = sample.shape
    if range is not None and (len(range) != d or any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"histogramdd: for sample of shape {(n, d)}, range must hold {d} "
                         f"pairs or Nones, got {range!r}{_where()}")
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = d * [bins]
    else:
        if len(per_dim) != d:
            raise ValueError(f"histogramdd: bins must give one entry per dimension ({d})"
                             f"{_where()}")
    indices, edges = [], []
    for i in builtins.range(d):
        e = histogram_bin_edges(sample[:, i], per_dim[i], None if range is None else range[i],
                                weights)
        idx = searchsorted(e, sample[:, i], side="right")
        indices.append(where(sample[:, i] == e[-1], idx - 1, idx))
        edges.append(e)
    nbins = tuple(e.shape[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(indices), nbins, mode="clip")
    hist = reshape(bincount(flat, weights, length=math.prod(nbins)), nbins)
    hist = hist[(slice(1, -1),) * d]
    if density:
        hist = hist.astype(sample.dtype)
        hist = hist / jnp_sum(hist)
        for norm in ix_(*[e[1:] - e[:-1] for e in edges]):
            hist = hist / norm
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, weights: Any = None,
                density: bool | None = None) -> tuple[Any, Any, Any]:
    """The 2-d histogram of points ``(x, y)``, and the x and y bin edges."""
    x, y = asarray(x), asarray(y)
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):
        edges = asarray(bins)
        bins = [edges, edges]
    hist, edges = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return hist, edges[0], edges[1]


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """The dot products of vectors along ``axis`` (the first conjugated), broadcast over
    the other dimensions."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: the axes have different sizes, {x1.shape[axis]} and "
                         f"{x2.shape[axis]}{_where()}")
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    return einsum("...i,...i->...", conj(x1), x2, precision=precision,
                  preferred_element_type=preferred_element_type)


def matvec(x1: Any, x2: Any, /) -> Any:
    """Matrix-vector products, broadcast over leading dimensions: (..., m, n) @ (..., n)."""
    return einsum("...mn,...n->...m", asarray(x1), asarray(x2))


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Vector-matrix products (the vector conjugated): (..., m) @ (..., m, n)."""
    return einsum("...m,...mn->...n", conj(asarray(x1)), asarray(x2))


_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: dtypes.is_float(d),
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iuc" or dtypes.is_float(d),
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """The array API's isdtype: whether ``dtype`` is of ``kind`` (a name such as "integral"
    or "real floating", a dtype, or a tuple of those)."""
    d = np.dtype(dtypes.canonicalize(dtype)) if not isinstance(dtype, np.dtype) else dtype
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}; use one of "
                                 f"{sorted(_KINDS)}, a dtype, or a tuple{_where()}")
            if _KINDS[k](d):
                return True
        elif np.dtype(k) == d:
            return True
    return False


def einsum_path(subscripts: Any, *operands: Any, optimize: Any = "auto"
                ) -> tuple[list[tuple[int, ...]], str]:
    """The contraction order ``einsum`` would use (pairs of positions in the shrinking
    list of operands) and NumPy's description of it."""
    subscripts, operands = interleaved(subscripts, operands)
    ops = [asarray(x) for x in operands]
    specs, out = _parse(subscripts, [x.shape for x in ops])
    ops, specs = _broadcast_ellipsis(ops, specs)
    shapes = [x.shape for x in ops]
    if optimize is False:
        path: list[tuple[int, ...]] = [(0, 1)] * (len(specs) - 1)
    else:
        path = contraction_path(specs, out, shapes, optimize) if len(specs) > 1 else []
    views = [np.broadcast_to(np.empty((), np.float32), np.shape(x)) for x in operands]
    _, text = np.einsum_path(subscripts, *views, optimize=["einsum_path", *path])
    return path, text



# --- host I/O and printing: NumPy's, as JAX re-exports them -----------------------------------

array_repr, array_str, save, savez = np.array_repr, np.array_str, np.save, np.savez
get_printoptions, printoptions, set_printoptions = (np.get_printoptions, np.printoptions,
                                                    np.set_printoptions)


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``np.load``, its array (bfloat16 restored from its 2-byte void form) as an Array;
    other results (an ``.npz`` archive, pickled objects) as NumPy gives them."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == "V2":
            out = out.view(dtypes.canonicalize("bfloat16"))
        try:
            return asarray(out)
        except (TypeError, ValueError):           # a dtype spmdc has no array of
            return out
    return out


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
