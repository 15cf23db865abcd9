"""vjp's ``vjp_fn`` and linearize's linear function are ``tree_util.Partial``s over their
residuals, as in JAX: they cross jit and vmap and serve as custom_vjp residuals (Note
[vjp_fn is a Partial] in grad.py, Note [the linear function of linearize is a Partial]
in forward.py)."""
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc.tree_util import Partial, tree_leaves


def f(x):
    return jnp.sin(x) * x


X = np.arange(3.0, dtype=np.float32)
# d/dx sin(x) x = cos(x) x + sin(x)
WANT = np.cos(X) * X + np.sin(X)


def test_vjp_fn_is_a_partial_over_the_primals():
    _, vjp_fn = spmdc.vjp(f, X)
    assert isinstance(vjp_fn, Partial)
    leaves = tree_leaves(vjp_fn)
    assert len(leaves) == 1
    np.testing.assert_array_equal(np.asarray(leaves[0]), X)
    # it crosses jit as an argument, its residuals traced
    (g,) = spmdc.jit(lambda fn, c: fn(c))(vjp_fn, jnp.ones(3))
    np.testing.assert_allclose(np.asarray(g), WANT, rtol=1e-6)


def test_vjp_fn_as_a_custom_vjp_residual():
    @spmdc.custom_vjp
    def h(x):
        return f(x)

    def fwd(x):
        return spmdc.vjp(f, x)

    def bwd(vjp_fn, ct):
        return vjp_fn(ct)

    h.defvjp(fwd, bwd)
    g = spmdc.jit(spmdc.grad(lambda x: h(x).sum()))(X)
    np.testing.assert_allclose(np.asarray(g), WANT, rtol=1e-6)


def test_linearize_fn_is_a_partial_that_vmap_and_jit_return():
    # Note [the linear function of linearize is a Partial] (forward.py): JAX returns the
    # same pytree from jit(vmap(linearize)), its residuals batched.
    y, lin = spmdc.linearize(f, X)
    assert isinstance(lin, Partial)
    np.testing.assert_allclose(np.asarray(lin(jnp.ones(3))), WANT, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(spmdc.jit(lambda fn, t: fn(t))(lin, jnp.ones(3))),
                               WANT, rtol=1e-6)
    out, batched = spmdc.jit(spmdc.vmap(lambda x: spmdc.linearize(f, x)))(X)
    assert isinstance(batched, Partial)
    np.testing.assert_allclose(np.asarray(out), np.asarray(y), rtol=1e-6)
    assert all(leaf.shape[0] == 3 for leaf in tree_leaves(batched))
