"""spmdc.scipy.spatial.transform (Rotation, Slerp) against JAX 0.10.2's results, recorded
by `tools/record.py rotation` from tests/rotation_cases.py in
tests/data/rotation_reference.json: six quaternions (one with w == 0, one at gimbal
lock for some sequences) through every conversion, composition, application, mean,
interpolation and a gradient; JAX's exception types for bad input."""
from __future__ import annotations

import functools

import numpy as np
import oracle
import pytest
import rotation_cases

import spmdc
from spmdc.scipy.spatial.transform import Rotation

RECORDED = oracle.recorded_cases("rotation_reference.json")
Q, VEC, ANG = rotation_cases.Q, rotation_cases.VEC, rotation_cases.ANG
TOL = {"rtol": 2e-5, "atol": 2e-6}


def test_every_case_is_recorded():
    assert sorted(rotation_cases.cases(spmdc)) == sorted(RECORDED)


def test_conversions_as_jax():
    results = spmdc.jit(functools.partial(rotation_cases.conversions, spmdc))(
        Q, VEC, ANG)                                     # one program
    assert sorted(results) == sorted(rotation_cases.CONVERSIONS)
    for key, got in results.items():
        tol = {"rtol": 2e-4, "atol": 2e-4} if "deg" in key else TOL
        np.testing.assert_allclose(got, RECORDED[key], **tol, err_msg=key)


def test_grad_vmap_and_identity():
    def run(a, q):
        return (spmdc.grad(functools.partial(rotation_cases.loss, spmdc))(a),
                spmdc.vmap(lambda q: Rotation.from_quat(q).as_matrix())(q),
                Rotation.from_quat(q).as_matrix())
    grad, matrices, direct = spmdc.jit(run)(ANG, Q)
    np.testing.assert_allclose(grad, RECORDED["grad"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(matrices, direct, **TOL)
    np.testing.assert_array_equal(Rotation.identity().quat, RECORDED["identity"])
    np.testing.assert_array_equal(Rotation.identity(2).quat, [RECORDED["identity"]] * 2)
    both = Rotation.concatenate([Rotation.identity(2), Rotation.from_quat(Q)])
    assert len(both) == 8 and not both.single and Rotation.identity().single


def test_random_rotations_are_unit_quaternions():
    r = spmdc.jit(lambda key: Rotation.random(key, 5))(spmdc.random.key(0))
    assert r.quat.shape == (5, 4)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(r.quat), axis=-1), 1, rtol=1e-6)
    assert spmdc.eval_shape(lambda: Rotation.random(spmdc.random.key(1))).quat.shape == (4,)


def test_bad_input_raises_jaxs_types():
    cases = rotation_cases.errors(spmdc)
    assert sorted(f"errors.{key}" for key in cases) == sorted(
        key for key in RECORDED if key.startswith("errors."))
    for key, call in cases.items():
        kind, message = RECORDED[f"errors.{key}"].split(": ", 1)
        with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[kind]) as info:
            spmdc.jit(call)()          # raised while tracing: nothing is compiled
        assert message.split(",")[0].rstrip(".") in str(info.value), (key, str(info.value))
