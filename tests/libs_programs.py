"""Programs run both on JAX (`tools/record.py libs` records their results) and on
spmdc (tests/example_libraries/test_optimizers.py): each takes the ``jax`` module to use, so the
same source runs unchanged on either."""
from __future__ import annotations

import numpy as np


def data(n=32):
    """A small regression problem: y = sin(3 x0) + x1^2, plus a class label."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    y = (np.sin(3 * x[:, :1]) + x[:, 1:] ** 2).astype(np.float32)
    labels = (y[:, 0] > 0.5).astype(np.int32)
    return x, y, labels


def mlp_adam(jax, steps=30):
    """The tutorial: split a key, initialise an MLP with random.normal, train it with grad
    and optimizers.adam. Returns the loss after each step and the final parameters."""
    import importlib
    jnp = jax.numpy
    optimizers = importlib.import_module(jax.__name__ + ".example_libraries.optimizers")
    x, y, _ = data()
    key = jax.random.PRNGKey(42)
    sizes = [2, 16, 16, 1]
    params = []
    for m, n in zip(sizes[:-1], sizes[1:], strict=True):
        key, wkey, bkey = jax.random.split(key, 3)
        params.append((jax.random.normal(wkey, (m, n)) / np.sqrt(m),
                       0.1 * jax.random.normal(bkey, (n,))))

    def predict(params, x):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    def loss(params, x, y):
        return jnp.mean((predict(params, x) - y) ** 2)

    opt_init, opt_update, get_params = optimizers.adam(1e-2)
    state = opt_init(params)

    @jax.jit
    def step(i, state):
        value, grads = jax.value_and_grad(loss)(get_params(state), x, y)
        return value, opt_update(i, grads, state)

    losses = []
    for i in range(steps):
        value, state = step(i, state)
        losses.append(float(value))
    final = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(get_params(state))]
    return np.array(losses, np.float32), final


def stax_classifier(jax, steps=10):
    """A stax network (Dense, BatchNorm, Relu, Dropout, FanOut/parallel/FanInSum,
    LogSoftmax) trained with optimizers.momentum on a schedule."""
    import importlib
    jnp = jax.numpy
    stax = importlib.import_module(jax.__name__ + ".example_libraries.stax")
    optimizers = importlib.import_module(jax.__name__ + ".example_libraries.optimizers")
    x, _, labels = data()
    init_fun, apply_fun = stax.serial(
        stax.Dense(8), stax.BatchNorm(axis=(0,)), stax.Relu,
        stax.FanOut(2), stax.parallel(stax.Dense(8), stax.Identity), stax.FanInSum,
        stax.Gelu, stax.Dropout(0.8), stax.Dense(2), stax.LogSoftmax)
    out_shape, params = init_fun(jax.random.PRNGKey(1), (-1, 2))
    onehot = jax.nn.one_hot(labels, 2)

    def loss(params, rng):
        return -jnp.mean(jnp.sum(apply_fun(params, x, rng=rng) * onehot, axis=1))

    schedule = optimizers.exponential_decay(0.1, 5, 0.5)
    opt_init, opt_update, get_params = optimizers.momentum(schedule, 0.9)
    state = opt_init(params)
    rng = jax.random.PRNGKey(7)
    losses = []
    for i in range(steps):
        rng, sub = jax.random.split(rng)
        value, grads = jax.value_and_grad(loss)(get_params(state), sub)
        grads = optimizers.clip_grads(grads, 1.0)
        state = opt_update(i, grads, state)
        losses.append(float(value))
    final = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(get_params(state))]
    return np.array(losses, np.float32), final, tuple(out_shape)


def every_optimizer(jax, steps=5):
    """Each optimizer for a few steps on a quadratic with a pytree of parameters."""
    import importlib
    jnp = jax.numpy
    optimizers = importlib.import_module(jax.__name__ + ".example_libraries.optimizers")
    target = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.float32(-1.5)}
    makers = {
        "sgd": lambda: optimizers.sgd(0.1),
        "momentum": lambda: optimizers.momentum(0.1, 0.9),
        "nesterov": lambda: optimizers.nesterov(0.1, 0.9),
        "adagrad": lambda: optimizers.adagrad(0.3),
        "rmsprop": lambda: optimizers.rmsprop(0.05),
        "rmsprop_momentum": lambda: optimizers.rmsprop_momentum(0.05),
        "adam": lambda: optimizers.adam(0.1),
        "adamax": lambda: optimizers.adamax(0.1),
        "sm3": lambda: optimizers.sm3(0.3),
        "sgd_inverse_time": lambda: optimizers.sgd(optimizers.inverse_time_decay(0.2, 2, 1.)),
        "sgd_staircase": lambda: optimizers.sgd(
            optimizers.inverse_time_decay(0.2, 2, 1., staircase=True)),
        "sgd_polynomial": lambda: optimizers.sgd(optimizers.polynomial_decay(0.2, 3, 0.01)),
        "sgd_piecewise": lambda: optimizers.sgd(
            optimizers.piecewise_constant([1, 3], [0.3, 0.1, 0.02])),
    }

    def loss(p):
        return (jnp.sum((p["a"] - target["a"]) ** 2 * jnp.arange(1., 7.).reshape(2, 3))
                + (p["b"] - target["b"]) ** 4)

    grad = jax.jit(jax.grad(loss))
    out = {}
    for name, make in makers.items():
        opt_init, opt_update, get_params = make()
        update = jax.jit(opt_update)        # the step number is traced, as in a jitted loop
        state = opt_init({"a": jnp.zeros((2, 3)), "b": jnp.asarray(0.5)})
        for i in range(steps):
            state = update(i, grad(get_params(state)), state)
        p = get_params(state)
        out[name] = np.concatenate([np.ravel(p["a"]), np.ravel(p["b"])]).astype(np.float32)
    return out
