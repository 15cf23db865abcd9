"""spmdc.random beyond bit equality: the distributions' moments (hypothesis draws the seeds
and parameters), gradients with respect to distribution parameters, typed key arrays as
values, argument errors, and key handling inside jitted steps."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc.numpy as jnp
from spmdc import random

N = 4000
FEW = settings(max_examples=4, deadline=None)
seeds = st.integers(0, 2**32 - 1)


def _close(samples, mean, var, what):
    samples = np.asarray(samples, np.float64)
    sd = math.sqrt(var)
    assert abs(samples.mean() - mean) < 6 * sd / math.sqrt(samples.size) + 1e-6, \
        f"{what}: mean {samples.mean()} vs {mean}"
    assert abs(samples.var() - var) < 0.2 * var + 1e-6, f"{what}: var {samples.var()} vs {var}"


@FEW
@given(seed=seeds, low=st.floats(-5, 5), width=st.floats(0.1, 10))
def test_uniform_moments_and_range(seed, low, width):
    x = np.asarray(random.uniform(random.key(seed), (N,), minval=low, maxval=low + width))
    assert (x >= np.float32(low)).all() and (x < np.float32(low + width) + 1e-5).all()
    _close(x, low + width / 2, width**2 / 12, "uniform")


@FEW
@given(seed=seeds)
def test_continuous_moments(seed):
    k = random.PRNGKey(seed)
    ks = random.split(k, 6)
    _close(random.normal(ks[0], (N,)), 0, 1, "normal")
    _close(random.exponential(ks[1], (N,)), 1, 1, "exponential")
    _close(random.gumbel(ks[2], (N,)), np.euler_gamma, np.pi**2 / 6, "gumbel")
    _close(random.laplace(ks[3], (N,)), 0, 2, "laplace")
    _close(random.logistic(ks[4], (N,)), 0, np.pi**2 / 3, "logistic")
    t = scipy.stats.truncnorm(-1.0, 2.0)
    x = np.asarray(random.truncated_normal(ks[5], -1.0, 2.0, (N,)))
    assert (x > -1).all() and (x < 2).all()
    _close(x, t.mean(), t.var(), "truncated_normal")


@FEW
@given(seed=seeds, a=st.floats(0.2, 20))
def test_gamma_family_moments(seed, a):
    ks = random.split(random.key(seed), 3)
    _close(random.gamma(ks[0], a, (N,)), a, a, "gamma")
    b = 2.0
    _close(random.beta(ks[1], a, b, (N,)), a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1)),
           "beta")
    x = np.asarray(random.dirichlet(ks[2], jnp.array([a, 1.0, 2.0]), (N,)))
    np.testing.assert_allclose(x.sum(-1), 1, rtol=1e-5)
    assert abs(x[:, 0].mean() - a / (a + 3)) < 0.05


@FEW
@given(seed=seeds, lam=st.sampled_from([0.5, 4.0, 9.5, 10.5, 60.0]))
def test_poisson_moments(seed, lam):
    x = np.asarray(random.poisson(random.PRNGKey(seed), lam, (N,)))
    assert x.dtype == np.int32 and (x >= 0).all()
    _close(x, lam, lam, "poisson")


@FEW
@given(seed=seeds, p=st.floats(0.05, 0.95))
def test_discrete_frequencies(seed, p):
    ks = random.split(random.PRNGKey(seed), 5)
    assert abs(np.asarray(random.bernoulli(ks[0], p, (N,))).mean() - p) < 0.05
    r = np.asarray(random.randint(ks[1], (N,), -3, 4))
    assert r.min() >= -3 and r.max() <= 3 and abs(r.mean()) < 0.2
    signs = np.asarray(random.rademacher(ks[2], (N,)))
    assert set(np.unique(signs)) <= {-1, 1} and abs(signs.mean()) < 0.1
    logits = np.log(np.array([p, 1 - p, 1.0]))
    c = np.asarray(random.categorical(ks[3], jnp.asarray(logits, jnp.float32), shape=(N,)))
    np.testing.assert_allclose(np.bincount(c, minlength=3) / N,
                               np.exp(logits) / np.exp(logits).sum(), atol=0.05)
    w = np.array([p, 1 - p, 0.0, 1.0])
    ch = np.asarray(random.choice(ks[4], 4, (N,), p=jnp.asarray(w, jnp.float32)))
    np.testing.assert_allclose(np.bincount(ch, minlength=4) / N, w / w.sum(), atol=0.05)


@FEW
@given(seed=seeds, p=st.sampled_from([1.0, 2.0, 3.5]))
def test_ball_points_are_inside(seed, p):
    x = np.asarray(random.ball(random.PRNGKey(seed), 3, p=p, shape=(500,)))
    assert x.shape == (500, 3) and (np.sum(np.abs(x) ** p, -1) <= 1 + 1e-5).all()


# --- gradients -------------------------------------------------------------------------

def test_grad_of_a_reparameterised_normal():
    key = random.key(0)

    def loss(mu, sigma):
        return jnp.sum(random.normal(key, (50,)) * sigma + mu)

    dmu, dsigma = spmdc.grad(loss, argnums=(0, 1))(1.5, 2.0)
    assert float(dmu) == 50.0
    np.testing.assert_allclose(float(dsigma), float(jnp.sum(random.normal(key, (50,)))),
                               rtol=1e-6)


def _numeric(f, x, eps=1e-2):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("which", ["uniform_min", "uniform_max", "truncated_lower",
                                   "truncated_upper"])
def test_grad_wrt_bounds_matches_finite_differences(which):
    key = random.PRNGKey(3)
    fns = {
        "uniform_min": lambda v: jnp.sum(random.uniform(key, (20,), minval=v, maxval=4.0)),
        "uniform_max": lambda v: jnp.sum(random.uniform(key, (20,), minval=-1.0, maxval=v)),
        "truncated_lower": lambda v: jnp.sum(random.truncated_normal(key, v, 1.5, (20,))),
        "truncated_upper": lambda v: jnp.sum(random.truncated_normal(key, -0.5, v, (20,))),
    }
    f, x = fns[which], {"uniform_min": 0.5, "uniform_max": 2.0, "truncated_lower": -0.3,
                        "truncated_upper": 1.0}[which]
    got = float(spmdc.grad(f)(x))
    want = float(_numeric(lambda v: np.float64(f(np.float32(v))), x))
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=1e-3)


def _implicit_dx_da(a, x):
    """dx/da of Gamma(a) draws at fixed CDF, from SciPy in float64."""
    import scipy.special as ss
    import scipy.stats as st
    h = 1e-6
    dp_da = (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h)
    return -dp_da / st.gamma.pdf(x, a)


@pytest.mark.parametrize("a", [pytest.param(0.4, marks=pytest.mark.slow), 2.0,
                               pytest.param(7.5, marks=pytest.mark.slow)])
def test_grad_through_gamma_draws_is_the_implicit_reparameterisation(a):
    # As JAX: the draw's place in the distribution is held fixed (it raised before)
    with spmdc.enable_x64():
        key = random.key(0)
        x = np.asarray(random.gamma(key, a, (5,)))
        want = _implicit_dx_da(a, x)
        got = spmdc.jacfwd(lambda v: random.gamma(key, v, (5,)))(a)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        g = spmdc.grad(lambda v: jnp.sum(random.loggamma(key, v, (5,))))(a)
        lx = np.asarray(random.loggamma(key, a, (5,)))
        np.testing.assert_allclose(g, np.sum(_implicit_dx_da(a, np.exp(lx)) / np.exp(lx)),
                                   rtol=1e-6)
    # beta and dirichlet are built on loggamma draws and inherit the gradient
    gb = spmdc.grad(lambda v: jnp.sum(random.beta(random.key(1), v, 2.0, (4,))))(a)
    eps = 1e-3
    fd = (np.sum(random.beta(random.key(1), a + eps, 2.0, (4,)))
          - np.sum(random.beta(random.key(1), a - eps, 2.0, (4,)))) / (2 * eps)
    assert np.isfinite(float(gb)) and abs(float(gb) - float(fd)) < 0.05 * (1 + abs(float(fd)))


# --- keys as values --------------------------------------------------------------------

def test_typed_keys_behave_like_arrays_of_keys():
    keys = random.split(random.key(1), (2, 3))
    assert keys.shape == (2, 3) and keys.ndim == 2 and keys.size == 6 and len(keys) == 2
    assert str(keys.dtype) == "key<fry>" and random.key_impl(keys) == "threefry2x32"
    assert random.key_data(keys).shape == (2, 3, 2)
    assert keys[1, 2].shape == () and keys[0].shape == (3,) and keys.reshape(6).shape == (6,)
    np.testing.assert_array_equal(random.key_data(keys[1, 2]), random.key_data(keys)[1, 2])
    assert bool(random.wrap_key_data(random.key_data(keys[0, 0])) == keys[0, 0])
    assert repr(random.key(0)) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert [k.shape for k in keys[0]] == [(), (), ()]


def test_typed_keys_cross_jit_vmap_and_control_flow():
    key = random.key(7)
    out = spmdc.jit(lambda k: random.split(k, 3))(key)
    assert isinstance(out, random.PRNGKeyArray) and out.shape == (3,)
    np.testing.assert_array_equal(random.key_data(out), random.key_data(random.split(key, 3)))
    folded = spmdc.vmap(random.fold_in, in_axes=(None, 0))(key, jnp.arange(4))
    assert folded.shape == (4,)
    np.testing.assert_array_equal(random.key_data(folded[2]),
                                  random.key_data(random.fold_in(key, 2)))

    def body(i, carry):
        k, total = carry
        k, sub = random.split(k)
        return k, total + random.normal(sub)
    k_end, total = spmdc.lax.fori_loop(0, 3, body, (key, jnp.float32(0)))
    assert isinstance(k_end, random.PRNGKeyArray)


def test_bad_keys_and_arguments_are_clear_errors():
    with pytest.raises(TypeError, match="uint32"):
        random.normal(jnp.array([0, 1]))
    with pytest.raises(TypeError, match=r"shape \(\.\.\., 2\)"):
        random.uniform(jnp.zeros((3,), jnp.uint32))
    with pytest.raises(ValueError, match="single key"):
        random.normal(random.split(random.key(0), 2))
    with pytest.raises(TypeError, match="scalar seed"):
        random.PRNGKey(np.arange(2))
    with pytest.raises(ValueError, match="must be a float dtype"):
        random.uniform(random.key(0), (2,), jnp.int32)
    with pytest.raises(ValueError, match="unsigned int"):
        random.bits(random.key(0), (2,), jnp.int32)
    with pytest.raises(ValueError, match="broadcast-compatible"):
        random.uniform(random.key(0), (3,), minval=jnp.zeros(4))
    with pytest.raises(ValueError, match="larger sample"):
        random.choice(random.key(0), 3, (5,), replace=False)
    with pytest.raises(OverflowError, match="uint32"):
        random.fold_in(random.key(0), -1)
    with pytest.raises(ValueError, match="highest"):
        random.gumbel(random.key(0), (2,), mode="highest")


def test_split_inside_a_jitted_step_stays_on_device():
    # the step's program contains the whole generator: one executable, traced once, and
    # the new key comes back as a device array
    def step(key, w):
        key, sub = random.split(key)
        return key, w + random.normal(sub, w.shape)
    jitted = spmdc.jit(step)
    key, w = random.key(0), jnp.zeros(8)
    for _ in range(3):
        key, w = jitted(key, w)
    assert jitted.trace_count == 1 and isinstance(random.key_data(key), spmdc.Array)
    ir = str(spmdc.make_ir(step)(random.PRNGKey(0), jnp.zeros(8)))
    assert "xor" in ir and "shift_left" in ir and "callback" not in ir
