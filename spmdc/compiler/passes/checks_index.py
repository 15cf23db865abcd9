"""The out-of-bounds checks of checkify's ``index_checks`` (Note [checks as error
values] in passes/checks.py): for ``dynamic_slice``, ``dynamic_update_slice``, ``gather``
and ``scatter``, whether a start index lies outside ``[0, dim - slice size]``, and the
payload of JAX's message: the first such index, its operand axis and that axis's size."""
from __future__ import annotations

import numpy as np

from ..builder import Builder, lit
from ..ir import Atom, Eqn
from ..primitives.core import registry

__all__ = ["INDEXING_PRIMITIVES", "checkable", "index_check"]

_dynamic_slice_p = registry["dynamic_slice"]
_dynamic_update_slice_p = registry["dynamic_update_slice"]
_gather_p, _scatter_p = registry["gather"], registry["scatter"]
_or_p = registry["or"]
INDEXING_PRIMITIVES = frozenset({_dynamic_slice_p, _dynamic_update_slice_p, _gather_p,
                                 _scatter_p})
_I32 = np.dtype(np.int32)


def _vector(b: Builder, values: list[int], dtype: np.dtype) -> Atom:
    parts = [b.broadcast_in_dim(lit(int(v), dtype), shape=(1,), broadcast_dimensions=())
             for v in values]
    return parts[0] if len(parts) == 1 else b.concatenate(*parts, dimension=0)


def _pick(b: Builder, vec: Atom, pos: Atom) -> Atom:
    """``vec[pos]`` as an int32 scalar."""
    one = b.reshape(b.dynamic_slice(vec, pos, slice_sizes=(1,)), new_sizes=())
    return one if one.type.dtype == _I32 else b.convert(one, new_dtype=_I32)


def _bounds(eqn: Eqn) -> tuple[list[int], list[int]] | None:
    """The operand axes the index vector's components address, and each component's
    largest in-bounds value; None when the equation has no index to check."""
    p, shape = eqn.params, eqn.inputs[0].type.shape
    if eqn.prim is _dynamic_slice_p:
        axes = list(range(len(shape)))
        sizes = list(p["slice_sizes"])
    elif eqn.prim is _dynamic_update_slice_p:
        axes = list(range(len(shape)))
        sizes = list(eqn.inputs[1].type.shape)
    elif eqn.prim is _gather_p:
        axes = list(p["start_index_map"])
        sizes = [p["slice_sizes"][a] for a in axes]
    else:
        updates = eqn.inputs[2].type.shape
        window = iter(p["update_window_dims"])
        full = [1 if d in p["inserted_window_dims"] or d in p.get("operand_batching_dims", ())
                else updates[next(window)] for d in range(len(shape))]
        axes = list(p["scatter_dims_to_operand_dims"])
        sizes = [full[a] for a in axes]
    if not axes:
        return None
    return axes, [shape[a] - s for a, s in zip(axes, sizes, strict=True)]


def checkable(eqn: Eqn) -> bool:
    """Whether ``eqn`` (one of ``INDEXING_PRIMITIVES``) has an index to check."""
    if _bounds(eqn) is None:
        return False
    return eqn.prim not in (_gather_p, _scatter_p) or 0 not in eqn.inputs[1].type.shape


def _index_vectors(b: Builder, eqn: Eqn, ins: list[Atom]) -> Atom:
    """The start indices as one array whose last axis is the index vector."""
    if eqn.prim is _dynamic_slice_p:
        starts = ins[1:]
    elif eqn.prim is _dynamic_update_slice_p:
        starts = ins[2:]
    else:
        return ins[1]
    parts = [b.broadcast_in_dim(s, shape=(1,), broadcast_dimensions=()) for s in starts]
    return parts[0] if len(parts) == 1 else b.concatenate(*parts, dimension=0)


def index_check(b: Builder, eqn: Eqn, ins: list[Atom]) -> tuple[Atom, list[Atom]]:
    """Whether ``eqn`` (a ``checkable`` one, on the operands ``ins``) indexes out of
    bounds, and the payload (int32[3]: index, axis, axis size)."""
    bounds = _bounds(eqn)
    assert bounds is not None
    axes, upper = bounds
    idx = _index_vectors(b, eqn, ins)
    t = idx.type
    dt = t.dtype
    limit = b.broadcast_in_dim(_vector(b, upper, dt), shape=t.shape,
                               broadcast_dimensions=(t.ndim - 1,))
    mask = b.bind(_or_p, b.lt(idx, lit(0, dt)), b.gt(idx, limit))
    n = int(np.prod(t.shape))
    flat_mask = b.reshape(mask, new_sizes=(n,))
    failed = b.reduce_or(flat_mask, axes=(0,))
    pos = b.argmax(flat_mask, axis=0, index_dtype=_I32)        # the first out of bounds
    index = _pick(b, b.reshape(idx, new_sizes=(n,)), pos)
    component = b.rem(pos, lit(len(axes), _I32))
    shape = eqn.inputs[0].type.shape
    axis = _pick(b, _vector(b, axes, _I32), component)
    size = _pick(b, _vector(b, [shape[a] for a in axes], _I32), component)
    parts = [b.broadcast_in_dim(x, shape=(1,), broadcast_dimensions=())
             for x in (index, axis, size)]
    return failed, [b.concatenate(*parts, dimension=0)]
