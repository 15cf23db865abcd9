"""ODE problems shared by tests/experimental/test_ode.py and `tools/record.py ode`
(which runs them with JAX 0.10.2). ``cases(lib, odeint)`` maps a name to (function,
arguments); the function returns a pytree of arrays (solutions and gradients)."""
import numpy as np

TS = np.linspace(0.0, 3.0, 7).astype(np.float32)


def forced_decay(jnp):
    def f(y, t, a):
        return -a * y + jnp.sin(t)
    return f


def lotka_volterra(y, t, alpha, beta, gamma, delta):
    prey, predator = y["prey"], y["predator"]
    return {"prey": alpha * prey - beta * prey * predator,
            "predator": delta * prey * predator - gamma * predator}


def mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return {"w1": (rng.normal(size=(2, 8)) * 0.5).astype(np.float32),
            "b1": np.zeros(8, np.float32),
            "w2": (rng.normal(size=(8, 2)) * 0.5).astype(np.float32)}


def neural_target():
    t = np.linspace(0.0, 1.0, 5)
    return np.stack([np.cos(t), -np.sin(t)], 1).astype(np.float32)


def cases(lib, odeint):
    jnp = lib.numpy
    f = forced_decay(jnp)
    y0 = np.array([1.0, 2.0], np.float32)
    ts = TS

    def decay_loss(y0, ts, a):
        return odeint(f, y0, ts, a, rtol=1e-6, atol=1e-6)[-1].sum()

    lv0 = {"prey": np.float32(1.0), "predator": np.float32(0.5)}
    lv_args = (np.float32(1.1), np.float32(0.4), np.float32(0.4), np.float32(0.1))
    lv_ts = np.linspace(0.0, 2.0, 5).astype(np.float32)

    def lv_loss(y0, *args):
        ys = odeint(lotka_volterra, y0, lv_ts, *args)
        return ys["prey"].sum() + 2.0 * ys["predator"][-1]

    params = mlp_params()
    node_ts = np.linspace(0.0, 1.0, 5).astype(np.float32)
    target = neural_target()

    def neural_loss(params):
        def dynamics(y, t):            # closes over the parameters being differentiated
            return jnp.tanh(y @ params["w1"] + params["b1"]) @ params["w2"]
        ys = odeint(dynamics, np.array([1.0, 0.0], np.float32), node_ts)
        return jnp.mean((ys - target) ** 2)

    return {
        "decay_solution": (lambda: odeint(f, y0, ts, 0.7, rtol=1e-6, atol=1e-6), ()),
        "decay_grads": (lambda: lib.grad(decay_loss, argnums=(0, 1, 2))(y0, ts, 0.7), ()),
        "lotka_volterra_solution": (lambda: odeint(lotka_volterra, lv0, lv_ts, *lv_args), ()),
        "lotka_volterra_grads": (
            lambda: lib.grad(lv_loss, argnums=(0, 1, 2, 3, 4))(lv0, *lv_args), ()),
        "neural_ode_value_and_grad": (lambda: lib.value_and_grad(neural_loss)(params), ()),
    }
