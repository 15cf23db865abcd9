"""Batching (vmap) as a pass over the IR.

``vmap_func(func, in_dims, axis)`` returns a Func whose inputs carry an extra batch
dimension where ``in_dims`` says (``None``: unbatched) and whose outputs carry it at
``out_dims``. Each equation with a batched operand is rewritten by its primitive's rule;
equations whose operands are all unbatched are copied unchanged.

Collectives over ``axis.name`` become positional ops over the batch dimension; those over
other names pass through (their rules see ``axis`` and decide).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import BatchingError
from ..builder import Builder
from ..ir import Atom, Func, Lit, TensorType, Var

__all__ = ["batch_rules", "BatchAxis", "vmap_func", "move_axis", "batch_to_front",
           "broadcast_batch"]


@dataclass(frozen=True)
class BatchAxis:
    size: int
    name: str | None = None


BatchRule = Callable[..., tuple[Sequence[Atom], Sequence[int | None]]]
"""``rule(b, axis, args, dims, **params) -> (outputs, out_dims)``

``args`` are the operands in the batched program, ``dims[k]`` the position of the batch
dimension in ``args[k]`` (``None``: unbatched; at least one is not None). Returns the
outputs (a list even for one result) and where their batch dimension is."""

batch_rules: dict[Any, BatchRule] = {}


def move_axis(b: Builder, x: Atom, src: int, dst: int) -> Atom:
    """Transpose ``x`` so that dimension ``src`` ends up at ``dst``."""
    if src == dst:
        return x
    perm = [d for d in range(x.type.ndim) if d != src]
    perm.insert(dst, src)
    return b.transpose(x, permutation=tuple(perm))


def broadcast_batch(b: Builder, x: Atom, size: int, dim: int = 0) -> Atom:
    """Give an unbatched ``x`` a batch dimension of ``size`` at ``dim``."""
    shape = list(x.type.shape)
    shape.insert(dim, size)
    kept = tuple(d for d in range(len(shape)) if d != dim)
    return b.broadcast_in_dim(x, shape=tuple(shape), broadcast_dimensions=kept)


def batch_to_front(b: Builder, x: Atom, dim: int | None, size: int) -> Atom:
    """``x`` with its batch dimension at 0, materialising it when ``x`` is unbatched."""
    return broadcast_batch(b, x, size, 0) if dim is None else move_axis(b, x, dim, 0)


def vmap_func(func: Func, in_dims: Sequence[int | None], axis: BatchAxis,
              out_dims: Sequence[int | None]) -> Func:
    b = Builder(func.name)
    env: dict[Var, tuple[Atom, int | None]] = {}
    for v, d in zip(func.inputs, in_dims, strict=True):
        if d is None:
            env[v] = (b.input(v.type), None)
        else:
            shape = list(v.type.shape)
            shape.insert(d, axis.size)
            env[v] = (b.input(TensorType(tuple(shape), v.type.dtype)), d)

    def read(a: Atom) -> tuple[Atom, int | None]:
        return (a, None) if isinstance(a, Lit) else env[a]

    for eqn in func.eqns:
        args, dims = zip(*map(read, eqn.inputs), strict=True) if eqn.inputs else ((), ())
        b.source = eqn.source
        if all(d is None for d in dims) and not _always_rewrite(eqn.prim, axis):
            outs = b.bind(eqn.prim, *args, **eqn.params)
            outs = outs if eqn.prim.multiple_results else (outs,)
            env.update((v, (o, None)) for v, o in zip(eqn.outputs, outs, strict=True))
            continue
        rule = batch_rules.get(eqn.prim)
        if rule is None:
            raise NotImplementedError(f"vmap: no batching rule for {eqn.prim.name!r}")
        outs, odims = rule(b, axis, list(args), list(dims), **eqn.params)
        env.update((v, (o, d)) for v, o, d in zip(eqn.outputs, outs, odims, strict=True))

    results = []
    for k, (a, want) in enumerate(zip(func.outputs, out_dims, strict=True)):
        x, d = read(a)
        if want is None:
            if d is not None:
                raise BatchingError(
                    f"vmap: out_axes is None for output {k}, but that output depends on "
                    "the mapped inputs; give it an integer out_axes", output=k,
                    batched_axis=d)
            results.append(x)
        elif d is None:
            results.append(broadcast_batch(b, _materialise(b, x), axis.size, want))
        else:
            results.append(move_axis(b, x, d, want))
    return b.build(results)


def _materialise(b: Builder, x: Atom) -> Atom:
    # A literal output has to become a value before it can be broadcast.
    return b.convert(x, new_dtype=x.type.dtype) if isinstance(x, Lit) else x


# Primitives that must see the batch axis even when no operand is batched: axis_index
# over the vmapped name has no operands, yet its result varies along the batch.
always_rewrite: set[Any] = set()


def _always_rewrite(prim: Any, axis: BatchAxis) -> bool:
    return prim in always_rewrite and axis.name is not None
