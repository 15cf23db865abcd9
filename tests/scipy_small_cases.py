"""jax.scipy.integrate.trapezoid and jax.scipy.cluster.vq.vq, run on spmdc and on JAX
0.10.2 (`tools/record.py scipy_small` records JAX's results in
tests/data/scipy_small_reference.json; tests/scipy/test_integrate_cluster.py compares)."""
from __future__ import annotations

import numpy as np

rng = np.random.default_rng(41)
Y = rng.normal(size=(3, 7)).astype(np.float32)
X = np.cumsum(rng.uniform(0.1, 1.0, size=7)).astype(np.float32)
OBS = rng.normal(size=(10, 3)).astype(np.float32)
CODES = rng.normal(size=(4, 3)).astype(np.float32)


def cases(lib):
    scipy = lib.scipy
    return {
        "trapezoid": lambda: scipy.integrate.trapezoid(Y),
        "trapezoid.x": lambda: scipy.integrate.trapezoid(Y, X),
        "trapezoid.dx_axis0": lambda: scipy.integrate.trapezoid(Y, dx=0.25, axis=0),
        "vq": lambda: scipy.cluster.vq.vq(OBS, CODES),
        "vq.1d": lambda: scipy.cluster.vq.vq(OBS[:, 0], CODES[:, 1]),
        "vq.int": lambda: scipy.cluster.vq.vq(np.array([[1, 2], [5, 5]]),
                                              np.array([[0, 0], [4, 6]])),
    }
