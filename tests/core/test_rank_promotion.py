"""``numpy_rank_promotion`` / ``jax_numpy_rank_promotion`` (distrax's tests decorate with
``jax.numpy_rank_promotion('raise')``): what JAX 0.10.2 does with each mode, recorded
there; see Note [rank promotion] in spmdc/core/rank_promotion.py."""
import warnings

import pytest

import spmdc
import spmdc.numpy as jnp

X, Y = jnp.ones((2, 3)), jnp.ones(3)


def test_allow_is_the_default_and_broadcasts():
    assert spmdc.config.jax_numpy_rank_promotion == "allow"
    assert (X + Y).shape == (2, 3)


def test_raise_refuses_operands_of_different_nonzero_ranks():
    with spmdc.numpy_rank_promotion("raise"):
        assert (X + 1.0).shape == (2, 3)                       # scalars are not counted
        assert (X + jnp.ones((2, 3))).shape == (2, 3)
        assert jnp.where(Y > 0, X, 0.0).shape == (2, 3)        # where broadcasts, as JAX's
        with pytest.raises(ValueError, match=r"for add on shapes \(2, 3\) \(3,\) and with "
                                             r"the config option jax_numpy_rank_promotion"):
            X + Y
        with pytest.raises(ValueError, match="for multiply on shapes"):
            spmdc.jit(lambda a, b: a * b)(X, Y)


def test_library_functions_that_broadcast_inside_are_not_refused():
    # jnp.outer broadcasts its two vectors itself, at equal ranks as JAX's (Equinox's
    # RotaryPositionalEmbedding under its tests' 'raise'; regression: (n, 1) * (m,))
    with spmdc.numpy_rank_promotion("raise"):
        assert jnp.outer(jnp.arange(3.0), jnp.arange(4.0))[2, 3] == 6.0
        assert jnp.linalg.outer(jnp.arange(3.0), jnp.ones(4)).shape == (3, 4)

def test_the_mode_is_part_of_jits_cache_key():
    multiply = spmdc.jit(lambda a, b: a * b)
    assert multiply(X, Y).shape == (2, 3)                      # traced under 'allow'
    with spmdc.numpy_rank_promotion("raise"), pytest.raises(ValueError):
        multiply(X, Y)
    assert multiply(X, Y).shape == (2, 3)


def test_warn_and_config_update():
    with spmdc.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        jnp.subtract(X, Y)
    assert len(seen) == 1 and str(seen[0].message).startswith(
        "Following NumPy automatic rank promotion for subtract on shapes (2, 3) (3,).")
    spmdc.config.update("jax_numpy_rank_promotion", "raise")
    try:
        with pytest.raises(ValueError):
            X - Y
    finally:
        spmdc.config.update("jax_numpy_rank_promotion", "allow")
    assert (X - Y).shape == (2, 3)
    with pytest.raises(ValueError, match="'allow', 'warn' or 'raise'"):
        spmdc.config.update("jax_numpy_rank_promotion", "nope")


def test_as_a_decorator():
    @spmdc.numpy_rank_promotion("raise")
    def add(a, b):
        return a + b

    with pytest.raises(ValueError):
        add(X, Y)
    assert (X + Y).shape == (2, 3)
