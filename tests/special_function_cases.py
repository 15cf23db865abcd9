"""The cases that `tools/record.py special_functions` runs on JAX 0.10.2 (x32 and x64) and
tests/scipy/test_special_functions.py runs on spmdc: the scipy.special functions beyond
the classic ones (exponential integrals, ...), their values, under jit, and their
derivatives. Each case is ``fn(lib)`` where ``lib`` has ``special`` (the library's
scipy.special), ``jit``, ``vmap``, ``grad`` and ``jacfwd``; ``cases(x64)`` builds them
in that mode's float dtype."""
from __future__ import annotations

import numpy as np

# Every branch of Cephes' Ei: both signs, the series near 0, each octave up to 64, beyond.
EXPI_X = (-50.0, -10.0, -2.5, -1.0, -0.3, -1e-3, 0.0, 1e-3, 0.01, 0.5, 1.5, 2.0, 3.0, 5.0,
          7.9, 10.0, 20.0, 33.0, 40.0, 60.0, 70.0, 100.0)
# E_n's power series (x <= 1), continued fraction (x > 1), x = 0 and underflow.
EXPN_X = (0.0, 1e-3, 0.01, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 40.0, 60.0, 100.0)
EXPN_N = (0, 1, 2, 3, 5, 8)
# erfcx's direct product and its asymptotic series (past 9.4 in float32, 26.6 in float64);
# dawsn's three regions, both signs.
ERF_X = (-30.0, -6.0, -3.0, -1.0, -0.2, 0.0, 0.3, 1.0, 3.0, 3.25, 5.0, 6.25, 9.0, 10.0, 20.0,
         27.0, 1e3, 1e10)


SPENCE_X = (-1.0, 0.0, 1e-4, 0.3, 0.5, 0.9, 1.0, 1.2, 1.5, 1.8, 2.0, 2.5, 10.0, 1e4)
SICI_X = (-np.inf, -20.0, -3.0, 0.0, 1e-3, 0.5, 2.0, 4.0, 4.5, 7.9, 8.0, 30.0, 1e5, 2e9, np.inf)
ZETA_S = (1.5, 2.0, 3.0, 4.5, 10.0, 30.0)
ZETA_Q = (0.5, 1.0, 2.5, 7.0, 20.0, 100.0)
POCH_Z = (0.5, 1.0, 2.5, 3.0, 7.0, 10.0)
POCH_M = (0.0, 1.0, 0.5, 2.0, -0.5, 3.5)


def cases(x64: bool) -> dict:
    f = np.float64 if x64 else np.float32
    expi_x = np.array(EXPI_X, f)
    expn_x = np.array(EXPN_X, f)
    nonzero = expi_x[expi_x != 0]
    erf_x = np.array(ERF_X, f)
    spence_x = np.array(SPENCE_X, f)
    sici_x = np.array(SICI_X, f)
    # Si'(x) = sinc(x/pi) at x = 2e9 rounds x/pi to a float32 128 apart: no digit is
    # meaningful there, so the derivatives stop at 1e5.
    finite_nonzero = sici_x[(np.abs(sici_x) < 1e6) & (sici_x != 0)]

    def sici_grads(lib):
        return lib.vmap(lib.jacfwd(lib.special.sici))(finite_nonzero)
    zeta_s, zeta_q = np.array(ZETA_S, f), np.array(ZETA_Q, f)
    poch_z, poch_m = np.array(POCH_Z, f), np.array(POCH_M, f)

    def zeta_grads(lib):
        return lib.vmap(lib.grad(lib.special.zeta, argnums=(0, 1)))(zeta_s, zeta_q)

    def poch_grads(lib):
        return lib.vmap(lib.grad(lib.special.poch, argnums=(0, 1)))(poch_z, poch_m)
    return {
        "expi": lambda lib: lib.special.expi(expi_x),
        "expi.jit": lambda lib: lib.jit(lib.special.expi)(expi_x),
        "expi.grad": lambda lib: lib.vmap(lib.grad(lib.special.expi))(nonzero),
        "exp1": lambda lib: lib.special.exp1(expn_x),
        "exp1.grad": lambda lib: lib.vmap(lib.grad(lib.special.exp1))(expn_x[1:]),
        "expn": lambda lib: lib.special.expn(np.array(EXPN_N, f)[:, None], expn_x),
        "expn.int_n": lambda lib: lib.special.expn(3, expn_x),
        "expn.large_n": lambda lib: lib.special.expn(6000, expn_x),
        "expn.negative_n": lambda lib: lib.special.expn(-1, expn_x),
        "expn.grad": lambda lib: lib.vmap(lib.grad(lambda x: lib.special.expn(3, x)))(
            expn_x[1:]),
        "erfcx": lambda lib: lib.special.erfcx(erf_x),
        "erfcx.grad": lambda lib: lib.vmap(lib.grad(lib.special.erfcx))(erf_x[1:]),
        "dawsn": lambda lib: lib.special.dawsn(erf_x),
        "dawsn.grad": lambda lib: lib.vmap(lib.grad(lib.special.dawsn))(erf_x),
        "sici.si": lambda lib: lib.special.sici(sici_x)[0],
        "sici.ci": lambda lib: lib.special.sici(sici_x)[1],
        "sici.grad_si": lambda lib: sici_grads(lib)[0],
        "sici.grad_ci": lambda lib: sici_grads(lib)[1],
        "spence": lambda lib: lib.special.spence(spence_x),
        "spence.jit": lambda lib: lib.jit(lib.special.spence)(spence_x),
        "zeta": lambda lib: lib.special.zeta(zeta_s[:, None], zeta_q),
        "zeta.grad_s": lambda lib: zeta_grads(lib)[0],
        "zeta.grad_q": lambda lib: zeta_grads(lib)[1],
        "poch": lambda lib: lib.special.poch(poch_z[:, None], poch_m),
        "poch.grad_z": lambda lib: poch_grads(lib)[0],
        "poch.grad_m": lambda lib: poch_grads(lib)[1],
        "bernoulli": lambda lib: lib.special.bernoulli(24),
        "bernoulli.short": lambda lib: lib.special.bernoulli(2),
    }
