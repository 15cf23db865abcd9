"""``lax.scatter_apply``: ``func`` applied to the elements of ``operand`` that a scatter
with these indices and dimension numbers would update (once per update that reaches an
element, as XLA's scatter with ``func`` as its update computation).

Note [scatter_apply by counting]
spmdc has one scatter primitive whose combine param picks a fixed update (Note [default
gather and scatter parameters] in slicing.py); it has no scatter with a user computation.
XLA applies the computation once per update window element that lands on an operand
element, in some order, so the result is ``func`` applied k times to each element, k the
number of updates reaching it. So scatter_apply counts them, with a scatter-add of ones
of ``update_shape`` (the same indices, dimension numbers and ``mode``: clipped, dropped
and duplicate indices count as they would update), and applies ``func`` (vmapped over
the elements, so that it sees scalars as in XLA's computation) while any count is left,
keeping the new value where the count is not exhausted. The values are XLA's; unlike
JAX's, the result is differentiable (JAX's scatter_p with a jaxpr update has no rules).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.operands import asarray
from ..core.tracing import where
from ..transforms.vmap import vmap
from .control_flow import while_loop
from .elementwise import convert_element_type, lt, select
from .reductions import reduce_max
from .shape import _reshape, full
from .slicing import ScatterDimensionNumbers, scatter_add

__all__ = ["scatter_apply"]


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with ``func`` applied at the elements the scatter of ``update_shape``
    windows at ``scatter_indices`` reaches, once per update (duplicates: several times).
    See Note [scatter_apply by counting]."""
    if not callable(func):
        raise TypeError(f"lax.scatter_apply: func must be a unary function, got "
                        f"{type(func).__name__}{where()}")
    x = asarray(operand)
    ones = full(tuple(update_shape), 1, np.int32)
    counts = scatter_add(full(x.shape, 0, np.int32), scatter_indices, ones,
                         dimension_numbers, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode)
    elementwise = vmap(func)

    def apply(v: Any) -> Any:
        out = asarray(elementwise(_reshape(v, (v.size,))))
        if out.shape != (v.size,):
            raise TypeError(f"lax.scatter_apply: func must map a scalar to a scalar, got "
                            f"shape {out.shape[1:]}{where()}")
        return _reshape(convert_element_type(out, v.dtype), v.shape)

    def step(state: tuple[Any, Any]) -> tuple[Any, Any]:
        k, v = state
        return k + 1, select(lt(k, counts), apply(v), v)

    most = reduce_max(counts, tuple(range(counts.ndim))) if counts.ndim else counts
    _, out = while_loop(lambda s: lt(s[0], most), step, (np.int32(0), x))
    return out
