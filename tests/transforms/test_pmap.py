"""pmap (transforms/pmap.py): results sharded over devices, in_axes/out_axes, statics,
devices=, caching and in-place inputs, composition with jit/grad/vmap, nested pmap on a
2 x 4 mesh, pmap of vmap, and the error messages (after each of which pmap still works)."""
from __future__ import annotations

import numpy as np
import pytest
from dispatch_spy import count_python_calls

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.passes.collectives import ReplicationError, UnboundAxisError
from spmdc.transforms import pmap as parallel
from spmdc.transforms.grad import grad
from spmdc.transforms.vmap import vmap

DEVICES = spmdc.devices()


def still_works():
    """After an error, the next pmap call works (no trace or mesh state left behind)."""
    out = spmdc.pmap(lambda x: lax.psum(x, "k"), axis_name="k")(np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(out), [6.0] * 4)


# --- results --------------------------------------------------------------------------------

@pytest.mark.devices(8)
def test_result_is_an_array_split_over_the_devices():
    x = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    out = spmdc.pmap(lambda v: v * 2)(x)
    assert isinstance(out, spmdc.Array)
    assert out.shape == (8, 3) and out.dtype == np.float32
    assert out.devices() == set(DEVICES[:8])
    np.testing.assert_array_equal(np.asarray(out), x * 2)
    assert repr(out) == "Array(" + np.array2string(x * 2, separator=", ",
                                                   prefix="Array(") + ", dtype=float32)"


@pytest.mark.devices(3)
def test_a_smaller_mapped_axis_uses_the_first_devices():
    out = spmdc.pmap(lambda v: v + 1)(np.zeros((3, 2), np.int32))
    assert out.devices() == set(DEVICES[:3])
    np.testing.assert_array_equal(np.asarray(out), np.ones((3, 2)))


@pytest.mark.devices(5)
def test_devices_argument():
    out = spmdc.pmap(lambda v: -v, devices=DEVICES[2:5])(np.ones((3,), np.float32))
    assert out.devices() == set(DEVICES[2:5])
    np.testing.assert_array_equal(np.asarray(out), -np.ones(3))
    with pytest.raises(ValueError, match="mapped axis has size 4.*devices= lists 3"):
        spmdc.pmap(lambda v: v, devices=DEVICES[2:5])(np.ones((4,)))
    still_works()


@pytest.mark.devices(8)
def test_a_pmap_result_is_used_in_place(monkeypatch):
    double = spmdc.pmap(lambda v: v * 2)
    first = double(np.arange(8.0))
    double(first)                             # compile for this signature
    puts = []
    monkeypatch.setattr(parallel.pjrt, "put", lambda *a: puts.append(a))
    again = double(first)
    assert puts == [], "a pmap result went through the host on its way to the next pmap"
    assert first._host is None
    monkeypatch.undo()
    np.testing.assert_array_equal(np.asarray(again), np.arange(8.0) * 4)


@pytest.mark.devices(4)
def test_device_put_with_a_list_of_devices_shards_the_leading_axis():
    x = np.arange(12.0).reshape(4, 3)
    sharded = spmdc.device_put(x, DEVICES[:4])
    assert sharded.devices() == set(DEVICES[:4]) and sharded.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(sharded), x)
    out = spmdc.pmap(jnp.sin)(sharded)
    np.testing.assert_allclose(np.asarray(out), np.sin(x), rtol=1e-6)
    with pytest.raises(ValueError, match="leading axis has size 4; got shape \\(3, 4\\)"):
        spmdc.device_put(x.T, DEVICES[:4])


@pytest.mark.devices(3)
def test_in_axes_and_out_axes():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    w = np.float32(10.0)
    f = spmdc.pmap(lambda a, b, *, c: (a * b + c, lax.psum(a, "i")), axis_name="i",
                   in_axes=(1, None), out_axes=(1, None))
    scaled, total = f(x, w, c=np.ones((3,), np.float32))    # keyword args map over axis 0
    np.testing.assert_allclose(np.asarray(scaled), x * 10 + 1)
    np.testing.assert_allclose(np.asarray(total), x.sum(1))
    assert total.devices() == {DEVICES[0]} and total.shape == (2,)


@pytest.mark.devices(5)
def test_axis_size_with_no_mapped_argument():
    out = spmdc.pmap(lambda a: a + lax.axis_index("i"), axis_name="i", in_axes=None,
                     axis_size=5)(np.int32(7))
    np.testing.assert_array_equal(np.asarray(out), 7 + np.arange(5))


@pytest.mark.devices(4)
def test_static_broadcasted_argnums_and_caching():
    f = spmdc.pmap(lambda x, n: x ** n, static_broadcasted_argnums=1)
    x = np.arange(1.0, 5.0)
    np.testing.assert_allclose(np.asarray(f(x, 2)), x ** 2)
    np.testing.assert_allclose(np.asarray(f(x, 3)), x ** 3)
    f(x + 1, 2)
    assert f.trace_count == 2              # one trace per static value, not per call
    with pytest.raises(ValueError, match="argument 1 of pmap.*unhashable type list"):
        f(x, [2])
    still_works()


@pytest.mark.devices(4)
def test_lower_shows_the_per_device_program_and_replica_groups():
    lowered = spmdc.pmap(lambda v: lax.psum(v, "i"), axis_name="i").lower(np.zeros((4, 3)))
    assert "psum(%0) {axes=('i',)}" in lowered.ir()
    text = lowered.as_text()
    assert "stablehlo.all_reduce" in text and "[[0, 1, 2, 3]]" in text
    assert "mhlo.num_replicas = 4" in text
    compiled = lowered.compile()
    np.testing.assert_allclose(np.asarray(compiled(np.ones((4, 3), np.float32))),
                               np.full((4, 3), 4.0))
    # a jax.stages.Compiled, as Equinox's AOT path type-checks it (regression: a function)
    assert isinstance(compiled, spmdc.stages.Compiled)
    assert "all-reduce" in compiled.as_text() and compiled.out_tree.num_leaves == 1
    # XLA's options by name, as jit's Lowered.compile takes them (Equinox's filter_pmap
    # passes compiler_options=None; regression: compile() took no argument)
    for options in (None, {"xla_cpu_enable_fast_math": False}):
        np.testing.assert_allclose(
            np.asarray(lowered.compile(compiler_options=options)(np.ones((4, 3), np.float32))),
            np.full((4, 3), 4.0))


# --- composition --------------------------------------------------------------------------------

@pytest.mark.devices(2)
def test_pmap_of_jit_and_jit_inside():
    def body(v):
        return jnp.tanh(v) * 2.0
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    want = np.tanh(x) * 2
    np.testing.assert_allclose(np.asarray(spmdc.pmap(spmdc.jit(body))(x)), want, rtol=1e-6)
    inner = spmdc.jit(lambda v: lax.psum(v, "i"))
    np.testing.assert_allclose(np.asarray(spmdc.pmap(lambda v: inner(body(v)), "i")(x)),
                               np.broadcast_to(want.sum(0), (2, 4)), rtol=1e-6)


@pytest.mark.devices(2)
def test_grad_inside_pmap_is_per_device():
    # See Note [collective transpose]: the replicated w gets each device's own gradient.
    def loss(w, x):
        return jnp.sum(w * x) ** 2
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    w = np.ones(3, np.float32)
    g = spmdc.pmap(grad(loss), in_axes=(None, 0))(w, x)
    want = np.stack([2 * (w * xi).sum() * xi for xi in x])
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)


@pytest.mark.devices(4)
def test_grad_through_psum_inside_pmap():
    # Every device's loss is (sum_k x_k)^2; psum transposes to psum, so each device gets
    # the derivative of the whole program's total: N * 2 * sum_k x_k.
    x = np.arange(1.0, 5.0, dtype=np.float32)
    g = spmdc.pmap(grad(lambda v: lax.psum(v, "i") ** 2), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(g), np.full(4, 2 * 4 * x.sum()))


@pytest.mark.devices(3)
def test_outputs_that_are_inputs_or_constants():
    f = spmdc.pmap(lambda a, b: (a, b, 3.0), in_axes=(0, None), out_axes=(0, None, 0))
    a, b, c = f(np.arange(3.0, dtype=np.float32), np.float32(2.0))
    np.testing.assert_array_equal(np.asarray(a), [0.0, 1.0, 2.0])
    assert b.shape == () and float(b) == 2.0
    np.testing.assert_array_equal(np.asarray(c), [3.0] * 3)


def test_grad_and_jit_of_pmap_have_vmap_semantics():
    def f(w):
        return jnp.sum(spmdc.pmap(lambda a: jnp.sin(a) * w, in_axes=0)(np.arange(4.0)))
    np.testing.assert_allclose(float(grad(f)(np.float32(2.0))), np.sin(np.arange(4.0)).sum(),
                               rtol=1e-6)
    jitted = spmdc.jit(lambda a: spmdc.pmap(lambda v: lax.psum(v, "i"), "i")(a))
    np.testing.assert_allclose(np.asarray(jitted(np.arange(3.0))), [3.0] * 3)


@pytest.mark.devices(8)
def test_nested_pmap_on_a_2x4_mesh():
    def inner(v):
        return (lax.psum(v, "i"), lax.psum(v, "j"), lax.psum(v, ("i", "j")),
                lax.axis_index(("i", "j")), lax.all_gather(v, "j"))
    f = spmdc.pmap(spmdc.pmap(inner, axis_name="j"), axis_name="i")
    x = np.arange(24.0, dtype=np.float32).reshape(2, 4, 3)
    over_i, over_j, over_ij, index, gathered = f(x)
    np.testing.assert_allclose(np.asarray(over_i), np.broadcast_to(x.sum(0), x.shape))
    np.testing.assert_allclose(np.asarray(over_j), np.broadcast_to(x.sum(1, keepdims=True),
                                                                   x.shape))
    np.testing.assert_allclose(np.asarray(over_ij), np.broadcast_to(x.sum((0, 1)), x.shape))
    np.testing.assert_array_equal(np.asarray(index), np.arange(8).reshape(2, 4))
    np.testing.assert_allclose(np.asarray(gathered),
                               np.broadcast_to(x[:, None], (2, 4, 4, 3)))
    assert over_i.shape == (2, 4, 3) and over_i.devices() == set(DEVICES[:8])


@pytest.mark.devices(8)
def test_nested_pmap_result_used_by_the_outer_program():
    def outer(v):                      # v: (4, 3) on each 'i' device
        doubled = spmdc.pmap(lambda u: u * 2 + lax.axis_index("i"), axis_name="j")(v)
        mean = spmdc.pmap(lambda u: lax.pmean(u, "j"), axis_name="j", out_axes=None)(v)
        return doubled.sum(0) + mean
    x = np.arange(24.0, dtype=np.float32).reshape(2, 4, 3)
    got = spmdc.pmap(outer, axis_name="i")(x)
    want = (x * 2 + np.arange(2)[:, None, None]).sum(1) + x.mean(1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.devices(2)
def test_pmap_of_vmap_with_collectives_over_both_names():
    def per_item(v):
        return (lax.psum(v, "i"), lax.psum(v, "j"), lax.pmean(v, ("i", "j")),
                lax.axis_index("j") + 10 * lax.axis_index("i"),
                lax.all_gather(v, ("i", "j")))
    f = spmdc.pmap(vmap(per_item, axis_name="j"), axis_name="i")
    x = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    over_i, over_j, mean_ij, index, gathered = f(x)
    np.testing.assert_allclose(np.asarray(over_i), np.broadcast_to(x.sum(0), x.shape))
    np.testing.assert_allclose(np.asarray(over_j), np.broadcast_to(x.sum(1, keepdims=True),
                                                                   x.shape))
    np.testing.assert_allclose(np.asarray(mean_ij), np.broadcast_to(x.mean((0, 1)), x.shape))
    np.testing.assert_array_equal(np.asarray(index), [[0, 1, 2], [10, 11, 12]])
    np.testing.assert_allclose(np.asarray(gathered),
                               np.broadcast_to(x.reshape(6, 2), (2, 3, 6, 2)))


# --- errors -------------------------------------------------------------------------------------

@pytest.mark.devices(8)        # the messages name the 8 devices
def test_mapped_axis_larger_than_the_device_count():
    with pytest.raises(ValueError, match=r"size 9, but only 8 devices.*SPMDC_CPU_DEVICES"):
        spmdc.pmap(lambda v: v)(np.zeros((9, 2)))
    still_works()
    with pytest.raises(ValueError, match=r"mesh.*16 devices, but only 8.*SPMDC_CPU_DEVICES"):
        spmdc.pmap(spmdc.pmap(lambda v: v, "j"), "i")(np.zeros((4, 4)))
    still_works()


@pytest.mark.devices(4)
def test_inconsistent_mapped_sizes():
    with pytest.raises(ValueError, match=r"inconsistent sizes.*args\[0\] has size 4, "
                                         r"args\[1\]\['b'\] has size 3"):
        spmdc.pmap(lambda a, d: a)(np.zeros((4, 2)), {"b": np.zeros((3,))})
    still_works()


@pytest.mark.devices(4)
def test_unbound_and_misspelled_axis_names():
    with pytest.raises(UnboundAxisError, match=r"psum: unbound axis name 'j' \(at .*"
                                               r"test_pmap.py:\d+\)"):
        spmdc.pmap(lambda v: lax.psum(v, "j"), axis_name="i")(np.zeros(2))
    with pytest.raises(NameError, match="all_gather: unbound axis name 'devcies'.*did you "
                                        "mean 'devices'"):
        spmdc.pmap(lambda v: lax.all_gather(v, "devcies"), axis_name="devices")(np.zeros(2))
    with pytest.raises(NameError, match="axis_index: unbound axis name 'i'"):
        lax.axis_index("i")
    still_works()


@pytest.mark.parametrize("perm, fragment", [
    ([(0, 1), (0, 2)], "uses source 0 more than once"),
    ([(0, 1), (2, 1)], "uses destination 1 more than once"),
    ([(0, 4)], "destination index 4 .* out of range for an axis of size 4"),
    ([(-1, 0)], "source index -1 .* out of range"),
])
@pytest.mark.devices(4)
def test_invalid_ppermute_permutations(perm, fragment):
    with pytest.raises(ValueError, match=fragment):
        spmdc.pmap(lambda v: lax.ppermute(v, "i", perm), axis_name="i")(np.zeros(4))
    still_works()


@pytest.mark.devices(3)
def test_out_axes_none_on_a_varying_value():
    with pytest.raises(ReplicationError,
                       match="pmap\\(f\\): output\\[1\\] has out_axes=None.*axis 'i'"):
        spmdc.pmap(lambda v: (lax.psum(v, "i"), v * 2), axis_name="i",
                   out_axes=(None, None))(np.zeros(3))
    with pytest.raises(ReplicationError, match="pmap\\(f\\): the output has out_axes=None"):
        spmdc.pmap(lambda v: v * 2, axis_name="i", out_axes=None)(np.zeros(3))
    with pytest.raises(ReplicationError, match="out_axes=None.*axis 'j'"):
        spmdc.pmap(spmdc.pmap(lambda v: v, "j", out_axes=None), "i")(np.zeros((2, 4)))
    still_works()


# --- the C++ dispatch path (Note [C++ dispatch] in runtime/pjrt/dispatch.py) ----------------

@pytest.mark.devices(8)
def test_a_training_loop_launches_in_cpp_and_matches_numpy():
    rng = np.random.default_rng(3)
    xs = rng.normal(size=(8, 4, 3)).astype(np.float32)
    ys = rng.normal(size=(8, 4)).astype(np.float32)

    def step(params, x, y):
        def loss(p):
            return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)
        value, grads = spmdc.value_and_grad(loss)(params)
        grads = lax.pmean(grads, "batch")
        new = {k: params[k] - 0.1 * grads[k] for k in params}
        return new, lax.pmean(value, "batch")

    pstep = spmdc.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, None))
    calls = count_python_calls(pstep)
    params = {"w": np.zeros(3, np.float32), "b": np.float32(0.0)}
    x, y = spmdc.device_put(xs, DEVICES), spmdc.device_put(ys, DEVICES)
    w, b = np.zeros(3), 0.0
    X, Y = xs.reshape(32, 3).astype(np.float64), ys.reshape(32).astype(np.float64)
    for _ in range(6):
        params, value = pstep(params, x, y)
        err = X @ w + b - Y
        np.testing.assert_allclose(value, np.mean(err ** 2), rtol=1e-4)
        w, b = w - 0.1 * 2 * X.T @ err / 32, b - 0.1 * 2 * err.mean()
    np.testing.assert_allclose(params["w"], w, rtol=1e-4)
    np.testing.assert_allclose(params["b"], b, rtol=1e-4, atol=1e-6)
    assert len(calls) <= 3 and pstep.trace_count == 1   # one program for NumPy and Arrays
    # C++ results are ordinary Arrays: one device's view, eager arithmetic, jit, host
    assert params["w"].devices() == {DEVICES[0]}
    np.testing.assert_allclose(spmdc.jit(lambda v: v * 2)(params["w"]), 2 * w, rtol=1e-4)
    np.testing.assert_allclose(np.asarray(params["w"] + 1), w + 1, rtol=1e-4)


@pytest.mark.devices(8)
def test_split_results_of_cpp_launches_feed_other_programs():
    double = spmdc.pmap(lambda v: v * 2)
    x = spmdc.device_put(np.arange(16.0, dtype=np.float32).reshape(8, 2), DEVICES)
    for _ in range(3):
        y = double(x)
    assert y.split and y.shape == (8, 2)
    np.testing.assert_array_equal(np.asarray(y), np.arange(16.0).reshape(8, 2) * 2)
    np.testing.assert_array_equal(np.asarray(y[3]), [12.0, 14.0])
    np.testing.assert_array_equal(np.asarray(spmdc.pmap(lambda v: v.sum())(y)),
                                  np.arange(16.0).reshape(8, 2).sum(1) * 2)
    # the same values on the devices in another order: another placement, still right
    backwards = spmdc.pmap(lambda v: v + 1, devices=DEVICES[::-1])
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(backwards(y)),
                                      np.arange(16.0).reshape(8, 2) * 2 + 1)
    # out_axes=1 moves the axis on the host: the Python path, every call
    moved = spmdc.pmap(lambda v: v * 3, out_axes=1)
    calls = count_python_calls(moved)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(moved(x)),
                                      np.arange(16.0).reshape(8, 2).T * 3)
    assert len(calls) == 3


@pytest.mark.devices(8)
def test_many_collective_launches_without_reading_results_do_not_deadlock():
    # Hundreds of un-awaited launches of a program with an all-reduce hang PJRT's CPU
    # client without pacing (Note [pacing replicated launches]); the C++ path is paced too.
    f = spmdc.pmap(lambda v: lax.psum(v, "i") * 0.125, axis_name="i")
    x = spmdc.device_put(np.ones((8, 64), np.float32), DEVICES)
    for _ in range(300):
        x = f(x)
    np.testing.assert_allclose(np.asarray(x), np.ones((8, 64)), rtol=1e-6)
