"""jax.scipy.ndimage.map_coordinates, run on spmdc and on JAX 0.10.2 (`tools/record.py
ndimage` records JAX's results in tests/data/ndimage_reference.json;
tests/scipy/test_ndimage.py compares)."""
from __future__ import annotations

import numpy as np

rng = np.random.default_rng(37)
IMAGE = rng.normal(size=(5, 6)).astype(np.float32)
INTEGERS = rng.integers(-20, 20, size=(4, 5)).astype(np.int32)
VOLUME = rng.normal(size=(3, 4, 2)).astype(np.float32)
# Points inside, on the edges and outside, at halves (rounding) and in between.
ROWS = np.array([-2.5, -1.0, -0.5, 0.0, 0.25, 1.5, 2.5, 3.7, 4.0, 4.5, 6.2, 9.0], np.float32)
COLS = np.array([0.5, -3.2, 5.5, 2.0, 1.75, -0.5, 6.0, 3.3, 0.0, 5.0, 2.5, 11.4], np.float32)
POINTS_3D = [np.array([[0.2, 2.9], [1.5, -0.4]], np.float32),
             np.array([[3.1, 0.5], [2.2, 1.0]], np.float32),
             np.array([[0.5, 1.0], [0.0, 1.9]], np.float32)]


def cases(lib):
    ndimage = lib.scipy.ndimage
    out = {}
    for mode in ("constant", "nearest", "wrap", "mirror", "reflect"):
        for order in (0, 1):
            out[f"{mode}.order{order}"] = lambda m=mode, o=order: ndimage.map_coordinates(
                IMAGE, [ROWS, COLS], o, mode=m, cval=-7.0)
            out[f"{mode}.order{order}.int"] = lambda m=mode, o=order: ndimage.map_coordinates(
                INTEGERS, [ROWS, COLS], o, mode=m)
    out["volume.linear"] = lambda: ndimage.map_coordinates(VOLUME, POINTS_3D, 1)
    out["integer_coordinates"] = lambda: ndimage.map_coordinates(
        IMAGE, [np.array([0, 4, 7]), np.array([5, 1, 2])], 0)
    return out
