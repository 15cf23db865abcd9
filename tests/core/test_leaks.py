"""jax.check_tracer_leaks / the jax_check_tracer_leaks option: a traced value kept past
its trace is an UnexpectedTracerError when the trace ends, only while checking is on."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc


def test_a_leaked_tracer_is_reported_when_checking():
    kept = []

    def leaky(x):
        kept.append(x * 2)
        return x + 1
    np.testing.assert_allclose(spmdc.jit(leaky)(1.0), 2.0)      # off: no check
    with spmdc.check_tracer_leaks():
        with pytest.raises(spmdc.errors.UnexpectedTracerError, match="leaked"):
            spmdc.jit(lambda x: leaky(x) * 3)(2.0)
        np.testing.assert_allclose(spmdc.jit(lambda x: x * 3)(2.0), 6.0)
        with spmdc.check_tracer_leaks(False):
            np.testing.assert_allclose(spmdc.jit(lambda x: leaky(x) * 5)(2.0), 15.0)


def test_config_option_and_bad_values():
    assert spmdc.config.jax_check_tracer_leaks is False
    spmdc.config.update("jax_check_tracer_leaks", True)
    try:
        assert spmdc.config.read("jax_check_tracer_leaks") is True
        with pytest.raises(spmdc.errors.UnexpectedTracerError):
            kept = []
            spmdc.jit(lambda x: kept.append(x) or x)(1.0)
    finally:
        spmdc.config.update("jax_check_tracer_leaks", False)
    with pytest.raises(TypeError, match="True or False"):
        spmdc.config.update("jax_check_tracer_leaks", "yes")
    with pytest.raises(TypeError, match="True or False"):
        with spmdc.check_tracer_leaks("no"):
            pass


def test_checking_leaks_is_check_tracer_leaks_on():
    # chex's tests wrap transformed calls in `with jax.checking_leaks():`.
    kept = []

    def leaky(x):
        kept.append(x + 1)
        return x * 2
    with spmdc.checking_leaks():
        with pytest.raises(spmdc.errors.UnexpectedTracerError, match="leaked"):
            spmdc.jit(leaky)(3.0)
        np.testing.assert_allclose(spmdc.jit(lambda x: x - 1)(3.0), 2.0)
    np.testing.assert_allclose(spmdc.jit(lambda x: leaky(x) + 1)(3.0), 7.0)   # off again


def test_a_trace_of_concrete_values_leaks_nothing_of_its_own():
    # checkify's eager path traces with the argument values known (Note [concrete
    # values while tracing]); the tracer of its last argument was held by the tracer's own
    # loop variable, a false leak under chex's `with jax.checking_leaks():`
    from spmdc.experimental import checkify
    with spmdc.checking_leaks():
        err, out = checkify.checkify(lambda x, y: x * y + 1)(np.ones(3), np.full(3, 2.0))
    assert err.get() is None
    np.testing.assert_allclose(out, 3.0)


def test_eval_shape_of_a_function_returning_its_argument_leaks_nothing():
    # Flax validates a module's setup with eval_shape(lambda x: x, 0) while its tabulate
    # checks for leaks: eval_shape itself kept the output tracers when the trace ended.
    with spmdc.checking_leaks():
        out = spmdc.eval_shape(lambda x, s: (x, s, x * 2), 0, spmdc.ShapeDtypeStruct((2,), "f4"))
    assert [(o.shape, str(o.dtype), o.weak_type) for o in out] == [
        ((), "int32", True), ((2,), "float32", False), ((), "int32", True)]


def test_the_aux_output_of_grad_and_vjp_is_not_a_leak():
    # Flax's nn.vjp returns its module's state as vjp's aux: grad and vjp kept the aux
    # tracers in a box while the trace ended, which the leak check reported.
    with spmdc.checking_leaks():
        (value, aux), g = spmdc.value_and_grad(
            lambda x: (x * x, {"y": x * 3, "n": 1}), has_aux=True)(2.0)
        out, vjp_fn, aux2 = spmdc.vjp(lambda x: (x * 2, {"z": x + 1, "s": "a"}), 3.0,
                                      has_aux=True)
        (ct,) = vjp_fn(1.0)
    assert (float(value), float(aux["y"]), aux["n"], float(g)) == (4.0, 6.0, 1, 4.0)
    assert (float(out), float(aux2["z"]), aux2["s"], float(ct)) == (6.0, 4.0, "a", 2.0)
