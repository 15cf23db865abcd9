"""Statistics: average, ptp, cov, corrcoef, histograms (histogram, histogram_bin_edges,
histogram2d, histogramdd) and order statistics (quantile, percentile, median and their
nan forms), composed from reductions, sorting and searching.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import where as _where
from .array_creation import linspace
from .comparisons import where
from .core import _no_out, asarray, broadcast_to, check_flag, result_type
from .index_tricks import ix_, ravel_multi_index
from .reductions import any as jnp_any
from .reductions import max as jnp_max
from .reductions import mean
from .reductions import min as jnp_min
from .reductions import sum as jnp_sum
from .searching import bincount, searchsorted
from .shape_ops import _axes, atleast_2d, concatenate, moveaxis, ravel, reshape, stack
from .sorting import sort
from .ufuncs import _floats, isnan, sqrt


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """Weighted mean along ``axis``; with ``returned``, also the sum of the weights."""
    a = asarray(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        count = a.size if axis is None else int(np.prod([a.shape[i] for i in
                                                         _axes(axis, a.ndim, "average")]))
        return avg, asarray(np.full(avg.shape, count, avg.dtype))
    w = asarray(weights)
    a, w = _floats(a, w)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise ValueError(f"average: weights of shape {w.shape} differ from the array's "
                             f"{a.shape}; 1-d weights need an axis")
        (ax,) = _axes(axis, a.ndim, "average")
        if w.shape[0] != a.shape[ax]:
            raise ValueError(f"average: {w.shape[0]} weights for an axis of size {a.shape[ax]}")
        view = [1] * a.ndim
        view[ax] = w.shape[0]
        w = reshape(w, tuple(view))
    scale = jnp_sum(broadcast_to(w, a.shape), axis, keepdims=keepdims)
    avg = jnp_sum(a * w, axis, keepdims=keepdims) / scale
    return (avg, scale) if returned else avg


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """max - min along ``axis``."""
    _no_out("ptp", out)
    return jnp_max(a, axis, keepdims=keepdims) - jnp_min(a, axis, keepdims=keepdims)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None) -> Any:
    """The covariance matrix of the variables in the rows of ``m`` (columns if not
    ``rowvar``). Weights are not supported (an error)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported")
    x = atleast_2d(asarray(m))
    if x.ndim > 2:
        raise ValueError(f"cov: m has more than 2 dimensions ({x.shape})")
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = atleast_2d(asarray(y))
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = concatenate([x, yy], axis=0)
    dtype = result_type(x)
    dtype = dtypes.default_float() if dtype.kind in "biu" else dtype
    x = x.astype(dtype)
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    n = x.shape[1]
    x = x - mean(x, axis=1, keepdims=True)
    xt = x.T.conj() if dtype.kind == "c" else x.T
    c = (x @ xt) / max(n - ddof, 0)
    return c[0, 0] if c.shape == (1, 1) else c


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """Pearson correlation coefficients (cov normalised by the standard deviations)."""
    from .array_creation import diag
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = diag(c)
    stddev = sqrt(d.real if d.dtype.kind == "c" else d)
    c = c / stddev[:, None] / stddev[None, :]
    if c.dtype.kind != "c":
        one = np.ones((), c.dtype)
        c = where(c > 1, one, where(c < -1, -one, c))
    return c


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


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None
                        ) -> Any:
    """``bins + 1`` equal-width edges over ``range`` (the data's range if None); an explicit
    array of edges is returned as it is. ``weights`` (as NumPy's, for data-driven bin
    estimators that spmdc does not offer) must match ``a``'s shape and change nothing."""
    if weights is not None and np.shape(weights) != np.shape(a):
        raise ValueError(f"histogram_bin_edges: weights of shape {np.shape(weights)} do not "
                         f"match a's shape {np.shape(a)}")
    if not isinstance(bins, (int, np.integer)):
        return asarray(bins)
    a = ravel(asarray(a))
    dtype = a.dtype if a.dtype.kind in "fc" else dtypes.default_float()
    if range is None:
        lo, hi = a.min().astype(dtype), a.max().astype(dtype)
    else:
        lo, hi = asarray(range[0]).astype(dtype), asarray(range[1]).astype(dtype)
    same = lo == hi
    lo, hi = where(same, lo - 0.5, lo), where(same, hi + 0.5, hi)
    return linspace(lo, hi, int(bins) + 1, dtype=dtype)


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,
              density: Any = None) -> tuple[Any, Any]:
    """Counts (or summed ``weights``) of ``a`` in each bin, and the bin edges; the last
    bin includes its right edge, values outside the edges are not counted. The counts are
    in the float type of ``a`` (and ``weights``) promoted, as JAX's."""
    a = asarray(a)
    if weights is not None and np.shape(weights) != a.shape:
        raise ValueError(f"histogram: weights of shape {np.shape(weights)} for data of "
                         f"shape {a.shape}; they must have the same shape")
    dtype = a.dtype if weights is None else result_type(a, weights)
    dtype = dtypes.default_float() if np.dtype(dtype).kind in "biu" else dtype
    a = ravel(a).astype(dtype)
    weights = broadcast_to(np.ones((), dtype), a.shape) if weights is None else \
        ravel(asarray(weights)).astype(dtype)
    edges = histogram_bin_edges(a, bins, range)
    nbins = edges.shape[0] - 1
    index = searchsorted(edges, a, "right") - 1
    index = where(a == edges[-1], nbins - 1, index)
    index = where((index < 0) | (index >= nbins), nbins, index)   # dropped by bincount
    counts = bincount(index, weights, length=nbins)
    if density:
        widths = edges[1:] - edges[:-1]
        counts = counts / (jnp_sum(counts) * widths)
    return counts, edges


_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False) -> Any:
    """The ``q``-th quantiles (q in [0, 1]) along ``axis``; NaN if the slice holds a NaN.
    The result has q's shape in front."""
    _no_overwrite("quantile", overwrite_input)
    return _quantile("quantile", a, q, axis, out, method, keepdims, squash_nans=False)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False) -> Any:
    """quantile over the elements that are not NaN (NaN where a slice has none)."""
    _no_overwrite("nanquantile", overwrite_input)
    return _quantile("nanquantile", a, q, axis, out, method, keepdims, squash_nans=True)


def _no_overwrite(op: str, overwrite_input: Any) -> None:
    check_flag(op, "overwrite_input", overwrite_input)
    if overwrite_input:
        raise ValueError(f"{op}: overwrite_input=True is not supported; spmdc arrays are "
                         "immutable")


def _quantile(op: str, a: Any, q: Any, axis: Any, out: Any, method: str, keepdims: bool, *,
              squash_nans: bool) -> Any:
    if out is not None:
        raise ValueError(f"{op}: out= is not supported; spmdc arrays are immutable")
    if method not in _METHODS:
        raise ValueError(f"{op}: method must be one of {_METHODS}, got {method!r}")
    a, q = asarray(a), asarray(q)
    if q.ndim > 1:
        raise ValueError(f"{op}: q must be a scalar or 1-d, got shape {q.shape}")
    dtype = result_type(a, q)
    dtype = dtypes.default_float() if dtype.kind in "biu" else dtype
    if dtype.kind == "c":                       # JAX's words; see Note [complex order]
        raise ValueError(f"{op} does not support complex input, as the operation is poorly "
                         "defined.")
    a, q = a.astype(dtype), q.astype(dtype)
    axes = tuple(range(a.ndim)) if axis is None else _axes(axis, a.ndim, op)
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim)))
    flat = reshape(moved, tuple(a.shape[d] for d in kept) + (-1,))
    n = flat.shape[-1]
    if n == 0:
        raise ValueError(f"{op}: cannot take a quantile of an empty slice")
    ordered = sort(flat, axis=-1)                      # NaNs last
    kept_shape = ordered.shape[:-1]
    qs = reshape(q, (-1,))
    int_type = dtypes.default_int()
    if squash_nans:       # each slice's quantile among its non-NaN elements
        count = jnp_sum(~isnan(flat), axis=-1, dtype=int_type)
    else:
        count = asarray(np.full(kept_shape, n, int_type))
    last = where(count > 0, count - 1, 0)
    last_f = reshape(last.astype(dtype), kept_shape + (1,))
    pos = last_f * qs                                  # kept_shape + (len(qs),)
    low = pos.astype(int_type)                         # floor: pos >= 0
    low = where(low > reshape(last, kept_shape + (1,)), reshape(last, kept_shape + (1,)), low)
    high = where(low + 1 > reshape(last, kept_shape + (1,)), low, low + 1)
    frac = pos - low.astype(dtype)
    from .editing import take_along_axis
    lo_v, hi_v = take_along_axis(ordered, low, -1), take_along_axis(ordered, high, -1)
    if method == "linear":
        result = lo_v * (1 - frac) + hi_v * frac
    elif method == "lower":
        result = lo_v
    elif method == "higher":
        result = where(frac > 0, hi_v, lo_v)
    elif method == "midpoint":
        result = where(frac > 0, (lo_v + hi_v) * 0.5, lo_v)
    else:                                              # nearest: ties to the even index
        result = where((frac > 0.5) | ((frac == 0.5) & (low % 2 == 1)), hi_v, lo_v)
    if squash_nans:
        undefined = reshape(count == 0, kept_shape + (1,))
    else:
        undefined = reshape(jnp_any(isnan(flat), axis=-1), kept_shape + (1,))
    result = where(undefined, np.asarray(np.nan, dtype), result)
    result = reshape(moveaxis(result, -1, 0), q.shape + kept_shape)
    if keepdims:
        shape = tuple(1 if d in axes else s for d, s in enumerate(a.shape))
        result = reshape(result, q.shape + shape)
    return result


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False) -> Any:
    """quantile with ``q`` in percent."""
    return quantile(a, asarray(q) / 100, axis, out, overwrite_input, method, keepdims)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    return quantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False) -> Any:
    """nanquantile with ``q`` in percent."""
    return nanquantile(a, asarray(q) / 100, axis, out, overwrite_input, method, keepdims)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    return nanquantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)
