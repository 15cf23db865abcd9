"""Record JAX 0.10.2's values for tests/test_linalg_jax.py (run once; needs jax).

    /work/jaxenv/bin/python tools/record_linalg.py

Runs the cases of tests/linalg_cases.py on JAX with x64 off and on (a fresh process each,
since JAX reads JAX_ENABLE_X64 at import) and writes tests/data/linalg_{x32,x64}.npz:
``"<case>|seed<s>"`` (and ``"<case>|vmap<s>"``, the draws from ``split(PRNGKey(s), 3)``
under vmap) hold each sampler's draw as its bits (unsigned integers of its width), with
``"...#dtype"`` its dtype; ``"<case>"`` holds each linear-algebra value as is.
"""
from __future__ import annotations

import os
import subprocess
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def as_bits(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}")


def record(x64: bool) -> None:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    import jax.scipy.stats as stats
    from jax import random
    from jax.nn import initializers
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import linalg_cases as lc
    assert jax.__version__ == "0.10.2", jax.__version__
    assert jax.config.jax_enable_x64 == x64
    lib = types.SimpleNamespace(random=random, jnp=jnp, jsl=jsl, stats=stats,
                                initializers=initializers, grad=jax.grad)
    out: dict[str, np.ndarray] = {}
    for case, fn in lc.sampler_cases(x64):
        for s in lc.SEEDS:
            value = np.asarray(fn(lib, random.PRNGKey(s)))
            out[f"{case}|seed{s}"] = as_bits(value)
            out[f"{case}|seed{s}#dtype"] = np.array(value.dtype.name)
        keys = random.split(random.PRNGKey(lc.SEEDS[0]), lc.VMAP_SIZE)
        value = np.asarray(jax.vmap(lambda k, fn=fn: fn(lib, k))(keys))
        out[f"{case}|vmap{lc.SEEDS[0]}"] = as_bits(value)
        out[f"{case}|vmap{lc.SEEDS[0]}#dtype"] = np.array(value.dtype.name)
    for case, fn in lc.value_cases(x64):
        out[case] = np.asarray(fn(lib))
    path = os.path.join(ROOT, "tests", "data", f"linalg_{'x64' if x64 else 'x32'}.npz")
    np.savez_compressed(path, **out)
    print(f"wrote {len(out)} entries to {path}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("x32", "x64"):
        record(sys.argv[1] == "x64")
    else:
        for mode in ("x32", "x64"):
            env = dict(os.environ, JAX_ENABLE_X64="1" if mode == "x64" else "0",
                       JAX_PLATFORMS="cpu")
            subprocess.run([sys.executable, __file__, mode], check=True, env=env)
