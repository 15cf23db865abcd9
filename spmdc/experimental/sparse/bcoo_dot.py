"""Products of BCOO arrays: ``bcoo_dot_general`` (sparse with dense on either side, and
sparse with sparse), ``bcoo_dot_general_sampled``, and the elementwise
``bcoo_multiply_dense`` / ``bcoo_multiply_sparse``.

Note [sparse contraction by gather and scatter]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
For an unbatched sparse ``lhs`` and a dense ``rhs``, each stored element contributes
``data[i] * rhs[coordinates of i on the contracting dims]`` to the output at its
coordinates on the free sparse dims: one gather of ``rhs`` (its contracting dims moved to
the front) at the contracting columns of ``indices``, an outer product with the dense block
of ``data``, and one scatter-add into the output (or a sum over the stored elements when
no sparse dimension is free). Batch dimensions of the sparse operand are mapped with vmap
(Note [batch dimensions by vmap]): a batch dimension of ``dot_general`` maps both
operands, a free one the sparse operand alone, a contracted one maps both and sums. A
product of two sparse operands pairs every stored element of one with every stored element
of the other, keeping the values of the pairs whose contracting
coordinates agree, and merges the duplicates into JAX's ``nse`` (at most the size of the
output's sparse part). As in JAX, contracting a dense dimension of a sparse operand, and dense
dimensions in a sparse-sparse product, are ``NotImplementedError``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.abstract import ShapeDtypeStruct
from spmdc.core.tracing import where
from spmdc.experimental.sparse.bcoo import BCOO, bcoo_extract, bcoo_sum_duplicates, in_range
from spmdc.experimental.sparse.util import broadcast_batch, split_shape
from spmdc.transforms.eval_shape import eval_shape
from spmdc.transforms.vmap import vmap

__all__ = ["bcoo_dot_general", "bcoo_dot_general_sampled", "bcoo_multiply_dense",
           "bcoo_multiply_sparse"]


def _dimension_numbers(dimension_numbers: Any) -> tuple[tuple[int, ...], ...]:
    (lc, rc), (lb, rb) = dimension_numbers
    return tuple(map(int, lc)), tuple(map(int, rc)), tuple(map(int, lb)), tuple(map(int, rb))


def bcoo_dot_general(lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: Any = None,
                     preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """``lax.dot_general`` with a BCOO operand: dense result when one operand is dense, a
    BCOO when both are sparse. See Note [sparse contraction by gather and scatter].
    ``precision`` and ``out_sharding`` are accepted as JAX's and, as in JAX, do not change
    the sparse computation."""
    del precision, out_sharding   # JAX's sparse products ignore them too
    lc, rc, lb, rb = _dimension_numbers(dimension_numbers)
    lhs_sparse, rhs_sparse = isinstance(lhs, BCOO), isinstance(rhs, BCOO)
    out_aval = eval_shape(
        lambda a, b: lax.dot_general(a, b, ((lc, rc), (lb, rb)),
                                     preferred_element_type=preferred_element_type),
        ShapeDtypeStruct(lhs.shape, lhs.dtype), ShapeDtypeStruct(rhs.shape, rhs.dtype))
    if lhs_sparse and rhs_sparse:
        return _spdot(lhs, rhs, lc, rc, lb, rb, out_aval)
    if lhs_sparse:
        return _sparse_dense(lhs, jnp.asarray(rhs), lc, rc, lb, rb, out_aval.dtype)
    if rhs_sparse:
        lhs = jnp.asarray(lhs)
        out = _sparse_dense(rhs, lhs, rc, lc, rb, lb, out_aval.dtype)
        # out is (batch, rhs free, lhs free); dot_general's order is (batch, lhs free, rhs free)
        n_b = len(lb)
        n_rhs_free = rhs.ndim - len(rc) - n_b
        n_lhs_free = lhs.ndim - len(lc) - n_b
        order = (*range(n_b), *range(n_b + n_rhs_free, n_b + n_rhs_free + n_lhs_free),
                 *range(n_b, n_b + n_rhs_free))
        return out.transpose(order)
    return lax.dot_general(lhs, rhs, ((lc, rc), (lb, rb)),
                           preferred_element_type=preferred_element_type)


def _sparse_dense(sp: BCOO, rhs: Any, lc: Sequence[int], rc: Sequence[int],
                  lb: Sequence[int], rb: Sequence[int], dtype: Any) -> Any:
    n_batch, n_sparse = sp.n_batch, sp.n_sparse
    if any(d >= n_batch for d in lb):
        raise NotImplementedError(f"bcoo_dot_general batch dimensions must be among the batch "
                                  f"dimensions in the sparse representation: got lhs_batch="
                                  f"{tuple(lb)}, n_batch={n_batch}{where()}")
    if any(d >= n_batch + n_sparse for d in lc):
        raise NotImplementedError(f"bcoo_dot_general: contracting over dense dimensions "
                                  f"(contracting {tuple(lc)}, n_batch={n_batch}, "
                                  f"n_sparse={n_sparse}){where()}")
    batch_shape, sparse_shape, dense_shape = split_shape(sp.shape, n_batch, sp.n_dense)
    data, indices = broadcast_batch(sp.data, sp.indices, batch_shape)
    contracted_batch = [(a, b) for a, b in zip(lc, rc, strict=True) if a < n_batch]
    free_batch = [d for d in range(n_batch) if d not in lb and d not in lc]
    lhs_batch_order = [*lb, *free_batch, *(a for a, _ in contracted_batch)]
    rhs_front = [*rb, *(r for _, r in contracted_batch)]
    rhs_rest = [d for d in range(rhs.ndim) if d not in rhs_front]
    data = data.transpose((*lhs_batch_order, *range(n_batch, data.ndim)))
    indices = indices.transpose((*lhs_batch_order, n_batch, n_batch + 1))
    rhs = rhs.transpose((*rhs_front, *rhs_rest))
    sparse_pairs = [(a - n_batch, rhs_rest.index(b)) for a, b in zip(lc, rc, strict=True)
                    if a >= n_batch]
    free_sparse = [d for d in range(n_sparse) if n_batch + d not in lc]
    rhs_free = [i for i in range(len(rhs_rest)) if i not in {r for _, r in sparse_pairs}]

    def kernel(data: Any, indices: Any, rhs: Any) -> Any:
        data = jnp.where(in_range(indices, sparse_shape).reshape(
            (-1,) + (1,) * len(dense_shape)), data, 0).astype(dtype)
        rhs = rhs.transpose((*(r for _, r in sparse_pairs), *rhs_free)).astype(dtype)
        nse = data.shape[0]
        if sparse_pairs:
            columns = tuple(indices[:, a] for a, _ in sparse_pairs)
            gathered = rhs.at[columns].get(mode="fill", fill_value=0)
        else:
            gathered = jnp.broadcast_to(rhs[None], (nse,) + rhs.shape)
        n_rhs_free = gathered.ndim - 1
        products = (data.reshape(data.shape + (1,) * n_rhs_free)
                    * gathered.reshape((nse,) + (1,) * len(dense_shape) + gathered.shape[1:]))
        if not free_sparse:
            return jnp.sum(products, axis=0)
        out_shape = tuple(sparse_shape[d] for d in free_sparse) + products.shape[1:]
        return jnp.zeros(out_shape, dtype).at[tuple(indices[:, d] for d in free_sparse)].add(
            products, mode="drop")

    fun = kernel
    for _ in contracted_batch:
        fun = (lambda f: lambda d, i, r: jnp.sum(vmap(f)(d, i, r), axis=0))(fun)
    for _ in free_batch:
        fun = vmap(fun, in_axes=(0, 0, None))
    for _ in lb:
        fun = vmap(fun)
    return fun(data, indices, rhs)


def _spdot(lhs: BCOO, rhs: BCOO, lc: Sequence[int], rc: Sequence[int], lb: Sequence[int],
           rb: Sequence[int], out_aval: Any) -> BCOO:
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError(f"bcoo_spdot_general with dense dimensions (n_dense="
                                  f"{lhs.n_dense} and {rhs.n_dense}){where()}")
    if (tuple(lb) != tuple(range(lhs.n_batch)) or tuple(rb) != tuple(range(rhs.n_batch))):
        raise NotImplementedError(f"bcoo_spdot_general: the batch dimensions of dot_general "
                                  f"must be the leading batch dimensions of both operands; got "
                                  f"{tuple(lb)}, {tuple(rb)} for n_batch={lhs.n_batch}, "
                                  f"{rhs.n_batch}{where()}")
    n_batch = lhs.n_batch
    if any(d < n_batch for d in (*lc, *rc)):
        raise NotImplementedError(f"bcoo_spdot_general only supports contraction of sparse "
                                  f"indices; got contracting {tuple(lc)}, {tuple(rc)}{where()}")
    batch_shape = out_aval.shape[:n_batch]
    l_data, l_indices = broadcast_batch(lhs.data, lhs.indices, batch_shape)
    r_data, r_indices = broadcast_batch(rhs.data, rhs.indices, batch_shape)
    l_shape, r_shape = lhs.shape[n_batch:], rhs.shape[n_batch:]
    pairs = [(a - n_batch, b - n_batch) for a, b in zip(lc, rc, strict=True)]
    l_free = [d for d in range(len(l_shape)) if d + n_batch not in lc]
    r_free = [d for d in range(len(r_shape)) if d + n_batch not in rc]
    out_sparse = np.asarray([l_shape[d] for d in l_free] + [r_shape[d] for d in r_free],
                            l_indices.dtype)

    def kernel(ld: Any, li: Any, rd: Any, ri: Any) -> tuple[Any, Any]:
        l_dims = np.asarray([a for a, _ in pairs], int)
        r_dims = np.asarray([b for _, b in pairs], int)
        l_valid = jnp.all(li[:, l_dims] < np.asarray(l_shape, li.dtype)[l_dims], axis=-1)
        r_valid = jnp.all(ri[:, r_dims] < np.asarray(r_shape, ri.dtype)[r_dims], axis=-1)
        match = l_valid[:, None] & r_valid[None, :]
        for a, b in pairs:
            match = match & (li[:, None, a] == ri[None, :, b])
        data = jnp.where(match, ld[:, None] * rd[None, :], 0).astype(out_aval.dtype)
        nl, nr = match.shape
        coordinates = [jnp.broadcast_to(li[:, None, d], (nl, nr)) for d in l_free]
        coordinates += [jnp.broadcast_to(ri[None, :, d], (nl, nr)) for d in r_free]
        indices = (jnp.stack(coordinates, axis=-1) if coordinates
                   else jnp.zeros((nl, nr, 0), li.dtype)).astype(li.dtype)
        return data.reshape(nl * nr), indices.reshape(nl * nr, len(out_sparse))

    fun = kernel
    for _ in range(n_batch):
        fun = vmap(fun)
    data, indices = fun(l_data, l_indices, r_data, r_indices)
    pairs_out = BCOO((data, indices), shape=out_aval.shape)
    # JAX's size: one entry per pair of entries with free coordinates (at most the size of
    # the output's sparse part), the pairs' duplicates merged
    out_nse = ((lhs.nse if l_free else 1) * (rhs.nse if r_free else 1))
    out_nse = min(out_nse, math.prod(out_aval.shape[n_batch:]))
    return bcoo_sum_duplicates(pairs_out, nse=out_nse)


def bcoo_dot_general_sampled(A: Any, B: Any, indices: Any, *,        # noqa: N803 (JAX's)
                             dimension_numbers: Any) -> Any:
    """The data of ``dot_general(A, B)`` at the sparse coordinates ``indices`` (the
    gradient of a sparse-dense product with respect to the sparse operand's data)."""
    out = lax.dot_general(jnp.asarray(A), jnp.asarray(B), dimension_numbers)
    indices = jnp.asarray(indices)
    n_batch, (nse, _) = indices.ndim - 2, indices.shape[-2:]
    n_dense = out.ndim - n_batch - indices.shape[-1]
    zeros = jnp.zeros(out.shape[:n_batch] + (nse,) + out.shape[out.ndim - n_dense:], out.dtype)
    pattern = BCOO((zeros, indices), shape=out.shape)
    return bcoo_extract(pattern, out, assume_unique=True).data


def bcoo_multiply_dense(sp_mat: BCOO, v: Any) -> Any:
    """The data of the elementwise product of ``sp_mat`` and the dense ``v`` (broadcast to
    ``sp_mat``'s shape): the product keeps ``sp_mat``'s indices."""
    v = jnp.asarray(v)
    if v.ndim == 0:
        return sp_mat.data * v
    shape = sp_mat.shape
    if jnp.broadcast_shapes(v.shape, shape) != shape:
        raise NotImplementedError(f"multiplication between sparse and dense is only "
                                  f"implemented for cases where the output shape matches the "
                                  f"sparse matrix shape. Got shape={shape}, v.shape={v.shape}"
                                  f"{where()}")
    v = jnp.broadcast_to(v, shape)
    # duplicates need no merging: the product distributes over them
    return sp_mat.data * bcoo_extract(sp_mat, v, assume_unique=True).data


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """The elementwise product of two BCOO arrays (shapes broadcast over size-1
    dimensions): the pairs of stored elements whose coordinates agree, gathered to the front
    of ``nse = lhs.nse * rhs.nse`` entries, JAX's size and order."""
    if lhs.ndim != rhs.ndim:
        raise TypeError(f"bcoo_multiply_sparse: arrays must have same number of dimensions, "
                        f"got {lhs.shape}, {rhs.shape}{where()}")
    if lhs.n_dense != rhs.n_dense:
        raise NotImplementedError(f"bcoo_multiply_sparse: arrays with differing numbers of "
                                  f"dense dimensions: {lhs.n_dense} and {rhs.n_dense}{where()}")
    out_shape = jnp.broadcast_shapes(lhs.shape, rhs.shape)
    n_batch = min(lhs.n_batch, rhs.n_batch)
    if lhs.n_batch != rhs.n_batch:
        from spmdc.experimental.sparse.layout import change_layout
        lhs, rhs = (change_layout(m, n_batch, m.n_dense) for m in (lhs, rhs))
    batch = out_shape[:n_batch]
    l_data, l_indices = broadcast_batch(lhs.data, lhs.indices, batch)
    r_data, r_indices = broadcast_batch(rhs.data, rhs.indices, batch)
    l_shape, r_shape = lhs.shape[n_batch:], rhs.shape[n_batch:]
    dims = np.asarray([i for i in range(lhs.n_sparse) if l_shape[i] != 1 and r_shape[i] != 1],
                      dtype=int)
    nse = lhs.nse * rhs.nse

    def kernel(ld: Any, li: Any, rd: Any, ri: Any) -> tuple[Any, Any]:
        match = jnp.all(li[:, None, dims] == ri[None, :, dims], axis=-1)
        i_lhs, i_rhs = jnp.nonzero(match, size=nse, fill_value=(li.shape[0], ri.shape[0]))
        data = (ld.at[i_lhs].get(mode="fill", fill_value=0)
                * rd.at[i_rhs].get(mode="fill", fill_value=0))
        indices = jnp.maximum(
            li.at[i_lhs].get(mode="fill", fill_value=max(l_shape, default=0)),
            ri.at[i_rhs].get(mode="fill", fill_value=max(r_shape, default=0)))
        return data, indices

    fun = kernel
    for _ in range(n_batch):
        fun = vmap(fun)
    data, indices = fun(l_data, l_indices, r_data, r_indices)
    return BCOO((data, indices), shape=out_shape)
