"""spmdc.scipy.linalg's qr_multiply, hessenberg and polar: JAX 0.10.2's values (recorded by
`tools/record.py linalg_more` from tests/linalg_more_cases.py), eagerly and under jit, the
factorisations' defining identities, and JAX's exceptions for bad arguments."""
from __future__ import annotations

import linalg_more_cases as cases_module
import numpy as np
import oracle
import pytest

import spmdc
import spmdc.scipy.linalg as linalg

RECORDED = oracle.recorded_cases("linalg_more_reference.json")
CASES = cases_module.cases(spmdc)


def test_every_case_is_recorded():
    assert sorted(CASES) == sorted(RECORDED)


@pytest.mark.parametrize("name", oracle.one_per_method(CASES))  # every case: test-slow
def test_matches_jax(name):
    oracle.assert_matches_recorded(CASES[name](), RECORDED[name], name, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("name", ["hessenberg.q", "polar.ill", "qr_multiply.left"])
def test_matches_jax_under_jit(name):
    got = spmdc.jit(CASES[name])()
    oracle.assert_matches_recorded(got, RECORDED[name], name, rtol=1e-4, atol=2e-5)


def test_factorisations_reconstruct_their_input():
    a = cases_module.SQUARE
    h, q = (np.asarray(v, np.float64) for v in linalg.hessenberg(a, calc_q=True))
    np.testing.assert_allclose(q @ h @ q.T, a, atol=2e-5)
    np.testing.assert_allclose(q.T @ q, np.eye(5), atol=2e-6)
    assert np.all(np.tril(h, -2) == 0)
    u, p = (np.asarray(v, np.float64) for v in linalg.polar(cases_module.ILL))
    np.testing.assert_allclose(u @ p, cases_module.ILL, atol=2e-6)
    np.testing.assert_allclose(u.T @ u, np.eye(5), atol=2e-5)
    assert np.linalg.eigvalsh(p).min() > -1e-6


def test_bad_arguments_raise_jax_exceptions():
    with pytest.raises(ValueError, match="mode must be 'right' or 'left'"):
        linalg.qr_multiply(cases_module.TALL, cases_module.ROWS, mode="up")
    with pytest.raises(ValueError, match="needs c with 6 columns"):
        linalg.qr_multiply(cases_module.TALL, cases_module.COLUMNS)
    with pytest.raises(ValueError, match="side must be 'right' or 'left'"):
        linalg.polar(cases_module.SQUARE, side="top")
    with pytest.raises(ValueError, match="unknown polar decomposition method"):
        linalg.polar(cases_module.SQUARE, method="newton")
    with pytest.raises(NotImplementedError, match="use method='svd'"):
        linalg.polar(cases_module.WIDE)
    with pytest.raises(ValueError, match="square matrix"):
        linalg.hessenberg(cases_module.TALL)
