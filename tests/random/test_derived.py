"""The derived and counting distributions (pareto, t, chisquare, f, maxwell,
double_sided_maxwell, weibull_min, rayleigh, wald, triangular, lognormal, geometric,
binomial, multinomial) against draws recorded from JAX 0.10.2 (`tools/record.py
random_derived`): the same key gives the same bits eagerly, with typed keys, under jit and
under vmap over split keys; their checks raise JAX's exceptions, and their gradients are
JAX's.
"""
from __future__ import annotations

import functools

import numpy as np
import oracle
import pytest
import random_derived_cases as rc

import spmdc
import spmdc.numpy as jnp
from spmdc import random
from spmdc.core import dtypes
from spmdc.errors import TypePromotionError


@functools.cache
def recorded(x64: bool):
    return oracle.recorded(f"random_derived_{'x64' if x64 else 'x32'}.npz")


# Note [CPU-dependent rounding] in test_samplers.py: the draws through gamma's rejection
# loop (t, chisquare, f) may round a few units in the last place apart on another host;
# under jit XLA folds the cases' constants with its own rounding (Note there too).
HOST_ULPS = 12
GAMMA_BASED = ("t/", "chisquare/", "f/")
# maxwell's norm in float64: XLA rounds JAX's sum of three squares in another order for
# some elements (see _maxwell in spmdc/random/derived.py)
NORM_ULPS = {"maxwell/float64": 1, "double_sided_maxwell/float64": 1}


@pytest.fixture
def x64_mode(request):
    previous = dtypes.enable_x64(request.param)
    yield request.param
    dtypes.enable_x64(previous)




def assert_recorded(got, x64: bool, name: str, rtol: float = 0.0) -> None:
    """Bit for bit, or within HOST_ULPS units in the last place for gamma-based draws, or
    within ``rtol`` (transformed runs)."""
    data = recorded(x64)
    dtype, bits = oracle.bit_pattern(got)
    assert dtype == str(data[name + "#dtype"]), f"{name}: dtype {dtype}"
    expected = data[name]
    assert bits.shape == expected.shape, f"{name}: shape {bits.shape} != {expected.shape}"
    floating = np.dtype(dtype).kind in "fc" or dtype == "bfloat16"
    if floating and rtol:
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        want = expected.view(np.asarray(got).dtype).astype(wide)
        np.testing.assert_allclose(np.asarray(got).astype(wide), want, rtol=rtol,
                                   err_msg=name)
        return
    case = name.split("|")[0]
    if floating and (name.startswith(GAMMA_BASED) or case in NORM_ULPS):
        ulps = NORM_ULPS.get(case, HOST_ULPS)
        far = np.abs(oracle.ordered_bits(bits.ravel())
                     - oracle.ordered_bits(expected.ravel())) > ulps
        # a NaN is a NaN whatever its payload
        mismatched = np.flatnonzero(far & ~np.isnan(np.asarray(got, np.float64).ravel()))
    else:
        mismatched = np.flatnonzero(bits.ravel() != expected.ravel())
    assert mismatched.size == 0, (f"{name}: {mismatched.size} of {bits.size} elements "
                                  f"differ, first at flat index {mismatched[0]}")


def _rtol(name: str) -> float:
    if "bfloat16" in name:
        return 2.0 ** -7
    if "float16" in name:
        return 2.0 ** -10
    return 1e-5


def _params(x64: bool) -> list:
    return [pytest.param(x64, name, fn, id=f"{'x64' if x64 else 'x32'}:{name}")
            for name, fn in rc.cases(x64)]


def _first_shape_fast(params: list) -> list:
    """``params`` with only each function's first case left for ``make test``; the other
    shapes and dtypes run with ``make test-slow``."""
    seen: set[str] = set()
    out = []
    for p in params:
        family = p.values[1].split("/")[0]
        out.append(p if family not in seen else pytest.param(*p.values, id=p.id,
                                                             marks=pytest.mark.slow))
        seen.add(family)
    return out


def _x32_only_fast(params: list) -> list:
    """x64 ``params`` with the draws built on gamma's or binomial's rejection loops (slow to
    compile even eagerly) left to ``make test-slow``: ``make test`` runs them in x32, and
    gamma and binomial themselves in x64 (test_samplers.py, binomial below)."""
    return [pytest.param(*p.values, id=p.id, marks=pytest.mark.slow)
            if p.values[1].startswith((*GAMMA_BASED, "multinomial/")) else p for p in params]


CASES = _first_shape_fast(_params(False)) + _x32_only_fast(_first_shape_fast(_params(True)))
# the transformed runs, not the half-precision ones: the first case of each function runs
# with `make test`, the others with `make test-slow`
# The draws built on gamma's rejection loop (GAMMA_BASED) compile slowly: transformed
# and differentiated they run with `make test-slow`; test_samplers.py runs gamma itself
# under jit and vmap.
SLOW_TO_COMPILE = {prefix.rstrip("/") for prefix in GAMMA_BASED}
_SEEN: set[str] = set()
TRANSFORMED = []
for _p in _params(False):
    _name = _p.values[1]
    if "float16" in _name or "/(" in _name:
        continue
    _family = _name.split("/")[0]
    TRANSFORMED.append(_p if _family not in _SEEN | SLOW_TO_COMPILE else pytest.param(
        *_p.values, id=_p.id, marks=pytest.mark.slow))
    _SEEN.add(_family)


@pytest.mark.parametrize("x64_mode,name,fn", CASES, indirect=["x64_mode"])
def test_eager_raw_and_typed_keys(x64_mode, name, fn):
    for seed in rc.SEEDS:
        assert_recorded(fn(random, jnp, random.PRNGKey(seed)), x64_mode, f"{name}|seed{seed}")
    typed = fn(random, jnp, random.key(rc.SEEDS[-1]))
    assert_recorded(typed, x64_mode, f"{name}|seed{rc.SEEDS[-1]}")


@pytest.mark.parametrize("x64_mode,name,fn", TRANSFORMED, indirect=["x64_mode"])
def test_jit_and_vmap_over_keys(x64_mode, name, fn):
    seed = rc.SEEDS[0]
    got = spmdc.jit(lambda k: fn(random, jnp, k))(random.PRNGKey(seed))
    assert_recorded(got, x64_mode, f"{name}|seed{seed}", rtol=_rtol(name))
    keys = random.split(random.key(seed), rc.VMAP_SIZE)
    got = spmdc.jit(spmdc.vmap(lambda k: fn(random, jnp, k)))(keys)
    assert_recorded(got, x64_mode, f"{name}|vmap{seed}", rtol=_rtol(name))


# --- gradients (JAX 0.10.2's, recorded for PRNGKey(3) and four draws) ------------------------

K3 = random.PRNGKey(3)
GRADS = [
    ("pareto", lambda b: random.pareto(K3, b, (4,)).sum(), (2.5,), [-4.24789571762085]),
    ("rayleigh", lambda s: random.rayleigh(K3, s, (4,)).sum(), (1.5,), [3.7911229133605957]),
    ("lognormal", lambda s: random.lognormal(K3, s, (4,)).sum(), (0.7,), [12.32577133178711]),
    ("wald", lambda m: random.wald(K3, m, (4,)).sum(), (1.5,), [0.615516185760498]),
    ("chisquare", lambda d: random.chisquare(K3, d, (4,)).sum(), (2.5,), [3.4537839889526367]),
    ("t", lambda d: random.t(K3, d, (4,)).sum(), (3.0,), [0.0954427719116211]),
    ("f", lambda a, b: random.f(K3, a, b, (4,)).sum(), (3.0, 5.0), [-0.11504412, -0.66096556]),
    ("weibull_min", lambda s, c: random.weibull_min(K3, s, c, (4,)).sum(), (2.0, 1.5),
     [5.588657, -4.2267375]),
    ("triangular", lambda a, b, c: random.triangular(K3, a, b, c, (4,)).sum(),
     (-1.0, 0.5, 2.0), [1.0639778, 0.8976442, 2.038378]),
    ("double_sided_maxwell", lambda a, b: random.double_sided_maxwell(K3, a, b, (4,)).sum(),
     (0.5, 2.0), [4.0, 1.7293208]),
]


@pytest.mark.parametrize("name,fn,args,expected", [
    pytest.param(*g, marks=pytest.mark.slow) if g[0] in SLOW_TO_COMPILE else g for g in GRADS],
    ids=[g[0] for g in GRADS])
def test_grad_matches_jax(name, fn, args, expected):
    got = spmdc.grad(fn, argnums=tuple(range(len(args))))(*args)
    np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=2e-5,
                               err_msg=name)


# --- argument checks -------------------------------------------------------------------------

KEY = random.PRNGKey(0)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: random.pareto(KEY, 2.0, dtype="int32"), ValueError, "must be a float dtype"),
    (lambda: random.maxwell(KEY, (2,), "int32"), ValueError, "must be a float dtype"),
    (lambda: random.geometric(KEY, 0.5, dtype="float32"), ValueError, "must be an int dtype"),
    (lambda: random.binomial(KEY, 5.0, 0.5, dtype="int32"), ValueError,
     "must be a float dtype"),
    (lambda: random.lognormal(KEY, dtype="float16"), TypePromotionError,
     "cannot safely cast argument of type float32 to float16"),
    (lambda: random.wald(KEY, jnp.ones(3), (2, 2)), ValueError, "broadcast-compatible"),
    (lambda: random.t(KEY, jnp.ones(3), (4,)), ValueError, "broadcast-compatible"),
    (lambda: random.binomial(KEY, [5.0], 0.5), TypeError, "requires ndarray or scalar"),
    (lambda: random.pareto(jnp.zeros(3), 2.0), TypeError, "key"),
])
def test_checks_raise_jax_exceptions(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_shapes_dtypes_and_values_in_range():
    # One program for all the draws: binomial's and multinomial's rejection loops cost four
    # times the CPU eagerly (their eager draws are checked against JAX's bits above).
    def draws(key):
        return (random.lognormal(key),
                random.double_sided_maxwell(key, jnp.zeros(2), 1.0, (3,)),
                random.double_sided_maxwell(key, jnp.zeros(2), 1.0),
                random.binomial(key, 10.0, 0.3, (2000,)),
                random.multinomial(key, 40.0, jnp.array([0.2, 0.3, 0.5]), shape=(500, 3)),
                random.geometric(key, 0.25, (4000,)))

    lognormal, maxwell_shaped, maxwell, x, counts, g = spmdc.jit(draws)(KEY)
    assert lognormal.shape == () and lognormal.dtype == np.float32
    # JAX's double_sided_maxwell appends the parameters' shape to a given shape
    assert maxwell_shaped.shape == (3, 2)
    assert maxwell.shape == (2, 2)
    x = np.asarray(x)
    assert x.min() >= 0 and x.max() <= 10 and abs(x.mean() - 3.0) < 0.15
    counts = np.asarray(counts)
    np.testing.assert_array_equal(counts.sum(-1), 40.0)
    np.testing.assert_allclose(counts.mean(0), [8.0, 12.0, 20.0], rtol=0.05)
    g = np.asarray(g)
    assert g.min() >= 1 and abs(g.mean() - 4.0) < 0.2
