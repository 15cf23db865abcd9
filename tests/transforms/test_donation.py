"""Buffer donation (Note [donation] in spmdc/compiler/stablehlo.py): jit / pmap /
partitioned jit with donate_argnums reuse the donated buffers for outputs of the same
type, the donated Arrays are deleted, and every misuse is a clear error."""
import warnings

import numpy as np
import pytest
from dispatch_spy import count_python_calls

import spmdc
import spmdc.numpy as jnp
from spmdc import Array
from spmdc.sharding import AxisType, NamedSharding
from spmdc.sharding import PartitionSpec as P


def test_a_donated_argument_is_reused_by_the_output_and_deleted():
    f = spmdc.jit(lambda x, y: (x * 2 + y, y.sum()), donate_argnums=0)
    x, y = jnp.arange(4.0), jnp.ones(4)
    out, total = f(x, y)
    np.testing.assert_allclose(out, [1, 3, 5, 7])
    assert float(total) == 4.0
    assert x.is_deleted() and not y.is_deleted() and not out.is_deleted()
    lowered = f.lower(jnp.arange(4.0), y)
    assert "tf.aliasing_output = 0" in lowered.as_text()
    # XLA was told the output may take the input's memory
    assert lowered.compile().memory_analysis().alias_size_in_bytes == 16


def test_reading_a_donated_array_is_a_clear_error():
    f = spmdc.jit(lambda x: x + 1, donate_argnums=0)
    x = jnp.ones(3)
    f(x)
    for use in (lambda: np.asarray(x), lambda: print(x), lambda: x + 1, lambda: float(x[0])):
        with pytest.raises(RuntimeError, match=r"Array has been deleted with "
                                               r"shape=float32\[3\].*donated"):
            use()
    np.testing.assert_allclose(f(jnp.ones(3)), 2.0)         # the library keeps working


def test_passing_a_donated_array_again_is_a_clear_error_on_both_paths():
    f = spmdc.jit(lambda x: x * 3, donate_argnums=0)
    g = spmdc.jit(lambda x: x - 1)
    calls = count_python_calls(g)
    for _ in range(3):                      # the C++ dispatcher launches g from now on
        g(jnp.ones(2))
    assert len(calls) <= 2
    for jitted in (f, g):
        x = jnp.ones(2)
        f(x)
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            jitted(x)
    np.testing.assert_allclose(g(jnp.ones(2)), 0.0)


def test_a_training_loop_with_donation_matches_one_without():
    def step(params, x):
        w, b = params["w"], params["b"]
        grads = spmdc.grad(lambda w, b: jnp.sum(jnp.tanh(x @ w + b) ** 2),
                           argnums=(0, 1))(w, b)
        return {"w": w - 0.1 * grads[0], "b": b - 0.1 * grads[1]}
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(8, 4)).astype(np.float32))
    init = {"w": rng.normal(size=(4, 3)).astype(np.float32), "b": np.zeros(3, np.float32)}
    plain, donating = spmdc.jit(step), spmdc.jit(step, donate_argnums=0)
    p, q = spmdc.device_put(init), spmdc.device_put(init)
    for _ in range(5):
        old = q
        p, q = plain(p, x), donating(q, x)
        assert all(v.is_deleted() for v in old.values())
    for k in init:
        np.testing.assert_array_equal(p[k], q[k])


def test_donate_argnames_and_keyword_arguments():
    def f(a, b, *, c):
        return a + b + c
    by_name = spmdc.jit(f, donate_argnames=("b", "c"))
    a, b, c = jnp.ones(2), jnp.ones(2), jnp.ones(2)
    with pytest.warns(UserWarning, match=r"not usable: f32\[2\]"):
        np.testing.assert_allclose(by_name(a, b, c=c), 3.0)
    assert not a.is_deleted() and b.is_deleted()       # one output: b's buffer takes it
    assert not c.is_deleted()
    by_number = spmdc.jit(f, donate_argnums=1)
    a, b = jnp.ones(2), jnp.ones(2)
    np.testing.assert_allclose(by_number(a, b=b, c=jnp.ones(2)), 3.0)
    assert b.is_deleted() and not a.is_deleted()


def test_a_donation_no_output_can_use_warns_and_keeps_the_argument():
    f = spmdc.jit(lambda x, y: x.sum() + y.sum(), donate_argnums=(0, 1))
    x, y = jnp.ones(3), jnp.ones(5)
    with pytest.warns(UserWarning, match=r"donated buffers were not usable: f32\[3\], "
                                         r"f32\[5\] \(at .*test_donation.py"):
        assert float(f(x, y)) == 8.0
    assert not x.is_deleted() and not y.is_deleted()


def test_the_same_array_donated_and_passed_again_is_refused_before_the_launch():
    f = spmdc.jit(lambda x, y: (x + y, y * 2), donate_argnums=0)
    calls = count_python_calls(f)
    for _ in range(3):
        f(jnp.ones(2), jnp.ones(2))
    assert len(calls) <= 2                      # granted to the C++ dispatcher
    z = jnp.ones(2)
    with pytest.raises(ValueError, match="passed twice to a jitted call.*donated"):
        f(z, z)
    assert not z.is_deleted()
    np.testing.assert_allclose(f(z, jnp.ones(2))[0], 2.0)


def test_numpy_and_python_arguments_may_be_donated():
    f = spmdc.jit(lambda x: x * 2, donate_argnums=0)
    a = np.ones(3, np.float32)
    np.testing.assert_allclose(f(a), 2.0)
    np.testing.assert_allclose(a, 1.0)          # the host value is untouched
    assert float(spmdc.jit(lambda x: x + 1, donate_argnames="x")(1.0)) == 2.0


def test_bad_donation_arguments():
    with pytest.raises(ValueError, match="both static and donated"):
        spmdc.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=1)
    with pytest.raises(ValueError, match="both static and donated"):
        spmdc.jit(lambda x, n: x * n, static_argnames="n", donate_argnums=1)
    with pytest.raises(ValueError, match="donate_argnums=5 is out of range"):
        spmdc.jit(lambda x: x, donate_argnums=5)
    with pytest.raises(ValueError, match=r"donate_argnames=\['y'\] are not parameters"):
        spmdc.jit(lambda x: x, donate_argnames="y")
    with pytest.raises(ValueError, match="both static and donated"):
        spmdc.pmap(lambda x, n: x * n, static_broadcasted_argnums=1, donate_argnums=1)


def test_array_delete():
    x = jnp.ones(3)
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


@pytest.mark.devices(8)
def test_pmap_donation_of_replicated_parameters_and_split_values():
    def step(w, x):
        g = spmdc.lax.pmean(x * w, "i")
        return w - 0.1 * g, jnp.sum(g)
    f = spmdc.pmap(step, "i", in_axes=(None, 0), out_axes=(None, None), donate_argnums=0)
    plain = spmdc.pmap(step, "i", in_axes=(None, 0), out_axes=(None, None))
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    w, v = jnp.ones(4), jnp.ones(4)
    for _ in range(4):
        old = w
        (w, s), (v, t) = f(w, x), plain(v, x)
        assert old.is_deleted()
        np.testing.assert_array_equal(w, v)
        np.testing.assert_array_equal(s, t)
    assert "tf.aliasing_output = 0" in f.lower(jnp.ones(4), x).as_text()
    double = spmdc.pmap(lambda a: a * 2, donate_argnums=0)
    a = double(np.ones((8, 3), np.float32))
    for k in range(3):
        b = double(a)
        assert a.is_deleted()
        np.testing.assert_allclose(b, 2.0 ** (k + 2))
        a = b
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        double(old)


@pytest.mark.devices(8)
def test_partitioned_jit_donation():
    mesh = spmdc.make_mesh((8,), ("b",))
    s = NamedSharding(mesh, P("b"))
    f = spmdc.jit(lambda w, x: (w - 0.1 * x, jnp.sum(w * x)), in_shardings=(s, s),
                  out_shardings=(s, None), donate_argnums=0)
    w = spmdc.device_put(np.ones(16, np.float32), s)
    x = spmdc.device_put(np.arange(16, dtype=np.float32), s)
    new, total = f(w, x)
    assert w.is_deleted() and not x.is_deleted()
    np.testing.assert_allclose(new, 1 - np.float32(0.1) * np.arange(16, dtype=np.float32),
                               rtol=1e-6, atol=1e-7)
    assert float(total) == float(np.arange(16).sum())
    # over Explicit axes (make_mesh's default) the result's type says its layout, so the
    # donated buffer is used (Note [shardings in types])
    g = spmdc.jit(lambda w, x: w - x, donate_argnums=0)
    w = spmdc.device_put(np.ones(16, np.float32), s)
    np.testing.assert_allclose(g(w, x), 1 - np.arange(16))
    assert w.is_deleted()
    # over Auto axes an output XLA lays out as it likes cannot be promised the buffer
    auto = NamedSharding(spmdc.make_mesh((8,), ("b",), axis_types=(AxisType.Auto,)), P("b"))
    w, x = (spmdc.device_put(np.ones(16, np.float32), auto),
            spmdc.device_put(np.arange(16, dtype=np.float32), auto))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_allclose(g(w, x), 1 - np.arange(16))
    assert any("not usable" in str(m.message) for m in caught)
    assert not w.is_deleted()


def _sharded_sgd_step():
    """A mesh of 8 devices, a sharding of its one axis, and a jitted step over arrays laid
    out by it that donates its first argument."""
    mesh = spmdc.make_mesh((8,), ("b",))
    s = NamedSharding(mesh, P("b"))
    return mesh, s, spmdc.jit(lambda w, x: w - 0.5 * x, in_shardings=(s, s),
                              out_shardings=s, donate_argnums=0)


@pytest.mark.devices(8)
def test_donated_sharded_arrays_used_again_are_errors_not_crashes():
    # jaxlib crashes the process when a multi-device program gets a deleted multi-device
    # array, or one donated buffer twice; spmdc checks first, on both dispatch paths.
    mesh, s, f = _sharded_sgd_step()
    other = spmdc.jit(lambda a: a * 2)
    w = spmdc.device_put(np.ones(16, np.float32), s)
    x = spmdc.device_put(np.ones(16, np.float32), s)
    for _ in range(4):
        old, w = w, f(w, x)
        other(w)                             # its later calls take the C++ path
    assert old.is_deleted()
    for use in (lambda: f(old, x), lambda: other(old), lambda: old + 1,
                lambda: spmdc.device_put(old, s)):
        with pytest.raises(RuntimeError, match="Array has been deleted.*test_donation.py"):
            use()
    twice = spmdc.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("b"), out_specs=P("b"))
    for use in (lambda: twice(old), lambda: old.addressable_shards):
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            use()
    z = spmdc.device_put(np.ones(16, np.float32), s)
    with pytest.raises(ValueError, match="passed twice"):
        f(z, z)
    np.testing.assert_allclose(f(z, x), 0.5)
    np.testing.assert_allclose(other(w), 2 * (1 - 0.5 * 4))


@pytest.mark.devices(8)
def test_sharded_arrays_deleted_after_the_cpp_dispatcher_launched_them_are_errors():
    # After a granted call has been launched in C++ with a sharded Array, donating it
    # elsewhere or deleting it makes the next call of the granted one a clear error,
    # never a launch of a deleted multi-device array (which jaxlib 0.10.2's Python-level
    # launch segfaults on; Note [leaves read in C++] in runtime/array.py).
    _, s, donate = _sharded_sgd_step()
    f = spmdc.jit(lambda w: w * 2)
    calls = count_python_calls(f)
    x = spmdc.device_put(np.ones(16, np.float32), s)
    placed = [spmdc.device_put(np.ones(16, np.float32), s) for _ in range(2)]
    results = [donate(spmdc.device_put(np.ones(16, np.float32), s), x) for _ in range(2)]
    for w in (*placed, *results):
        for _ in range(3):
            f(w)                             # the C++ dispatcher launches w by now
    assert len(calls) <= 4
    for w, delete in zip((*placed, *results), [lambda w: donate(w, x), Array.delete] * 2,
                         strict=True):
        delete(w)
        with pytest.raises(RuntimeError, match="Array has been deleted.*test_donation.py"):
            f(w)
    np.testing.assert_allclose(f(x), 2.0)


def test_a_deleted_array_launched_by_the_cpp_dispatcher_is_a_clear_error():
    f = spmdc.jit(lambda x: x + 1)
    calls = count_python_calls(f)
    placed = jnp.ones(3)
    result = f(placed)
    for _ in range(3):
        f(placed)
        f(result)
    assert len(calls) <= 3
    for x in (placed, result):
        x.delete()
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            f(x)
    np.testing.assert_allclose(f(jnp.ones(3)), 2.0)


@pytest.mark.devices(8)
def test_donated_pmap_values_used_again_are_errors_not_crashes():
    g = spmdc.pmap(lambda a, b: (a * 2, b + 1), donate_argnums=0)
    h = spmdc.pmap(lambda a: a * 3)
    a = g(np.ones((8, 3), np.float32), np.ones((8, 3), np.float32))[0]
    for _ in range(4):
        old = a
        a, _ = g(a, a + 0)
        h(a)
    for use in (lambda: g(old, a), lambda: h(old)):
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            use()
    with pytest.raises(ValueError, match="passed twice"):
        g(a, a)
    np.testing.assert_allclose(h(a), 3 * 2.0 ** 5)


@pytest.mark.parametrize("copy", [jnp.copy, jnp.array, lambda x: x.copy()],
                         ids=["jnp.copy", "jnp.array", "Array.copy"])
def test_a_copy_has_its_own_buffer_so_donating_it_keeps_the_original(copy):
    # Equinox donates jax.tree.map(jnp.copy, tree) and reads the tree afterwards
    # (Note [copies are new buffers] in spmdc/numpy/core.py)
    a = jnp.arange(3.0)
    b = copy(a)
    assert b is not a and not b.is_deleted()
    out = spmdc.jit(lambda x: x + 1, donate_argnums=0)(b)
    assert b.is_deleted() and not a.is_deleted()
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    weak = jnp.asarray(2.0)
    assert copy(weak).weak and float(copy(weak)) == 2.0
    assert jnp.array(a, copy=False) is a
    assert float(spmdc.grad(lambda x: copy(x) * 3.0)(1.0)) == 3.0


def test_a_donated_buffer_is_reused_at_the_same_address():
    # Equinox's tests compare unsafe_buffer_pointer() before and after a donating call
    host = jnp.array(0.0)
    assert host.unsafe_buffer_pointer() == host.shard_buffers()[0].unsafe_buffer_pointer()
    x = spmdc.jit(lambda x: x * 0)(host)        # a buffer XLA owns
    before = x.unsafe_buffer_pointer()
    assert isinstance(before, int) and before > 0
    y = spmdc.jit(lambda x: x + 1, donate_argnums=0)(x)
    assert x.is_deleted() and float(y) == 1.0
    assert y.unsafe_buffer_pointer() == before
    with pytest.raises(RuntimeError, match="deleted"):
        x.unsafe_buffer_pointer()
