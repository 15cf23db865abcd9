"""Record JAX's CUDA lowering of the programs of tests/cuda_lowering_cases.py for
tests/test_cuda_lowering.py (run once; needs jax and its CUDA plugin, no GPU):

    /work/venv312/bin/python tools/record_cuda_lowerings.py

JAX lowers for a platform without its devices (``lowering_platforms=('cuda',)``); the
StableHLO texts go to tests/data/cuda_lowerings.json, with the versions that made them.
"""
from __future__ import annotations

import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main() -> None:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import jaxlib
    from jax import lax
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import cuda_lowering_cases as cases
    jax.config.update("jax_enable_x64", True)       # the float64 cases stay float64
    # JAX lowers eig to cuSOLVER's geev when the installed cuSOLVER is 11.7.1 or newer,
    # which it asks the library; without NVIDIA's libraries here, say so (every CUDA 13
    # cuSOLVER is).
    from jax._src.lax import linalg as jax_linalg
    jax_linalg.cuda_versions = types.SimpleNamespace(cusolver_get_version=lambda: 12000)
    lib = types.SimpleNamespace(lax=lax, jnp=jnp)
    texts = {}
    for name, (make, args) in cases.CASES.items():
        lowered = jax.jit(make(lib)).trace(*args).lower(lowering_platforms=("cuda",))
        texts[name] = lowered.as_text()
    out = {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "modules": texts}
    path = os.path.join(ROOT, "tests", "data", "cuda_lowerings.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(texts)} modules to {path}")


if __name__ == "__main__":
    main()
