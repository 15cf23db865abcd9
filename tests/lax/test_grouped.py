"""axis_index_groups (Note [axis index groups] in spmdc/lax/grouped.py): every grouped
collective under pmap, vmap(axis_name) and shard_map against a NumPy reference per group,
one group spanning the axis against the ungrouped collective, grad, and the checks."""
from __future__ import annotations

import numpy as np
import pytest
from mesh_programs import F32, MESH, one_eqn, run_on_mesh

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


@pytest.mark.devices(8)
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


@pytest.mark.devices(8)
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


# --- over device axes: the primitive with groups, lowered to replica_groups --------------------

@pytest.mark.devices(8)
def test_over_devices_the_groups_are_the_replica_groups():
    x = _x()
    for op in ("psum", "pmax", "all_gather", "psum_scatter", "all_to_all"):
        text = spmdc.pmap(lambda v: OPS[op](v, axis_index_groups=GROUPS), "i").lower(x)
        text = text.as_text()
        assert "replica_groups = dense<[[0, 2], [1, 3], [4, 7], [5, 6]]>" in text, op
        assert text.count("replica_groups") == 1, op     # no all_gather of the whole axis
    mesh = spmdc.make_mesh((8,), ("i",))
    sm = spmdc.shard_map(lambda v: lax.psum(v, "i", axis_index_groups=GROUPS), mesh=mesh,
                         in_specs=P("i"), out_specs=P("i"))
    text = spmdc.jit(sm).lower(x).as_text()
    assert "replica_groups = dense<[[0, 2], [1, 3], [4, 7], [5, 6]]>" in text
    assert "use_global_device_ids" in text


# On the 2 x 4 mesh of compiler/primitives/test_collectives.py; groups along 'j' or ('i', 'j').
GROUPED_CASES = {
    "psum_j": lambda b, x: b.psum(x, axes=("j",), groups=((0, 2), (1, 3))),
    "pmax_j": lambda b, x: b.pmax(x, axes=("j",), groups=((3, 1), (2, 0))),
    "pmin_ij": lambda b, x: b.pmin(x, axes=("i", "j"), groups=((0, 5), (1, 4), (2, 7),
                                                               (3, 6))),
    "all_gather_j": lambda b, x: b.all_gather(x, axes=("j",), axis_sizes=(4,), dimension=1,
                                              tiled=False, groups=((0, 3), (2, 1))),
    "all_gather_ij_tiled": lambda b, x: b.all_gather(
        x, axes=("i", "j"), axis_sizes=(2, 4), dimension=0, tiled=True,
        groups=((0, 1, 2, 3), (7, 6, 5, 4))),
    "psum_scatter_j": lambda b, x: b.psum_scatter(x, axes=("j",), axis_sizes=(4,),
                                                  scatter_dimension=0, tiled=True,
                                                  groups=((0, 1), (2, 3))),
    "all_to_all_j": lambda b, x: b.all_to_all(x, axes=("j",), axis_sizes=(4,), split_axis=0,
                                              concat_axis=1, tiled=True,
                                              groups=((1, 2), (3, 0))),
}


@pytest.mark.devices(8)
@pytest.mark.parametrize("name", sorted(GROUPED_CASES))
def test_grouped_primitives_compiled_match_the_reference_interpreter(name):
    from spmdc.compiler.interpreter_spmd import evaluate_spmd
    from spmdc.compiler.ir import TensorType, check
    from spmdc.compiler.passes.vmap import BatchAxis, vmap_func
    func = one_eqn(GROUPED_CASES[name], TensorType((8, 3), F32))
    x = np.random.default_rng(0).normal(size=(2, 4, 8, 3)).astype(F32)
    want = evaluate_spmd(func, MESH, x)
    for got, w in zip(run_on_mesh(func, MESH, x), want, strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5)
    if name == "psum_j":            # the reference itself, by hand
        sums = {g: x[:, list(g)].sum(1) for g in ((0, 2), (1, 3))}
        by_hand = np.stack([sums[(0, 2) if j in (0, 2) else (1, 3)]
                            for j in range(4)], axis=1)
        np.testing.assert_allclose(want[0], by_hand, rtol=1e-6)
    if name.endswith("_j"):         # vmap the other name: the groups stay on 'j'
        batched = check(vmap_func(func, [0], BatchAxis(2, "i"), [0] * len(func.outputs)))
        assert "groups=" in str(batched)
        got = evaluate_spmd(batched, (("j", 4),), np.moveaxis(x, 0, 1))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.moveaxis(g, 1, 0), w, rtol=1e-5, atol=1e-5)


@pytest.mark.devices(8)
@pytest.mark.parametrize("op", ["psum", "pmean", "pmax", "all_gather", "psum_scatter",
                                "all_to_all"])
def test_grad_over_devices_matches_the_written_out_form(op):
    # pmap differentiates the per-device program with the grouped primitive (transposes
    # within the groups); vmap(axis_name=) differentiates the all_gather-based form.
    x = _x(2)
    w = np.random.default_rng(3).normal(size=_want(op, x).shape[1:]).astype(np.float32)

    def loss(v):
        return (OPS[op](v, axis_index_groups=GROUPS) * w * lax.axis_index("i")).sum()
    by_pmap = spmdc.pmap(spmdc.grad(loss), "i")(x)
    by_vmap = spmdc.vmap(spmdc.grad(loss), axis_name="i")(x)
    np.testing.assert_allclose(by_pmap, by_vmap, rtol=1e-5, atol=1e-5)
    assert np.abs(by_pmap).max() > 0
