"""Record JAX 0.10.2's random draws for tests/test_random.py (run once; needs jax).

    /work/jaxenv/bin/python tools/record_random.py [main|sort]   # any Python with jax 0.10.2

Runs the cases of tests/random_cases.py on JAX, once with x64 off and once with it on
(each in a fresh process, since JAX reads JAX_ENABLE_X64 at import), and writes
tests/data/random_{x32,x64}.npz (``cases``) and tests/data/random_sort_{x32,x64}.npz
(``sort_cases``, the shuffles). Each entry ``"<case>|<how>"``
holds the draw's bits (viewed as unsigned integers of its width, so bfloat16 and NaNs
compare exactly) and ``"<case>|<how>#dtype"`` its dtype's name. ``<how>`` is
``seed<s>`` for a draw from ``PRNGKey(s)`` and ``vmap<s>`` for the draws from the keys
``split(PRNGKey(s), VMAP_SIZE)`` under vmap.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def as_bits(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind in "fcV" or x.dtype.name == "bfloat16":
        return np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}" if x.dtype.kind != "c"
                                            else f"u{x.dtype.itemsize // 2}")
    return x


def record(x64: bool, group: str) -> None:
    import jax
    import jax.numpy as jnp
    from jax import random
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import random_cases as rc
    assert jax.__version__ == "0.10.2", jax.__version__
    assert jax.config.jax_enable_x64 == x64
    out: dict[str, np.ndarray] = {}

    def put(name, value):
        value = np.asarray(value)
        out[name] = as_bits(value)
        out[name + "#dtype"] = np.array(value.dtype.name)

    for case, fn in (rc.sort_cases(x64) if group == "sort" else rc.cases(x64)):
        for s in rc.SEEDS:
            put(f"{case}|seed{s}", fn(random, jnp, random.PRNGKey(s)))
        keys = random.split(random.PRNGKey(rc.SEEDS[0]), rc.VMAP_SIZE)
        try:
            put(f"{case}|vmap{rc.SEEDS[0]}", jax.vmap(lambda k, fn=fn: fn(random, jnp, k))(keys))
        except Exception as e:          # a case that JAX cannot vmap: not compared
            print(f"skip vmap of {case}: {type(e).__name__}: {e}", file=sys.stderr)
    name = ("random_sort_" if group == "sort" else "random_") + ("x64" if x64 else "x32")
    path = os.path.join(ROOT, "tests", "data", f"{name}.npz")
    np.savez_compressed(path, **out)
    print(f"wrote {len(out) // 2} draws to {path}")


if __name__ == "__main__":
    # record_random.py [main|sort] (default: both groups); one process per x64 mode
    groups = sys.argv[1:2] if len(sys.argv) > 1 and sys.argv[1] in ("main", "sort") \
        else ["main", "sort"]
    if len(sys.argv) == 3 and sys.argv[2] in ("x32", "x64"):
        record(sys.argv[2] == "x64", sys.argv[1])
    elif len(sys.argv) == 2 and sys.argv[1] in ("x32", "x64"):
        record(sys.argv[1] == "x64", "main")
    else:
        for group in groups:
            for mode in ("x32", "x64"):
                env = dict(os.environ, JAX_ENABLE_X64="1" if mode == "x64" else "0",
                           JAX_PLATFORMS="cpu")
                subprocess.run([sys.executable, __file__, group, mode], check=True, env=env)
