"""lax.gather and the lax.scatter family (spmdc/lax/gather_scatter.py): against JAX
0.10.2's recorded results (tests/lax_gather_cases.py), and their errors."""
from __future__ import annotations

import lax_gather_cases
import numpy as np
import oracle
import pytest

import spmdc
from spmdc import lax

RECORDED = oracle.recorded_cases("lax_gather_reference.json")
CASES = lax_gather_cases.cases(spmdc)


def test_every_recorded_case_is_run():
    assert set(RECORDED) == set(CASES)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_matches_jax(name):
    oracle.assert_matches_recorded(CASES[name](), RECORDED[name], name)


def test_bad_arguments_are_clear_errors():
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0, 1))
    x, idx = np.ones((4, 6), np.float32), np.zeros((2, 2), np.int32)
    for call, error, fragment in [
        (lambda: lax.gather(x, idx, dn, (1, 2), mode="bogus"), ValueError, "Unknown gather"),
        (lambda: lax.gather(x, idx, dn, (1, 2), mode="one_hot"), ValueError, "ONE_HOT"),
        (lambda: lax.gather(x, idx.astype(np.float32), dn, (1, 2)), TypeError, "integers"),
        (lambda: lax.gather(x, idx, (1,), (1, 2)), TypeError, "GatherDimensionNumbers"),
        (lambda: lax.gather(x, idx, dn, (1, 2), unique_indices=3), TypeError,
         "True or False"),
        (lambda: lax.scatter_add(x, idx, np.ones((2, 2), np.int32), lax.ScatterDimensionNumbers(
            (1,), (0,), (0, 1))), TypeError, "astype"),
    ]:
        with pytest.raises(error, match=fragment):
            call()
    assert lax.GatherScatterMode.from_any("clip") is lax.GatherScatterMode.CLIP
