"""Small expressions whose JAX 0.10.2 answers are recorded in tests/data/reference_cases.json
(by `tools/record.py expressions`): indexing modes, reductions with where=, accumulation
dtypes, booleans, sort, einsum with an ellipsis, methods on traced values. Each case runs
under spmdc and must give the same dtype, shape and values, or raise the same exception
type that JAX raises."""
import builtins

import numpy as np
import oracle
import pytest

import spmdc as jax
import spmdc.numpy as jnp
from spmdc import lax

_CASES = oracle.recorded_cases("reference_cases.json")


def _check(got, want, case):
    if "seq" in want:
        assert isinstance(got, (tuple, list)), case
        assert len(got) == len(want["seq"]), case
        for g, w in zip(got, want["seq"], strict=True):
            _check(g, w, case)
        return
    got = np.asarray(got)
    assert str(got.dtype) == want["dtype"], (case, got.dtype, want["dtype"])
    assert list(got.shape) == want["shape"], (case, got.shape)
    expected = np.array([np.nan if v is None else v for v in want["values"]],
                        np.float64 if got.dtype.kind in "fV" else got.dtype)
    actual = np.ravel(got).astype(expected.dtype)
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6, err_msg=case)
        # -0.0 and 0.0 are told apart where sorting or signs matter
        assert np.array_equal(np.signbit(actual), np.signbit(expected)) or \
            not case.startswith(("jnp.sort", "lax.sort")), case
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=case)


@pytest.mark.parametrize("case", [   # the recorded pmap cases map over 4 devices
    pytest.param(case, marks=pytest.mark.devices(4)) if case.startswith("jax.pmap") else case
    for case in _CASES])
def test_same_as_jax(case):
    record = _CASES[case]
    env = {"jax": jax, "jnp": jnp, "lax": lax, "np": np}
    if "raises" in record:
        expected = getattr(builtins, record["raises"])
        with pytest.raises(expected):
            eval(case, env)
        return
    _check(eval(case, env), record["result"], case)
