"""Set operations, partial sorts, insert/delete and friends, polynomials and float bits
(spmdc/numpy/setops.py, partitioning.py, editing.py, integer_divisors.py, bit_packing.py,
phase_unwrapping.py, polynomial.py, float_bits.py): against JAX 0.10.2's recorded results
(tests/jnp_more_cases.py), against NumPy, and their errors."""
from __future__ import annotations

import jnp_more_cases
import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc.numpy as jnp

RECORDED = oracle.recorded_cases("jnp_more_reference.json")
CASES = jnp_more_cases.cases(spmdc)


def test_every_recorded_case_is_run():
    assert set(RECORDED) == set(CASES) and SLOW_VARIANTS <= set(RECORDED)


# Every function keeps a recorded case in make test; these further variants of one run with
# make test-slow (each compiles programs of its own). The set operations' size= and
# fill_value= forms and unique's flags are checked against NumPy in make test as well
# (test_set_operations_match_numpy); insert's axis=, partition of unsigned integers, put's
# wrap mode, polyfit's full= and cov= and unique's axis= and size= forms in make test-slow.
SLOW_VARIANTS = {"insert_axis", "intersect1d_size", "intersect1d_size_fill", "partition_unsigned",
                 "polyfit_full", "polyfit_w_cov", "put_wrap", "setdiff1d_size", "setxor1d_size",
                 "union1d_size", "unique_axis0", "unique_counts_size", "unique_inverse",
                 "unique_size_fill"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow)
                                  if n in SLOW_VARIANTS else n for n in sorted(RECORDED)])
def test_matches_jax(name):
    oracle.assert_matches_recorded(CASES[name](), RECORDED[name], name)


@settings(max_examples=5)     # each example compiles the size= forms: keep the suite fast
@given(st.lists(st.integers(-5, 5), min_size=0, max_size=12),
       st.lists(st.integers(-5, 5), min_size=0, max_size=8))
def test_set_operations_match_numpy(a, b):
    a, b = np.asarray(a, np.int32), np.asarray(b, np.int32)
    names = ("intersect1d", "union1d", "setdiff1d", "setxor1d")
    wants = [getattr(np, name)(a, b) for name in names]
    for name, want in zip(names, wants, strict=True):
        np.testing.assert_array_equal(getattr(jnp, name)(a, b), want, err_msg=name)
    # the size= forms of the four in one program (one compile per example)
    sized = spmdc.jit(lambda x, y: tuple(
        getattr(jnp, name)(x, y, size=len(want) + 2, fill_value=-9)
        for name, want in zip(names, wants, strict=True)))(a, b)
    for name, want, got in zip(names, wants, sized, strict=True):
        np.testing.assert_array_equal(got, np.concatenate([want, [-9, -9]]), err_msg=name)
    if a.size:
        values, index, inverse, counts = jnp.unique(a, True, True, True)
        for g, w in zip((values, index, inverse, counts), np.unique(a, True, True, True),
                        strict=True):
            np.testing.assert_array_equal(g, w)


@settings(max_examples=15)     # each example compiles: keep the suite fast
@given(st.integers(1, 9), st.data())
def test_partition_puts_the_kth_in_place(n, data):
    x = np.asarray(data.draw(st.lists(st.integers(-20, 20), min_size=n, max_size=n)),
                   np.int32)
    kth = data.draw(st.integers(-n, n - 1))
    p = np.asarray(jnp.partition(x, kth))
    s = np.sort(x)
    assert p[kth] == s[kth]
    assert (p[:kth % n] <= p[kth]).all() and (p[kth % n + 1:] >= p[kth]).all()
    i = np.asarray(jnp.argpartition(x, kth))
    assert sorted(i) == list(range(n)) and x[i][kth] == s[kth]


@settings(max_examples=20)     # each example compiles: keep the suite fast
@given(st.lists(st.integers(0, 9), min_size=1, max_size=4), st.integers(-3, 12))
def test_insert_and_delete_match_numpy(indices, value):
    a = np.arange(10, dtype=np.int32)
    np.testing.assert_array_equal(jnp.insert(a, indices, value), np.insert(a, indices, value))
    np.testing.assert_array_equal(jnp.delete(a, indices), np.delete(a, indices))


def test_gcd_and_lcm_of_wide_integers_match_numpy():
    r = np.random.default_rng(3)
    for dtype in (np.int8, np.int16, np.int32, np.uint16):
        info = np.iinfo(dtype)
        x = r.integers(max(info.min, -10**6) + 1, min(info.max, 10**6), size=40, dtype=dtype)
        y = r.integers(max(info.min, -10**6) + 1, min(info.max, 10**6), size=40, dtype=dtype)
        np.testing.assert_array_equal(jnp.gcd(x, y), np.gcd(x, y))
    fib = np.array([1836311903], np.int32), np.array([1134903170], np.int32)   # worst case
    np.testing.assert_array_equal(jnp.gcd(*fib), np.gcd(*fib))


def test_value_dependent_shapes_under_jit_are_clear_errors():
    a = np.arange(6)
    for f, fragment in [(lambda x: jnp.unique(x), "pass size="),
                        (lambda x: jnp.union1d(x, x), "pass size="),
                        (lambda x: jnp.setdiff1d(x, x), "pass size="),
                        (lambda x: jnp.intersect1d(x, x), "pass size="),
                        (lambda x: jnp.compress(x > 2, x), "pass size="),
                        (lambda x: jnp.delete(x, x[:2]), "assume_unique_indices"),
                        (lambda x: jnp.choose(x % 2, [x, -x]), "mode='wrap'")]:
        with pytest.raises(TypeError, match=fragment):
            spmdc.jit(f)(a)


def test_bad_arguments_are_clear_errors():
    a = np.arange(6)
    for call, error, fragment in [
        (lambda: jnp.place(a, a > 2, [1]), ValueError, "inplace=False"),
        (lambda: jnp.put(a, [1], [2]), ValueError, "inplace=False"),
        (lambda: jnp.put(a, [1], [2], mode="bounce", inplace=False), ValueError, "mode"),
        (lambda: jnp.partition(a.astype(np.complex64), 1), TypeError, "complex"),
        (lambda: jnp.partition(a, 6), ValueError, "out of bounds"),
        (lambda: jnp.gcd(1.5, 2), ValueError, "must be integers"),
        (lambda: jnp.packbits(a.astype(np.float32)), TypeError, "integer or boolean"),
        (lambda: jnp.unpackbits(a), TypeError, "uint8"),
        (lambda: jnp.polyfit(a, a, -1), ValueError, "deg"),
        (lambda: jnp.choose(a, [a, a]), ValueError, "invalid entry"),
        (lambda: jnp.unique(np.zeros(0), size=3), ValueError, "fill_value"),
        (lambda: jnp.insert(a, [[1]], 0), ValueError, "1-d"),
    ]:
        with pytest.raises(error, match=fragment):
            call()
