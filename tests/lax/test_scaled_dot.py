"""lax.scaled_dot against JAX 0.10.2's results, recorded by `tools/record.py
lax_scaled_dot` from tests/lax_scaled_dot_cases.py: values, result dtypes, and JAX's
exception type and message for bad operands."""
from __future__ import annotations

import lax_scaled_dot_cases
import numpy as np
import oracle
import pytest

import spmdc

RECORDED = oracle.recorded_cases("lax_scaled_dot_reference.json")
CASES = lax_scaled_dot_cases.cases(spmdc)


def test_every_case_is_recorded():
    assert sorted(CASES) == sorted(RECORDED)


def test_values_and_dtypes_are_jaxs_with_and_without_scales_under_jit_and_vmap():
    for name in ("default", "f32", "no_scales_2d", "vmap"):
        dtype, values = CASES[name]()
        want_dtype, want = RECORDED[name]
        assert dtype == want_dtype, name
        # float32 sums of the same bfloat16 products: spmdc's dot widens its operands
        # first, JAX's keeps them narrow, so one sum's order may differ in the last bit
        np.testing.assert_allclose(values, np.asarray(want, np.float32), rtol=2e-6,
                                   err_msg=name)


@pytest.mark.parametrize("name", sorted(n for n in RECORDED if n.startswith("error.")))
def test_bad_operands_are_jaxs_type_errors(name):
    with pytest.raises(TypeError) as e:
        CASES[name]()
    assert f"TypeError: {e.value}"[:200] == RECORDED[name]
