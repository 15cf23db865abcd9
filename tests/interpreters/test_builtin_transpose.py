"""A transpose rule that a library gives a built-in primitive (Lineax gives
``jax._src.ad_util.stop_gradient_p`` one that passes the cotangent through) is used only
while transposing a linear program, as in JAX; grad elsewhere keeps spmdc's own rule
(Note [linearize and transpose] in spmdc/interpreters/ad.py)."""
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.passes.autodiff import vjp_rules
from spmdc.core.abstract import ShapedArray
from spmdc.extend.core import Primitive
from spmdc.interpreters import ad, mlir

# twice_sg(x) = 2 x, whose JVP rule applies stop_gradient to the tangent (a linear use)
twice_sg_p = Primitive("test_twice_sg")
twice_sg_p.def_impl(lambda x: 2 * x)
twice_sg_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
mlir.register_lowering(twice_sg_p, mlir.lower_fun(lambda x: 2 * x, multiple_results=False))


def _twice_sg_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return twice_sg_p.bind(x), 2 * lax.stop_gradient(t)


ad.primitive_jvps[twice_sg_p] = _twice_sg_jvp


def _pass_through(ct, x):
    return (ct,)


def test_library_transpose_of_stop_gradient_applies_only_while_transposing():
    from spmdc._src.ad_util import stop_gradient_p
    own = vjp_rules[stop_gradient_p]
    ad.primitive_transposes[stop_gradient_p] = _pass_through
    try:
        x = jnp.array([1.0, -2.0, 3.0])
        # reverse mode through stop_gradient itself: still zero, as in JAX
        g = spmdc.grad(lambda v: jnp.sum(lax.stop_gradient(v) * v))(x)
        np.testing.assert_allclose(np.asarray(g), [1.0, -2.0, 3.0])
        g = spmdc.jit(spmdc.grad(lambda v: jnp.sum(lax.stop_gradient(v) ** 2)))(x)
        np.testing.assert_allclose(np.asarray(g), [0.0, 0.0, 0.0])
        # transposing twice_sg's JVP meets stop_gradient on the tangent: the library's rule
        g = spmdc.grad(lambda v: jnp.sum(twice_sg_p.bind(v) * 3))(x)
        np.testing.assert_allclose(np.asarray(g), [6.0, 6.0, 6.0])
    finally:
        del ad.primitive_transposes[stop_gradient_p]
    assert vjp_rules[stop_gradient_p] is own        # spmdc's rule is back
    g = spmdc.grad(lambda v: jnp.sum(lax.stop_gradient(v) ** 2 + v))(jnp.ones(2))
    np.testing.assert_allclose(np.asarray(g), [1.0, 1.0])
