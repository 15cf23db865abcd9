"""The ``jax._src`` and ``jax.custom_derivatives`` names Equinox and Lineax read at import
(``jax._src.dispatch.wait_for_tokens``, ``jax._src.ad_util.stop_gradient_p``,
``jax.custom_derivatives.custom_jvp_call_p``), under the alias, each spmdc's real object."""
import textwrap

import alias_programs
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc import custom_derivatives, lax


def test_custom_jvp_call_p_is_the_primitive_of_custom_jvp_equations():
    @spmdc.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 2 * t[0]))
    jaxpr = spmdc.make_jaxpr(f)(1.0)
    (eqn,) = jaxpr.jaxpr.eqns
    assert eqn.primitive is custom_derivatives.custom_jvp_call_p
    assert str(eqn.primitive) == "custom_jvp_call"

    @spmdc.custom_vjp
    def g(x):
        return jnp.sin(x)

    g.defvjp(lambda x: (g(x), None), lambda _, ct: (ct,))
    (eqn,) = spmdc.make_jaxpr(g)(1.0).jaxpr.eqns
    assert eqn.primitive is custom_derivatives.custom_vjp_call_p


def test_wait_for_tokens_and_stop_gradient_p():
    from spmdc._src import ad_util, dispatch
    spmdc.debug.callback(lambda: None)
    assert dispatch.wait_for_tokens() is None
    assert ad_util.stop_gradient_p is lax.stop_gradient_p
    y = ad_util.stop_gradient_p.bind(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(y), [1.0, 2.0])


ALIAS_PROGRAM = alias_programs.register("src_equinox_names", textwrap.dedent("""
    import atexit, sys, spmdc
    sys.modules['jax'] = spmdc
    import jax._src.dispatch
    from jax._src.ad_util import stop_gradient_p
    import jax.custom_derivatives
    atexit.unregister(jax._src.dispatch.wait_for_tokens)     # as equinox/_jit.py does
    print(jax._src.dispatch is spmdc._src.dispatch, stop_gradient_p is jax.lax.stop_gradient_p,
          jax.custom_derivatives.custom_jvp_call_p.name)
    """))


def test_the_names_resolve_under_the_jax_alias():
    out = alias_programs.run(ALIAS_PROGRAM)      # one child for the alias programs
    assert out.stdout.split() == ["True", "True", "custom_jvp_call"], out.stderr
