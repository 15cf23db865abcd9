"""spmdc.lax's reductions: reduce_sum/max/min/prod, reduce_and/or/xor, argmax/argmin, the
cumulative operations (cumsum, cumprod, cummax, cummin), and the general ``reduce`` (a
known monoid binds its reduction primitive; any other computation is a reduce_window over
the whole reduced extent).
"""
from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.primitives.core import Primitive
from ..compiler.primitives.cumulative import cummax_p, cummin_p, cumprod_p, cumsum_p
from ..compiler.primitives.reductions import (
    argmax_p,
    argmin_p,
    reduce_and_p,
    reduce_max_p,
    reduce_min_p,
    reduce_or_p,
    reduce_prod_p,
    reduce_sum_p,
)
from ..core import dtypes
from ..core.operands import (
    asarray,
    full,
)
from ..core.tracing import bind
from ..runtime.config_states import allow_f16_reductions
from . import elementwise
from .elementwise import bitwise_and, bitwise_or, shift_right_logical
from .shape import _axis, _reshape

__all__ = ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "cumsum", "cumprod", "cummax",
           "cummin", "argmax", "argmin", "reduce_and", "reduce_or", "reduce_xor", "reduce"]


def _reducer(prim: Primitive) -> Any:
    def fn(x: Any, axes: Sequence[int]) -> Any:
        x = asarray(x)
        if prim is reduce_sum_p:
            _check_f16_sum(x, tuple(axes))
        return bind(prim, x, axes=tuple(axes), weak=x.weak)
    fn.__name__ = prim.name
    return fn


def _check_f16_sum(x: Any, axes: tuple[int, ...]) -> None:
    """JAX's jax_allow_f16_reductions=False: no reduce_sum of float16 or bfloat16 over a
    dimension longer than 1."""
    if (x.dtype in (np.float16, dtypes.bfloat16) and not allow_f16_reductions.value
            and not all(x.shape[a] == 1 for a in axes)):
        name = "f16" if x.dtype == np.float16 else "bf16"
        shape = ",".join(map(str, x.shape))
        raise ValueError(f"reduce_sum on operand {name}[{shape}] is not allowed when "
                         "jax_allow_f16_reductions=False.")


reduce_sum, reduce_max, reduce_min, reduce_prod = map(
    _reducer, (reduce_sum_p, reduce_max_p, reduce_min_p, reduce_prod_p))


def _cumulative(prim: Primitive) -> Any:
    name = prim.name

    def fn(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        x = asarray(operand)
        return bind(prim, x, axis=_axis(name, axis, x.ndim), reverse=bool(reverse),
                    weak=x.weak)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Cumulative ``{name[3:]}`` along ``axis`` (from the end if ``reverse``)."
    return fn


cumsum, cumprod, cummax, cummin = map(_cumulative, (cumsum_p, cumprod_p, cummax_p, cummin_p))


def _arg(prim: Primitive) -> Any:
    name = prim.name

    def fn(operand: Any, axis: int, index_dtype: Any) -> Any:
        x = asarray(operand)
        return bind(prim, x, axis=_axis(name, axis, x.ndim),
                    index_dtype=dtypes.canonicalize(index_dtype))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Index of the {name[3:]}imum along ``axis``, in ``index_dtype``."
    return fn


argmax, argmin = _arg(argmax_p), _arg(argmin_p)


def _bool_reducer(prim: Primitive) -> Any:
    name = prim.name

    def fn(operand: Any, axes: Sequence[int]) -> Any:
        x = asarray(operand)
        if x.dtype != np.bool_:
            raise TypeError(f"lax.{name} supports bool operands only here, got {x.dtype}")
        return bind(prim, x, axes=tuple(_axis(name, a, x.ndim) for a in axes),
                    weak=x.weak)
    fn.__name__ = fn.__qualname__ = name
    return fn


reduce_and, reduce_or = _bool_reducer(reduce_and_p), _bool_reducer(reduce_or_p)


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """The bitwise exclusive or over ``axes`` (booleans: parity)."""
    from ..core.tracing import where
    x = asarray(operand)
    axes = tuple(operator.index(a) % builtins.max(x.ndim, 1) for a in axes)
    if x.dtype == np.bool_:
        return (_fold(reduce_sum_p, x.astype(np.int32), axes) % 2).astype(np.bool_)
    if not dtypes.is_int(x.dtype):
        raise TypeError(f"lax.reduce_xor: takes integer or boolean operands, got {x.dtype}"
                        f"{where()}")
    out = full(tuple(s for d, s in enumerate(x.shape) if d not in axes), 0, x.dtype)
    for b in range(x.dtype.itemsize * 8):   # each bit of the result: the parity of its ones
        ones = _fold(reduce_sum_p, (shift_right_logical(x, np.asarray(b, x.dtype))
                                    & np.asarray(1, x.dtype)).astype(np.int32), axes)
        out = out | ((ones % 2).astype(x.dtype) << np.asarray(b, x.dtype))
    return out


def _fold(prim: Primitive, x: Any, dims: tuple[int, ...]) -> Any:
    """``x`` reduced over ``dims`` by ``prim`` and returned in its dtype, as jnp's
    reductions compute it: sums and products of booleans and narrow integers accumulate
    in the default int, of float16 and bfloat16 in float32."""
    wide = x.dtype
    if prim in (reduce_sum_p, reduce_prod_p):
        default = dtypes.default_int()
        if x.dtype in (np.float16, dtypes.bfloat16):
            wide = np.dtype(np.float32)
        elif x.dtype.kind in "bi" and x.dtype.itemsize < default.itemsize:
            wide = default
        elif x.dtype.kind == "u" and x.dtype.itemsize < default.itemsize:
            wide = np.dtype(f"uint{8 * default.itemsize}")
    wide_x = x.astype(wide) if wide != x.dtype else x
    out = bind(prim, wide_x, axes=dims, weak=wide_x.weak)
    return out.astype(x.dtype) if out.dtype != x.dtype else out


def reduce(operands: Any, init_values: Any, computation: Any, dimensions: Sequence[int]
           ) -> Any:
    """``operands`` (an array or a pytree of arrays of one shape) folded over
    ``dimensions`` with ``computation(accumulators, elements)`` from ``init_values``
    (scalars, the same pytree). ``lax.add``/``mul``/``max``/``min`` (and ``bitwise_and``/
    ``bitwise_or`` on booleans) from a concrete scalar are the differentiable reductions;
    any other computation runs as a general reduction (XLA's, through reduce_window over
    the whole extent of ``dimensions``)."""
    from ..compiler.primitives.reductions import identity_of
    from ..core.tracing import Tracer, where
    from ..core.tree import tree_flatten, tree_map, tree_unflatten
    from .windowed_reductions import reduce_window
    leaves, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"lax.reduce: operands and init_values must have the same tree "
                         f"structure, got {tree} and {init_tree}{where()}")
    if not leaves:
        raise ValueError(f"lax.reduce: needs at least one operand{where()}")
    leaves = [asarray(x) for x in leaves]
    ndim = leaves[0].ndim
    dims = tuple(sorted(operator.index(d) % max(ndim, 1) for d in dimensions))
    if len(set(dims)) != len(dims):
        raise ValueError(f"lax.reduce: dimensions {tuple(dimensions)} repeat a dimension"
                         f"{where()}")
    shape = leaves[0].shape
    if any(shape[d] == 0 for d in dims):         # nothing to fold: the initial values
        kept = tuple(s for d, s in enumerate(shape) if d not in dims)
        return tree_unflatten(tree, [full(kept, i, x.dtype)
                                     for i, x in zip(inits, leaves, strict=True)])
    if len(leaves) == 1:
        x, init = leaves[0], inits[0]
        kinds = {id(elementwise.add): ("sum", reduce_sum_p),
                 id(elementwise.mul): ("prod", reduce_prod_p),
                 id(elementwise.max): ("max", reduce_max_p),
                 id(elementwise.min): ("min", reduce_min_p)}
        if x.dtype == np.bool_:
            kinds.update({id(bitwise_and): ("and", reduce_and_p),
                          id(bitwise_or): ("or", reduce_or_p)})
        found = kinds.get(id(computation))
        if found is not None and not isinstance(init, Tracer):
            kind, prim = found
            value = np.asarray(init)
            if value.shape == ():
                out = _fold(prim, x, dims)
                if value != identity_of(kind, x.dtype):
                    # another initial value joins the fold once (the operation is
                    # associative and commutative), so that grad works as in JAX
                    out = computation(full(out.shape, value, x.dtype), out)
                return tree_unflatten(tree, [out])
    window = tuple(shape[d] if d in dims else 1 for d in range(ndim))
    out = reduce_window(tree_unflatten(tree, leaves), init_values, computation, window)
    kept = tuple(s for d, s in enumerate(shape) if d not in dims)
    return tree_map(lambda o: _reshape(o, kept), out)
