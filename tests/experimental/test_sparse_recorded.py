"""spmdc.experimental.sparse against JAX 0.10.2's recorded results (tests/sparse_cases.py,
tests/data/sparse_reference.json): printed forms (shape, nse, n_batch, n_dense) and every
buffer (data, indices, indptr, row, col) as JAX gives them, padding and order included.
The first case of the main functions runs with ``make test``, every case with ``make
test-slow``."""
from __future__ import annotations

import numpy as np
import oracle
import pytest
import sparse_cases

import spmdc
import spmdc.experimental.sparse  # noqa: F401  (spmdc.experimental.sparse for the cases)

REFERENCE = oracle.recorded_cases("sparse_reference.json")
CASES = sparse_cases.cases(spmdc)


# the functions whose first case runs with ``make test`` (the rest is covered there by
# test_sparse_ops.py against NumPy); every case runs with ``make test-slow``
QUICK = {"fromdense", "operators", "sparsify", "spdot", "gather", "random_bcoo", "bcsr",
         "update_layout", "sum_duplicates"}


def _params() -> list:
    seen: set[str] = set()
    params = []
    for name in sorted(REFERENCE):
        prefix = name.split(".")[0]
        quick = prefix in QUICK and prefix not in seen
        params.append(name if quick else pytest.param(name, marks=pytest.mark.slow))
        seen.add(prefix)
    return params


def test_every_case_is_recorded():
    assert sorted(CASES) == sorted(REFERENCE)


@pytest.mark.parametrize("name", _params())
def test_matches_jax(name):
    got, want = CASES[name](), REFERENCE[name]
    assert len(got) == len(want), name
    for g, w in zip(got, want, strict=True):
        if isinstance(w, str):
            assert g == w, name
            continue
        g = np.asarray(g)
        assert (str(g.dtype), list(g.shape)) == (w["dtype"], w["shape"]), name
        np.testing.assert_allclose(g.ravel(), np.asarray(w["values"], g.dtype), rtol=1e-6,
                                   atol=1e-6, err_msg=name)
