"""spmdc.random against draws recorded from JAX 0.10.2 (`tools/record.py random`): the same
key, shape and dtype give the same bits, eagerly, with typed keys, under jit, under vmap
over a batch of keys and under pmap over per-device keys from split.

Every case runs eagerly for every recorded seed; the transformed runs take a
representative share of the cases (the whole matrix runs with ``make test-slow``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import oracle
import pytest
import random_cases as rc
from needs import needs_devices

import spmdc
import spmdc.numpy as jnp
from spmdc import random
from spmdc.core import dtypes

RECORDED = {(group, x64): oracle.recorded(
    f"random_{'sort_' if group == 'sort' else ''}{'x64' if x64 else 'x32'}.npz")
    for group in ("main", "sort") for x64 in (False, True)}
# the shuffles exist once spmdc has a sort (spmdc/random/__init__.py)
GROUPS = {"main": rc.cases, "sort": rc.sort_cases} if hasattr(random, "permutation") else \
    {"main": rc.cases}


@pytest.fixture
def x64_mode(request):
    previous = dtypes.enable_x64(request.param)
    yield request.param
    dtypes.enable_x64(previous)




def assert_same_bits(got, x64: bool, name: str, group: str = "main", ulps: int = 0,
                     rtol: float = 0.0) -> None:
    """Bit for bit (``ulps=0``), or floats within ``ulps`` units in the last place (or
    within ``rtol``)."""
    data = RECORDED[group, x64]
    dtype, bits = oracle.bit_pattern(got)
    assert dtype == str(data[name + "#dtype"]), f"{name}: dtype {dtype}"
    expected = data[name]
    assert bits.shape == expected.shape, f"{name}: shape {bits.shape} != {expected.shape}"
    floating = np.dtype(dtype).kind in "fc" or dtype == "bfloat16"
    if floating and rtol:
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        want = expected.view(np.asarray(got).dtype).astype(wide)
        np.testing.assert_allclose(np.asarray(got).astype(wide), want, rtol=rtol, err_msg=name)
        return
    if ulps and floating:
        far = np.abs(oracle.ordered_bits(bits.ravel())
                     - oracle.ordered_bits(expected.ravel())) > ulps
        mismatched = np.flatnonzero(far)
    else:
        mismatched = np.flatnonzero(bits.ravel() != expected.ravel())
    assert mismatched.size == 0, (f"{name}: {mismatched.size} of {bits.size} elements "
                                  f"differ, first at flat index {mismatched[0]}")


# Note [half-precision ulps]: XLA computes float16/bfloat16 arithmetic in float32 and
# rounds back; whether an intermediate is rounded between two operations depends on how
# it fuses the whole program, which differs slightly between JAX's program and ours for
# these cases, so a few elements can differ by one unit in the last place.
HALF_PRECISION_ULPS = {"logistic/float16/(3, 5)": 1}

# Note [CPU-dependent rounding]: XLA:CPU compiles for the host's instruction set, and
# its vectorised log, exp and division round differently with AVX-512 than with AVX2. So
# JAX 0.10.2 itself draws these cases' floats a few units in the last place apart on two
# machines (recorded on one, re-run on an AVX-512 Xeon: up to 9 units, in gamma-based
# draws, where a rejection loop compounds the rounding, and in float16 tails). The
# generator's bits are the same everywhere: every other case is compared bit for bit.
HOST_ULPS = dict.fromkeys(
    ["gamma/float16", "loggamma/float16", "beta/float16", "beta/arrays", "dirichlet/float32",
     "dirichlet/float16", "dirichlet/batch", "ball/float16", "uniform/float16/range",
     "truncated_normal/float16/(3, 5)", "beta/bfloat16"], 12)


def allowed_ulps(name: str) -> int:
    return max(HALF_PRECISION_ULPS.get(name, 0), HOST_ULPS.get(name, 0))

# Under jit, parameters that are compile-time constants (the cases' Python floats and
# jnp.array literals) are folded by XLA's constant folder, which rounds transcendental
# functions (erf, log, sqrt, lgamma) slightly differently from the compiled kernels that
# JAX's eager calls (which we recorded) use. The generator's bits themselves are exact
# under every transformation (the integer and plain uniform/normal cases check it, bit
# for bit). Far in a tail (truncated_normal(4, 9)) erfinv magnifies that rounding.
def folded_rtol(name: str) -> float:
    """Transformed draws: see the two Notes above. A float16 or bfloat16 draw may also be
    one unit in the last place away once XLA fuses it into a larger program (Note
    [half-precision ulps]): 2**-10 and 2**-7 relative; beta, the ratio of two gamma
    draws each rounded so, up to four."""
    ulps = 4 if name.startswith("beta/") else 1     # beta: a ratio of two gamma draws
    if "bfloat16" in name:
        return ulps * 2.0 ** -7
    if "float16" in name:
        return ulps * 2.0 ** -10
    return 1e-3 if "tail" in name else 1e-5


def _raw(x):
    """Draws as arrays (key arrays as their data) for comparison."""
    return random.key_data(x) if isinstance(x, random.PRNGKeyArray) else x


def _representative(name: str) -> bool:
    """The cases that also run transformed by default: one shape and one dtype of each
    function (all of them run with ``make test-slow``)."""
    return not any(s in name for s in ("/()", "/(0,)", "/(1,)", "/(7,)", "/(2, 0, 3)",
                                       "/(4, 3, 2)", "bfloat16", "float16", "int8", "int16",
                                       "uint8", "uint16", "fold_in/1", "fold_in/0"))


def _params(x64: bool, fast_filter) -> list:
    out = []
    for group, cases in GROUPS.items():
        for name, fn in cases(x64):
            marks = () if fast_filter(name) else (pytest.mark.slow,)
            out.append(pytest.param(x64, group, name, fn, marks=marks,
                                    id=f"{'x64' if x64 else 'x32'}:{name}"))
    return out


def _uses_64(name: str) -> bool:
    return "64" in name or "default" in name or "fold_in" in name or "split" in name


def _first_64_bit_case() -> Callable[[str], bool]:
    """A filter passing the first representative 64-bit case of each function."""
    seen: set[str] = set()

    def first(name: str) -> bool:
        function = name.split("/")[0]
        if function in seen or not (_uses_64(name) and _representative(name)):
            return False
        seen.add(function)
        return True
    return first


# Draws built on gamma's rejection loop compile slowly: under jit and vmap make test runs
# gamma itself, make test-slow these too.
GAMMA_BASED = {"beta", "dirichlet", "ball", "loggamma", "generalized_normal"}
# ... and eagerly make test runs one of their cases, in x32 (x64's is gamma's own);
# these run with make test-slow. So do the scalar-parameter forms of gamma and poisson,
# whose broadcast and array-parameter cases (gamma/broadcast, poisson/lams) run in make test.
EAGER_SLOW = {"beta/arrays", "ball/p1", "dirichlet/batch", "gamma/shape", "poisson/shape"}


def _eager_filter(x64: bool) -> Callable[[str], bool]:
    """make test's eager cases: one shape of each dtype, and in x64 one 64-bit case per
    function; of the draws built on gamma, one case in x32 only (see EAGER_SLOW)."""
    first_64_bit = _first_64_bit_case()

    def fast(name: str) -> bool:
        if x64:
            return first_64_bit(name) and name.split("/")[0] not in GAMMA_BASED
        return _representative(name) and name not in EAGER_SLOW
    return fast


# make test: see _eager_filter (every case with make test-slow)
EAGER = _params(False, _eager_filter(False)) + _params(True, _eager_filter(True))


def _first_of_each_function() -> Callable[[str], bool]:
    """A filter passing the first representative case of each function (``beta/...``):
    under jit and vmap, ``make test`` runs one case per function, in x32 (every case,
    x64 too, runs with ``make test-slow``)."""
    seen: set[str] = set()

    def first(name: str) -> bool:
        function = name.split("/")[0]
        if function in seen | GAMMA_BASED or not _representative(name):
            return False
        seen.add(function)
        return True
    return first


TRANSFORMED = _params(False, _first_of_each_function()) + _params(True, lambda n: False)


@pytest.mark.parametrize("x64_mode,group,name,fn", EAGER, indirect=["x64_mode"])
def test_eager_raw_and_typed_keys(x64_mode, group, name, fn):
    for seed in rc.SEEDS:
        got = fn(random, jnp, random.PRNGKey(seed))
        assert_same_bits(_raw(got), x64_mode, f"{name}|seed{seed}", group,
                         allowed_ulps(name))
    # a typed key gives the same draws (and keys come back typed)
    typed = fn(random, jnp, random.key(rc.SEEDS[-1]))
    if name.startswith(("split", "fold_in")):
        assert isinstance(typed, random.PRNGKeyArray)
    assert_same_bits(_raw(typed), x64_mode, f"{name}|seed{rc.SEEDS[-1]}", group,
                     allowed_ulps(name))


@pytest.mark.parametrize("x64_mode,group,name,fn", TRANSFORMED, indirect=["x64_mode"])
def test_jit_and_vmap_over_keys(x64_mode, group, name, fn):
    seed = rc.SEEDS[0]
    got = spmdc.jit(lambda k: fn(random, jnp, k))(random.PRNGKey(seed))
    if name in HOST_ULPS:
        # A draw whose rounding depends on the host CPU (Note [CPU-dependent rounding]):
        # a different rounding can flip a rejection step and draw another value, so
        # under jit it is compared with this host's eager draw, which
        # test_eager_raw_and_typed_keys compares with JAX's.
        _same_as_eager(got, fn(random, jnp, random.PRNGKey(seed)), name)
    else:
        assert_same_bits(_raw(got), x64_mode, f"{name}|seed{seed}", group,
                         rtol=folded_rtol(name))
    if f"{name}|vmap{seed}" not in RECORDED[group, x64_mode]:
        return                      # JAX itself cannot vmap this case (the recorder says)
    keys = random.split(random.key(seed), rc.VMAP_SIZE)        # typed keys through vmap
    got = spmdc.jit(spmdc.vmap(lambda k: _raw(fn(random, jnp, k))))(keys)
    if name in HOST_ULPS:
        _same_as_eager(got, np.stack([np.asarray(_raw(fn(random, jnp, k))) for k in keys]),
                       name)
    else:
        assert_same_bits(got, x64_mode, f"{name}|vmap{seed}", group,
                         rtol=folded_rtol(name))


def _same_as_eager(got, eager, name: str) -> None:
    """The same draws as eager but for the rounding of folded constants, except where a
    rejection step decided the other way (one element in six at most, still finite):
    then that element is another valid draw."""
    got = np.asarray(_raw(got), np.float64)
    eager = np.asarray(_raw(eager), np.float64)
    assert got.shape == eager.shape and np.isfinite(got).all(), name
    close = np.isclose(got, eager, rtol=folded_rtol(name), atol=0)
    assert (~close).sum() <= max(1, got.size // 6), (
        f"{name}: {int((~close).sum())} of {got.size} draws differ from eager: "
        f"{got[~close]} vs {eager[~close]}")


PMAP_CASES = ["split/3", "fold_in/12345", "bits/uint32/(3, 5)", "uniform/float32/(3, 5)",
              "normal/bfloat16/(3, 5)", "normal/float32/(4, 3, 2)"]


@pytest.mark.parametrize("name", PMAP_CASES)
def test_pmap_per_device_keys(name):
    needs_devices(rc.VMAP_SIZE)
    fn = dict(rc.cases(False))[name]
    keys = random.split(random.key(rc.SEEDS[0]), rc.VMAP_SIZE)    # typed, per device
    got = spmdc.pmap(lambda k: _raw(fn(random, jnp, k)),
                     devices=spmdc.devices()[:rc.VMAP_SIZE])(keys)
    assert_same_bits(got, False, f"{name}|vmap{rc.SEEDS[0]}")


@pytest.mark.cpu_platform
def test_small_draws_stay_cheap_enough_to_run_on_the_calling_thread():
    # PJRT's CPU client runs a program on the calling thread only under 1000 flops by
    # XLA's count; the unrolled hash made even normal(key, (8,)) a worker-thread launch
    # (Note [threefry rolled for small draws]). JAX's programs count the same way.
    key = random.PRNGKey(0)

    def step(key, w):
        key, sub = random.split(key)
        return key, w + random.normal(sub, w.shape)
    cases = [(lambda k: random.normal(k, (8,)), (key,)),
             (lambda k: random.split(k), (key,)),
             (step, (key, np.zeros(8, np.float32)))]
    for f, args in cases:
        assert spmdc.jit(f).lower(*args).compile().cost_analysis()["flops"] < 1000
    # the same bits as the unrolled hash, on both sides of the switch
    for n in (31, 32, 33):
        drawn = np.asarray(random.bits(key, (n,)))
        assert np.array_equal(drawn[:31], np.asarray(random.bits(key, (31,))))
    # under vmap the batched arrays are large: the unrolled hash, which XLA fuses (the
    # loop made vmap(split) of 4096 keys 4.5 times slower)
    keys = random.split(key, 16)
    split = spmdc.jit(lambda k: random.split(k))
    assert "stablehlo.while" in split.lower(key).as_text()
    batched = spmdc.jit(spmdc.vmap(lambda k: random.split(k)))
    assert "stablehlo.while" not in batched.lower(keys).as_text()
    np.testing.assert_array_equal(batched(keys), np.stack([split(k) for k in keys]))


def test_a_typed_key_array_is_a_jax_array():
    """As in JAX, ``isinstance(key, jax.Array)`` (and ``jnp.ndarray``) holds for typed
    keys: Flax's ``_is_valid_rng`` tells a key from other values that way."""
    key = spmdc.random.key(0)
    assert isinstance(key, spmdc.Array) and isinstance(key, jnp.ndarray)
    assert isinstance(spmdc.random.split(key, 3), spmdc.Array)
    assert not isinstance(np.zeros(2), spmdc.Array)
    np.testing.assert_array_equal(spmdc.jit(lambda k: spmdc.random.bits(k, (2,)))(key),
                                  spmdc.random.bits(key, (2,)))


def test_bernoulli_takes_an_out_sharding():
    # Flax's nnx.Dropout passes out_sharding=jax.typeof(inputs).sharding; a sharding over
    # a mesh without axes places nothing, as in JAX, and one that shards lays it out.
    from spmdc.sharding import Mesh, NamedSharding, PartitionSpec
    key = random.key(3)
    want = np.asarray(random.bernoulli(key, 0.3, (6,)))
    empty = NamedSharding(Mesh(np.array(spmdc.devices()[0]).reshape(()), ()), PartitionSpec())
    for s in (None, empty):
        np.testing.assert_array_equal(random.bernoulli(key, 0.3, (6,), out_sharding=s), want)
    sharded = NamedSharding(spmdc.make_mesh((1,), ("x",)), PartitionSpec("x"))
    placed = random.bernoulli(key, 0.3, (6,), out_sharding=sharded)
    np.testing.assert_array_equal(placed, want)
    assert placed.sharding.spec == PartitionSpec("x")
