"""jax.extend.core.take_current_trace / set_current_trace (spmdc/extend/core/__init__.py), as
Haiku's ``_src/dot.py`` reads them: the trace taken is the current one, none is current
in the body, setting it back lets the traced values be used again, and a Trace of
another class is refused with a TypeError naming the fix."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc._src import core as jax_core
from spmdc.extend import core


def test_take_then_set_the_current_trace_under_jit():
    seen = []

    def f(x):
        with core.take_current_trace() as parent:
            seen.append((type(parent) is jax_core.Trace, jax_core.trace_state_clean()))
            with core.set_current_trace(parent):
                seen.append(jax_core.find_top_trace(()) is parent)
                y = jnp.sin(x) * 2
        return y + 1

    out = spmdc.jit(f)(np.float32(0.5))
    np.testing.assert_allclose(np.asarray(out), np.sin(np.float32(0.5)) * 2 + 1, rtol=1e-6)
    assert seen == [(True, True), True]


def test_take_current_trace_eagerly_yields_none_and_restores():
    with core.take_current_trace() as parent:
        assert parent is None
    seen = []

    def f(x):
        seen.append(jax_core.find_top_trace(()))
        with core.take_current_trace():
            pass
        seen.append(jax_core.find_top_trace(()))
        return x * 3

    assert float(spmdc.jit(f)(np.float32(2.0))) == 6.0
    assert seen[0] is seen[1] and seen[0] is not None


def test_a_library_trace_class_is_refused():
    class LibraryTrace(jax_core.Trace):
        def __init__(self):
            pass

    with pytest.raises(TypeError, match="LibraryTrace is not a trace spmdc made"):
        with core.set_current_trace(LibraryTrace()):
            pass
