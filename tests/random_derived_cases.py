"""The draws of the derived and counting distributions (spmdc/random/derived.py and
discrete.py) that tests/random/test_derived.py compares with JAX's.

Shared with `tools/record.py random_derived`, which runs them on JAX 0.10.2 and stores
the draws in tests/data/random_derived_{x32,x64}.npz in the format of the `random` case
set (tests/random_cases.py: ``(id, fn)`` with ``fn(random, jnp, key)``; draws per seed and
under vmap over split keys). This module imports neither jax nor spmdc.
"""
from __future__ import annotations

from random_cases import VMAP_SIZE

__all__ = ["SEEDS", "VMAP_SIZE", "cases"]

SEEDS = (0, 2**31 + 7)        # random_cases' seed handling is the same for every sampler
# the half-precision cases: float16 for all but the gamma-based ones (their rejection
# loops are covered by gamma's own cases), bfloat16 for a few
HALF = {"float16": ("pareto", "rayleigh", "weibull_min", "maxwell", "double_sided_maxwell",
                    "wald", "triangular", "lognormal", "binomial"),
        "bfloat16": ("rayleigh", "triangular", "lognormal")}


def cases(x64: bool) -> list[tuple[str, object]]:
    """Every case for one x64 setting (the x64 file has the float64 ones too)."""
    out: list[tuple[str, object]] = []

    def add(name, fn):
        out.append((name, fn))

    floats = ("float32", "float16", "bfloat16", "float64") if x64 else \
        ("float32", "float16", "bfloat16")

    def add_float(name, fn):
        dtype = name.split("/")[1]
        if dtype in ("float32", "float64") or name.split("/")[0] in HALF[dtype]:
            add(name, fn)

    for dt in floats:
        add_float(f"pareto/{dt}", lambda r, jnp, k, d=dt: r.pareto(k, 2.5, (3, 4), d))
        add_float(f"rayleigh/{dt}", lambda r, jnp, k, d=dt: r.rayleigh(k, 1.5, (3, 4), d))
        add_float(f"weibull_min/{dt}", lambda r, jnp, k, d=dt: r.weibull_min(
            k, 2.0, 1.5, (3, 4), d))
        add_float(f"maxwell/{dt}", lambda r, jnp, k, d=dt: r.maxwell(k, (3, 4), d))
        add_float(f"double_sided_maxwell/{dt}", lambda r, jnp, k, d=dt: r.double_sided_maxwell(
            k, 0.5, 2.0, (3, 4), d))
        add_float(f"wald/{dt}", lambda r, jnp, k, d=dt: r.wald(k, 1.5, (3, 4), d))
        add_float(f"triangular/{dt}", lambda r, jnp, k, d=dt: r.triangular(k, -1.0, 0.5, 2.0,
                                                                      (3, 4), d))
        add_float(f"lognormal/{dt}", lambda r, jnp, k, d=dt: r.lognormal(k, 0.7, (3, 4), d))
        add_float(f"t/{dt}", lambda r, jnp, k, d=dt: r.t(k, 3.0, (3, 4), d))
        add_float(f"chisquare/{dt}", lambda r, jnp, k, d=dt: r.chisquare(k, 2.5, (3, 4), d))
        add_float(f"f/{dt}", lambda r, jnp, k, d=dt: r.f(k, 3.0, 5.0, (3, 4), d))
        add_float(f"binomial/{dt}", lambda r, jnp, k, d=dt: r.binomial(k, 20.0, 0.3, (3, 4), d))
    ints = ("int32", "int8", "uint8", "int64") if x64 else ("int32", "int8", "uint8")
    for dt in ints:
        add(f"geometric/{dt}", lambda r, jnp, k, d=dt: r.geometric(k, 0.3, (3, 4), d))
    # default dtypes, parameter arrays, broadcasting, empty and scalar shapes
    ps = [0.05, 0.3, 0.5, 0.9]
    add("pareto/arrays", lambda r, jnp, k: r.pareto(k, jnp.array([0.5, 1.0, 3.0])))
    add("pareto/()", lambda r, jnp, k: r.pareto(k, 2.0))
    add("pareto/(0,)", lambda r, jnp, k: r.pareto(k, 2.0, (0,)))
    add("rayleigh/arrays", lambda r, jnp, k: r.rayleigh(k, jnp.array([[0.5], [2.0]]), (2, 3)))
    add("weibull_min/arrays", lambda r, jnp, k: r.weibull_min(
        k, jnp.array([1.0, 2.0, 3.0]), jnp.array([0.5, 1.0, 4.0])))
    add("weibull_min/int_concentration", lambda r, jnp, k: r.weibull_min(k, 1.0, 2, (5,)))
    add("maxwell/()", lambda r, jnp, k: r.maxwell(k))
    add("double_sided_maxwell/params_only", lambda r, jnp, k: r.double_sided_maxwell(
        k, jnp.array([0.0, 1.0, -1.0]), 1.0))
    add("double_sided_maxwell/shape_and_params", lambda r, jnp, k: r.double_sided_maxwell(
        k, jnp.array([0.0, 1.0]), jnp.array([1.0, 3.0]), (3,)))
    add("wald/arrays", lambda r, jnp, k: r.wald(k, jnp.array([0.1, 1.0, 10.0])))
    add("triangular/arrays", lambda r, jnp, k: r.triangular(
        k, jnp.array([0.0, -2.0]), jnp.array([0.0, 1.0]), jnp.array([1.0, 5.0]), (3, 2)))
    add("lognormal/default", lambda r, jnp, k: r.lognormal(k))
    add("lognormal/shape", lambda r, jnp, k: r.lognormal(k, shape=(5,)))
    add("lognormal/complex64", lambda r, jnp, k: r.lognormal(k, 0.5, (4,), "complex64"))
    add("t/arrays", lambda r, jnp, k: r.t(k, jnp.array([0.5, 1.0, 30.0])))
    add("chisquare/arrays", lambda r, jnp, k: r.chisquare(k, jnp.array([0.3, 1.0, 4.0, 50.0])))
    add("f/arrays", lambda r, jnp, k: r.f(k, jnp.array([1.0, 4.0, 0.5]),
                                          jnp.array([2.0, 9.0, 3.0])))
    add("f/scalar_dfden", lambda r, jnp, k: r.f(k, jnp.array([[1.0], [4.0]]), 6.0, (2, 1)))
    add("geometric/default", lambda r, jnp, k: r.geometric(k, jnp.array(ps)))
    add("geometric/(0,)", lambda r, jnp, k: r.geometric(k, 0.5, (0,)))
    add("geometric/float16_p", lambda r, jnp, k: r.geometric(k, jnp.array(ps, "float16")))
    add("binomial/default", lambda r, jnp, k: r.binomial(k, 10, 0.5))
    add("binomial/arrays", lambda r, jnp, k: r.binomial(
        k, jnp.array([0.0, 1.0, 5.0, 30.0, 100.0, 1000.0]),
        jnp.array([[0.01], [0.3], [0.5], [0.95]])))
    add("binomial/special", lambda r, jnp, k: r.binomial(
        k, jnp.array([-1.0, float("nan"), float("inf"), 5.5, 10.0, 10.0]),
        jnp.array([0.5, 0.5, 0.5, 0.5, float("nan"), 1.0])))
    add("binomial/int_n", lambda r, jnp, k: r.binomial(k, jnp.array([3, 40]), 0.6, (2, 2)))
    add("multinomial/default", lambda r, jnp, k: r.multinomial(
        k, 20.0, jnp.array([0.1, 0.2, 0.3, 0.4])))
    add("multinomial/batch", lambda r, jnp, k: r.multinomial(
        k, jnp.array([5.0, 100.0]), jnp.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])))
    add("multinomial/shape", lambda r, jnp, k: r.multinomial(
        k, 50, jnp.array([0.25, 0.75]), shape=(3, 2), dtype="int32"))
    if x64:     # x64 runs what x64 changes: float64 and int64 draws and the defaults
        out = [(n, fn) for n, fn in out if "64" in n or "default" in n]
    return out
