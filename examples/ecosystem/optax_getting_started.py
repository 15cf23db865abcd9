"""Optax's "Getting started", on small synthetic data: fit a linear model with Adam under
`jit`, then an MLP with a chained optimizer (clipping, AdamW, a schedule) in an eager
Python loop, as the docs do. Prints the losses (tools/ecosystem.py compares them between
JAX and spmdc)."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

rng = np.random.default_rng(0)
xs = rng.normal(size=(64, 10)).astype(np.float32)
w_true = rng.normal(size=(10,)).astype(np.float32)
ys = (xs @ w_true + 0.1 * rng.normal(size=64)).astype(np.float32)


def linear_loss(params, x, y):
    return optax.l2_loss(x @ params["w"] + params["b"], y).mean()


optimizer = optax.adam(learning_rate=0.1)
params = {"w": jnp.zeros(10), "b": jnp.zeros(())}
opt_state = optimizer.init(params)


@jax.jit
def step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(linear_loss)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


for i in range(50):
    params, opt_state, loss = step(params, opt_state, xs, ys)
    if i % 10 == 0 or i == 49:
        print(f"linear step {i}: loss {float(loss):.6f}")
print("linear weight error:", f"{float(jnp.abs(params['w'] - w_true).max()):.5f}")

# An MLP, trained eagerly (no jit) with a chain of transformations and a schedule.
key = jax.random.PRNGKey(0)
k1, k2 = jax.random.split(key)
mlp = {"w1": jax.random.normal(k1, (10, 16)) * 0.3, "b1": jnp.zeros(16),
       "w2": jax.random.normal(k2, (16,)) * 0.3, "b2": jnp.zeros(())}


def mlp_loss(params, x, y):
    hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
    return optax.l2_loss(hidden @ params["w2"] + params["b2"], y).mean()


schedule = optax.warmup_cosine_decay_schedule(0.0, 0.05, warmup_steps=3, decay_steps=20)
chained = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-4))
state = chained.init(mlp)
for i in range(12):
    loss, grads = jax.value_and_grad(mlp_loss)(mlp, xs, ys)
    updates, state = chained.update(grads, state, mlp)
    mlp = optax.apply_updates(mlp, updates)
    if i % 3 == 0:
        print(f"mlp step {i}: loss {float(loss):.6f} "
              f"global norm {float(optax.global_norm(grads)):.6f}")
print("mlp final loss:", f"{float(mlp_loss(mlp, xs, ys)):.6f}")
