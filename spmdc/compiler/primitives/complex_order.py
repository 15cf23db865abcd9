"""Complex numbers in order: the lexicographic (real part, then imaginary part) order in
which max, min, their reductions and scans, and sort take complex operands, as JAX's do.
The lowerings and NumPy references of those primitives call the helpers here.

Note [complex order]
~~~~~~~~~~~~~~~~~~~~
JAX orders complex numbers by their real parts, and by their imaginary parts where the
real parts are equal (``jax/_src/interpreters/mlir.py``'s ``_minmax_hlo``):

    pick_x(x, y) = (imag x CMP imag y) if real x == real y else (real x CMP real y)
    max(x, y)    = x if pick_x(x, y) with CMP = '>' else y        (min: CMP = '<')

so a comparison involving NaN is false and ``y`` wins: ``max(nan, 1) == 1`` and
``max(1+1j, 1+nan j) == 1+nan j`` (recorded on JAX 0.10.2, CPU), unlike real max, which
propagates NaN. reduce_max/reduce_min fold that max/min over the reduced positions from
the identity (-inf / +inf, imaginary part 0), and cummax/cummin over each prefix. The
NumPy references fold in index order, as XLA's CPU reductions do. sort splits a complex
key into two float keys, the real part first, each in Note [sort order]'s total order
(NaNs last), as JAX's sort comparator does.

At the spmdc.numpy level, ``less``/``greater``/... compare complex operands in the same
order (JAX's ``_complex_comparison``: ``lax.lt`` itself rejects complex operands), while
``clip``, ``argmax``/``argmin``, ``quantile``/``median`` and ``lax.top_k`` reject them,
as JAX does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..stablehlo import hlo, ir

__all__ = ["lexicographic_extremum", "ComplexMaxOp", "ComplexMinOp", "numpy_extremum",
           "numpy_fold_extremum", "numpy_accumulate_extremum"]

def _compare_parts(x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    return hlo.CompareOp(x, y, hlo.ComparisonDirectionAttr.get(direction),
                         compare_type=hlo.ComparisonTypeAttr.get("FLOAT")).result


def lexicographic_extremum(x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    """max (``direction='GT'``) or min (``'LT'``) of same-shaped complex ``x`` and ``y``
    in Note [complex order]'s order."""
    rx, ry = hlo.RealOp(x).result, hlo.RealOp(y).result
    real_eq = _compare_parts(rx, ry, "EQ")
    real_cmp = _compare_parts(rx, ry, direction)
    imag_cmp = _compare_parts(hlo.ImagOp(x).result, hlo.ImagOp(y).result, direction)
    pick_x = hlo.SelectOp(real_eq, imag_cmp, real_cmp).result
    return hlo.SelectOp(pick_x, x, y).result


class ComplexMaxOp:
    """Stands where ``hlo.MaxOp`` does in a reducer body (``fill_reducer``): its
    ``result`` is the lexicographic max of two complex values."""

    def __init__(self, x: ir.Value, y: ir.Value):
        self.result = lexicographic_extremum(x, y, "GT")


class ComplexMinOp:
    """``hlo.MinOp``'s stand-in for complex values (see ComplexMaxOp)."""

    def __init__(self, x: ir.Value, y: ir.Value):
        self.result = lexicographic_extremum(x, y, "LT")


# --- NumPy references --------------------------------------------------------------------------

def numpy_extremum(kind: str, x: Any, y: Any) -> np.ndarray:
    """The reference of max/min (``kind``) on complex arrays (Note [complex order])."""
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(invalid="ignore"):
        if kind == "max":
            pick_x = np.where(x.real == y.real, x.imag > y.imag, x.real > y.real)
        else:
            pick_x = np.where(x.real == y.real, x.imag < y.imag, x.real < y.real)
    return np.where(pick_x, x, y).astype(np.result_type(x, y))


def numpy_fold_extremum(kind: str, x: np.ndarray, axes: tuple[int, ...],
                        init: complex) -> np.ndarray:
    """reduce_max/reduce_min's reference on a complex ``x``: fold over ``axes`` in index
    order from ``init``."""
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, (*kept, *axes)).reshape(*(x.shape[d] for d in kept), -1)
    acc = np.full(moved.shape[:-1], init, x.dtype)
    for k in range(moved.shape[-1]):
        acc = numpy_extremum(kind, acc, moved[..., k])
    return acc


def numpy_accumulate_extremum(kind: str, x: np.ndarray, axis: int, reverse: bool,
                              init: complex) -> np.ndarray:
    """cummax/cummin's reference on a complex ``x`` along ``axis``: each prefix (suffix
    when ``reverse``) folded in index order from ``init``, as the lowering's window is."""
    moved = np.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    out = np.empty_like(moved)
    for i in range(n):
        window = range(i, n) if reverse else range(i + 1)
        out[..., i] = numpy_fold_extremum(kind, moved[..., list(window)], (moved.ndim - 1,),
                                          init)
    return np.moveaxis(out, -1, axis)
