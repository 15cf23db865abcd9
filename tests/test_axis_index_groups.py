"""axis_index_groups (Note [axis index groups] in spmdc/lax/grouped.py): every grouped
collective under pmap, vmap(axis_name) and shard_map against a NumPy reference per group,
one group spanning the axis against the ungrouped collective, grad, and the checks."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc import lax
from spmdc.sharding import PartitionSpec as P

GROUPS = [[0, 2], [1, 3], [4, 7], [5, 6]]


def _x(seed=0):
    return np.random.default_rng(seed).normal(size=(8, 4, 2)).astype(np.float32)


def _group_of(i):
    return next(g for g in GROUPS if i in g)


def _want(op, x):
    out = []
    for i in range(8):
        g = _group_of(i)
        rows = x[g]
        if op == "psum":
            out.append(rows.sum(0))
        elif op == "pmean":
            out.append(rows.mean(0))
        elif op == "pmax":
            out.append(rows.max(0))
        elif op == "pmin":
            out.append(rows.min(0))
        elif op == "all_gather":
            out.append(rows)
        elif op == "all_gather_tiled":
            out.append(np.concatenate(list(rows), axis=0))
        elif op == "psum_scatter":
            out.append(np.split(rows.sum(0), 2, axis=0)[g.index(i)])
        elif op == "all_to_all":
            out.append(np.concatenate([np.split(x[m], 2, axis=0)[g.index(i)] for m in g], 0))
    return np.stack(out)


OPS = {
    "psum": lambda v, **g: lax.psum(v, "i", **g),
    "pmean": lambda v, **g: lax.pmean(v, "i", **g),
    "pmax": lambda v, **g: lax.pmax(v, "i", **g),
    "pmin": lambda v, **g: lax.pmin(v, "i", **g),
    "all_gather": lambda v, **g: lax.all_gather(v, "i", **g),
    "all_gather_tiled": lambda v, **g: lax.all_gather(v, "i", tiled=True, **g),
    "psum_scatter": lambda v, **g: lax.psum_scatter(v, "i", tiled=True, **g),
    "all_to_all": lambda v, **g: lax.all_to_all(v, "i", 0, 0, tiled=True, **g),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_grouped_collectives_under_pmap_vmap_and_shard_map(op):
    x = _x()
    want = _want(op, x)
    f = OPS[op]
    by_pmap = spmdc.pmap(lambda v: f(v, axis_index_groups=GROUPS), "i")(x)
    np.testing.assert_allclose(by_pmap, want, rtol=1e-6, atol=1e-6)
    by_vmap = spmdc.vmap(lambda v: f(v, axis_index_groups=GROUPS), axis_name="i")(x)
    np.testing.assert_allclose(by_vmap, want, rtol=1e-6, atol=1e-6)
    mesh = spmdc.make_mesh((8,), ("i",))
    sm = spmdc.shard_map(lambda v: f(v[0], axis_index_groups=GROUPS)[None], mesh=mesh,
                         in_specs=P("i"), out_specs=P("i"))
    np.testing.assert_allclose(sm(x), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(spmdc.jit(sm)(x), want, rtol=1e-6, atol=1e-6)
    # one group spanning the axis is the ungrouped collective
    y = np.random.default_rng(1).normal(size=(8, 8, 2)).astype(np.float32)
    whole = spmdc.pmap(lambda v: f(v, axis_index_groups=[list(range(8))]), "i")(y)
    np.testing.assert_allclose(whole, spmdc.pmap(f, "i")(y), rtol=1e-6, atol=1e-6)


def test_grad_of_a_grouped_psum_sums_the_cotangents_within_the_group():
    x = _x()
    w = np.arange(8.0, dtype=np.float32)

    def f(v):          # per-device: d/dv of sum_j w_i psum_g(v)_ij -> psum_g(w) ... by vmap
        return (lax.psum(v, "i", axis_index_groups=GROUPS) * lax.axis_index("i")).sum()
    g = spmdc.grad(lambda x: spmdc.vmap(f, axis_name="i")(x).sum())(x)
    want = np.stack([np.full((4, 2), sum(w[j] for j in _group_of(i))) for i in range(8)])
    np.testing.assert_allclose(g, want)


def test_bad_groups_are_clear_errors():
    x = _x()
    for groups, fragment in [([[0, 1], [2, 3]], "exactly once"),
                             ([[0, 1, 2], [3, 4], [5, 6, 7]], "same size"),
                             ([[0, 0], [1, 2], [3, 4], [5, 6, 7]], "exactly once"),
                             (3, "list of lists")]:
        with pytest.raises((ValueError, TypeError), match=fragment):
            spmdc.pmap(lambda v: lax.psum(v, "i", axis_index_groups=groups), "i")(x)
    np.testing.assert_allclose(spmdc.pmap(lambda v: lax.psum(v, "i"), "i")(x),
                               np.broadcast_to(x.sum(0), x.shape), rtol=1e-5)
