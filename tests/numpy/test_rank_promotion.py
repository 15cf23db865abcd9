"""The ``jax_numpy_rank_promotion`` option and ``numpy_rank_promotion`` context (Note
[rank promotion]): broadcasting operands of different nonzero ranks is allowed, a
warning, or a ValueError; scalars and equal ranks broadcast in every mode, and a jitted
function traced under 'allow' is traced again under 'raise'."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

ROW = np.arange(3, dtype=np.float32)
GRID = np.ones((2, 3), np.float32)


@pytest.fixture(autouse=True)
def _allow_afterwards():
    yield
    spmdc.config.update("jax_numpy_rank_promotion", "allow")


def test_allow_is_the_default_and_broadcasts():
    assert spmdc.config.jax_numpy_rank_promotion == "allow"
    np.testing.assert_allclose(jnp.asarray(ROW) + GRID, ROW + GRID)


def test_raise_refuses_mixed_ranks_eagerly_under_jit_and_in_where():
    multiply = spmdc.jit(lambda a, b: a * b)
    np.testing.assert_allclose(multiply(ROW, GRID), ROW * GRID)     # traced under 'allow'
    spmdc.config.update("jax_numpy_rank_promotion", "raise")
    with pytest.raises(ValueError, match=r"add: .*shapes \(3,\) \(2, 3\).*'raise'"):
        jnp.asarray(ROW) + GRID
    with pytest.raises(ValueError, match="multiply: operands could not be broadcast"):
        multiply(ROW, GRID)
    with pytest.raises(ValueError, match="where: operands could not be broadcast"):
        jnp.where(GRID > 0, ROW, 0.0)
    # scalars and equal ranks (size-1 axes) still broadcast
    np.testing.assert_allclose(jnp.asarray(GRID) * 2.0 + ROW[None], GRID * 2 + ROW[None])
    np.testing.assert_allclose(spmdc.jit(lambda a: a - 1)(GRID), GRID - 1)
    with pytest.raises(ValueError, match="takes 'allow', 'warn' or 'raise'"):
        spmdc.config.update("jax_numpy_rank_promotion", "never")


def test_warn_and_the_context_manager():
    with spmdc.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = jnp.asarray(ROW) - GRID
        assert spmdc.config.jax_numpy_rank_promotion == "warn"
    np.testing.assert_allclose(out, ROW - GRID)
    assert [str(w.message) for w in seen] == [
        "subtract: following NumPy automatic rank promotion on shapes (3,) (2, 3); set "
        "the jax_numpy_rank_promotion config option to 'allow' to disable this warning"]
    assert spmdc.config.jax_numpy_rank_promotion == "allow"
