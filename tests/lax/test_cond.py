"""lax.cond and lax.switch (and lax.platform_dependent, a switch on the platform): values
against Python and the NumPy reference interpreter, jit / vmap (batched and unbatched
predicates and indices) / grad (against central finite differences), pytrees and closures,
and the user-facing errors."""
import functools

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

SMALL = settings(max_examples=8)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# finite differences with a step that suits float32 programs


numeric_grad = functools.partial(oracle.numeric_grad, eps=1e-3)


def branchy(p, x):
    return lax.cond(p > 0, lambda v: jnp.sin(v) * 2.0, lambda v: jnp.cos(v) - 1.0, x)


@SMALL
@given(st.floats(-3, 3), st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_cond_values_match_python(p, xs):
    x, p = np.asarray(xs, np.float32), np.float32(p)
    want = np.sin(x) * 2 if p > 0 else np.cos(x) - 1
    close(spmdc.jit(branchy)(np.float32(p), x), want)
    close(oracle.interpreted(branchy, np.float32(p), x)[0], want)


def test_cond_pytrees_closures_and_eager_call():
    def f(p, x, w):
        # a pytree of operands and of results; branches close over the traced w
        return lax.cond(p, lambda t: {"a": t[0] * w, "b": t[1]},
                        lambda t: {"a": t[0] + w, "b": t[1] * 2}, (x, x + 1))
    out = spmdc.jit(f)(True, np.float32(3), np.float32(2))
    assert set(out) == {"a", "b"}
    close(out["a"], 6.0)
    close(out["b"], 4.0)
    out = spmdc.jit(f)(False, np.float32(3), np.float32(2))
    close(out["a"], 5.0)
    close(out["b"], 8.0)
    close(lax.cond(False, lambda x: x + 1, lambda x: x - 1, 3.0), 2.0)  # eager


def test_switch_clamps_the_index_like_jax():
    branches = [lambda x: x, lambda x: x * 2, lambda x: x * 3]
    f = spmdc.jit(lambda i, x: lax.switch(i, branches, x))
    for i, k in [(-5, 1), (0, 1), (1, 2), (2, 3), (9, 3)]:
        close(f(i, np.float32(1.5)), 1.5 * k)


def test_vmap_cond_with_batched_and_unbatched_predicate():
    p = np.array([1.0, -1.0, 2.0, -0.5], np.float32)
    x = np.linspace(-1, 1, 4 * 3).reshape(4, 3).astype(np.float32)
    want = np.where(p[:, None] > 0, np.sin(x) * 2, np.cos(x) - 1)
    close(spmdc.vmap(branchy)(p, x), want)                          # batched predicate
    close(spmdc.vmap(branchy, in_axes=(None, 0))(np.float32(1), x), np.sin(x) * 2)
    close(spmdc.vmap(branchy, in_axes=(0, None))(p, x[0]),        # only pred batched
          np.where(p[:, None] > 0, np.sin(x[0]) * 2, np.cos(x[0]) - 1))


def test_vmap_switch_with_batched_index():
    branches = [lambda x: x, lambda x: x * 2, lambda x: x * 3]
    i = np.array([-1, 0, 1, 2, 7])
    got = spmdc.vmap(lambda i, x: lax.switch(i, branches, x))(i, np.ones(5, np.float32))
    close(got, [1, 1, 2, 3, 3])


def test_grad_of_cond_matches_finite_differences():
    def f(x):
        return jnp.sum(lax.cond(jnp.sum(x) > 0, lambda v: jnp.sin(v) * v,
                                lambda v: jnp.exp(v) * 3.0, x))
    g = spmdc.jit(spmdc.grad(f))
    for x in (np.array([0.3, 0.5, -0.2]), np.array([-0.3, -0.5, 0.2])):
        close(g(x.astype(np.float32)),
              numeric_grad(lambda v: f(v.astype(np.float32)), x), 2e-2)


def test_grad_through_cond_closure_and_vmap_of_grad():
    def f(w, x):
        return lax.cond(x > 0, lambda v: v * w * w, lambda v: v + w, x)
    close(spmdc.grad(f)(np.float32(3), np.float32(2)), 12.0)     # d(x w^2)/dw = 2xw
    close(spmdc.grad(f)(np.float32(3), np.float32(-2)), 1.0)
    xs = np.array([2.0, -2.0, 1.0], np.float32)
    close(spmdc.vmap(spmdc.grad(f), in_axes=(None, 0))(np.float32(3), xs), [12, 1, 6])


def test_cond_branches_of_different_types_are_an_error():
    with pytest.raises(TypeError, match=r"true_fun and false_fun must return identical "
                                        r"types.*float32\[\].*int32\[\]"):
        lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), jnp.float32(1))
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, 1.0)
    with pytest.raises(TypeError, match="pred must be a scalar"):
        lax.cond(jnp.ones(2) > 0, lambda x: x, lambda x: x, 1.0)


def test_cond_older_five_argument_form():
    out = lax.cond(True, 1.0, lambda x: x + 1, 2.0, lambda x: x - 1)
    assert float(out) == 2.0
    out = spmdc.jit(lambda p: lax.cond(p, 1.0, lambda x: x + 1, 2.0, lambda x: x - 1))(False)
    assert float(out) == 1.0


@pytest.mark.cpu_platform
def test_platform_dependent_takes_the_cpu_branch():
    x = np.float32(2.0)
    f = lambda x: lax.platform_dependent(x, cpu=lambda v: v + 1, tpu=lambda v: v * 10,  # noqa
                                         default=lambda v: v - 1)
    assert float(spmdc.jit(f)(x)) == 3.0
    assert float(spmdc.grad(f)(x)) == 1.0
    np.testing.assert_allclose(lax.platform_dependent(x, cuda=jnp.sin, default=jnp.cos), np.cos(x))
    with pytest.raises(ValueError, match="no branch for the 'cpu' platform"):
        lax.platform_dependent(x, tpu=jnp.sin)
    with pytest.raises(ValueError, match="'cuda' or 'rocm'"):
        lax.platform_dependent(x, gpu=jnp.sin, default=jnp.cos)


def test_an_operand_every_branch_returns_unchanged_is_forwarded():
    # Note [cond forwards its pass-through outputs]: as JAX, so under vmap with a mapped
    # predicate an unmapped operand passed through stays unmapped (out_axes=None works;
    # spmdc raised that it depends on the mapped inputs), and a changed one is JAX's error.
    def f(b, i, s):
        return lax.cond(i % 2 == 0, lambda b, s: (b, s + 1), lambda b, s: (b, s), b, s)
    b, steps = spmdc.vmap(f, in_axes=(None, 0, 0), out_axes=(None, 0))(
        jnp.float32(7), jnp.arange(8), jnp.zeros(8, jnp.uint32))
    assert float(b) == 7.0 and b.shape == ()
    np.testing.assert_array_equal(np.asarray(steps), [1, 0, 1, 0, 1, 0, 1, 0])
    jaxpr = spmdc.make_jaxpr(f)(np.float32(7), 2, np.uint32(3))
    assert jaxpr.jaxpr.outvars[0] is jaxpr.jaxpr.invars[0]
    assert len(jaxpr.jaxpr.eqns[-1].outvars) == 1           # the cond returns s only

    def g(b, i):
        return lax.cond(i % 2 == 0, lambda b: b + 1, lambda b: b, b)
    with pytest.raises(ValueError, match="at vmap out_axes, got axis spec None but output "
                                         "was batched on axis 0"):
        spmdc.vmap(g, in_axes=(None, 0), out_axes=None)(jnp.float32(7), jnp.arange(8))
