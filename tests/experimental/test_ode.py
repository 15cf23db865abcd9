"""spmdc.experimental.ode.odeint (Note [odeint]): solutions against scipy's solve_ivp and
JAX 0.10.2's recorded results (`tools/record.py ode`), adjoint gradients against
finite differences, a neural-ODE training step, and the errors."""
import pathlib
import sys

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import spmdc
import spmdc.numpy as jnp
from spmdc.experimental.ode import odeint

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
import alias_programs  # noqa: E402
import ode_cases  # noqa: E402
import oracle  # noqa: E402

REFERENCE = oracle.recorded_cases("ode_reference.json")
CASES = ode_cases.cases(spmdc, odeint)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_matches_jax(name):
    fun, args = CASES[name]
    oracle.assert_matches_recorded_real(spmdc.tree_util.tree_leaves(fun(*args)),
                                        REFERENCE[name], name, rtol=2e-4, atol=2e-5)


def test_forced_decay_against_scipy():
    ys = CASES["decay_solution"][0]()
    ref = solve_ivp(lambda t, y: -0.7 * y + np.sin(t), (0.0, 3.0), [1.0, 2.0],
                    t_eval=ode_cases.TS, rtol=1e-10, atol=1e-10).y.T
    np.testing.assert_allclose(ys, ref, atol=2e-5)


def test_pytree_state_against_scipy():
    ys = CASES["lotka_volterra_solution"][0]()
    args = (1.1, 0.4, 0.4, 0.1)

    def rhs(t, y):
        d = ode_cases.lotka_volterra({"prey": y[0], "predator": y[1]}, t, *args)
        return [d["prey"], d["predator"]]
    ref = solve_ivp(rhs, (0.0, 2.0), [1.0, 0.5], t_eval=np.linspace(0.0, 2.0, 5),
                    rtol=1e-10, atol=1e-10).y
    np.testing.assert_allclose(ys["prey"], ref[0], rtol=1e-5)
    np.testing.assert_allclose(ys["predator"], ref[1], rtol=1e-5)


def _central_difference(f, x, eps):
    """Finite differences of a float32 program."""
    return oracle.numeric_grad(lambda v: f(v.astype(np.float32)), x, eps)


def test_adjoint_gradients_against_finite_differences():
    f = ode_cases.forced_decay(jnp)
    y0, ts = np.array([1.0, 2.0], np.float32), ode_cases.TS

    def loss(y0, ts, a):
        return odeint(f, y0, ts, a, rtol=1e-7, atol=1e-7)[-1].sum()
    g_y0, g_ts, g_a = spmdc.grad(loss, argnums=(0, 1, 2))(y0, ts, np.float32(0.7))
    value = spmdc.jit(loss)
    eps = 1e-2
    np.testing.assert_allclose(g_y0, _central_difference(lambda v: float(value(v, ts, 0.7)),
                                                         y0, eps), rtol=2e-3)
    np.testing.assert_allclose(g_a, _central_difference(lambda v: float(value(y0, ts, v)),
                                                        np.float32(0.7), eps), rtol=2e-3)
    np.testing.assert_allclose(g_ts, _central_difference(lambda v: float(value(y0, v, 0.7)),
                                                         ts, eps), atol=3e-3)


def test_neural_ode_training_step():
    params = {k: jnp.asarray(v) for k, v in ode_cases.mlp_params().items()}
    ts = jnp.linspace(0.0, 1.0, 5)
    target = ode_cases.neural_target()

    def loss(params):
        def dynamics(y, t, p):
            return jnp.tanh(y @ p["w1"] + p["b1"]) @ p["w2"]
        ys = odeint(dynamics, jnp.array([1.0, 0.0]), ts, params)
        return jnp.mean((ys - target) ** 2)

    @spmdc.jit
    def step(params):
        value, grads = spmdc.value_and_grad(loss)(params)
        return value, spmdc.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)

    losses = []
    for _ in range(4):
        value, params = step(params)
        losses.append(float(value))
    assert losses[-1] < 0.5 * losses[0]
    assert all(b < a for a, b in zip(losses[:-1], losses[1:], strict=True))


def test_transformations_compose():
    ts = jnp.linspace(0.0, 1.0, 3)
    decay = spmdc.vmap(lambda y: odeint(lambda y, t: -y, y, ts)[-1])(jnp.arange(3.0))
    np.testing.assert_allclose(decay, np.exp(-1.0) * np.arange(3.0), rtol=1e-6)
    # moving the start later or the end earlier: d y(T) / d t0 = y(T), d / dT = -y(T)
    g = spmdc.grad(lambda t: odeint(lambda y, t: -y, jnp.ones(()), t)[-1])(ts)
    np.testing.assert_allclose(g, [np.exp(-1.0), 0.0, -np.exp(-1.0)], atol=1e-6)
    # mxstep bounds the work per output time; hmax the step
    np.testing.assert_allclose(odeint(lambda y, t: -y, jnp.ones(()), ts, hmax=0.01)[-1],
                               np.exp(-1.0), rtol=1e-6)


def test_errors():
    f = lambda y, t: -y                                   # noqa: E731
    with pytest.raises(TypeError, match="t must be a 1-d array of floats"):
        odeint(f, jnp.ones(2), jnp.arange(3))
    with pytest.raises(TypeError, match="args must be arrays or scalars"):
        odeint(lambda y, t, s: -y, jnp.ones(2), jnp.linspace(0.0, 1.0, 3), "fast")
    with pytest.raises(ValueError, match="rtol must be a positive"):
        odeint(f, jnp.ones(2), jnp.linspace(0.0, 1.0, 3), rtol=-1.0)
    with pytest.raises(TypeError, match="complex states are not supported"):
        odeint(f, jnp.ones(2, jnp.complex64), jnp.linspace(0.0, 1.0, 3))


ALIAS_PROGRAM = alias_programs.register("experimental_ode", (
    "import sys, spmdc; sys.modules['jax'] = spmdc\n"
    "import jax.experimental.ode\n"
    "from jax.experimental.ode import odeint\n"
    "assert odeint is spmdc.experimental.ode.odeint\n"
    "assert jax.experimental.ode.odeint is odeint\n"
    "print('ok')\n"))


def test_jax_alias_resolves_experimental_ode():
    out = alias_programs.run(ALIAS_PROGRAM)      # one child for the alias programs
    assert out.stdout.strip() == "ok", out.stderr


def test_integer_arguments_and_large_closed_over_arrays():
    ts = jnp.linspace(0.0, 1.0, 3)
    index = jnp.array([1, 0])
    scale = jnp.asarray(np.linspace(1.0, 2.0, 1000).astype(np.float32))   # not embeddable

    def loss(a):
        return odeint(lambda y, t, a, i: -a * y[i] * scale[:2], jnp.ones(2), ts, a,
                      index)[-1].sum()
    eps = 1e-2
    value = spmdc.jit(loss)      # one compile for both finite-difference points
    np.testing.assert_allclose(spmdc.grad(loss)(0.5),
                               (float(value(0.5 + eps)) - float(value(0.5 - eps))) / (2 * eps),
                               rtol=1e-3)
