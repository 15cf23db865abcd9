"""shard_map: per-device programs over a mesh. Every collective on 2x4, 4x2 and 8x1
meshes against the global NumPy function and against pmap of pmap / vmap(axis_name);
shard_map under jit and grad (the global function's gradient, JAX's semantics, checked
against analytic gradients); the replication check (Note [shard_map]); errors."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.sharding import NamedSharding, PartitionSpec

pytestmark = pytest.mark.devices(8)      # its meshes span 8 devices

P = PartitionSpec
MESHES = [(2, 4), (4, 2), (8, 1)]


def _mesh(shape):
    return spmdc.make_mesh(shape, ("x", "y"))


def _a(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def _blocks(a, nx, ny):
    """a (8, 8) split into an nx x ny grid of blocks: blocks[i][j]."""
    return [np.split(r, ny, axis=1) for r in np.split(a, nx, axis=0)]


def _sm(f, mesh, i, o, **kw):
    return spmdc.shard_map(f, mesh=mesh, in_specs=i, out_specs=o, **kw)


@pytest.mark.parametrize("shape", MESHES)
def test_every_collective_against_the_global_function(shape):
    nx, ny = shape
    mesh = _mesh(shape)
    a = _a((8, 8))
    bl = _blocks(a, nx, ny)
    run = {}
    run["psum_x"] = _sm(lambda b: lax.psum(b, "x"), mesh, P("x", "y"), P(None, "y"))(a)
    np.testing.assert_allclose(run["psum_x"], np.concatenate(
        [sum(bl[i][j] for i in range(nx)) for j in range(ny)], axis=1), rtol=1e-5)
    run["pmean_xy"] = _sm(lambda b: lax.pmean(b, ("x", "y")), mesh, P("x", "y"), P())(a)
    np.testing.assert_allclose(run["pmean_xy"], np.mean([b for r in bl for b in r], 0),
                               rtol=1e-5, atol=1e-6)
    got = _sm(lambda b: lax.pmax(b, "y"), mesh, P("x", "y"), P("x"))(a)
    np.testing.assert_allclose(got, np.concatenate(
        [np.max(bl[i], axis=0) for i in range(nx)], axis=0))
    got = _sm(lambda b: lax.all_gather(b, "y", axis=1, tiled=True), mesh, P("x", "y"),
              P("x"))(a)
    np.testing.assert_array_equal(got, a)
    got = _sm(lambda b: lax.psum_scatter(b, "y", scatter_dimension=1, tiled=True), mesh,
              P("x"), P("x", "y"))(a)
    np.testing.assert_allclose(got, a * ny, rtol=1e-6)
    perm = [(k, (k + 1) % ny) for k in range(ny)]
    got = _sm(lambda b: lax.ppermute(b, "y", perm), mesh, P("x", "y"), P("x", "y"))(a)
    want = np.block([[bl[i][(j - 1) % ny] for j in range(ny)] for i in range(nx)])
    np.testing.assert_array_equal(got, want)
    got = _sm(lambda b: b + lax.axis_index("y") + 10 * lax.axis_index("x"), mesh,
              P("x", "y"), P("x", "y"))(a)
    want = np.block([[bl[i][j] + j + 10 * i for j in range(ny)] for i in range(nx)])
    np.testing.assert_allclose(got, want)
    if nx > 1:
        c = _a((nx * nx, 8), 1)
        got = _sm(lambda b: lax.all_to_all(b, "x", 0, 0, tiled=True), mesh, P("x"),
                  P("x"))(c)
        rows = np.split(c, nx)                    # device i holds rows[i]
        pieces = [np.split(r, nx) for r in rows]  # and sends its piece k to device k
        np.testing.assert_array_equal(got, np.concatenate(
            [np.concatenate([pieces[src][dst] for src in range(nx)]) for dst in range(nx)]))


def test_shard_map_agrees_with_pmap_of_pmap_and_vmap():
    mesh = _mesh((2, 4))
    a = _a((8, 8))

    def body(b):
        return lax.psum(jnp.sin(b) * lax.axis_index("y"), "x") + lax.pmax(b, ("x", "y"))

    got = _sm(body, mesh, P("x", "y"), P(None, "y"))(a)
    grid = a.reshape(2, 4, 4, 2).transpose(0, 2, 1, 3)       # [i, j] = block (i, j)
    by_pmap = spmdc.pmap(spmdc.pmap(body, "y"), "x")(grid)
    by_vmap = spmdc.vmap(spmdc.vmap(body, axis_name="y"), axis_name="x")(grid)
    np.testing.assert_allclose(by_pmap, by_vmap, rtol=1e-6)
    np.testing.assert_allclose(got, np.concatenate(list(np.asarray(by_pmap)[0]), axis=1),
                               rtol=1e-6)


def test_results_carry_the_out_specs_layout_and_feed_back_in_place():
    mesh = _mesh((2, 4))
    a = _a((8, 8))
    f = _sm(lambda b: b * 2, mesh, P("x", "y"), P("x", "y"))
    y = f(a)
    assert y.sharding == NamedSharding(mesh, P("x", "y"))
    for s in y.addressable_shards:
        np.testing.assert_allclose(np.asarray(s.data), 2 * a[s.index])
    z = f(y)                                   # y's blocks are already where f wants them
    np.testing.assert_allclose(z, 4 * a)
    # in_specs may be left out when every argument is laid out over the mesh
    inferred = spmdc.shard_map(lambda b: b + 1, mesh=mesh, out_specs=P("x", "y"))(y)
    np.testing.assert_allclose(inferred, 2 * a + 1)


def test_replicated_inputs_pytrees_and_weak_scalars():
    mesh = _mesh((2, 4))
    a, w = _a((8, 4)), _a((4, 3), 1)

    def body(d):
        return {"h": jnp.tanh(d["x"] @ d["w"]) * 2.0, "n": lax.psum(1, ("x", "y"))}
    out = _sm(body, mesh, ({"x": P(("x", "y")), "w": P()},), {"h": P(("x", "y")),
                                                              "n": P()})({"x": a, "w": w})
    np.testing.assert_allclose(out["h"], np.tanh(a @ w) * 2, rtol=1e-5)
    assert int(out["n"]) == 8


@pytest.mark.parametrize("where", ["top", "jit"])
def test_jit_and_grad_of_shard_map_are_the_global_functions(where):
    mesh = _mesh((2, 4))
    a, w = _a((8, 4)), _a((4, 3), 1)
    h = _sm(lambda b, w: jnp.tanh(b @ w), mesh, (P(("x", "y")), P()), P(("x", "y")))
    if where == "jit":
        h = spmdc.jit(h)
    np.testing.assert_allclose(h(a, w), np.tanh(a @ w), rtol=1e-5)
    t = np.tanh(a @ w)
    # d/dw sum(tanh(a w)) = a^T (1 - t^2): the replicated w gets the summed gradient
    np.testing.assert_allclose(spmdc.grad(lambda w: h(a, w).sum())(w),
                               a.T @ (1 - t ** 2), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(spmdc.grad(lambda a: (h(a, w) ** 2).sum())(a),
                               (2 * t * (1 - t ** 2)) @ w.T, rtol=1e-4, atol=1e-5)
    # a psum's cotangent reaches every device once
    pm = _sm(lambda b: lax.pmean(b * b, ("x", "y")), mesh, P("x", "y"), P())
    b8 = _a((8, 8), 2)
    np.testing.assert_allclose(spmdc.grad(lambda v: pm(v).sum())(b8), 2 * b8 / 8, rtol=1e-5)
    # all_gather's cotangent is the piece of the gathered cotangent
    g = _sm(lambda b: lax.all_gather(b, "y", axis=1, tiled=True), mesh, P("x", "y"), P("x"))
    np.testing.assert_allclose(spmdc.grad(lambda v: (g(v) * jnp.arange(8.0)).sum())(b8),
                               np.broadcast_to(np.arange(8.0), (8, 8)))


def test_vmap_of_shard_map():
    mesh = _mesh((2, 4))
    xs = _a((3, 8, 4))
    f = _sm(lambda b: lax.psum(b.sum(0), ("x", "y")), mesh, P(("x", "y")), P())
    np.testing.assert_allclose(spmdc.vmap(f)(xs), xs.sum(1), rtol=1e-5)


def test_replication_check_names_the_output_and_check_vma_false_takes_the_first_block():
    mesh = _mesh((2, 4))
    a = _a((8, 8))
    for run in (lambda f: f(a), lambda f: spmdc.jit(f)(a)):
        with pytest.raises(ValueError, match="which says it is the same") as e:
            run(_sm(lambda b: {"out": b * 2}, mesh, P("x", "y"), {"out": P(None, "y")}))
        assert "output['out']" in str(e.value) and "'x'" in str(e.value)
        assert "test_shard_map.py" in str(e.value)
    got = _sm(lambda b: b * 2, mesh, P("x", "y"), P(), check_vma=False)(a)
    np.testing.assert_allclose(got, 2 * a[:4, :2])
    got = spmdc.jit(_sm(lambda b: b * 2, mesh, P("x", "y"), P(), check_vma=False))(a)
    np.testing.assert_allclose(got, 2 * a[:4, :2])


def test_reverse_mode_inside_the_body_is_refused_and_forward_mode_works():
    mesh = _mesh((2, 4))
    a, w = _a((8, 4)), _a((4, 3), 1)

    def body(w, b):
        return lax.psum(spmdc.grad(lambda w: jnp.tanh(b @ w).sum())(w), ("x", "y"))
    with pytest.raises(NotImplementedError, match="inside a shard_map body"):
        _sm(body, mesh, (P(), P(("x", "y"))), P())(w, a)
    with pytest.raises(NotImplementedError, match="inside a shard_map body"):
        spmdc.jit(_sm(body, mesh, (P(), P(("x", "y"))), P()))(w, a)

    def fwd(w, b):
        return spmdc.jvp(lambda w: lax.psum(jnp.tanh(b @ w).sum(), ("x", "y")), (w,),
                         (jnp.ones_like(w),))[1]
    got = _sm(fwd, mesh, (P(), P(("x", "y"))), P())(w, a)
    t = np.tanh(a @ w)
    np.testing.assert_allclose(got, ((1 - t ** 2) * (a @ np.ones_like(w))).sum(), rtol=1e-4)
    np.testing.assert_allclose(spmdc.jit(lambda v: v * 2)(a), a * 2)   # still works


def test_smap_and_partial_manual_axes():
    mesh = _mesh((2, 4))
    a = _a((8, 4))
    with spmdc.set_mesh(mesh):
        got = spmdc.smap(lambda b: lax.psum(b, "y"), in_axes=0, out_axes=None,
                         axis_name="y")(a)
    np.testing.assert_allclose(got, a.reshape(4, 2, 4).sum(0), rtol=1e-5)
    # axis_names={'x'}: 'y' is not manual; the body sees blocks split over 'x' only
    f = spmdc.shard_map(lambda b: lax.psum(b, "x"), mesh=mesh, in_specs=P("x"),
                        out_specs=P(), axis_names={"x"})
    np.testing.assert_allclose(f(a), a[:4] + a[4:], rtol=1e-5)
    with pytest.raises(ValueError, match="not in axis_names"):
        spmdc.shard_map(lambda b: b, mesh=mesh, in_specs=P("y"), out_specs=P("y"),
                        axis_names={"x"})(a)


@pytest.mark.parametrize("call, fragment", [
    (lambda m, a: _sm(lambda b: b, m, P("z"), P("z"))(a), "names mesh axis 'z'"),
    (lambda m, a: _sm(lambda b: b, m, P("x", "x"), P())(a), "more than one dimension"),
    (lambda m, a: _sm(lambda b: b, m, P("y"), P("y"))(a[:6]),
     "dimension 0 of argument args[0] (shape (6, 8)) has size 6, which is not divisible by 4"),
    (lambda m, a: _sm(lambda b: b.sum(), m, P("x"), P("x"))(a), "has only 0 dimensions"),
    (lambda m, a: _sm(lambda b: b, m, P(None, None, "x"), P())(a), "has 3 entries"),
    (lambda m, a: spmdc.shard_map(lambda b: b, in_specs=P(), out_specs=P())(a), "no mesh"),
    (lambda m, a: spmdc.shard_map(lambda b: b, mesh=m, out_specs=P())(a), "in_specs"),
    (lambda m, a: _sm(lambda b, c: b, m, (P(),), P())(a, a), "1 entries"),
    (lambda m, a: spmdc.shard_map(lambda b: b, mesh=m, in_specs=P(), out_specs=P(),
                                  axis_names={"q"})(a), "'q'"),
    (lambda m, a: _sm(lambda b: lax.psum(b, "q"), m, P(), P())(a), "'q'"),
])
def test_errors_are_clear_and_the_next_call_works(call, fragment):
    mesh = _mesh((2, 4))
    a = _a((8, 8))
    with pytest.raises((ValueError, TypeError, NameError)) as e:
        call(mesh, a)
    assert fragment in str(e.value)
    np.testing.assert_allclose(_sm(lambda b: b + 1, mesh, P("x"), P("x"))(a), a + 1)


def test_jit_of_shard_map_runs_on_the_mesh_in_the_partition_form():
    mesh = _mesh((2, 4))
    a, w = _a((8, 4)), _a((4, 3), 1)
    h = _sm(lambda b, w: lax.psum(jnp.tanh(b @ w), "y") + lax.axis_index("x"), mesh,
            (P("x", None), P()), P("x"))
    f = spmdc.jit(h)
    got = f(a, w)
    np.testing.assert_allclose(got, h(a, w), rtol=1e-5, atol=1e-6)
    # over Explicit axes JAX reports the result's sharding from its type: P('x', None)
    assert got.sharding == NamedSharding(mesh, P("x", None))
    (entry,) = f._cache.values()
    assert "sdy.manual_computation" in entry.module_text
    assert "all-reduce" in entry.optimized_hlo()
    t = np.tanh(a @ w)
    np.testing.assert_allclose(spmdc.jit(spmdc.grad(lambda w: h(a, w).sum()))(w),
                               4 * a.T @ (1 - t ** 2), rtol=1e-4, atol=1e-5)


def test_closures_inside_jit_of_shard_map():
    mesh = _mesh((2, 4))
    a = _a((8, 4))
    c = np.arange(4, dtype=np.float32)

    @spmdc.jit
    def f(a, s):
        g = _sm(lambda b: lax.pmean(b * c + s, ("x", "y")), mesh, P("x", "y"), P(None, "y"))
        return g(a) * 2

    blocks = a.reshape(2, 4, 4, 1).transpose(0, 2, 1, 3)          # [i, j] = block (i, j)
    mean = np.mean([[blocks[i, j] * c + 3.0 for j in range(4)] for i in range(2)], (0, 1))
    np.testing.assert_allclose(f(a, 3.0), 2 * np.concatenate([mean] * 4, 1), rtol=1e-5,
                               atol=1e-6)
    assert float(spmdc.grad(lambda s: f(a, s).sum())(1.0)) == 2.0 * 64


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=15, deadline=None)
@given(shape=st.sampled_from(MESHES), ndim=st.integers(1, 3), data=st.data())
def test_random_specs_round_trip_and_reduce(shape, ndim, data):
    """For a random spec: blocks in and out again give the array back; a pmean over the
    mesh axes the spec leaves out (along which the blocks are copies) changes nothing;
    and under jit the same holds."""
    mesh = _mesh(shape)
    names = ("x", "y")
    where = [data.draw(st.integers(-1, ndim - 1)) for _ in names]
    parts: list = [[] for _ in range(ndim)]
    for name, d in zip(names, where, strict=True):
        if d >= 0:
            parts[d].append(name)
    spec = P(*[None if not p else (p[0] if len(p) == 1 else tuple(p)) for p in parts])
    dims = [2 * int(np.prod([dict(zip(names, shape, strict=True))[a] for a in p])) for p in parts]
    a = _a(tuple(dims))
    unused = tuple(n for n, d in zip(names, where, strict=True) if d < 0)

    def body(b):
        return lax.pmean(b, unused) if unused else b
    f = _sm(body, mesh, spec, spec)
    np.testing.assert_allclose(f(a), a, rtol=1e-6)
    np.testing.assert_allclose(spmdc.jit(f)(a), a, rtol=1e-6)
    assert f(a).sharding == NamedSharding(mesh, spec)


def test_lower_shows_the_per_device_program():
    mesh = _mesh((2, 4))
    f = _sm(lambda b: lax.psum(b * 2, "y"), mesh, P("x", "y"), P("x"))
    low = f.lower(np.ones((8, 8), np.float32))
    assert "psum" in low.ir() and "f32[4,2]" in low.ir()
    assert "mhlo.num_replicas = 8" in low.as_text()
    assert [n for n in low.stage_names()][:2] == ["traced", "collectives"]
    np.testing.assert_allclose(low.compile()(np.ones((8, 8), np.float32)), 8 * np.ones((8, 2)))
    assert "all_reduce" in low.stage("stablehlo")


def test_shard_maps_nest_over_disjoint_mesh_axes():
    mesh = _mesh((2, 4))
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    inner = spmdc.shard_map(lambda b: lax.psum(b, "y"), mesh=mesh, in_specs=P(None, "y"),
                            out_specs=P(), axis_names={"y"})
    outer = spmdc.shard_map(lambda b: lax.psum(inner(b), "x"), mesh=mesh, in_specs=P("x"),
                            out_specs=P(), axis_names={"x"})
    rows = sum(np.split(a, 2, axis=0))            # the psum over 'x' of the row blocks
    want = sum(np.split(rows, 4, axis=1))         # the inner psum over 'y' of their columns
    np.testing.assert_allclose(outer(a), want)
    np.testing.assert_allclose(spmdc.jit(outer)(a), want)


def test_the_stages_show_the_axes_each_value_varies_over():
    # As JAX's {V:...}: spmdc dump shows, after the types, the mesh axes a value may
    # differ along (Note [replication]).
    mesh = _mesh((2, 4))
    f = _sm(lambda b, w: lax.psum(b * w, "y"), mesh, (P("x", "y"), P()), P("x"))
    text = f.lower(np.ones((8, 8), np.float32), np.float32(2)).stage("collectives")
    assert "%0: f32[4,2]{V:x,y}, %1: f32[])" in text         # w is replicated
    assert "= psum(" in text and "f32[4,2]{V:x} = psum(" in text
    p = spmdc.pmap(lambda x, w: lax.psum(x * w, "i"), "i", in_axes=(0, None))
    text = p.lower(np.ones((8, 3), np.float32), np.ones(3, np.float32)).stage("cleanup")
    assert "%0: f32[3]{V:i}, %1: f32[3])" in text and "f32[3] = psum(" in text
