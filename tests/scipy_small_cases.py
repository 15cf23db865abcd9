"""jax.scipy.integrate.trapezoid, jax.scipy.cluster.vq.vq and
jax.scipy.interpolate.RegularGridInterpolator, run on spmdc and on JAX
0.10.2 (`tools/record.py scipy_small` records JAX's results in
tests/data/scipy_small_reference.json; tests/scipy/test_integrate_cluster.py compares)."""
from __future__ import annotations

import numpy as np

rng = np.random.default_rng(41)
Y = rng.normal(size=(3, 7)).astype(np.float32)
X = np.cumsum(rng.uniform(0.1, 1.0, size=7)).astype(np.float32)
OBS = rng.normal(size=(10, 3)).astype(np.float32)
CODES = rng.normal(size=(4, 3)).astype(np.float32)
GRID_X = np.array([0.0, 0.5, 1.5, 3.0], np.float32)
GRID_Y = np.array([-1.0, 0.0, 2.0], np.float32)
GRID_VALUES = rng.normal(size=(4, 3)).astype(np.float32)
GRID_VECTORS = rng.normal(size=(4, 3, 2)).astype(np.float32)
SAMPLES = np.array([[0.25, -0.5], [1.0, 1.0], [3.0, 2.0], [2.9, -0.99], [0.5, 0.0],
                    [-0.1, 0.5], [1.2, 2.5]], np.float32)


def cases(lib):
    scipy = lib.scipy
    grid = scipy.interpolate.RegularGridInterpolator
    return {
        "grid.linear": lambda: grid((GRID_X, GRID_Y), GRID_VALUES)(SAMPLES),
        "grid.nearest": lambda: grid((GRID_X, GRID_Y), GRID_VALUES, method="nearest")(SAMPLES),
        "grid.call_method": lambda: grid((GRID_X, GRID_Y), GRID_VALUES)(SAMPLES, "nearest"),
        "grid.extrapolate": lambda: grid((GRID_X, GRID_Y), GRID_VALUES,
                                         fill_value=None)(SAMPLES),
        "grid.fill": lambda: grid((GRID_X, GRID_Y), GRID_VALUES, fill_value=-1.0)(SAMPLES),
        "grid.trailing": lambda: grid((GRID_X, GRID_Y), GRID_VECTORS)(SAMPLES[:4]),
        "grid.tuple_points": lambda: grid((GRID_X, GRID_Y), GRID_VALUES)(
            (SAMPLES[:3, 0], SAMPLES[:3, 1])),
        "grid.1d": lambda: grid((GRID_X,), GRID_VALUES[:, 0])(np.array([0.1, 2.0, 3.5])),
        "trapezoid": lambda: scipy.integrate.trapezoid(Y),
        "trapezoid.x": lambda: scipy.integrate.trapezoid(Y, X),
        "trapezoid.dx_axis0": lambda: scipy.integrate.trapezoid(Y, dx=0.25, axis=0),
        "vq": lambda: scipy.cluster.vq.vq(OBS, CODES),
        "vq.1d": lambda: scipy.cluster.vq.vq(OBS[:, 0], CODES[:, 1]),
        "vq.int": lambda: scipy.cluster.vq.vq(np.array([[1, 2], [5, 5]]),
                                              np.array([[0, 0], [4, 6]])),
    }
