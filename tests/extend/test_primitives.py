"""jax.extend.core.primitives (spmdc/extend/core/primitives.py): JAX's primitive objects
under JAX's names are spmdc's own, and the call primitives apply their sub-jaxpr (Note
[call primitives])."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.custom_derivatives import custom_jvp_call_p
from spmdc.extend.core import ClosedJaxpr, Jaxpr, Literal, Var, new_jaxpr_eqn
from spmdc.extend.core import primitives as P

X = np.float32(0.5)


def _sin_twice(x):
    return jnp.sin(x) * 2


def test_names_are_the_objects_jaxprs_hold():
    assert P.sin_p is lax.sin_p and P.cond_p is lax.cond_p and P.scan_p is lax.scan_p
    assert P.custom_jvp_call_p is custom_jvp_call_p
    assert P.convert_element_type_p is lax.convert_element_type_p
    eqns = spmdc.make_jaxpr(lambda x: jnp.sin(x).astype(jnp.int32))(X).jaxpr.eqns
    assert [e.primitive for e in eqns] == [P.sin_p, P.convert_element_type_p]


def _provenance(jaxpr, inputs, rules):
    """NumPyro's ``track_deps_jaxpr`` (numpyro/ops/provenance.py), in a few lines."""
    env = {}

    def read(v):
        return frozenset() if isinstance(v, Literal) else env.get(v, frozenset())
    for v, p in zip(jaxpr.invars, inputs, strict=True):
        env[v] = p
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        outs = rules[eqn.primitive](eqn, ins) if eqn.primitive in rules else \
            [frozenset().union(*ins)] * len(eqn.outvars)
        for v, p in zip(eqn.outvars, outs, strict=True):
            env[v] = read(v) | p
    return [read(v) for v in jaxpr.outvars]


def test_a_provenance_walk_keyed_by_the_call_primitives():
    rules = {P.jit_p: lambda e, ins: _provenance(e.params["jaxpr"].jaxpr, ins, rules),
             P.closed_call_p: lambda e, ins: _provenance(e.params["call_jaxpr"].jaxpr, ins,
                                                         rules)}

    def f(x, y, z):
        return spmdc.jit(lambda a, b: a * b + 1.0)(x, y), z * 0.0 + 2.0
    closed = spmdc.make_jaxpr(f)(X, X, X)
    names = [frozenset({n}) for n in "xyz"]
    assert _provenance(closed.jaxpr, names, rules) == [frozenset("xy"), frozenset("z")]


def test_call_primitives_apply_their_jaxpr():
    closed = spmdc.make_jaxpr(_sin_twice)(X)
    want = np.float32(np.sin(X) * 2)
    assert np.asarray(P.jit_p.bind(X, jaxpr=closed)[0]) == want
    assert np.asarray(P.closed_call_p.bind(X, call_jaxpr=closed)[0]) == want
    assert np.asarray(P.call_p.bind(X, call_jaxpr=closed.jaxpr)[0]) == want
    assert np.asarray(P.call_p.bind(lambda x: [_sin_twice(x)], X)[0]) == want   # outputs: a list
    # JAX 0.10.2's get_bind_params: a dict, the call's function under ``subfuns``
    params = P.closed_call_p.get_bind_params({"call_jaxpr": closed})
    assert list(params) == ["subfuns"] and len(params["subfuns"]) == 1
    assert np.asarray(P.closed_call_p.bind(X, **params)[0]) == want
    assert np.asarray(P.closed_call_p.bind(params["subfuns"][0], X)[0]) == want
    assert P.jit_p.get_bind_params({"jaxpr": closed}) == {"jaxpr": closed}
    # under a transformation the jaxpr is inlined, and differentiated
    g = spmdc.grad(lambda x: P.jit_p.bind(x, jaxpr=closed, name="f", inline=False)[0])(X)
    np.testing.assert_allclose(g, 2 * np.cos(X), rtol=1e-6)


def test_eval_jaxpr_runs_a_closed_call_equation():
    closed = spmdc.make_jaxpr(_sin_twice)(X)
    a, b = Var(closed.in_avals[0]), Var(closed.out_avals[0])
    outer = Jaxpr([], [a], [b], [new_jaxpr_eqn([a], [b], P.closed_call_p,
                                               {"call_jaxpr": closed}, set())])
    out = spmdc.extend.core.jaxpr_as_fun(ClosedJaxpr(outer, []))(X)
    assert np.asarray(out[0]) == np.float32(np.sin(X) * 2)


def test_jit_params_spmdc_cannot_honour_are_refused():
    closed = spmdc.make_jaxpr(_sin_twice)(X)
    with pytest.raises(TypeError, match="donated_invars"):
        P.jit_p.bind(X, jaxpr=closed, donated_invars=(True,))
    with pytest.raises(TypeError, match="jaxpr="):
        P.jit_p.bind(X)
    with pytest.raises(TypeError, match="unexpected param 'axis'"):
        P.closed_call_p.bind(X, call_jaxpr=closed, axis=0)


@pytest.mark.slow          # a fresh interpreter (the alias changes sys.modules)
def test_importable_under_jax_name():
    code = ("import sys, spmdc; sys.modules['jax'] = spmdc\n"
            "from jax.extend.core.primitives import call_p, closed_call_p, jit_p, sin_p\n"
            "import jax.lax\n"
            "assert sin_p is jax.lax.sin_p\n"
            "print(call_p, closed_call_p, jit_p)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "call closed_call jit", out.stderr


def test_custom_jvp_call_hands_its_function_and_rule_over_as_subfuns():
    # JAX 0.10.2: get_bind_params gives (fun, jvp) under ``subfuns``; Equinox's
    # finalise_jaxpr calls ``subfuns[0]``, and rebinding keeps the rule
    V = np.arange(1.0, 4.0, dtype=np.float32)

    @spmdc.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), 3.0 * tangents[0]         # on purpose not sin's derivative
    (eqn,) = spmdc.make_jaxpr(f)(V).eqns
    assert eqn.primitive.name == "custom_jvp_call"
    params = eqn.primitive.get_bind_params(eqn.params)
    assert sorted(params) == ["subfuns", "symbolic_zeros"]
    fun, jvp = params["subfuns"]
    np.testing.assert_allclose(fun.call_wrapped(V)[0], np.sin(V), rtol=1e-6)
    out, tangent = jvp.call_wrapped(V, np.ones(3, np.float32))
    np.testing.assert_allclose(out, np.sin(V), rtol=1e-6)
    np.testing.assert_allclose(tangent, np.full(3, 3.0))

    def g(x):
        return eqn.primitive.bind(x, **params)[0]
    np.testing.assert_allclose(spmdc.jit(g)(V), np.sin(V), rtol=1e-6)
    np.testing.assert_allclose(spmdc.jvp(g, (V,), (np.ones(3, np.float32),))[1], np.full(3, 3.0))
    np.testing.assert_allclose(spmdc.grad(lambda x: g(x).sum())(V), np.full(3, 3.0))
    with pytest.raises(TypeError, match="subfuns must be \\(fun, jvp\\)"):
        eqn.primitive.bind(V, subfuns=(fun,), symbolic_zeros=False)
