"""Case sets that record something other than values: what JAX prints (callbacks), the
StableHLO JAX lowers for CUDA (cuda_lowerings) and the results of each dot-algorithm
preset (dot_algorithms).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import types

import numpy as np


def record_callbacks(cases: types.ModuleType, paths, mode) -> None:
    """The lines each program of tests/callback_programs.py prints under JAX (8 CPU
    devices, like spmdc's tests)."""
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    import jax
    import jax.experimental  # noqa: F401

    def run(program) -> list[str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            program(jax)
            jax.effects_barrier()
        return out.getvalue().splitlines()

    reference = {"jax": jax.__version__,
                 "programs": {p.__name__: run(p) for p in cases.PROGRAMS}}
    paths[0].write_text(json.dumps(reference, indent=1) + "\n")
    print(f"wrote {paths[0]}")


def callback_names(cases: types.ModuleType, mode) -> list[str]:
    return [p.__name__ for p in cases.PROGRAMS]


def record_cuda_lowerings(cases: types.ModuleType, paths, mode) -> None:
    """JAX's CUDA lowering of tests/cuda_lowering_cases.py: JAX lowers for a platform
    without its devices (``lowering_platforms=('cuda',)``), so this needs jax and its CUDA
    plugin but no GPU. The texts are stored with the versions that made them."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import jaxlib
    from jax import lax
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
    with open(paths[0], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(texts)} modules to {paths[0]}")


def cuda_lowering_names(cases: types.ModuleType, mode) -> list[str]:
    return list(cases.CASES)


# The dot-algorithm presets JAX 0.10.2's CPU backend accepts, each on three operand dtypes.
PRESETS = ["DEFAULT", "F16_F16_F16", "F32_F32_F32", "BF16_BF16_F32", "BF16_BF16_F32_X3",
           "BF16_BF16_F32_X6"]
DTYPES = ["float32", "bfloat16", "float16"]


def record_dot_algorithms(cases: types.ModuleType, paths, mode) -> None:
    """``lax.dot(x, y, precision=preset)`` per preset and dtype, with x and y stored too."""
    import jax
    import jax.numpy as jnp
    import ml_dtypes
    from jax import lax
    dtypes = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16}
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 40)).astype(np.float32)
    y = rng.normal(size=(40, 3)).astype(np.float32)
    out = {"x": x, "y": y}
    for preset in PRESETS:
        for name in DTYPES:
            dtype = dtypes[name]
            a, b = x.astype(dtype), y.astype(dtype)
            z = jax.jit(lambda a, b, p=preset: lax.dot(a, b, precision=p))(a, b)
            assert z.dtype == jnp.dtype(dtype), (preset, name, z.dtype)
            out[f"{preset}/{name}"] = np.asarray(z).astype(np.float32)
    np.savez(paths[0], **out)
    print("wrote", paths[0], len(out) - 2, "results")


def dot_algorithm_names(cases: types.ModuleType, mode) -> list[str]:
    return [f"{preset}/{name}" for preset in PRESETS for name in DTYPES]
