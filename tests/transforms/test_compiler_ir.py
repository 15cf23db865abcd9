"""``Lowered.compiler_ir``: the lowered program as an MLIR module (``'stablehlo'``, the
default) or as XLA's HLO (``'hlo'``, an XlaComputation whose ``as_hlo_text()`` Optax's
numerics tests compare between formulations), as JAX gives them."""
from __future__ import annotations

import re

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


def _entry(f, x) -> str:
    text = spmdc.jit(f).lower(x).compiler_ir(dialect="hlo").as_hlo_text()
    body = re.search(r"ENTRY.*", text, re.DOTALL).group()
    return re.sub(r"[\w.]+ = ", "", re.sub(r"ENTRY.*?{", "", body))


def test_hlo_text_of_equivalent_formulations_matches():
    x = np.array([1.5, 2.0], np.float32)
    assert _entry(lambda v: v * v, x) == _entry(jnp.square, x)
    assert "multiply" in _entry(lambda v: v * v, x)
    assert _entry(lambda v: v * v, x) != _entry(lambda v: v + v, x)


def test_stablehlo_module_and_bad_dialect():
    lowered = spmdc.jit(lambda v: jnp.sin(v) + 1).lower(np.float32(1))
    module = lowered.compiler_ir()
    assert "stablehlo.sine" in str(module) and str(module) == str(
        lowered.compiler_ir("stablehlo"))
    with pytest.raises(ValueError, match="dialect must be None, 'stablehlo' or 'hlo'"):
        lowered.compiler_ir("tosa")
