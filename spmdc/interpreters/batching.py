"""``jax.interpreters.batching``: JAX's tables of batching rules and ``not_mapped``.

``fancy_primitive_batchers[p] = rule`` with ``rule(axis_data, args, dims, **params) ->
(outputs, out_dims)`` is JAX's table; ``primitive_batchers`` (``rule(args, dims,
**params)``) and ``axis_primitive_batchers`` (``rule(axis_size, axis_name, trace_type,
args, dims, **params)``) are its older forms, stored as written and installed through it.
JAX's rule makers fill the table for common kinds of primitive (``defvectorized``,
``defbroadcasting``, ``defreducer``), and its rules move batch dimensions with
``bdim_at_front`` and ``broadcast``. Each rule becomes the rule of spmdc's vmap pass
for its primitive (passes/vmap.py ``batch_rules``): Note [JAX's rule tables] in
spmdc/interpreters/tables.py.
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import lax
from ..compiler.builder import Builder
from ..compiler.ir import Atom, TensorType
from ..compiler.passes.vmap import BatchAxis, batch_rules
from ..core.tracing import Trace, Tracer, emitting_into, to_atom, value_of
from .tables import RuleTable, run_rule

__all__ = ["not_mapped", "AxisData", "fancy_primitive_batchers", "primitive_batchers",
           "axis_primitive_batchers", "BatchTracer", "BatchTrace", "defvectorized",
           "defbroadcasting", "defreducer", "bdim_at_front", "broadcast", "moveaxis"]

not_mapped = None
"""The batch dimension of a value that is not batched."""

# One Tracer class serves every transformation in spmdc (see ad.JVPTracer).
BatchTracer = Tracer
BatchTrace = Trace


@dataclass(frozen=True)
class AxisData:
    """The axis a batching rule maps over: its name (None when unnamed) and size."""
    name: Any
    size: int
    spmd_name: Any = None
    explicit_mesh_axis: Any = None


def _install(prim: Any, rule: Callable[..., Any]) -> None:
    batch_rules[prim] = _adapter(prim, rule)


def _uninstall(prim: Any) -> None:
    batch_rules.pop(prim, None)


fancy_primitive_batchers = RuleTable("fancy_primitive_batchers", _install, _uninstall)


def _install_plain(prim: Any, rule: Callable[..., Any]) -> None:
    def fancy(axis_data, args, dims, /, **params):
        return rule(args, dims, **params)
    fancy_primitive_batchers[prim] = fancy


def _install_axis(prim: Any, rule: Callable[..., Any]) -> None:
    def fancy(axis_data, args, dims, /, **params):
        return rule(axis_data.size, axis_data.name, None, args, dims, **params)
    fancy_primitive_batchers[prim] = fancy


def _uninstall_older(prim: Any) -> None:
    fancy_primitive_batchers.pop(prim, None)


primitive_batchers = RuleTable("primitive_batchers", _install_plain, _uninstall_older)
axis_primitive_batchers = RuleTable("axis_primitive_batchers", _install_axis,
                                    _uninstall_older)


# --- JAX's rule makers and the helpers its rules use ------------------------------------------

def defvectorized(prim: Any) -> None:
    """``prim`` maps elementwise over a leading dimension shared by its operands: the
    batched operands (all batched at one dimension) go to ``prim`` as they are."""
    fancy_primitive_batchers[prim] = functools.partial(_vectorized_batcher, prim)


def _vectorized_batcher(prim: Any, axis_data: AxisData, args: Sequence[Any],
                        dims: Sequence[int | None], /, **params: Any) -> tuple[Any, Any]:
    if prim.multiple_results:
        raise ValueError(f"defvectorized: primitive '{prim}' has multiple results; write its "
                         "batching rule into batching.fancy_primitive_batchers")
    batched = {d for d in dims if d is not None}
    if len(batched) > 1:
        raise ValueError(f"the vectorized batching rule of primitive '{prim}' got operands "
                         f"batched at different dimensions {list(dims)}; a vectorized "
                         "primitive's operands are batched at one dimension (use "
                         "defbroadcasting for a broadcasting primitive)")
    return prim.bind(*args, **params), next(iter(batched), None)


def defbroadcasting(prim: Any) -> None:
    """``prim`` broadcasts its operands against each other (rank-polymorphic, as
    ``add``): unbatched operands get a size-1 dimension where the batch dimension goes."""
    fancy_primitive_batchers[prim] = functools.partial(_broadcast_batcher, prim)


def _broadcast_batcher(prim: Any, axis_data: AxisData, args: Sequence[Any],
                       dims: Sequence[int | None], /, **params: Any) -> tuple[Any, Any]:
    if all(d is None for d in dims):
        out = prim.bind(*args, **params)
        return (out, [None] * len(out)) if prim.multiple_results else (out, None)
    shape, dim = next((np.shape(x), d) for x, d in zip(args, dims, strict=True)
                      if d is not None)
    if all(np.shape(x) == shape and d == dim
           for x, d in zip(args, dims, strict=True) if np.ndim(x)):
        out = prim.bind(*args, **params)       # agreeing batch dimensions and scalars
        return (out, [dim] * len(out)) if prim.multiple_results else (out, dim)
    # batch dimensions to the front; an unbatched operand gets a size-1 one there, and
    # the primitive's own broadcasting does the rest
    args = [bdim_at_front(x, d, 1) if np.ndim(x) else x
            for x, d in zip(args, dims, strict=True)]
    rank = max(np.ndim(x) for x in args)
    args = [x if d is None or np.ndim(x) == rank else
            lax.expand_dims(x, tuple(range(np.ndim(x), rank)))
            for x, d in zip(args, dims, strict=True)]
    out = prim.bind(*args, **params)
    return (out, [0] * len(out)) if prim.multiple_results else (out, 0)


def defreducer(prim: Any) -> None:
    """``prim`` reduces its one operand over the dimensions of its ``axes`` parameter
    (and, if it has one, its ``input_shape`` parameter is the operand's shape)."""
    fancy_primitive_batchers[prim] = functools.partial(_reducer_batcher, prim)


def _reducer_batcher(prim: Any, axis_data: AxisData, args: Sequence[Any],
                     dims: Sequence[int | None], /, *, axes: Any = None,
                     **params: Any) -> tuple[Any, Any]:
    if axes is None:
        raise TypeError(f"the reducer batching rule of primitive '{prim}' needs an 'axes' "
                        "parameter naming the reduced dimensions")
    if all(d is None for d in dims):
        return prim.bind(*args, axes=axes, **params), None
    if len(args) != 1:
        raise ValueError(f"the reducer batching rule of primitive '{prim}' takes one "
                         f"operand, got {len(args)}")
    operand, = args
    bdim, = dims
    axes = tuple(int(a) + (a >= bdim) for a in axes)
    kept = [k for k in range(np.ndim(operand)) if k not in axes]
    if "input_shape" in params:
        params = dict(params, input_shape=tuple(np.shape(operand)))
    return prim.bind(operand, axes=axes, **params), kept.index(bdim)


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """``x`` with dimension ``src`` moved to ``dst``."""
    if src == dst:
        return x
    rank = np.ndim(x)
    src, dst = src % rank, dst % rank
    perm = [k for k in range(rank) if k != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


def broadcast(x: Any, sz: int, axis: int, mesh_axis: Any = None) -> Any:
    """``x`` with a new dimension of size ``sz`` at ``axis``, the values repeated along
    it. ``mesh_axis`` is the explicit mesh axis the new dimension is sharded over; as in
    JAX, it is dropped for a value whose type carries no mesh, which every spmdc type is
    (See Note [the sharding of an abstract value] in spmdc/core/abstract.py)."""
    shape = list(np.shape(x))
    shape.insert(axis, sz)
    dims = tuple(k for k in range(len(shape)) if k != axis)
    return lax.broadcast_in_dim(x, shape, dims)


def bdim_at_front(x: Any, bdim: int | None, size: int, mesh_axis: Any = None) -> Any:
    """``x`` with its batch dimension ``bdim`` first; an unbatched ``x`` (``bdim`` None)
    is broadcast along a new first dimension of ``size``."""
    if bdim is None:
        return broadcast(x, size, 0, mesh_axis)
    return moveaxis(x, bdim, 0)


def _unbatched(t: TensorType, dim: int | None) -> TensorType:
    if dim is None:
        return t
    return TensorType(t.shape[:dim] + t.shape[dim + 1:], t.dtype)


def _batched(t: TensorType, dim: int | None, size: int) -> TensorType:
    if dim is None:
        return t
    return TensorType(t.shape[:dim] + (size,) + t.shape[dim:], t.dtype)


def _adapter(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    what = f"the batching rule of primitive '{prim}'"

    def batch(b: Builder, axis: BatchAxis, args: list[Atom], dims: list[int | None], /,
              **params: Any) -> tuple[list[Atom], list[int | None]]:
        expected = prim.out_types(*[_unbatched(a.type, d)
                                    for a, d in zip(args, dims, strict=True)], **params)
        with emitting_into(b, what) as trace:
            vals = [value_of(trace, a) for a in args]
            with run_rule(what):
                out, out_dims = rule(AxisData(axis.name, axis.size), vals, list(dims),
                                     **params)
            outs, odims = _pairs(prim, out, out_dims, len(expected), what)
            atoms, result_dims = [], []
            for k, (o, d, t) in enumerate(zip(outs, odims, expected, strict=True)):
                atom = to_atom(trace, o)
                if d is not None:
                    d = _axis(d, atom.type.ndim, what, k)
                want = _batched(t, d, axis.size)
                if atom.type != want:
                    raise TypeError(
                        f"{what} returned a value of type {atom.type} with batch "
                        f"dimension {d} for output {k}, whose unbatched type is {t}: "
                        f"expected {want}")
                atoms.append(atom)
                result_dims.append(d)
        return atoms, result_dims
    return batch


def _pairs(prim: Any, out: Any, dims: Any, n: int, what: str
           ) -> tuple[Sequence[Any], Sequence[Any]]:
    if not prim.multiple_results:
        return [out], [dims]
    if not isinstance(out, (list, tuple)) or not isinstance(dims, (list, tuple)):
        raise TypeError(f"{what} returned ({type(out).__name__}, {type(dims).__name__}); "
                        f"primitive '{prim}' has multiple results, so the rule returns a "
                        "list of outputs and a list of their batch dimensions")
    if len(out) != n or len(dims) != n:
        raise ValueError(f"{what} returned {len(out)} outputs and {len(dims)} batch "
                         f"dimensions for a primitive with {n} outputs")
    return out, dims


def _axis(d: Any, ndim: int, what: str, k: int) -> int:
    try:
        index = operator.index(d)
    except TypeError:
        index = None
    if index is None or not -ndim <= index < ndim:
        raise ValueError(f"{what} returned batch dimension {d!r} for output {k} of rank "
                         f"{ndim}; it must be an int in [{-ndim}, {ndim}) or not_mapped")
    return index % ndim
