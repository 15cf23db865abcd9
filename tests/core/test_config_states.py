"""JAX's config states as spmdc has them: debug_nans/debug_infs, the transfer guards,
default_device, log_compiles, explain_cache_misses, no_tracing/no_execution,
enable_checks, live_arrays and the small top-level names (texts recorded from JAX 0.10.2).
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.compiler import passes


def _log_line(x):
    y = jnp.sin(x)
    return jnp.sqrt(y - 2.0)                   # the line the messages name


_LINE = _log_line.__code__.co_firstlineno + 2


def test_state_reads_sets_and_restores():
    assert spmdc.debug_nans.value is False and spmdc.config.jax_debug_nans is False
    assert spmdc.debug_nans.name == "jax_debug_nans"
    with spmdc.debug_nans():                    # JAX's default for the bare form: True
        assert spmdc.debug_nans.value is True and spmdc.config.read("jax_debug_nans")
        with spmdc.debug_nans(False):
            assert spmdc.debug_nans.value is False
        assert spmdc.debug_nans.value is True
    assert spmdc.debug_nans.value is False
    with pytest.raises(TypeError, match=r"did you mean to use 'debug_nans.value'"):
        bool(spmdc.debug_nans)
    with pytest.raises(TypeError, match="requires an argument"):
        spmdc.default_device()
    spmdc.config.update("jax_debug_infs", True)
    try:
        assert spmdc.debug_infs.value is True
    finally:
        spmdc.config.update("jax_debug_infs", False)

    @spmdc.debug_nans(True)                    # a context is also a decorator
    def inside():
        return spmdc.debug_nans.value
    assert inside() is True and spmdc.debug_nans.value is False


def test_debug_nans_names_the_operation_and_the_users_line(capsys):
    with spmdc.debug_nans(True):
        with pytest.raises(FloatingPointError,
                           match=r"^invalid value \(nan\) encountered in log \(at .*"
                                 r"test_config_states.py"):
            jnp.log(jnp.array([-1.0, 1.0]))              # eager: the operation itself
        with pytest.raises(FloatingPointError, match=rf"encountered in sqrt \(at .*:{_LINE}\)"):
            spmdc.jit(_log_line)(jnp.array(1.0))          # jit: de-optimized, as JAX
        assert "Calling the de-optimized version." in capsys.readouterr().out
        with pytest.raises(FloatingPointError, match=rf"encountered in sqrt \(at .*:{_LINE}\)"):
            spmdc.grad(_log_line)(1.0)                    # an eager transformation: replay
        # a nan the function discards is no error under jit (only outputs are checked)
        out = spmdc.jit(lambda x: jnp.where(x > 0, jnp.log(jnp.abs(x)), 0.0))(
            jnp.array([1.0, -1.0]))
        np.testing.assert_array_equal(np.asarray(out), [0.0, 0.0])
        with pytest.raises(FloatingPointError, match="did not produce invalid values"):
            spmdc.jit(lambda x: x + jnp.nan)(np.float32(0.0))
    np.testing.assert_array_equal(np.isnan(np.asarray(jnp.log(jnp.array([-1.0])))), [True])


def test_debug_infs():
    with spmdc.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered "
                                                     r"in div"):
            spmdc.jit(lambda x: 1.0 / x)(jnp.array(0.0))
        assert float(jnp.log(jnp.array(-1.0)) != 0)     # nan is not checked by debug_infs


_H2D = ("INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray(float32[3]), "
        "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)")


def test_transfer_guard_levels(caplog):
    f = spmdc.jit(lambda a: a + 1)
    host = np.ones(3, np.float32)
    x = jnp.arange(3.0)
    with spmdc.transfer_guard("disallow"):
        assert spmdc.transfer_guard_host_to_device.value == "disallow"
        with pytest.raises(spmdc.errors.JaxRuntimeError) as e:
            f(host)
        assert str(e.value) == _H2D                     # JAX's text
        with pytest.raises(spmdc.errors.JaxRuntimeError, match="float32\\[3\\]"):
            jnp.sin(host)                                # an implicit operand
        with pytest.raises(spmdc.errors.JaxRuntimeError, match="weak_type=True"):
            f(1.0)
        np.testing.assert_array_equal(np.asarray(f(x)), [1, 2, 3])   # on the device
        np.testing.assert_array_equal(np.asarray(spmdc.device_put(host)), host)  # explicit
        np.testing.assert_array_equal(np.asarray(x), [0, 1, 2])  # CPU: never guarded
    with spmdc.transfer_guard("disallow_explicit"):
        with pytest.raises(spmdc.errors.JaxRuntimeError, match="host-to-device"):
            spmdc.device_put(host)
    with caplog.at_level(logging.WARNING), spmdc.transfer_guard_host_to_device("log"):
        np.testing.assert_array_equal(np.asarray(f(host)), [2, 2, 2])
    assert _H2D.split("Disallowed ")[1] in caplog.text
    assert spmdc.transfer_guard_host_to_device.value is None
    with pytest.raises(ValueError, match=r"must be None or in \['allow', 'log'"):
        with spmdc.transfer_guard("bogus"):
            pass


@pytest.mark.devices(2)
def test_default_device_places_new_arrays_and_computations():
    second = spmdc.devices()[1]
    with spmdc.default_device(second):
        assert spmdc.config.jax_default_device == second
        made = jnp.ones(2)
        assert made.devices() == {second}
        assert spmdc.jit(lambda: jnp.zeros(3))().devices() == {second}
        assert spmdc.device_put(np.ones(2)).devices() == {second}
    assert jnp.ones(2).devices() == {spmdc.devices()[0]}
    with spmdc.default_device("cpu"):
        assert jnp.ones(2).devices() == {spmdc.devices()[0]}
    with pytest.raises(ValueError, match="must be passed either a Device object"):
        spmdc.default_device(3)


def test_log_compiles_and_explain_cache_misses(caplog):
    def scale(x, n=2):
        return x * n
    jf = spmdc.jit(scale, static_argnums=1)
    three, four = jnp.ones(3), jnp.ones(4)
    with caplog.at_level(logging.DEBUG, logger="jax"):      # JAX's loggers, as programs
        with spmdc.log_compiles(True):
            jf(three)
        with spmdc.explain_cache_misses(True):
            jf(four)
            jf(four, 3)
    warnings_ = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings_[0].startswith("Finished tracing scale for jit in ")
    assert ("Compiling jit(scale) with global shapes and types (ShapedArray(float32[3]),)."
            in warnings_)
    assert any(m.startswith("Finished XLA compilation of jit(scale) in ") for m in warnings_)
    misses = [m for m in warnings_ if m.startswith("TRACING CACHE MISS")]
    assert misses[0].splitlines()[1:] == [
        f"  for scale defined at {__file__}:{scale.__code__.co_firstlineno}",
        "  all previously seen cache keys differ. For the closest previous key:",
        "  different input types:",
        "  * at x, now f32[4] and before f32[3]"]
    assert misses[1].endswith("* at static argument 1, now 3 and before not given")


def test_no_tracing_and_no_execution():
    g = spmdc.jit(lambda x: x * 4)
    three, five = jnp.ones(3), jnp.ones(5)
    g(three)
    with spmdc.no_tracing(True):
        np.testing.assert_array_equal(np.asarray(g(three)), [4, 4, 4])   # cached
        with pytest.raises(RuntimeError, match="re-tracing function <lambda> at .* for "
                                               "`jit`, but 'no_tracing' is set"):
            g(five)
    with spmdc.no_execution(True):
        with pytest.raises(RuntimeError, match="JAX tried to execute function .*no_execution"):
            g(three)


def test_enable_checks_runs_the_verifier(monkeypatch):
    monkeypatch.delenv("SPMDC_CHECKS", raising=False)
    assert passes.checks_enabled() is False
    with spmdc.enable_checks(True):
        assert passes.checks_enabled() is True


def test_live_arrays_and_small_names():
    x = jnp.arange(5.0) + 1
    assert any(a is x for a in spmdc.live_arrays())
    x.delete()
    assert not any(a is x for a in spmdc.live_arrays())
    y = jnp.ones(3)
    shard = y.addressable_shards[0]
    assert type(shard) is spmdc.Shard and shard.replica_id == 0
    assert spmdc.copy_to_host_async({"y": y})["y"] is y
    info = spmdc.print_environment_info(return_string=True)
    assert info.startswith("jax:    0.10.2\n") and "process_count: 1" in info
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert (spmdc.host_count(), spmdc.host_id(), spmdc.host_ids()) == (1, 0, [0])
    assert "jax.host_count has been renamed to jax.process_count" in str(caught[0].message)


def test_make_user_context_is_part_of_the_jit_key():
    ctx = spmdc.make_user_context(default_value=None)
    traced = []

    @spmdc.jit
    def f(x):
        traced.append(ctx.value)
        return x * (2 if ctx.value is None else ctx.value)
    x = jnp.ones(2)
    np.testing.assert_array_equal(np.asarray(f(x)), [2, 2])
    with ctx(3):
        assert ctx.value == 3 and ctx.get_global() is None
        np.testing.assert_array_equal(np.asarray(f(x)), [3, 3])
        f(x)
    np.testing.assert_array_equal(np.asarray(f(x)), [2, 2])       # the first trace again
    ctx.set_global(5)
    try:
        np.testing.assert_array_equal(np.asarray(f(x)), [5, 5])
    finally:
        ctx.set_global(None)
    assert traced == [None, 3, 5]


def test_softmax_custom_jvp_as_jax():
    x = jnp.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    where = jnp.array([[True, False, True], [True, True, True]])

    def loss(x):
        return jnp.sum(spmdc.nn.softmax(x, where=where) * jnp.arange(3.0))
    f = spmdc.jit(spmdc.nn.softmax)
    assert "custom_jvp" not in str(f.trace(x).jaxpr)          # off by default, as JAX
    with spmdc.softmax_custom_jvp(True):
        assert "custom_jvp" in str(f.trace(x).jaxpr)           # part of jit's key
        # JAX 0.10.2's values with jax_softmax_custom_jvp=True, bit for bit
        np.testing.assert_array_equal(np.asarray(spmdc.grad(loss)(x)), np.float32(
            [[-0.20998713374137878, 0.0, 0.20998728275299072],
             [-0.28227126598358154, -0.02387065812945366, 0.3061419725418091]]))
        tangent = spmdc.jvp(lambda x: spmdc.nn.softmax(x, axis=0), (x,), (jnp.ones_like(x),))[1]
        np.testing.assert_array_equal(np.asarray(tangent), np.zeros((2, 3), np.float32))


def test_debug_nans_turns_donation_off_so_the_de_optimized_call_runs():
    f = spmdc.jit(jnp.log, donate_argnums=0)
    x = -jnp.ones(2)
    with spmdc.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"nan\) encountered in log"):
            f(x)                            # not "Array has been deleted", as JAX
    assert not x.is_deleted()
    y = jnp.ones(2)
    f(y)
    assert y.is_deleted()                   # donated again once the checks are off
