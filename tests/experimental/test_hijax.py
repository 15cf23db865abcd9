"""jax.experimental.hijax (spmdc/experimental/hijax.py): a primitive defined by the
methods of a HiPrimitive subclass runs eagerly and under jit, jvp, grad and vmap with
those methods as its rules; and jax.extend.core.Effect (spmdc/extend/core/__init__.py)."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.experimental import hijax
from spmdc.extend.core import Effect
from spmdc.interpreters import ad

X = np.array([0.5, 1.0, 2.0], np.float32)


class ScaledSin(hijax.HiPrimitive):
    """k * sin(x): differentiated by its jvp, batched by its batch method."""

    def abstract_eval(self, x, *, k):
        return hijax.ShapedArray(x.shape, x.dtype), set()

    def to_lojax(self, x, *, k):
        return jnp.sin(x) * k

    def jvp(self, primals, tangents, *, k):
        (x,), (t,) = primals, tangents
        return self.bind(x, k=k), scale_p.bind(hijax.instantiate_zeros(t) * jnp.cos(x), k=k)

    def batch(self, args, dims, *, k):
        return self.bind(*args, k=k), dims[0]


class Scale(hijax.HiPrimitive):
    """k * x, linear: reverse mode goes through its transpose."""

    def abstract_eval(self, x, *, k):
        return hijax.ShapedArray(x.shape, x.dtype), set()

    def to_lojax(self, x, *, k):
        return x * k

    def jvp(self, primals, tangents, *, k):
        return self.bind(primals[0], k=k), self.bind(hijax.instantiate_zeros(tangents[0]), k=k)

    def transpose(self, ct, x, *, k):
        assert hijax.is_undefined_primal(x)
        return [None if type(ct) is hijax.Zero else self.bind(ct, k=k)]


class SinCos(hijax.HiPrimitive):
    multiple_results = True

    def abstract_eval(self, x):
        return [hijax.ShapedArray(x.shape, x.dtype)] * 2, set()

    def to_lojax(self, x):
        return [jnp.sin(x), jnp.cos(x)]


scaled_sin_p, scale_p, sincos_p = ScaledSin("scaled_sin"), Scale("scale"), SinCos("sincos")


def f(x):
    return scaled_sin_p.bind(x, k=3.0)


def test_eager_and_jit_run_to_lojax():
    np.testing.assert_allclose(f(X), 3 * np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(spmdc.jit(f)(X), 3 * np.sin(X), rtol=1e-6)
    s, c = spmdc.jit(sincos_p.bind)(X)
    np.testing.assert_allclose(s, np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(c, np.cos(X), rtol=1e-6)
    assert sincos_p.multiple_results and not scaled_sin_p.multiple_results


def test_the_equation_has_the_abstract_evaluations_type():
    jaxpr = spmdc.make_jaxpr(f)(X)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["scaled_sin"]
    assert jaxpr.out_avals[0].shape == (3,) and jaxpr.out_avals[0].dtype == np.float32


def test_jvp_grad_and_vmap_use_the_methods():
    _, t = spmdc.jvp(f, (X,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(t, 3 * np.cos(X), rtol=1e-6)
    jvp_jaxpr = spmdc.make_jaxpr(lambda x, t: spmdc.jvp(f, (x,), (t,)))(X, X)
    assert "scale" in str(jvp_jaxpr)                  # the tangent is ScaledSin.jvp's
    g = spmdc.grad(lambda x: f(x).sum())
    np.testing.assert_allclose(g(X), 3 * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(spmdc.jit(g)(X), 3 * np.cos(X), rtol=1e-6)
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(spmdc.vmap(f)(xs), 3 * np.sin(xs), rtol=1e-6)
    np.testing.assert_allclose(spmdc.jit(spmdc.vmap(spmdc.grad(lambda x: f(x).sum())))(xs),
                               3 * np.cos(xs), rtol=1e-6)
    assert ad.primitive_transposes[scale_p] == scale_p.transpose


def test_a_missing_rule_is_the_usual_error_naming_the_primitive():
    with pytest.raises(Exception, match="sincos"):
        spmdc.grad(lambda x: sincos_p.bind(x)[0].sum())(X)


def test_a_subclass_must_define_abstract_eval_and_to_lojax():
    class NoLowering(hijax.HiPrimitive):
        def abstract_eval(self, x):
            return x, set()

    with pytest.raises(TypeError, match="'nolo'.*to_lojax"):
        NoLowering("nolo")


class Log(Effect):
    pass


class Logged(hijax.HiPrimitive):
    def abstract_eval(self, x):
        return hijax.ShapedArray(x.shape, x.dtype), {Log()}

    def to_lojax(self, x):
        return x + 1


def test_an_effect_keeps_an_unused_equation():
    logged_p, plain_p = Logged("logged"), ScaledSin("plain")

    def g(x):
        logged_p.bind(x)
        plain_p.bind(x, k=1.0)
        return x * 2
    text = spmdc.jit(g).lower(X).as_text()      # logged: x + 1; plain: sin(x) * 1
    assert "stablehlo.add" in text and "stablehlo.sine" not in text
    np.testing.assert_allclose(spmdc.jit(g)(X), 2 * X)
