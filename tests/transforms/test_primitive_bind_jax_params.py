"""``Primitive.bind`` takes JAX's params, the ones a jaxpr's equations show (Note
[Primitive.bind] in spmdc/compiler/primitives/core.py): libraries that walk a jaxpr bind
its equations' primitives, or others, with ``**eqn.params`` (distrax's Lambda bijector
inverts ``exp`` by binding ``log_p`` with the ``exp`` equation's params)."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def _rebind(jaxpr, *args):
    # eval_jaxpr by hand, as libraries write it: each equation's primitive re-bound
    env = dict(zip(jaxpr.invars, args, strict=True))
    for eqn in jaxpr.eqns:
        vals = [v.val if isinstance(v, spmdc.extend.core.Literal) else env[v]
                for v in eqn.invars]
        out = eqn.primitive.bind(*vals, **eqn.params)
        outs = out if eqn.primitive.multiple_results else [out]
        env.update(zip(eqn.outvars, outs, strict=True))
    return [env[v] for v in jaxpr.outvars]


def f(v):
    return jnp.tanh(2.0 * jnp.exp(v) * v + 1.0) + jnp.sqrt(jnp.abs(v))


def test_equations_rebind_with_their_jax_params():
    x = jnp.linspace(-2.0, 2.0, 5)
    jaxpr = spmdc.make_jaxpr(f)(x).jaxpr
    assert any("accuracy" in e.params for e in jaxpr.eqns)        # exp, tanh, sqrt
    np.testing.assert_allclose(_rebind(jaxpr, x)[0], f(x), rtol=1e-6)
    np.testing.assert_allclose(spmdc.jit(lambda v: _rebind(jaxpr, v)[0])(x), f(x),
                               rtol=1e-6)


def test_an_inverse_bound_with_the_forward_equations_params():
    (exp_eqn,) = spmdc.make_jaxpr(jnp.exp)(1.0).jaxpr.eqns
    assert exp_eqn.params == {"accuracy": None}
    assert float(lax.log_p.bind(np.float32(np.e), **exp_eqn.params)) == pytest.approx(1.0)
    assert float(lax.mul_p.bind(np.float32(2), np.float32(3), out_dtype=None)) == 6.0
    with pytest.raises(TypeError, match="accuracy=None"):
        lax.exp_p.bind(np.float32(1.0), accuracy="highest")
