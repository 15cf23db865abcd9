"""``jax.interpreters.batching``: JAX's tables of batching rules and ``not_mapped``.

``fancy_primitive_batchers[p] = rule`` with ``rule(axis_data, args, dims, **params) ->
(outputs, out_dims)`` is JAX's table; ``primitive_batchers`` (``rule(args, dims,
**params)``) and ``axis_primitive_batchers`` (``rule(axis_size, axis_name, trace_type,
args, dims, **params)``) are its older forms, stored as written and installed through it.
Each rule becomes the rule of spmdc's vmap pass for its primitive (passes/vmap.py
``batch_rules``): Note [JAX's rule tables] in spmdc/interpreters/tables.py.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..compiler.builder import Builder
from ..compiler.ir import Atom, TensorType
from ..compiler.passes.vmap import BatchAxis, batch_rules
from ..core.tracing import Trace, Tracer, emitting_into, to_atom, value_of
from .tables import RuleTable, run_rule

__all__ = ["not_mapped", "AxisData", "fancy_primitive_batchers", "primitive_batchers",
           "axis_primitive_batchers", "BatchTracer", "BatchTrace"]

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
