"""The special_functions case set: tests/special_function_cases.py's scipy.special values
and derivatives on JAX, one .npz per mode (x32, x64)."""
from __future__ import annotations

import types

import numpy as np

from recorders import write_arrays


def record_special_functions(cases: types.ModuleType, paths, mode: str) -> None:
    import jax
    assert jax.__version__ == "0.10.2", jax.__version__
    x64 = mode == "x64"
    assert jax.config.jax_enable_x64 == x64
    import jax.scipy.special as special
    lib = types.SimpleNamespace(special=special, jit=jax.jit, vmap=jax.vmap, grad=jax.grad,
                                jacfwd=jax.jacfwd)

    def part(out: dict) -> None:
        for name, fn in cases.cases(x64).items():
            out[name] = np.asarray(fn(lib))
    write_arrays(paths[0], [part])


def special_function_names(cases: types.ModuleType, mode: str) -> list[str]:
    return sorted(cases.cases(mode == "x64"))
