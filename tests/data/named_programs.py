"""A program with named scopes, for `spmdc dump` (tests/transforms/test_stages.py)."""
import spmdc
import spmdc.numpy as jnp


def layer(x):
    return jnp.tanh(x) * 2.0


def model(x):
    with spmdc.named_scope("encoder"):
        with spmdc.named_scope("proj"):
            y = jnp.sin(x)
    return spmdc.named_call(layer, name="head")(y)
