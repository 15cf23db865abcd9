"""Programs whose own code fails, for ``spmdc dump``/``check`` (tests/e2e/test_cli.py)."""

import spmdc.numpy as jnp

NOT_A_FUNCTION = 3


def raises(x):
    return _helper(x)                                # line 9


def _helper(x):
    raise ValueError("the user's own error")         # line 13


def example_raises():
    raise RuntimeError("no example today")           # line 17


def two_arguments(x, y):
    return jnp.sin(x) + y


def example_of_two():
    return (jnp.ones(3), jnp.ones(3))
