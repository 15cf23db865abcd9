"""Gradients at zeros, ties and kinks against JAX 0.10.2's (recorded, see grad_cases.py).

These are the places where a formula that is right almost everywhere gives a silently
wrong number: grad(jnp.prod) as prod / x is NaN at a zero (Note [products without
division]), |x| has slope 1 at 0 in JAX, and x.at[i].min/max share the cotangent among
the contributors equal to the result.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from grad_cases import cases

import spmdc
import spmdc.numpy as jnp
from spmdc.compiler.primitives.core import registry
from spmdc.core.tracing import bind

REFERENCE = json.loads((pathlib.Path(__file__).parent / "data" / "grad_reference.json")
                       .read_text())["cases"]


def _cumprod(x, axis, reverse):
    x = jnp.asarray(x)
    return bind(registry["cumprod"], x, axis=axis, reverse=reverse, weak=x.weak)


CASES = cases(spmdc, jnp, _cumprod)


def test_every_case_has_a_reference():
    assert sorted(CASES) == sorted(REFERENCE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_jax(name):
    fun, args = CASES[name]
    got = spmdc.tree_util.tree_leaves(fun(*args))
    want = REFERENCE[name]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        expected = np.array([np.nan if v is None else v for v in w["values"]],
                            np.float64).reshape(w["shape"])
        np.testing.assert_allclose(np.asarray(g, np.float64), expected, rtol=1e-5, atol=1e-6)
