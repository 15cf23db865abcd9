"""The cases that `tools/record.py special_more` runs on JAX 0.10.2 (x32 and x64) and
tests/scipy/test_special_more.py runs on spmdc: the Fresnel integrals, the Faddeeva
function (wofz, and erfcx of complex arguments), the hypergeometric functions hyp1f1
and hyp2f1 and the spherical harmonics sph_harm_y, their values, under jit, and their
derivatives. Each case is ``fn(lib)``, as
in special_function_cases.py."""
from __future__ import annotations

import numpy as np

# Each region of Cephes' fresnl (x^2 < 2.5625, the auxiliary functions, past 36974), both
# signs, 0 and inf.
FRESNEL_X = (-40.0, -10.0, -2.0, -1.6, -1.0, -0.3, 0.0, 1e-3, 0.5, 1.0, 1.5, 1.6, 2.0, 3.0,
             5.0, 9.9, 20.0, 100.0, 4e4, np.inf)
# Both half planes, the axes, near the real axis and far out.
WOFZ_Z = (0, 1, -1, 1j, -1j, 1 + 1j, 2 - 3j, -2 + 0.5j, -3 - 4j, 10 + 10j, 0.1 + 5j,
          -6 - 0.2j, 30j)

# hyp1f1: a = 0, a = b, b = 0, a = b = 0, the Taylor series (both signs of x), the
# asymptotic expansion (|x| >= 100).
HYP1F1_A = (0.0, 0.5, 1.0, 2.0, -1.5, 3.0, 1.0, 0.0, 0.7)
HYP1F1_B = (1.0, 1.5, 1.0, 3.0, 2.5, 0.0, 4.0, 0.0, 1.2)
HYP1F1_X = (0.5, -2.0, 3.0, 10.0, 1.5, 2.0, 150.0, 1.0, -30.0)
# hyp2f1, one column per branch: x = 0, a = 0, c = 0, c a negative integer, Euler's
# transformation (c - a - b <= -1), c - a - b <= 0 at x = 1, b = c, a = c, x > 1, Gauss
# at x = 1, the Taylor series, a terminating in a, in b, the digamma transformation with
# c - a - b = 0, > 0, < 0 (x > 0.9), x > 0.9 with c - a - b not an integer.
HYP2F1_A = (1.0, 0.0, 1.0, 1.0, 2.0, 1.0, 0.5, 2.0, 1.0, 0.5, 0.5, -3.0, 1.5, 1.0, 1.0, 2.0,
            0.3, 1.5)
HYP2F1_B = (2.0, 1.5, 2.0, 2.0, 2.5, 1.0, 3.0, 1.0, 1.0, 0.5, 1.5, 1.5, -2.0, 1.0, 1.0, 1.0,
            0.6, -0.5)
HYP2F1_C = (3.0, 2.0, 0.0, -2.0, 2.0, 1.5, 3.0, 2.0, 2.0, 2.5, 2.5, 2.0, 2.5, 2.0, 4.0, 2.0,
            1.7, 3.0)
HYP2F1_X = (0.0, 0.5, 0.5, 0.5, 0.3, 1.0, 0.4, -0.6, 1.5, 1.0, 0.3, 0.7, -0.4, 0.95, 0.97,
            0.93, 0.95, 0.5)
HYP2F1_DIFFERENTIABLE = (10, 12, 13, 14, 16)

# sph_harm_y: m = 0, positive and negative m (odd and even), m = n, near the pole, the
# equator.
SPH_N = (0, 1, 1, 2, 2, 3, 4, 5, 5, 2, 6)
SPH_M = (0, 0, 1, -1, 2, -3, 2, -4, 5, 0, -6)
SPH_THETA = (0.3, 1.0, 2.0, 0.5, 3.0, 1.2, 0.01, 2.5, 1.5, np.pi / 2, 0.7)
SPH_PHI = (0.0, 0.5, 1.0, 2.0, -1.0, 3.0, 0.2, 4.0, 1.1, 0.3, 5.0)


def cases(x64: bool) -> dict:
    f = np.float64 if x64 else np.float32
    x = np.array(FRESNEL_X, f)
    finite = x[1:-1]
    z = np.array(WOFZ_Z, np.complex128 if x64 else np.complex64)
    h1 = [np.array(v, f) for v in (HYP1F1_A, HYP1F1_B, HYP1F1_X)]
    smooth = (h1[0] != 0) & (h1[1] != 0)
    h1_smooth = [v[smooth] for v in h1]
    h2 = [np.array(v, f) for v in (HYP2F1_A, HYP2F1_B, HYP2F1_C, HYP2F1_X)]
    h2_smooth = [v[list(HYP2F1_DIFFERENTIABLE)] for v in h2]
    sph = (np.array(SPH_N), np.array(SPH_M), np.array(SPH_THETA, f), np.array(SPH_PHI, f))

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
        "hyp1f1": lambda lib: lib.special.hyp1f1(*h1),
        "hyp1f1.grid": lambda lib: lib.special.hyp1f1(h1[0][:, None], h1[1], 0.7),
        "hyp1f1.jit": lambda lib: lib.jit(lib.special.hyp1f1)(*h1),
        **{f"hyp1f1.grad_{n}": (lambda k: lambda lib: lib.vmap(lib.grad(
            lib.special.hyp1f1, argnums=k))(*h1_smooth))(k) for k, n in enumerate("abx")},
        "hyp2f1": lambda lib: lib.special.hyp2f1(*h2),
        "hyp2f1.jit": lambda lib: lib.jit(lib.special.hyp2f1)(*h2),
        **{f"hyp2f1.grad_{n}": (lambda k: lambda lib: lib.vmap(lib.grad(
            lib.special.hyp2f1, argnums=k))(*h2_smooth))(k) for k, n in enumerate("abcx")},
        "sph_harm_y": lambda lib: lib.special.sph_harm_y(*sph),
        "sph_harm_y.n_max": lambda lib: lib.special.sph_harm_y(*sph, n_max=8),
        "sph_harm_y.jit": lambda lib: lib.jit(
            lambda *a: lib.special.sph_harm_y(*a, n_max=6))(*sph),
        "sph_harm_y.scalar_theta": lambda lib: lib.special.sph_harm_y(
            np.array([3]), np.array([1]), f(0.4), np.array([0.9], f)),
    }
