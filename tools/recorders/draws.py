"""Case sets of random draws, stored as their bits: random, random_sort (the cases of
tests/random_cases.py) and linalg (tests/linalg_cases.py), once per x64 mode.

JAX reads JAX_ENABLE_X64 at import, so tools/record.py runs each mode in a fresh process.
A draw ``"<case>|seed<s>"`` comes from ``PRNGKey(s)``, ``"<case>|vmap<s>"`` from the keys
``split(PRNGKey(s), VMAP_SIZE)`` under vmap; each holds the value viewed as unsigned
integers of its width (so bfloat16 and NaNs compare exactly), ``"...#dtype"`` its dtype's
name. linalg's ``"<case>"`` entries hold linear-algebra values as they are.
"""
from __future__ import annotations

import sys
import types

import numpy as np


def _random_bits(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind in "fcV" or x.dtype.name == "bfloat16":
        return np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}" if x.dtype.kind != "c"
                                            else f"u{x.dtype.itemsize // 2}")
    return x


def _check_jax(x64: bool):
    import jax
    assert jax.__version__ == "0.10.2", jax.__version__
    assert jax.config.jax_enable_x64 == x64
    return jax


def _record_random(group: str, rc: types.ModuleType, path, mode: str) -> None:
    x64 = mode == "x64"
    jax = _check_jax(x64)
    import jax.numpy as jnp
    from jax import random
    out: dict[str, np.ndarray] = {}

    def put(name, value):
        value = np.asarray(value)
        out[name] = _random_bits(value)
        out[name + "#dtype"] = np.array(value.dtype.name)

    for case, fn in (rc.sort_cases(x64) if group == "sort" else rc.cases(x64)):
        for s in rc.SEEDS:
            put(f"{case}|seed{s}", fn(random, jnp, random.PRNGKey(s)))
        keys = random.split(random.PRNGKey(rc.SEEDS[0]), rc.VMAP_SIZE)
        try:
            put(f"{case}|vmap{rc.SEEDS[0]}", jax.vmap(lambda k, fn=fn: fn(random, jnp, k))(keys))
        except Exception as e:          # a case that JAX cannot vmap: not compared
            print(f"skip vmap of {case}: {type(e).__name__}: {e}", file=sys.stderr)
    np.savez_compressed(path, **out)
    print(f"wrote {len(out) // 2} draws to {path}")


def record_random(cases: types.ModuleType, paths, mode: str) -> None:
    _record_random("main", cases, paths[0], mode)


def record_random_sort(cases: types.ModuleType, paths, mode: str) -> None:
    _record_random("sort", cases, paths[0], mode)


def random_names(cases: types.ModuleType, mode: str) -> list[str]:
    return [case for case, _ in cases.cases(mode == "x64")]


def random_sort_names(cases: types.ModuleType, mode: str) -> list[str]:
    return [case for case, _ in cases.sort_cases(mode == "x64")]


def _linalg_bits(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}")


def record_linalg(lc: types.ModuleType, paths, mode: str) -> None:
    x64 = mode == "x64"
    jax = _check_jax(x64)
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    import jax.scipy.stats as stats
    from jax import random
    from jax.nn import initializers
    lib = types.SimpleNamespace(random=random, jnp=jnp, jsl=jsl, stats=stats,
                                initializers=initializers, grad=jax.grad)
    out: dict[str, np.ndarray] = {}
    for case, fn in lc.sampler_cases(x64):
        for s in lc.SEEDS:
            value = np.asarray(fn(lib, random.PRNGKey(s)))
            out[f"{case}|seed{s}"] = _linalg_bits(value)
            out[f"{case}|seed{s}#dtype"] = np.array(value.dtype.name)
        keys = random.split(random.PRNGKey(lc.SEEDS[0]), lc.VMAP_SIZE)
        value = np.asarray(jax.vmap(lambda k, fn=fn: fn(lib, k))(keys))
        out[f"{case}|vmap{lc.SEEDS[0]}"] = _linalg_bits(value)
        out[f"{case}|vmap{lc.SEEDS[0]}#dtype"] = np.array(value.dtype.name)
    for case, fn in lc.value_cases(x64):
        out[case] = np.asarray(fn(lib))
    np.savez_compressed(paths[0], **out)
    print(f"wrote {len(out)} entries to {paths[0]}")


def linalg_names(cases: types.ModuleType, mode: str) -> list[str]:
    x64 = mode == "x64"
    return [case for case, _ in cases.sampler_cases(x64)] + \
        [case for case, _ in cases.value_cases(x64)]
