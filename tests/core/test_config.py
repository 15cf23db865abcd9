"""spmdc.config (spmdc/core/config.py): unknown options and bad values, options that come
too late, enable_x64, debug_nans, disable_jit, and the device count from XLA_FLAGS and
the config (in fresh interpreters)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


@pytest.mark.cpu_platform
def test_config_unknown_option_and_bad_values():
    with pytest.raises(AttributeError, match="unknown config option 'jax_nope'.*jax_enable_x64"):
        spmdc.config.update("jax_nope", True)
    with pytest.raises(TypeError, match="True or False"):
        spmdc.config.update("jax_debug_nans", "yes")
    with pytest.raises(ValueError, match="spmdc runs on 'cpu' or 'cuda'"):
        spmdc.config.update("jax_platform_name", "tpu")
    spmdc.devices()
    with pytest.raises(RuntimeError, match="came too late: spmdc's cpu client already exists"):
        spmdc.config.update("jax_platform_name", "gpu")
    spmdc.config.update("jax_platform_name", "cpu")
    assert spmdc.config.jax_platforms == "cpu"
    assert spmdc.config.jax_enable_x64 is False
    assert spmdc.config.read("jax_num_cpu_devices") == spmdc.device_count()


@pytest.mark.cpu_platform
def test_num_cpu_devices_after_first_use_is_an_error():
    spmdc.devices()
    with pytest.raises(RuntimeError, match="too late"):
        spmdc.config.update("jax_num_cpu_devices", spmdc.device_count() + 1)
    spmdc.config.update("jax_num_cpu_devices", spmdc.device_count())      # no change: fine


def test_enable_x64_switches_programs_already_cached():
    f = spmdc.jit(lambda: jnp.ones(2) * 1.5)
    assert f().dtype == np.float32
    with spmdc.enable_x64():
        assert f().dtype == np.float64 and f().dtype == np.float64
        assert spmdc.config.jax_enable_x64 is True
    assert f().dtype == np.float32
    spmdc.config.update("jax_enable_x64", True)
    try:
        assert f().dtype == np.float64
    finally:
        spmdc.config.update("jax_enable_x64", False)
    assert f().dtype == np.float32


@pytest.mark.devices(2)
def test_debug_nans_raises_for_jit_and_pmap_then_turns_off():
    f = spmdc.jit(jnp.log)
    spmdc.config.update("jax_debug_nans", True)
    try:
        np.testing.assert_allclose(f(jnp.ones(2)), [0.0, 0.0])
        # as JAX: the de-optimized call names the operation (and spmdc the user's line)
        with pytest.raises(FloatingPointError,
                           match=r"invalid value \(nan\) encountered in log \(at .*"
                                 r"test_config.py"):
            f(-jnp.ones(2))
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered "
                                                     r"in log"):
            spmdc.pmap(jnp.log)(-jnp.ones(2))
    finally:
        spmdc.config.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(f(-jnp.ones(2)))).all()


def test_disable_jit_runs_python_control_flow():
    def absolute(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(spmdc.ConcretizationTypeError):
        spmdc.jit(absolute)(-3.0)
    with spmdc.disable_jit():
        assert float(spmdc.jit(absolute)(-3.0)) == 3.0
        assert spmdc.config.jax_disable_jit is False   # the context is not the global flag
    with pytest.raises(spmdc.ConcretizationTypeError):
        spmdc.jit(absolute)(-3.0)
    spmdc.config.update("jax_disable_jit", True)
    try:
        assert float(spmdc.jit(absolute)(-2.0)) == 2.0
    finally:
        spmdc.config.update("jax_disable_jit", False)


def _run(code, **env):
    full = {**os.environ, **env}
    full.pop("SPMDC_CPU_DEVICES", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.cpu_platform
def test_device_count_from_xla_flags_and_config():
    r = _run("import spmdc; print(spmdc.device_count())",
             XLA_FLAGS="--xla_force_host_platform_device_count=4")
    assert r.stdout.strip() == "4", r.stderr
    r = _run("""
        import spmdc
        spmdc.config.update('jax_num_cpu_devices', 3)
        print(spmdc.device_count(), spmdc.pmap(lambda x: x * 2)(spmdc.numpy.ones(3)).shape)
        """)
    assert r.stdout.strip() == "3 (3,)", r.stderr
    r = _run("import spmdc; spmdc.devices()",
             XLA_FLAGS="--xla_force_host_platform_device_count=x")
    assert r.returncode != 0 and "positive integer" in r.stderr


def test_parse_flags_with_absl_applies_jax_options_from_argv(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["prog", "--jax_check_tracer_leaks", "-v",
                                      "--jax_numpy_dtype_promotion=strict", "--other=1",
                                      "--", "--jax_debug_nans"])
    try:
        spmdc.config.parse_flags_with_absl()
        assert spmdc.config.jax_check_tracer_leaks is True
        assert spmdc.config.jax_numpy_dtype_promotion == "strict"
        assert spmdc.config.jax_debug_nans is False          # after "--": not a flag
        monkeypatch.setattr(sys, "argv", ["prog", "--nojax_check_tracer_leaks",
                                          "--jax_numpy_dtype_promotion=standard"])
        spmdc.config.parse_flags_with_absl()
        assert spmdc.config.jax_check_tracer_leaks is False
    finally:
        spmdc.config.update("jax_check_tracer_leaks", False)
        spmdc.config.update("jax_numpy_dtype_promotion", "standard")


def test_x64_enabled_is_jaxs_older_name_for_enable_x64():
    # jaxopt's and distrax's test helpers read jax.config.x64_enabled
    assert spmdc.config.x64_enabled is spmdc.config.jax_enable_x64 is False
    with spmdc.enable_x64():
        assert spmdc.config.x64_enabled is True
        assert jnp.asarray(1.0).dtype == np.float64
    assert spmdc.config.x64_enabled is False
