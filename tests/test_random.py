"""spmdc.random against draws recorded from JAX 0.10.2 (tools/record_random.py): the same
key, shape and dtype give the same bits, eagerly, with typed keys, under jit, under vmap
over a batch of keys and under pmap over per-device keys from split.

Every case runs eagerly for every recorded seed; the transformed runs take a
representative share of the cases (the whole matrix runs with ``make test-slow``).
"""
from __future__ import annotations

import os

import numpy as np
import pytest
import random_cases as rc

import spmdc
import spmdc.numpy as jnp
from spmdc import random
from spmdc.core import dtypes

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
RECORDED = {x64: np.load(os.path.join(DATA_DIR, f"random_{'x64' if x64 else 'x32'}.npz"))
            for x64 in (False, True)}


@pytest.fixture
def x64_mode(request):
    previous = dtypes.enable_x64(request.param)
    yield request.param
    dtypes.enable_x64(previous)


def _bits(x) -> tuple[str, np.ndarray]:
    x = np.asarray(x)
    if x.dtype.kind in "fc" or x.dtype.name == "bfloat16":
        width = x.dtype.itemsize // (2 if x.dtype.kind == "c" else 1)
        return x.dtype.name, np.ascontiguousarray(x).view(f"u{width}")
    return x.dtype.name, x


def assert_same_bits(got, x64: bool, name: str) -> None:
    data = RECORDED[x64]
    dtype, bits = _bits(got)
    assert dtype == str(data[name + "#dtype"]), f"{name}: dtype {dtype}"
    expected = data[name]
    assert bits.shape == expected.shape, f"{name}: shape {bits.shape} != {expected.shape}"
    mismatched = np.flatnonzero(bits.ravel() != expected.ravel())
    assert mismatched.size == 0, (f"{name}: {mismatched.size} of {bits.size} elements "
                                  f"differ, first at flat index {mismatched[0]}")


def _raw(x):
    """Draws as arrays (key arrays as their data) for comparison."""
    return random.key_data(x) if isinstance(x, random.PRNGKeyArray) else x


def _representative(name: str) -> bool:
    return not any(s in name for s in ("/()", "/(0,)", "/(1,)", "/(7,)", "/(2, 0, 3)",
                                       "/(4, 3, 2)"))


def _params(x64: bool, fast_filter) -> list:
    out = []
    for name, fn in rc.cases(x64):
        marks = () if fast_filter(name) else (pytest.mark.slow,)
        out.append(pytest.param(x64, name, fn, id=f"{'x64' if x64 else 'x32'}:{name}",
                                marks=marks))
    return out


def _uses_64(name: str) -> bool:
    return "64" in name or "default" in name or "fold_in" in name or "split" in name


EAGER = _params(False, lambda n: True) + _params(True, _uses_64)
TRANSFORMED = _params(False, _representative) + _params(True, lambda n: _uses_64(n) and
                                                         _representative(n))


@pytest.mark.parametrize("x64_mode,name,fn", [p.values for p in EAGER],
                         ids=[p.id for p in EAGER], indirect=["x64_mode"])
def test_eager_raw_and_typed_keys(x64_mode, name, fn):
    for seed in rc.SEEDS:
        got = fn(random, jnp, random.PRNGKey(seed))
        assert_same_bits(_raw(got), x64_mode, f"{name}|seed{seed}")
    # a typed key gives the same draws (and keys come back typed)
    typed = fn(random, jnp, random.key(rc.SEEDS[-1]))
    if name.startswith(("split", "fold_in")):
        assert isinstance(typed, random.PRNGKeyArray)
    assert_same_bits(_raw(typed), x64_mode, f"{name}|seed{rc.SEEDS[-1]}")


@pytest.mark.parametrize("x64_mode,name,fn", [p.values for p in TRANSFORMED],
                         ids=[p.id for p in TRANSFORMED], indirect=["x64_mode"])
def test_jit_and_vmap_over_keys(x64_mode, name, fn):
    seed = rc.SEEDS[0]
    got = spmdc.jit(lambda k: fn(random, jnp, k))(random.PRNGKey(seed))
    assert_same_bits(_raw(got), x64_mode, f"{name}|seed{seed}")
    keys = random.split(random.key(seed), rc.VMAP_SIZE)        # typed keys through vmap
    got = spmdc.jit(spmdc.vmap(lambda k: _raw(fn(random, jnp, k))))(keys)
    assert_same_bits(got, x64_mode, f"{name}|vmap{seed}")


PMAP_CASES = ["split/3", "fold_in/12345", "bits/uint32/(3, 5)", "uniform/float32/(3, 5)",
              "normal/bfloat16/(3, 5)", "normal/float32/(4, 3, 2)"]


@pytest.mark.parametrize("name", PMAP_CASES)
def test_pmap_per_device_keys(name):
    if spmdc.device_count() < rc.VMAP_SIZE:
        pytest.skip("needs 2 devices")
    fn = dict(rc.cases(False))[name]
    keys = random.split(random.PRNGKey(rc.SEEDS[0]), rc.VMAP_SIZE)
    got = spmdc.pmap(lambda k: _raw(fn(random, jnp, k)),
                     devices=spmdc.devices()[:rc.VMAP_SIZE])(keys)
    assert_same_bits(got, False, f"{name}|vmap{rc.SEEDS[0]}")
