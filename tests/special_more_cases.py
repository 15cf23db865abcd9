"""The cases that `tools/record.py special_more` runs on JAX 0.10.2 (x32 and x64) and
tests/scipy/test_special_more.py runs on spmdc: the Fresnel integrals and the Faddeeva
function (wofz, and erfcx of complex arguments), their values, under jit, and their
derivatives. Each case is ``fn(lib)``, as in special_function_cases.py."""
from __future__ import annotations

import numpy as np

# Each region of Cephes' fresnl (x^2 < 2.5625, the auxiliary functions, past 36974), both
# signs, 0 and inf.
FRESNEL_X = (-40.0, -10.0, -2.0, -1.6, -1.0, -0.3, 0.0, 1e-3, 0.5, 1.0, 1.5, 1.6, 2.0, 3.0,
             5.0, 9.9, 20.0, 100.0, 4e4, np.inf)
# Both half planes, the axes, near the real axis and far out.
WOFZ_Z = (0, 1, -1, 1j, -1j, 1 + 1j, 2 - 3j, -2 + 0.5j, -3 - 4j, 10 + 10j, 0.1 + 5j,
          -6 - 0.2j, 30j)


def cases(x64: bool) -> dict:
    f = np.float64 if x64 else np.float32
    x = np.array(FRESNEL_X, f)
    finite = x[1:-1]
    z = np.array(WOFZ_Z, np.complex128 if x64 else np.complex64)

    def fresnel_grads(lib):
        return (lib.vmap(lib.grad(lambda v: lib.special.fresnel(v)[0]))(finite),
                lib.vmap(lib.grad(lambda v: lib.special.fresnel(v)[1]))(finite))
    return {
        "fresnel.s": lambda lib: lib.special.fresnel(x)[0],
        "fresnel.c": lambda lib: lib.special.fresnel(x)[1],
        "fresnel.jit": lambda lib: lib.jit(lib.special.fresnel)(x)[1],
        "fresnel.grad_s": lambda lib: fresnel_grads(lib)[0],
        "fresnel.grad_c": lambda lib: fresnel_grads(lib)[1],
        "wofz": lambda lib: lib.special.wofz(z),
        "wofz.real": lambda lib: lib.special.wofz(finite),
        "wofz.jit": lambda lib: lib.jit(lib.special.wofz)(z),
        "wofz.jvp": lambda lib: lib.jacfwd(lib.special.wofz, holomorphic=True)(z[:4]),
        "wofz.grad_real": lambda lib: lib.vmap(lib.grad(
            lambda v: lib.special.wofz(v).real))(finite),
        "erfcx.complex": lambda lib: lib.special.erfcx(z),
    }
