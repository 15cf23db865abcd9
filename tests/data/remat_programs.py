"""Programs for tests/test_ad_checkpoint.py's `spmdc dump` test."""
import spmdc as jax
import spmdc.numpy as jnp


def block(w, x):
    return jnp.tanh(jnp.sin(x @ w))


def loss(w, x):
    f = jax.checkpoint(block, policy=jax.checkpoint_policies.dots_saveable)
    return jnp.sum(f(w, x) ** 2)


step = jax.grad(loss)
