"""jit over arrays laid out on a mesh (Note [jit over sharded arrays]): the same numbers as
unsharded jit, the collectives XLA's partitioner inserts, the layouts it chose, and
in_shardings / out_shardings / with_sharding_constraint."""
from __future__ import annotations

import os

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.sharding import AxisType, NamedSharding, PartitionSpec

P = PartitionSpec


@pytest.fixture(scope="module")
def mesh():
    return spmdc.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def _a(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def _put(x, mesh, spec):
    return spmdc.device_put(x, NamedSharding(mesh, spec))


@pytest.mark.devices(8)
def test_elementwise_keeps_the_layout(mesh):
    a = _a((8, 4))
    x = _put(a, mesh, P("x", "y"))
    y = spmdc.jit(lambda v: jnp.sin(v) * 2 + 1)(x)
    np.testing.assert_allclose(y, np.sin(a) * 2 + 1, rtol=1e-6, atol=1e-6)
    assert y.sharding == NamedSharding(mesh, P("x", "y"))
    for s in y.addressable_shards:
        np.testing.assert_allclose(np.asarray(s.data), np.sin(a[s.index]) * 2 + 1, atol=1e-6)


@pytest.mark.devices(8)
def test_matmul_over_a_split_contraction_gets_an_all_reduce(mesh):
    a, w = _a((8, 4)), _a((4, 3), 1)
    f = spmdc.jit(lambda x, w: x @ w)
    y = f(_put(a, mesh, P("x", "y")), _put(w, mesh, P("y")))
    np.testing.assert_allclose(y, a @ w, rtol=1e-5, atol=1e-6)
    assert y.sharding == NamedSharding(mesh, P("x"))        # as JAX's partitioner chooses
    entry = next(e for e in f._cache.values() if hasattr(e, "optimized_hlo"))
    assert "all-reduce" in entry.optimized_hlo()
    # the same function on unsharded arguments: one device, no collective
    np.testing.assert_allclose(f(a, w), y, rtol=1e-6)


@pytest.mark.devices(8)
def test_out_shardings_in_shardings_and_specs_over_the_current_mesh(mesh):
    a = _a((8, 4))
    x = _put(a, mesh, P("x", "y"))
    h = spmdc.jit(lambda v: v.sum(0), out_shardings=NamedSharding(mesh, P("y")))
    assert h(x).sharding == NamedSharding(mesh, P("y"))
    np.testing.assert_allclose(h(x), a.sum(0), rtol=1e-5)
    k = spmdc.jit(lambda v: v @ v.T, in_shardings=NamedSharding(mesh, P("x")))
    np.testing.assert_allclose(k(a), a @ a.T, rtol=1e-5, atol=1e-5)   # a NumPy argument
    assert k(a).sharding.mesh == mesh
    with spmdc.set_mesh(mesh):
        r = spmdc.jit(lambda v: v * 3, in_shardings=P(None, "y"), out_shardings=P("x"))(a)
    assert r.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_allclose(r, 3 * a)


@pytest.mark.devices(8)
def test_a_data_and_model_parallel_mlp_training_step_matches_one_device(mesh):
    rng = np.random.default_rng(3)
    params = {"w1": rng.normal(size=(6, 8)).astype(np.float32) * 0.3,
              "w2": rng.normal(size=(8, 2)).astype(np.float32) * 0.3}
    xb = rng.normal(size=(16, 6)).astype(np.float32)
    yb = rng.normal(size=(16, 2)).astype(np.float32)

    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    @spmdc.jit
    def step(p, x, y):
        g = spmdc.grad(loss)(p, x, y)
        return spmdc.tree.map(lambda a, b: a - 0.1 * b, p, g), loss(p, x, y)

    sharded = {"w1": _put(params["w1"], mesh, P(None, "y")),
               "w2": _put(params["w2"], mesh, P("y", None))}
    xs, ys = _put(xb, mesh, P("x")), _put(yb, mesh, P("x"))
    p1, p2 = params, sharded
    for _ in range(3):
        p1, l1 = step(p1, xb, yb)
        p2, l2 = step(p2, xs, ys)
        np.testing.assert_allclose(l2, l1, rtol=1e-5)
    for k in params:
        np.testing.assert_allclose(p2[k], p1[k], rtol=1e-5, atol=1e-6)
    assert p2["w1"].sharding.mesh == mesh


@pytest.mark.devices(8)
def test_with_sharding_constraint(mesh):
    a = _a((8, 4))
    c = spmdc.jit(lambda v: lax.with_sharding_constraint(jnp.sin(v) * 2,
                                                         NamedSharding(mesh, P(None, "y"))))
    r = c(a)
    assert r.sharding == NamedSharding(mesh, P(None, "y"))
    np.testing.assert_allclose(r, np.sin(a) * 2, rtol=1e-6)
    np.testing.assert_allclose(spmdc.grad(lambda v: c(v).sum())(a), 2 * np.cos(a), rtol=1e-5)
    np.testing.assert_allclose(spmdc.vmap(c)(np.stack([a, -a])),
                               np.stack([np.sin(a), np.sin(-a)]) * 2, rtol=1e-6)
    eager = lax.with_sharding_constraint(a, NamedSharding(mesh, P("x")))
    assert eager.sharding == NamedSharding(mesh, P("x"))
    assert spmdc.reshard(eager, NamedSharding(mesh, P("y"))).sharding.spec == P("y")
    with pytest.raises(ValueError, match="not divisible by 4"):
        spmdc.jit(lambda v: lax.with_sharding_constraint(v, NamedSharding(mesh, P("y"))))(
            np.ones((6, 2)))


@pytest.mark.devices(8)
def test_a_constraint_over_the_abstract_mesh_takes_the_current_meshs_devices(mesh):
    # Note [constraints over an abstract mesh]: Flax builds its variables' shardings from
    # get_abstract_mesh(); spmdc read the devices of the AbstractMesh and failed.
    a = _a((8, 4))
    with spmdc.set_mesh(mesh):
        abstract = NamedSharding(spmdc.sharding.get_abstract_mesh(), P("x", "y"))
        eager = lax.with_sharding_constraint(a, abstract)
        jitted = spmdc.jit(lambda v: lax.with_sharding_constraint(v * 2, abstract))(a)
        mapped = spmdc.vmap(lambda v: lax.with_sharding_constraint(
            v * 2, NamedSharding(spmdc.sharding.get_abstract_mesh(), P("y"))))(a)
    assert eager.sharding == NamedSharding(mesh, P("x", "y"))
    assert jitted.sharding == NamedSharding(mesh, P("x", "y"))
    np.testing.assert_array_equal(np.asarray(eager), a)
    np.testing.assert_array_equal(np.asarray(jitted), a * 2)
    np.testing.assert_array_equal(np.asarray(mapped), a * 2)
    # no mesh set: the array's own mesh, if it has the same axes; else an error
    assert lax.with_sharding_constraint(eager, abstract).sharding == \
        NamedSharding(mesh, P("x", "y"))
    with pytest.raises(ValueError, match="has an AbstractMesh, which needs a mesh"):
        lax.with_sharding_constraint(a, abstract)
    other = spmdc.make_mesh((4, 2), ("x", "y"))
    with pytest.raises(ValueError, match="does not match the mesh shape"):
        lax.with_sharding_constraint(_put(a, other, P("x")), abstract)


@pytest.mark.devices(8)
def test_out_sharding_of_the_products_lays_out_their_result(mesh):
    # JAX's products take out_sharding= (Flax's Linear and Einsum always pass it); spmdc's
    # jnp products refused the keyword and lax.dot_general any value but None.
    a, b = _a((8, 4)), _a((4, 8), seed=1)
    want = a @ b
    s = NamedSharding(mesh, P("x", "y"))
    for product in (lambda: jnp.einsum("ij,jk->ik", a, b, out_sharding=s),
                    lambda: jnp.dot(a, b, out_sharding=s),
                    lambda: jnp.matmul(a, b, out_sharding=s),
                    lambda: jnp.tensordot(a, b, 1, out_sharding=s),
                    lambda: lax.dot(a, b, out_sharding=s),
                    lambda: lax.dot_general(a, b, (((1,), (0,)), ((), ())), out_sharding=s)):
        got = product()
        assert got.sharding == s
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    with spmdc.set_mesh(mesh):
        got = spmdc.jit(lambda u, v: jnp.einsum("ij,jk->ik", u, v, out_sharding=P("x")))(a, b)
    assert got.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.einsum("ij,jk->ik", a, b, out_sharding=None)),
                               want, rtol=1e-5, atol=1e-5)


@pytest.mark.devices(8)
def test_zeros_like_of_a_laid_out_array_keeps_its_layout(mesh):
    # Note [the layout of a *_like array]: as JAX's full_like (Optax's optimizer states
    # are zeros_like of the parameters); spmdc put the result on one device.
    s = NamedSharding(mesh, P("x", "y"))
    x = _put(_a((8, 4)), mesh, P("x", "y"))
    for got, want in ((jnp.zeros_like(x), np.zeros((8, 4), np.float32)),
                      (jnp.ones_like(x, dtype=jnp.int32), np.ones((8, 4), np.int32)),
                      (jnp.full_like(x, 3.0), np.full((8, 4), 3.0, np.float32))):
        assert got.sharding == s and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    assert not isinstance(jnp.zeros_like(x, shape=(4,)).sharding, NamedSharding)
    assert not isinstance(jnp.zeros_like(np.ones((8, 4))).sharding, NamedSharding)


@pytest.mark.devices(8)
def test_zeros_like_of_an_object_standing_for_a_laid_out_array(mesh):
    # Flax's hijax Variable is not an Array but has __jax_array__; JAX's full_like reads
    # its sharding, so Optax's state over such parameters is laid out as they are.
    class Boxed:
        def __init__(self, value):
            self.value = value

        def __jax_array__(self):
            return self.value

    x = _put(_a((8, 4)), mesh, P("x", "y"))
    got = jnp.zeros_like(Boxed(x))
    assert got.sharding == NamedSharding(mesh, P("x", "y"))
    np.testing.assert_array_equal(np.asarray(got), np.zeros((8, 4), np.float32))


@pytest.mark.devices(8)
def test_errors(mesh):
    other = spmdc.make_mesh((4, 2), ("x", "y"))
    a = _a((8, 4))
    with pytest.raises(ValueError, match="different meshes"):
        spmdc.jit(lambda u, v: u + v)(_put(a, mesh, P("x")), _put(a, other, P("x")))
    with pytest.raises(ValueError, match="not divisible by 4"):
        spmdc.jit(lambda v: v, in_shardings=NamedSharding(mesh, P("y")))(np.ones((6, 2)))
    with pytest.raises(TypeError, match="in_shardings entries"):
        spmdc.jit(lambda v: v, in_shardings=3)
    with pytest.raises(ValueError, match="needs a mesh"):
        spmdc.jit(lambda v: v, in_shardings=P("x"))(a)
    np.testing.assert_allclose(spmdc.jit(lambda v: v + 1)(a), a + 1)


@pytest.mark.devices(8)
def test_debug_print_in_a_partitioned_program_and_in_a_shard_map_body(mesh, capfd):
    x = _put(np.arange(8.0, dtype=np.float32), mesh, P("x"))
    f = spmdc.jit(lambda v: (spmdc.debug.print("sum {s}", s=v.sum()), v * 2)[1])
    np.testing.assert_allclose(f(x), np.arange(8.0) * 2)
    spmdc.effects_barrier()
    assert capfd.readouterr().out.splitlines() == ["sum 28.0"]       # once, whole value
    line = spmdc.make_mesh((4,), ("i",))

    def body(b):
        spmdc.debug.print("block {b}", b=b)
        return b * 2
    g = spmdc.jit(spmdc.shard_map(body, mesh=line, in_specs=P("i"), out_specs=P("i")))
    np.testing.assert_allclose(g(np.arange(8.0, dtype=np.float32)), np.arange(8.0) * 2)
    spmdc.effects_barrier()
    assert sorted(capfd.readouterr().out.splitlines()) == [
        f"block [{2 * k}. {2 * k + 1}.]" for k in range(4)]             # once per device


@pytest.mark.devices(8)
def test_lower_of_a_program_over_a_mesh_is_the_partition_form(mesh):
    a, w = _put(_a((8, 4)), mesh, P("x", "y")), _put(_a((4, 3), 1), mesh, P("y"))
    low = spmdc.jit(lambda a, w: a @ w).lower(a, w)
    assert "mhlo.num_partitions = 8" in low.as_text() and "sdy.sharding" in low.as_text()
    assert "all-reduce" in low.compile().as_text()
    assert isinstance(low.compile(), spmdc.stages.Compiled)     # as JAX's (a function before)
    np.testing.assert_allclose(low.compile()(a, w), np.asarray(a) @ np.asarray(w), rtol=1e-5,
                               atol=1e-6)
    plain = spmdc.jit(lambda a, w: a @ w).lower(np.ones((8, 4), np.float32),
                                                 np.ones((4, 3), np.float32))
    assert "num_partitions = 1" in plain.as_text()


@pytest.mark.devices(8)
def test_results_fed_back_keep_their_values_over_many_launches(mesh):
    # Note [grouped launch]: the first launch takes the outputs apart, later ones keep
    # each output as one group, handed to the next call as it is.
    s = NamedSharding(mesh, PartitionSpec("x", "y"))
    step = spmdc.jit(lambda a, b: (a * 2 + b, jnp.sum(a), a.T), out_shardings=(s, None, None))
    a0 = np.arange(32, dtype=np.float32).reshape(4, 8) / 10
    b = spmdc.device_put(np.ones((4, 8), np.float32), s)
    a, want = spmdc.device_put(a0, s), a0
    for _ in range(4):
        a, total, t = step(a, b)
        np.testing.assert_allclose(total, want.sum(), rtol=1e-5)
        np.testing.assert_allclose(t, want.T, rtol=1e-6)
        want = want * 2 + 1
        np.testing.assert_allclose(a, want, rtol=1e-6)
    assert a.sharding == s
    for shard in a.addressable_shards:
        np.testing.assert_allclose(shard.data, want[shard.index], rtol=1e-6)


@pytest.mark.devices(8)
def test_partitioned_calls_take_the_cpp_path_once_laid_out(mesh):
    from dispatch_spy import count_python_calls
    s = NamedSharding(mesh, PartitionSpec("x", "y"))
    f = spmdc.jit(lambda a, b: (a * 2 + b, a - b))
    calls = count_python_calls(f)
    a0 = np.arange(32, dtype=np.float32).reshape(4, 8)
    a, b = spmdc.device_put(a0, s), spmdc.device_put(np.ones((4, 8), np.float32), s)
    want = a0
    for _ in range(5):
        a, d = f(a, b)
        np.testing.assert_allclose(d, want - 1)
        want = want * 2 + 1
        np.testing.assert_allclose(a, want)
    assert len(calls) <= 3 and f.trace_count == 1      # later calls stayed in C++
    assert a.sharding.spec == s.spec


@pytest.mark.devices(8)
def test_a_sharded_result_passed_to_pmap_is_placed_by_value():
    # a partitioned result keeps its blocks as one jaxlib array (Note [grouped launch]);
    # pmap must not take that array for its per-device copies of an in_axes=None input
    mesh = spmdc.make_mesh((8,), ("b",))
    s = NamedSharding(mesh, PartitionSpec("b"))
    w = spmdc.jit(lambda x: x * 1.0, out_shardings=s)(
        spmdc.device_put(np.arange(8, dtype=np.float32), s))
    add = spmdc.pmap(lambda w, x: w + x, in_axes=(None, 0))
    for _ in range(4):
        np.testing.assert_array_equal(add(w, np.zeros((8, 8), np.float32)),
                                      np.broadcast_to(np.arange(8), (8, 8)))


def _run_example(*launcher: str) -> str:
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPMDC_")}
    env["PYTHONPATH"] = root
    run = subprocess.run([sys.executable, *launcher, "examples/train_sharded.py"], cwd=root,
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_the_sharded_training_example_learns_as_the_pmap_demo():
    # the pmap demo (examples/train_data_parallel.py) ends at loss 0.2421, accuracy 0.909
    out = _run_example()
    assert "step  299  loss 0.2421" in out and "final accuracy 0.909" in out, out


@pytest.mark.slow
def test_the_sharded_training_example_over_two_processes():
    out = _run_example("-m", "spmdc.launch", "-n", "2", "--devices-per-process", "4")
    assert "[p0] step  299  loss 0.2421" in out and "final accuracy 0.909" in out, out


def test_a_one_device_mesh_among_several_devices():
    # XLA does not partition a one-device program, so its executable has no output
    # shardings: each output is whole on that device (JAX gives P() too), also with a
    # static argument beside the sharded one (Flax nnx's jit tests).
    mesh = spmdc.sharding.Mesh(np.array(spmdc.devices()[:1]), ("data",))
    xs = spmdc.sharding.NamedSharding(mesh, spmdc.sharding.PartitionSpec("data"))
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    out = spmdc.jit(lambda x: x * 2, in_shardings=xs)(x)
    np.testing.assert_array_equal(np.asarray(out), x * 2)
    assert out.sharding.spec == spmdc.sharding.PartitionSpec()

    def fn(x, scale, use_relu):
        y = x * scale
        return (spmdc.numpy.maximum(y, 0) if use_relu else y).sum()

    f = spmdc.jit(fn, in_shardings=(xs, None), static_argnums=(2,))
    assert float(f(x - 8, 0.5, True)) == 14.0 and float(f(x - 8, 0.5, False)) == -4.0


def test_a_callable_object_with_its_own_in_shardings():
    # Flax nnx's JitFn keeps the user's in_shardings (StateSharding objects) in its own
    # __dict__; jit's functools.update_wrapper copied them over jit's, which then read
    # them as its shardings.
    class Fn:
        def __init__(self):
            self.in_shardings = ("not a sharding",)
            self.out_shardings = "not either"
            self.fun = None

        def __call__(self, x):
            return x * 2

    mesh = spmdc.sharding.Mesh(np.array(spmdc.devices()[:1]), ("a",))
    xs = NamedSharding(mesh, PartitionSpec("a"))
    f = spmdc.jit(Fn(), in_shardings=(xs,))
    assert f.in_shardings == (xs,)
    np.testing.assert_array_equal(np.asarray(f(np.ones(4, np.float32))), 2.0)
    assert spmdc.jit(Fn())(3.0) == 6.0
