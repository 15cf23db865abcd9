"""Batching rules of the collectives (vmap with ``axis_name``).

Every rule sees the vmapped axis ``axis`` (``BatchAxis(size, name)``) and splits the
collective's ``axes`` into the vmapped name and the rest:

- the vmapped name is not among them: the collective runs per batch element, so it is
  re-bound with the batch dimension moved out of the way;
- only the vmapped name: a positional op over the batch dimension (psum -> reduce_sum,
  all_gather -> the batch itself, axis_index -> iota, ppermute -> reordered slices ...);
- both (``psum(x, ('i', 'j'))`` with 'j' vmapped inside a pmap over 'i'): psum, pmax,
  pmin, all_gather and axis_index combine the positional op with the collective over the
  remaining names. ppermute, psum_scatter and all_to_all over such a mix are first
  written with all_gather, psum and axis_index (``_expanded``), and that program is
  batched instead.

The rules are registered under the declarations in collectives.py. Since collectives are
in ``always_rewrite``, a rule may be called with no batched operand at all.
"""
from __future__ import annotations

import math

import numpy as np

from ..builder import Builder, lit
from ..ir import TensorType
from ..passes.vmap import batch_to_front, move_axis, vmap_func

__all__ = ["psum_batch", "extremum_batch", "all_gather_batch", "psum_scatter_batch",
           "ppermute_batch", "all_to_all_batch", "axis_index_batch"]

I32 = np.dtype(np.int32)


def _split(axis, axes, axis_sizes=None):
    """(is the vmapped name among ``axes``, the remaining names, their sizes)."""
    if axis.name not in axes:
        return False, axes, axis_sizes
    keep = [k for k, a in enumerate(axes) if a != axis.name]
    sizes = None if axis_sizes is None else tuple(axis_sizes[k] for k in keep)
    return True, tuple(axes[k] for k in keep), sizes


def _note(note, groups=None):
    """The optional params passed on: a transpose's note, a collective's groups."""
    out = {} if note is None else {"note": note}
    if groups is not None:
        out["groups"] = groups
    return out


def _split_ungrouped(axis, axes, axis_sizes=None, groups=None):
    """``_split``; a collective over the vmapped name has no groups (spmdc.lax writes a
    grouped one over a vmapped name with ungrouped ones: Note [grouped collectives])."""
    out = _split(axis, axes, axis_sizes)
    if out[0] and groups is not None:
        raise AssertionError(f"a grouped collective over the vmapped axis {axis.name!r}")
    return out


def psum_batch(b, axis, args, dims, *, axes, note=None, groups=None):
    x, d = args[0], dims[0]
    mine, rest, _ = _split_ungrouped(axis, axes, groups=groups)
    if not mine:
        return [b.psum(x, axes=axes, **_note(note, groups))], [d]
    # The sum over the batch is the same for every batch element: an unbatched result.
    x = b.mul(x, lit(axis.size, x.type.dtype)) if d is None else b.reduce_sum(x, axes=(d,))
    return [b.psum(x, axes=rest, **_note(note)) if rest else x], [None]


def extremum_batch(reducer: str):
    def rule(b, axis, args, dims, *, axes, note=None, groups=None):
        prim = "pmax" if reducer == "reduce_max" else "pmin"
        x, d = args[0], dims[0]
        mine, rest, _ = _split_ungrouped(axis, axes, groups=groups)
        if not mine:
            return [getattr(b, prim)(x, axes=axes, **_note(note, groups))], [d]
        if d is not None:
            x = getattr(b, reducer)(x, axes=(d,))
        return [getattr(b, prim)(x, axes=rest, **_note(note)) if rest else x], [None]
    return rule


def _order_like_axes(b, g, axes, axis, rest, rest_sizes):
    """``g`` has leading dims (index over ``rest``, index over ``axis``); return it with one
    leading dim indexed like ``axes`` (the first name major)."""
    shape = g.type.shape
    tail = shape[2:]
    g = b.reshape(g, new_sizes=(*rest_sizes, axis.size, *tail))
    have = [*rest, axis.name]                  # the order of the leading dims now
    perm = tuple(have.index(a) for a in axes)
    if perm != tuple(range(len(axes))):
        g = b.transpose(g, permutation=(*perm, *range(len(axes), len(axes) + len(tail))))
    return b.reshape(g, new_sizes=(math.prod(rest_sizes) * axis.size, *tail))


def all_gather_batch(b, axis, args, dims, *, axes, axis_sizes, dimension, tiled, note=None,
                     groups=None):
    x, d = args[0], dims[0]
    mine, rest, rest_sizes = _split_ungrouped(axis, axes, axis_sizes, groups)
    if not mine:
        if d is None:
            return [b.all_gather(x, axes=axes, axis_sizes=axis_sizes, dimension=dimension,
                                 tiled=tiled, **_note(note, groups))], [None]
        x = move_axis(b, x, d, 0)
        return [b.all_gather(x, axes=axes, axis_sizes=axis_sizes, dimension=dimension + 1,
                             tiled=tiled, **_note(note, groups))], [0]
    x = batch_to_front(b, x, d, axis.size)                      # (n_vmapped, *shape)
    if rest:
        x = b.all_gather(x, axes=rest, axis_sizes=rest_sizes, dimension=0, tiled=False,
                         **_note(note))                          # (n_rest, n_vmapped, ...)
    else:
        x = b.reshape(x, new_sizes=(1, *x.type.shape))
    whole = _order_like_axes(b, x, axes, axis, rest, rest_sizes or ())   # (n, *shape)
    whole = move_axis(b, whole, 0, dimension)
    if tiled:    # merge the gathered dim into the one after it
        shape = whole.type.shape
        whole = b.reshape(whole, new_sizes=(*shape[:dimension],
                                            shape[dimension] * shape[dimension + 1],
                                            *shape[dimension + 2:]))
    return [whole], [None]                    # the same on every batch element


def axis_index_batch(b, axis, args, dims, *, axes, axis_sizes):
    mine, rest, _ = _split(axis, axes, axis_sizes)
    if not mine:
        return [b.axis_index(axes=axes, axis_sizes=axis_sizes)], [None]
    stride, index = 1, None
    for name, size in reversed(list(zip(axes, axis_sizes, strict=True))):
        coord = (b.iota(dtype=I32, shape=(axis.size,), dimension=0) if name == axis.name
                 else b.axis_index(axes=(name,), axis_sizes=(size,)))
        if stride != 1:
            coord = b.mul(coord, lit(stride, I32))
        index = coord if index is None else b.add(coord, index)
        stride *= size
    return [index], [0]             # the vmapped coordinate makes it a vector


# --- ppermute, psum_scatter, all_to_all --------------------------------------------------------

def _via_expansion(b, axis, args, dims, expand, **params):
    """Batch the collective written as ``expand`` (all_gather/psum/axis_index) instead."""
    x, d = args[0], dims[0]
    t = x.type if d is None else TensorType(x.type.shape[:d] + x.type.shape[d + 1:],
                                            x.type.dtype)
    inner = Builder("expanded")
    out = expand(inner, inner.input(t), **params)
    func = inner.build([out])
    batched = vmap_func(func, [d], axis, [0])
    return b.inline(batched, [x]), [0]


def ppermute_batch(b, axis, args, dims, *, axes, axis_sizes, perm, note=None):
    x, d = args[0], dims[0]
    mine, rest, _ = _split(axis, axes)
    if not mine:
        return [b.ppermute(x, axes=axes, axis_sizes=axis_sizes, perm=perm,
                           **_note(note))], [d]
    if rest:
        return _via_expansion(b, axis, args, dims, _ppermute_expanded, axes=axes,
                              axis_sizes=axis_sizes, perm=perm)
    x = batch_to_front(b, x, d, axis.size)
    sources = {dst: src for src, dst in perm}
    shape = x.type.shape
    pieces = []
    for dst in range(axis.size):
        if dst in sources:
            src = sources[dst]
            pieces.append(b.slice(x, start_indices=(src,) + (0,) * (len(shape) - 1),
                                  limit_indices=(src + 1, *shape[1:]), strides=None))
        else:                        # nobody sends here: zeros
            pieces.append(b.broadcast_in_dim(lit(0, x.type.dtype), shape=(1, *shape[1:]),
                                             broadcast_dimensions=()))
    return [b.concatenate(*pieces, dimension=0)], [0]


def psum_scatter_batch(b, axis, args, dims, *, axes, axis_sizes, scatter_dimension, tiled,
                       note=None, groups=None):
    x, d = args[0], dims[0]
    mine, rest, _ = _split_ungrouped(axis, axes, groups=groups)
    if not mine:
        if d is None:
            return [b.psum_scatter(x, axes=axes, axis_sizes=axis_sizes, tiled=tiled,
                                   scatter_dimension=scatter_dimension,
                                   **_note(note, groups))], [None]
        x = move_axis(b, x, d, 0)
        return [b.psum_scatter(x, axes=axes, axis_sizes=axis_sizes, tiled=tiled,
                               scatter_dimension=scatter_dimension + 1,
                               **_note(note, groups))], [0]
    if rest:
        return _via_expansion(b, axis, args, dims, _psum_scatter_expanded, axes=axes,
                              axis_sizes=axis_sizes, scatter_dimension=scatter_dimension,
                              tiled=tiled)
    total = b.mul(x, lit(axis.size, x.type.dtype)) if d is None else \
        b.reduce_sum(x, axes=(d,))
    sd = scatter_dimension
    if tiled:            # member j's chunk: split the dimension into (members, chunk)
        shape = total.type.shape
        total = b.reshape(total, new_sizes=(*shape[:sd], axis.size, shape[sd] // axis.size,
                                            *shape[sd + 1:]))
    return [total], [sd]


def all_to_all_batch(b, axis, args, dims, *, axes, axis_sizes, split_axis, concat_axis, tiled,
                     note=None, groups=None):
    x, d = args[0], dims[0]
    mine, rest, _ = _split_ungrouped(axis, axes, groups=groups)
    params = dict(axes=axes, axis_sizes=axis_sizes, split_axis=split_axis,
                  concat_axis=concat_axis, tiled=tiled)
    if not mine:
        if d is None:
            return [b.all_to_all(x, **params, **_note(note, groups))], [None]
        x = move_axis(b, x, d, 0)
        params.update(split_axis=split_axis + 1, concat_axis=concat_axis + 1)
        return [b.all_to_all(x, **params, **_note(note, groups))], [0]
    if rest:
        return _via_expansion(b, axis, args, dims, _all_to_all_expanded, **params)
    x = batch_to_front(b, x, d, axis.size)                 # (n, *shape)
    n, shape = axis.size, x.type.shape[1:]
    if tiled:                 # split the split axis into (members, chunk), as untiled
        c = shape[split_axis] // n
        x = b.reshape(x, new_sizes=(n, *shape[:split_axis], n, c, *shape[split_axis + 1:]))
    # Member j's result, piece k along concat_axis, is member k's piece j along
    # split_axis: the split axis becomes the batch and the batch takes concat_axis.
    others = [1 + i for i in range(x.type.ndim - 1) if i != split_axis]
    others.insert(concat_axis, 0)
    y = b.transpose(x, permutation=(1 + split_axis, *others))
    if tiled:                 # merge (members, chunk) along concat_axis
        ys = y.type.shape
        y = b.reshape(y, new_sizes=(n, *ys[1:1 + concat_axis],
                                    ys[1 + concat_axis] * ys[2 + concat_axis],
                                    *ys[3 + concat_axis:]))
    return [y], [0]


# --- expansions over all_gather, psum and axis_index -----------------------------------------

def _index_of(b, axes, axis_sizes):
    return b.axis_index(axes=axes, axis_sizes=axis_sizes)


def _ppermute_expanded(b, x, *, axes, axis_sizes, perm):
    everyone = b.all_gather(x, axes=axes, axis_sizes=axis_sizes, dimension=0, tiled=False)
    me = _index_of(b, axes, axis_sizes)
    source = lit(-1, I32)
    for src, dst in perm:
        source = b.select(b.eq(me, lit(dst, I32)), lit(src, I32), source)
    zero = lit(0, I32)
    start = b.max(source, zero)
    piece = b.dynamic_slice(everyone, start, *([zero] * x.type.ndim),
                            slice_sizes=(1, *x.type.shape))
    piece = b.reshape(piece, new_sizes=x.type.shape)
    zeros = b.broadcast_in_dim(lit(0, x.type.dtype), shape=x.type.shape,
                               broadcast_dimensions=())
    return b.select(b.ge(source, zero), piece, zeros)


def _psum_scatter_expanded(b, x, *, axes, axis_sizes, scatter_dimension, tiled):
    total = b.psum(x, axes=axes)
    n, shape = math.prod(axis_sizes), x.type.shape
    chunk = shape[scatter_dimension] // n if tiled else 1
    starts = [lit(0, I32)] * x.type.ndim
    starts[scatter_dimension] = b.mul(_index_of(b, axes, axis_sizes), lit(chunk, I32))
    sizes = list(shape)
    sizes[scatter_dimension] = chunk
    out = b.dynamic_slice(total, *starts, slice_sizes=tuple(sizes))
    if not tiled:
        del sizes[scatter_dimension]
        out = b.reshape(out, new_sizes=tuple(sizes))
    return out


def _all_to_all_expanded(b, x, *, axes, axis_sizes, split_axis, concat_axis, tiled):
    n, shape = math.prod(axis_sizes), x.type.shape
    if tiled:
        c = shape[split_axis] // n
        x = b.reshape(x, new_sizes=(*shape[:split_axis], n, c, *shape[split_axis + 1:]))
    everyone = b.all_gather(x, axes=axes, axis_sizes=axis_sizes, dimension=0, tiled=False)
    zero = lit(0, I32)
    starts = [zero] * everyone.type.ndim
    starts[1 + split_axis] = _index_of(b, axes, axis_sizes)
    sizes = list(everyone.type.shape)
    sizes[1 + split_axis] = 1
    mine = b.dynamic_slice(everyone, *starts, slice_sizes=tuple(sizes))
    del sizes[1 + split_axis]
    mine = b.reshape(mine, new_sizes=tuple(sizes))       # (members, *shape without split)
    out = move_axis(b, mine, 0, concat_axis)
    if tiled:
        s = out.type.shape
        out = b.reshape(out, new_sizes=(*s[:concat_axis], s[concat_axis] * s[concat_axis + 1],
                                        *s[concat_axis + 2:]))
    return out
