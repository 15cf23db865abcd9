"""Control flow called outside any trace is traced once per function and abstract
arguments, as JAX caches its traced bodies (Note [eager control flow traces once per
function] in spmdc/lax/eager_control_flow.py)."""
from __future__ import annotations

import gc
import weakref

import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.lax import eager_control_flow


def test_an_eager_scan_traces_its_body_once_per_signature():
    traces = []

    def step(carry, x):
        traces.append(1)
        return carry + x, carry * x
    xs = np.arange(1.0, 6.0, dtype=np.float32)
    for _ in range(3):
        carry, ys = lax.scan(step, np.float32(0.0), xs)
        assert float(carry) == 15.0
        np.testing.assert_array_equal(np.asarray(ys), [0.0, 2.0, 9.0, 24.0, 50.0])
    assert len(traces) == 1
    carry, _ = lax.scan(step, np.float32(0.0), xs[:2])        # another length
    assert float(carry) == 3.0 and len(traces) == 2
    carry, _ = lax.scan(step, np.float32(0.0), xs, reverse=True)   # another parameter
    assert float(carry) == 15.0 and len(traces) == 3
    _, ys = lax.scan(step, 0.0, xs.astype(np.float64))   # another dtype (float32 without x64)
    assert ys.dtype == np.float32 and len(traces) == 4
    spmdc.clear_caches()
    lax.scan(step, np.float32(0.0), xs)
    assert len(traces) == 5


def test_other_eager_control_flow_traces_once_per_function():
    traces = []

    def body(i, v):
        traces.append("fori")
        return v * 2.0 + i

    def double(v):
        traces.append("while")
        return v * 2.0

    def below(v):
        return v < 100.0

    def square(x):
        traces.append("map")
        return x * x

    counts = []
    for _ in range(3):
        assert float(lax.fori_loop(0, 4, body, 1.0)) == 1.0 * 16 + 0 * 8 + 1 * 4 + 2 * 2 + 3
        assert float(lax.while_loop(below, double, 1.0)) == 128.0
        np.testing.assert_array_equal(np.asarray(lax.map(square, jnp.arange(3.0))), [0, 1, 4])
        assert float(lax.cond(True, square, double, 3.0)) == 9.0
        assert float(lax.switch(1, [square, double], 3.0)) == 6.0
        counts.append(len(traces))
    assert counts[0] > 0 and counts[2] == counts[1] == counts[0]   # traced on the first only
    assert traces.count("fori") == 1
    assert float(lax.fori_loop(0, 2, body, 1.0)) == 1.0 * 4 + 0 * 2 + 1   # new bounds
    assert traces.count("fori") == 2


def test_the_cache_lets_its_function_go():
    def make():
        def step(c, x):
            return c + x, x
        return step
    step = make()
    lax.scan(step, 0.0, np.ones(3, np.float32))
    assert step in eager_control_flow._eager_programs
    alive = weakref.ref(step)
    del step
    gc.collect()
    assert alive() is None


def test_uncacheable_functions_and_disable_jit_still_run():
    class Step:             # unhashable callable: traced every call
        __hash__ = None

        def __call__(self, c, x):
            return c + x, x
    carry, _ = lax.scan(Step(), 0.0, np.ones(4, np.float32))
    assert float(carry) == 4.0
    with spmdc.disable_jit():
        carry, ys = lax.scan(lambda c, x: (c * x, c), 1.0, np.arange(1.0, 5.0))
    assert float(carry) == 24.0
    np.testing.assert_array_equal(np.asarray(ys), [1.0, 1.0, 2.0, 6.0])
    # concrete array bounds (unhashable) are traced every call too
    assert float(lax.fori_loop(jnp.int32(0), jnp.int32(3), lambda i, v: v + i, 0)) == 3
