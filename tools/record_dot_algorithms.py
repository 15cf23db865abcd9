"""Record JAX 0.10.2's results of dots with each dot algorithm preset its CPU backend
accepts, into tests/data/dot_algorithms.npz (read by tests/test_lax_precision.py).

Run with the JAX venv: /work/jaxenv/bin/python tools/record_dot_algorithms.py
"""
from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

PRESETS = ["DEFAULT", "F16_F16_F16", "F32_F32_F32", "BF16_BF16_F32", "BF16_BF16_F32_X3",
           "BF16_BF16_F32_X6"]
DTYPES = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16}


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 40)).astype(np.float32)
    y = rng.normal(size=(40, 3)).astype(np.float32)
    out = {"x": x, "y": y}
    for preset in PRESETS:
        for name, dtype in DTYPES.items():
            a, b = x.astype(dtype), y.astype(dtype)
            z = jax.jit(lambda a, b, p=preset: lax.dot(a, b, precision=p))(a, b)
            assert z.dtype == jnp.dtype(dtype), (preset, name, z.dtype)
            out[f"{preset}/{name}"] = np.asarray(z).astype(np.float32)
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "dot_algorithms.npz")
    np.savez(path, **out)
    print("wrote", path, len(out) - 2, "results")


if __name__ == "__main__":
    main()
