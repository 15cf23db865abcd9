"""jit given both static_argnums and static_argnames takes each as given, as JAX does
(it completes one from the other only when one is absent): Flax's ``nn.jit`` marks its
leading fingerprint static by number and the method's keywords by name, while a positional
argument at the named keyword's position stays traced."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import spmdc


def _method(a, b):
    return a


def test_both_given_are_not_completed_from_the_signature():
    seen = []

    @functools.partial(spmdc.jit, static_argnums=(0,), static_argnames=["b"])
    @functools.wraps(_method)                 # the signature says (a, b): b is position 1
    def jitted(fingerprint, groups, *args, **kwargs):
        seen.append((fingerprint, kwargs["b"]))
        return groups["x"] * 2 + args[0]
    out = jitted(("fp",), {"x": np.float32(1.5)}, np.float32(1.0), b="hi")
    np.testing.assert_allclose(out, 4.0)
    assert seen == [(("fp",), "hi")]


def test_one_given_still_completes_the_other():
    f = spmdc.jit(lambda a, b, c: a if b == "x" else a + c, static_argnames=("b",))
    np.testing.assert_allclose(f(1.0, "y", 2.0), 3.0)    # b by position is static too
    g = spmdc.jit(lambda a, b, c: a if b == "x" else a + c, static_argnums=(1,))
    np.testing.assert_allclose(g(1.0, c=2.0, b="x"), 1.0)


def test_both_given_leave_a_positional_argument_traced():
    f = spmdc.jit(lambda a, b, c: a + c, static_argnums=(), static_argnames=("b",))
    with pytest.raises(TypeError):
        f(1.0, "y", 2.0)
