"""spmdc's random draws against JAX's on the same device (a GPU host's check).

    SPMDC_PLATFORM=cuda JAX_PLATFORMS=cuda python tools/gpu_random_check.py x32|x64 OUT.json

tests/random/test_samplers.py compares spmdc's draws with JAX's bits recorded on a CPU; on a GPU
the transcendentals that turn bits into floats round as the GPU's libraries do, so the
recorded bits are the wrong reference there. This script runs every case of
tests/random_cases.py eagerly with both libraries in one process on the default device
(the GPU under the variables above) and writes, per case and seed, whether the bits are
equal and otherwise the largest difference in units in the last place. Needs jax at
jaxlib's version. The integer cases (keys, bits) must be equal everywhere.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)


def _bits(x) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind in "fc" or x.dtype.name == "bfloat16":
        width = x.dtype.itemsize // (2 if x.dtype.kind == "c" else 1)
        return np.ascontiguousarray(x).view(f"u{width}")
    return x


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in ulps between two arrays of float bit patterns."""
    if not a.size:
        return 0
    width = a.dtype.itemsize * 8

    def ordered(bits):      # sign-magnitude bit patterns as integers in the floats' order
        v = bits.view(f"i{width // 8}").astype(np.int64)
        return np.where(v < 0, -(v & np.int64(2 ** (width - 1) - 1)), v)
    return int(np.abs(ordered(a) - ordered(b)).max())


def main(mode: str, out_path: str) -> None:
    x64 = mode == "x64"
    os.environ["JAX_ENABLE_X64"] = "1" if x64 else "0"
    import jax
    import jax.numpy as jjnp
    import random_cases as rc
    from jax import random as jrandom

    import spmdc
    import spmdc.numpy as sjnp
    from spmdc import random as srandom
    from spmdc.core import dtypes
    dtypes.enable_x64(x64)
    results = {"mode": mode, "jax": jax.__version__, "jax_device": str(jax.devices()[0]),
               "spmdc_device": str(spmdc.devices()[0]), "cases": {}}
    t0 = time.time()
    for group in ("main", "sort"):
        for case, fn in (rc.cases(x64) if group == "main" else rc.sort_cases(x64)):
            for seed in rc.SEEDS:
                name = f"{case}|seed{seed}"
                try:
                    want = np.asarray(fn(jrandom, jjnp, jrandom.PRNGKey(seed)))
                except Exception as e:      # JAX refuses the case: spmdc must too
                    results["cases"][name] = {"jax_error": type(e).__name__}
                    continue
                try:
                    got = np.asarray(fn(srandom, sjnp, srandom.PRNGKey(seed)))
                except Exception as e:
                    results["cases"][name] = {"spmdc_error": f"{type(e).__name__}: {e}"[:300]}
                    continue
                if got.shape != want.shape or got.dtype != want.dtype:
                    results["cases"][name] = {"mismatch": f"{got.dtype}{got.shape} vs "
                                              f"{want.dtype}{want.shape}"}
                    continue
                a, b = _bits(got), _bits(want)
                entry = {"equal": bool(np.array_equal(a, b))}
                if not entry["equal"]:
                    if want.dtype.kind in "fcV" or want.dtype.name == "bfloat16":
                        entry["ulps"] = _ulps(a, b)
                        entry["nan_mismatch"] = bool(
                            (np.isnan(got.astype(np.float64)) !=
                             np.isnan(want.astype(np.float64))).any()) \
                            if want.dtype.kind != "c" else False
                    entry["differing"] = int((a != b).sum())
                    entry["size"] = int(a.size)
                results["cases"][name] = entry
    results["seconds"] = round(time.time() - t0, 1)
    c = results["cases"].values()
    results["summary"] = {
        "draws": len(results["cases"]),
        "equal": sum(1 for e in c if e.get("equal")),
        "unequal": sum(1 for e in c if e.get("equal") is False),
        "spmdc_error": sum(1 for e in c if "spmdc_error" in e),
        "jax_error": sum(1 for e in c if "jax_error" in e),
        "mismatch": sum(1 for e in c if "mismatch" in e)}
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)
    print(mode, results["summary"], f"{results['seconds']} s")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
