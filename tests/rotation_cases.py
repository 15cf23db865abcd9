"""jax.scipy.spatial.transform's Rotation and Slerp, run on spmdc and on JAX 0.10.2
(`tools/record.py rotation` records JAX's results in tests/data/rotation_reference.json;
tests/scipy/test_spatial_transform.py compares): six quaternions (one with w == 0, one at
gimbal lock for some sequences) through every conversion, composition, application,
mean and interpolation, a gradient, and bad input (recorded as JAX's exception)."""
from __future__ import annotations

import importlib

import numpy as np

Q = np.array([[-0.417, -0.056, -2.136, 1.64], [-1.793, -0.842, 0.503, -1.245],
              [-1.058, -0.909, 0.551, 2.292], [0.042, -1.118, 0.539, -0.596],
              [0., 0., 0.5, 0.], [0., 0.7071, 0., 0.7071]], np.float32)
VEC = np.array([[-0.339, -0.236, -0.638], [-1.188, -1.421, -0.153], [-0.269, 2.231, -2.435],
                [0.113, 0.37, 1.36], [0.502, -0.844, 0.], [0.542, -0.314, 0.771]], np.float32)
ANG = np.array([[-1.868, 1.731, 1.468], [-0.336, 0.611, 0.048], [-0.829, 0.088, 1.],
                [-0.381, -0.376, -0.074]], np.float32)
AS_EULER = [seq + deg for seq in ("xyz", "ZXY", "zxz", "YXY", "xzy") for deg in ("", "|deg")]
FROM_EULER = ["xyz", "ZXY", "zxz", "z|deg", "xy|deg"]
CONVERSIONS = (["quat", "matrix", "rotvec", "rotvec_deg", "mrp", "canon_sf", "magnitude",
                "inv", "apply", "apply_inv", "compose", "mean", "mean_w", "from_matrix",
                "from_rotvec", "from_rotvec_small", "from_rotvec_deg", "from_mrp", "slerp",
                "slerp_scalar"] + [f"as_euler.{k}" for k in AS_EULER]
               + [f"from_euler.{k}" for k in FROM_EULER])


def _transform(lib):
    return importlib.import_module(f"{lib.__name__}.scipy.spatial.transform")


def conversions(lib, q, vec, ang):
    """Every conversion of the rotations ``q``, by the names in CONVERSIONS (one program
    under jit)."""
    Rotation, Slerp = _transform(lib).Rotation, _transform(lib).Slerp
    jnp = importlib.import_module(f"{lib.__name__}.numpy")
    r = Rotation.from_quat(q)
    out = {
        "quat": r.quat, "matrix": r.as_matrix(), "rotvec": r.as_rotvec(),
        "rotvec_deg": r.as_rotvec(degrees=True), "mrp": r.as_mrp(),
        "canon_sf": r.as_quat(canonical=True, scalar_first=True),
        "magnitude": r.magnitude(), "inv": r.inv().quat, "apply": r.apply(vec),
        "apply_inv": r.apply(vec, inverse=True), "compose": (r * r[::-1]).quat,
        "mean": r.mean().quat, "mean_w": r.mean(jnp.arange(1., 7.)).quat,
        "from_matrix": Rotation.from_matrix(r.as_matrix()).quat,
        "from_rotvec": Rotation.from_rotvec(vec).quat,
        "from_rotvec_small": Rotation.from_rotvec(vec * 1e-4).quat,
        "from_rotvec_deg": Rotation.from_rotvec(vec * 50, degrees=True).quat,
        "from_mrp": Rotation.from_mrp(vec * 0.3).quat,
    }
    for seq in ["xyz", "ZXY", "zxz", "YXY", "xzy"]:
        out[f"as_euler.{seq}"] = r.as_euler(seq)
        out[f"as_euler.{seq}|deg"] = r.as_euler(seq, degrees=True)
    for seq in ["xyz", "ZXY", "zxz"]:
        out[f"from_euler.{seq}"] = Rotation.from_euler(seq, ang).quat
    out["from_euler.z|deg"] = Rotation.from_euler("z", 30.0, degrees=True).quat
    out["from_euler.xy|deg"] = Rotation.from_euler("xy", ang[:, :2], degrees=True).quat
    slerp = Slerp.init(jnp.array([0., 1., 3., 4., 4.5, 6.]), r)
    out["slerp"] = slerp(jnp.array([0., 0.5, 2.0, 3.9, 4.2, 6.0])).quat
    out["slerp_scalar"] = slerp(2.5).quat
    return out


def loss(lib, a):
    """The gradient's function: the rotated vectors' cubes, summed."""
    rotated = _transform(lib).Rotation.from_euler("xyz", a).apply(VEC[:4])
    return importlib.import_module(f"{lib.__name__}.numpy").sum(rotated ** 3)


def errors(lib):
    """Bad input, each raised while tracing."""
    Rotation, Slerp = _transform(lib).Rotation, _transform(lib).Slerp
    jnp = importlib.import_module(f"{lib.__name__}.numpy")
    r = Rotation(Q)
    return {
        "euler_bad": lambda: Rotation.from_euler("xyw", ANG),
        "euler_rep": lambda: Rotation.from_euler("xxy", ANG),
        "euler_mixed": lambda: Rotation.from_euler("xYz", ANG),
        "as_euler_len": lambda: r.as_euler("xy"),
        "single_getitem": lambda: Rotation.identity()[0],
        "single_len": lambda: len(Rotation.identity()),
        "slerp_not_rot": lambda: Slerp.init([0, 1], Q),
        "slerp_one": lambda: Slerp.init([0], r[:1]),
        "slerp_times": lambda: Slerp.init([0, 1, 2], r),
        "slerp_2d": lambda: Slerp.init(jnp.arange(6.), r)(jnp.ones((2, 2))),
        "mean_w2d": lambda: r.mean(jnp.ones((2, 3))),
        "mean_wlen": lambda: r.mean(jnp.ones(3)),
    }


def cases(lib):
    results = {}

    def conversion(key):
        if not results:
            results.update(lib.jit(lambda q, v, a: conversions(lib, q, v, a))(Q, VEC, ANG))
        return results[key]
    out = {key: (lambda key=key: conversion(key)) for key in CONVERSIONS}
    out["grad"] = lambda: lib.grad(lambda a: loss(lib, a))(ANG)
    out["identity"] = lambda: _transform(lib).Rotation.identity().quat
    for key, call in errors(lib).items():
        out[f"errors.{key}"] = lambda call=call: lib.jit(call)()
    return out
