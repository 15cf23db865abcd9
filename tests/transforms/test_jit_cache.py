"""The jit cache follows the function: new wrappers of one function share its programs."""
import gc
import weakref

import numpy as np

import spmdc
from spmdc.transforms import jit as jit_module


def test_fresh_wrappers_in_a_loop_compile_once():
    runs = []

    def f(x):
        runs.append(1)
        return x * 2 + 1

    x = np.arange(4.0, dtype=np.float32)
    wrappers = [spmdc.jit(f) for _ in range(100)]
    outs = [w(x) for w in wrappers]
    assert len(runs) == 1
    assert sum(w.trace_count for w in wrappers) == 1
    for out in outs:
        np.testing.assert_array_equal(np.asarray(out), x * 2 + 1)
    # a new signature is compiled once more, for every wrapper
    y = np.arange(3, dtype=np.int32)
    assert [int(v) for v in spmdc.jit(f)(y)] == [1, 3, 5]
    assert [int(v) for v in spmdc.jit(f)(y)] == [1, 3, 5]
    assert len(runs) == 2


def test_options_are_part_of_the_key():
    runs = []

    def f(x, n):
        runs.append(n)
        return x * n

    x = np.ones(2, np.float32)
    a = spmdc.jit(f, static_argnums=1)(x, 3)
    b = spmdc.jit(f, static_argnums=1)(x, 3)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert runs == [3]
    spmdc.jit(f, static_argnums=1)(x, 4)
    assert runs == [3, 4]
    # traced n: another program
    c = spmdc.jit(f)(x, 3)
    np.testing.assert_array_equal(np.asarray(c), 3 * x)
    assert len(runs) == 3


def test_cache_dies_with_the_function():
    def make():
        def f(x):
            return x + 1
        return f

    f = make()
    spmdc.jit(f)(np.float32(1.0))
    assert f in jit_module._shared
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None


def test_unweakrefable_callable_is_not_shared():
    class Add:
        __slots__ = ()                 # no __weakref__: cannot be a weak key

        def __call__(self, x):
            return x + 1

    add = Add()
    w1, w2 = spmdc.jit(add), spmdc.jit(add)
    assert int(w1(np.int32(1))) == 2 and int(w2(np.int32(1))) == 2
    assert w1.trace_count == 1 and w2.trace_count == 1


def test_global_read_at_trace_time_is_baked_in_until_clear_caches():
    # JAX 0.10.2 gives 2.0, 2.0, then 3.0 after jax.clear_caches()
    scale = {"g": 1.0}

    def f(x):
        return x + scale["g"]

    assert float(spmdc.jit(f)(np.float32(1.0))) == 2.0
    scale["g"] = 2.0
    existing = spmdc.jit(f)
    assert float(existing(np.float32(1.0))) == 2.0
    spmdc.clear_caches()
    assert float(spmdc.jit(f)(np.float32(1.0))) == 3.0
    one = spmdc.numpy.ones((), np.float32)          # on the device: C++ fast path
    for _ in range(3):
        assert float(existing(one)) == 3.0
    scale["g"] = 5.0
    spmdc.clear_caches()
    # an existing wrapper re-traces too (its C++ fast path is dropped)
    assert float(existing(one)) == 6.0
