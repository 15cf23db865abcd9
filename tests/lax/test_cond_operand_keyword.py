"""``lax.cond(pred, true_fun, false_fun, operand=x)`` and ``lax.switch(i, branches,
operand=x)``, JAX's keyword form (jaxopt calls cond so), against JAX 0.10.2's results."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def test_cond_takes_one_operand_by_keyword():
    # JAX: 2.0, 2.0 (all by keyword), 0.0 under jit with pred False
    assert float(lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand=1.0)) == 2.0
    assert float(lax.cond(pred=True, true_fun=lambda x: x + 1, false_fun=lambda x: x - 1,
                          operand=1.0)) == 2.0
    jitted = spmdc.jit(lambda p: lax.cond(p, lambda x: x + 1, lambda x: x - 1, operand=1.0))
    assert float(jitted(False)) == 0.0
    tree = lax.cond(False, lambda t: t, lambda t: {"a": t["a"] * 2}, operand={"a": jnp.ones(2)})
    np.testing.assert_array_equal(tree["a"], [2.0, 2.0])


def test_switch_takes_one_operand_by_keyword():
    branches = [lambda x: x + 1, lambda x: x - 1]
    assert float(lax.switch(1, branches, operand=1.0)) == 0.0            # JAX: 0.0
    assert float(spmdc.jit(lambda i: lax.switch(i, branches, operand=1.0))(0)) == 2.0


def test_operand_by_keyword_and_by_position_is_a_type_error():
    with pytest.raises(TypeError, match="if 'operand' keyword is passed then no positional "
                                        "operands can be passed, got operand=1.0"):
        lax.cond(True, lambda x: x + 1, lambda x: x - 1, 2.0, operand=1.0)
    with pytest.raises(TypeError, match="no positional operands"):
        lax.switch(0, [lambda x: x], 2.0, operand=1.0)
