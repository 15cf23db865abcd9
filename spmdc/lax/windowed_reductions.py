"""lax.reduce_window (windowed reductions: pooling) and lax.reduce_precision.

``reduce_window`` with ``lax.add``, ``lax.max`` or ``lax.min`` and that monoid's identity
as the (concrete) initial value becomes one of the primitives reduce_window_{sum,max,min},
which are differentiable both ways; any other computation (a Python function over
pytrees of scalars) is traced into the sub-Func of the general ``reduce_window``
primitive, which has a JVP but, as in JAX, no VJP. See compiler/primitives/windowed.py.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.ir import TensorType
from ..compiler.primitives.conv import dilate_dim
from ..compiler.primitives.reductions import identity_of
from ..compiler.primitives.windowed import (
    reduce_precision_p,
    reduce_window_max_p,
    reduce_window_min_p,
    reduce_window_p,
    reduce_window_sum_p,
)
from ..core.operands import asarray
from ..core.tracing import Tracer, bind, current_trace, trace_function
from ..core.tree import tree_flatten, tree_unflatten
from . import elementwise as _lax
from .convolution import padding_pairs, window_ints

__all__ = ["reduce_window", "reduce_precision", "reduce_window_shape_tuple"]


def _monoid(computation: Callable[..., Any], init: Any) -> str | None:
    """'sum', 'max' or 'min' when ``computation`` is that monoid and ``init`` is its
    concrete identity (JAX's rule for using the differentiable primitives). The identity
    is the one of ``init``'s own dtype, as in JAX: ``-inf`` is max's initial value for an
    integer operand too (Equinox's max pooling), and the primitive ignores it."""
    kind = {id(_lax.add): "sum", id(_lax.max): "max", id(_lax.min): "min"}.get(id(computation))
    if kind is None or isinstance(init, Tracer):
        return None
    value = np.asarray(init)
    if value.shape != ():
        return None
    return kind if value == identity_of(kind, asarray(init).dtype) else None


_MONOID_PRIMITIVES = {"sum": reduce_window_sum_p, "max": reduce_window_max_p,
                      "min": reduce_window_min_p}
"""The windowed reduction primitive of each monoid ``_monoid`` recognises."""


def reduce_window(operand: Any, init_value: Any, computation: Callable[..., Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: str | Sequence[tuple[int, int]] = "VALID",
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduce each window of ``operand`` (an array or a pytree of arrays of one shape) with
    ``computation(accumulators, elements)`` starting from ``init_value`` (scalars, the same
    pytree). ``padding`` is 'VALID', 'SAME', 'SAME_LOWER' or (low, high) pairs; padding and
    the holes of ``base_dilation`` hold the initial value."""
    leaves, tree = tree_flatten(operand)
    inits, init_tree = tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(f"reduce_window: operands and init_values must have the same tree "
                         f"structure, got {tree} and {init_tree}")
    if not leaves:
        raise ValueError("reduce_window must have at least one operand")
    leaves = [asarray(x) for x in leaves]
    n = leaves[0].ndim
    op = "reduce_window"
    window_dimensions = window_ints(op, "window_dimensions", window_dimensions, n, "dimensions")
    window_strides = (1,) * n if window_strides is None else window_ints(
        op, "window_strides", window_strides, n, "dimensions")
    base_dilation = (1,) * n if base_dilation is None else window_ints(
        op, "base_dilation", base_dilation, n, "dimensions")
    window_dilation = (1,) * n if window_dilation is None else window_ints(
        op, "window_dilation", window_dilation, n, "dimensions")
    spans = [dilate_dim(w, d) for w, d in zip(window_dimensions, window_dilation, strict=True)]
    padding = padding_pairs(op, padding, leaves[0].shape, spans, window_strides)
    window = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                  padding=padding, base_dilation=base_dilation, window_dilation=window_dilation)
    if len(leaves) == 1:
        kind = _monoid(computation, inits[0])
        if kind is not None:
            x = leaves[0]
            return tree_unflatten(tree, [bind(_MONOID_PRIMITIVES[kind], x, weak=x.weak,
                                              **window)])
    inits = [_init(i, x) for i, x in zip(inits, leaves, strict=True)]
    if current_trace() is None:              # stage the whole call, as control flow does
        from ..transforms.jit import Jitted
        return Jitted(lambda *a: reduce_window(
            tree_unflatten(tree, list(a[:len(leaves)])),
            tree_unflatten(tree, list(a[len(leaves):])), computation,
            window_dimensions, window_strides, padding, base_dilation,
            window_dilation))(*leaves, *inits)
    func = _trace_computation(computation, tree, leaves)
    outs = bind(reduce_window_p, *leaves, *inits, computation=func, **window)
    for o, x in zip(outs, leaves, strict=True):
        o.weak = x.weak
    return tree_unflatten(tree, outs)


def _init(value: Any, operand: Any) -> Any:
    v = asarray(value)
    if v.shape != ():
        raise TypeError(f"reduce_window expected init_values to be scalars, got shape "
                        f"{v.shape}")
    if v.dtype == operand.dtype:
        return v
    # A Python scalar takes the operand's dtype when that keeps its value (JAX is stricter:
    # it takes the scalar's default dtype); -inf as an integer initial value is an error.
    converted = v.astype(operand.dtype)
    exact = isinstance(v, Tracer) or np.array_equal(
        np.asarray(v).astype(np.complex128), np.asarray(converted).astype(np.complex128),
        equal_nan=True)
    if not (v.weak and exact):
        raise TypeError("reduce_window got inconsistent dtypes for operands and init_values: "
                        f"operand {operand.dtype.name}, init_value {v.dtype.name} ({value!r}); "
                        "give the initial value the operand's dtype")
    return converted


def _trace_computation(computation: Callable[..., Any], tree: Any, leaves: list[Any]):
    scalars = [TensorType((), x.dtype) for x in leaves]
    n = len(leaves)

    def body(args: list[Any]) -> list[Any]:
        out = computation(tree_unflatten(tree, args[:n]), tree_unflatten(tree, args[n:]))
        flat, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise ValueError("reduce_window output must have the same tree structure as the "
                             f"operands: {out_tree} vs. {tree}")
        return [asarray(o).astype(x.dtype) if asarray(o).dtype != x.dtype else o
                for o, x in zip(flat, leaves, strict=True)]
    func, _, captured = trace_function(body, scalars + scalars, [False] * (2 * n),
                                       "reduce_window_computation")
    if captured:
        raise TypeError("reduce_window: the computation closes over arrays or traced values, "
                        "which XLA's reduce_window body cannot use; pass them as operands or "
                        "use Python scalars")
    return func


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round ``operand`` (floating point) to a format with ``exponent_bits`` exponent and
    ``mantissa_bits`` mantissa bits, as XLA's ReducePrecision."""
    for name, v in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        if isinstance(v, Tracer):
            raise TypeError(f"reduce_precision: {name} must be a concrete Python integer")
    x = asarray(operand)
    return bind(reduce_precision_p, x, exponent_bits=operator.index(exponent_bits),
                mantissa_bits=operator.index(mantissa_bits), weak=x.weak)


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The output shape of ``reduce_window`` with explicit padding pairs, computed as JAX
    does (a placeholder dimension such as stax's -1 batch gives 0)."""
    n = len(operand_shape)
    base_dilation = base_dilation or (1,) * n
    window_dilation = window_dilation or (1,) * n

    def dilate(d: int, k: int) -> int:
        return d if k == 1 else max(0, 1 + k * (d - 1))
    return tuple(max(0, (dilate(d, bd) + lo + hi - dilate(w, wd)) // s + 1)
                 for d, w, s, (lo, hi), bd, wd in zip(
                     operand_shape, window_dimensions, window_strides, padding, base_dilation,
                     window_dilation, strict=True))
