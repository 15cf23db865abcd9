"""Library functions JAX jits run as one program when called eagerly (Note [library
functions run as one program] in spmdc/transforms/eager.py): one compile, then none; the
cache keyed by shapes, dtypes, weak types, static arguments and x64 mode; the same
errors, naming the user's line; nothing changed under transformations."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.core import dtypes
from spmdc.numpy import linalg as linalg_module
from spmdc.runtime import pjrt

A = np.array([[4.0, 1.0, 2.0], [1.0, 5.0, 3.0], [2.0, 3.0, 6.0]], np.float32)
B = np.array([1.0, -2.0, 0.5], np.float32)


@pytest.fixture
def compiles(monkeypatch):
    """The number of programs compiled during the test so far (a one-element list)."""
    count = [0]
    compile_program = pjrt.compile

    def counting(*args, **kwargs):
        count[0] += 1
        return compile_program(*args, **kwargs)
    monkeypatch.setattr(pjrt, "compile", counting)
    return count


def test_an_eager_call_is_one_program_compiled_once(compiles):
    # op by op, a 3x3 det compiled 13 programs and slogdet 23 (one per primitive)
    a = A + np.float32(0.125)           # shapes and values no other test uses first
    for f, want in ((jnp.linalg.det, np.linalg.det(a)),
                    (lambda x: jnp.linalg.slogdet(x).logabsdet, np.linalg.slogdet(a)[1]),
                    (jnp.linalg.inv, np.linalg.inv(a))):
        before = compiles[0]
        np.testing.assert_allclose(np.asarray(f(a)), want, rtol=1e-5)
        assert compiles[0] - before <= 1
        before = compiles[0]
        np.testing.assert_allclose(np.asarray(f(a)), want, rtol=1e-5)
        assert compiles[0] == before            # the second call compiles nothing


def test_static_arguments_choose_the_program_and_traced_ones_do_not(compiles):
    x = A[:2] - np.float32(1.5)
    for ord_ in (None, 1, 2, -2, np.inf, "fro", "nuc"):
        np.testing.assert_allclose(np.asarray(jnp.linalg.norm(x, ord_)),
                                   np.linalg.norm(x, ord_), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_power(A, 3)),
                               np.linalg.matrix_power(A, 3), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_power(A, -1)),
                               np.linalg.inv(A), rtol=1e-5)
    # rtol is traced, as in JAX: a new value runs the same program
    for rtol in (0.5, 0.25, 0.01):
        before = compiles[0]
        np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(A, rtol=rtol)),
                                   np.linalg.pinv(A, rcond=rtol), rtol=1e-4, atol=1e-6)
        assert compiles[0] == before or rtol == 0.5
    # an unhashable static argument runs op by op, as it did
    np.testing.assert_allclose(np.asarray(jnp.linalg.norm(x, axis=(0, 1))),
                               np.linalg.norm(x), rtol=1e-6)


def test_weak_types_dtypes_and_x64_key_the_cache():
    weak = jnp.linalg.norm(3.0)                 # a Python scalar: weakly typed, as in JAX
    strong = jnp.linalg.norm(np.float32(-3.0))
    assert weak.weak and not strong.weak and float(weak) == float(strong) == 3.0
    assert jnp.linalg.det(A).dtype == np.float32
    assert jnp.linalg.det(A.astype(np.int32)).dtype == np.float32   # the default float
    previous = dtypes.enable_x64(True)
    try:
        assert jnp.linalg.det(A.astype(np.int32)).dtype == np.float64
        np.testing.assert_allclose(float(jnp.linalg.det(A.astype(np.float64))),
                                   np.linalg.det(A.astype(np.float64)), rtol=1e-12)
    finally:
        dtypes.enable_x64(previous)
    assert jnp.linalg.det(A.astype(np.int32)).dtype == np.float32


def _line_of(marker: str) -> int:
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text and "_line_of" not in text)


def test_errors_keep_their_types_and_name_the_users_line():
    with pytest.raises(TypeError, match=r"incompatible shapes for broadcasting.*"
                       r"test_library_jit\.py:(\d+)") as info:
        jnp.linalg.lstsq(A, B, rcond=np.ones(2, np.float32))   # marker: lstsq error
    assert f"test_library_jit.py:{_line_of('marker: lstsq error')}" in str(info.value)
    with pytest.raises(ValueError, match=r"det: the argument must have shape \[\.\.\., n, n\]"):
        jnp.linalg.det(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'thin'"):
        jnp.linalg.qr(A, mode="thin")
    with pytest.raises(TypeError, match="exponent must be an integer"):
        jnp.linalg.matrix_power(A, 1.5)
    # lists are converted as before (op by op)
    np.testing.assert_allclose(float(jnp.linalg.det([[1.0, 2.0], [3.0, 4.0]])), -2.0,
                               rtol=1e-6)


def test_nothing_changes_under_transformations():
    batch = np.stack([A, 2 * A, A.T + np.eye(3, dtype=np.float32)])
    np.testing.assert_allclose(np.asarray(spmdc.vmap(jnp.linalg.det)(batch)),
                               np.linalg.det(batch), rtol=1e-5)
    # d det / dA = det(A) inv(A)^T
    np.testing.assert_allclose(np.asarray(spmdc.grad(jnp.linalg.det)(A)),
                               np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-4)
    # under jit the body is traced into the enclosing program, equation for equation
    body = inspect.unwrap(jnp.linalg.slogdet)
    assert str(spmdc.make_jaxpr(jnp.linalg.slogdet)(A)) == str(spmdc.make_jaxpr(body)(A))

    # an eager transformation may still read a value the function computes
    def f(x):
        return x * 2.0 if jnp.linalg.det(x) > 0 else x
    np.testing.assert_allclose(np.asarray(spmdc.grad(lambda x: f(x).sum())(A)),
                               np.full((3, 3), 2.0), rtol=1e-6)


def test_lstsq_with_numpy_residuals_reads_the_rank():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32)
    b = np.array([1.0, 2.0, 2.0], np.float32)
    x, resid, rank, _ = jnp.linalg.lstsq(a, b, numpy_resid=True)
    want = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(np.asarray(x), want[0], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(resid), want[1], rtol=1e-4)
    assert int(rank) == want[2] == 2
    assert linalg_module.lstsq.__name__ == "lstsq"


def test_scipy_special_functions_jax_jits_are_one_program(compiles):
    import scipy.special as ss

    import spmdc.scipy.special as sp
    x = np.linspace(0.25, 3.0, 5).astype(np.float32) + np.float32(0.0625)
    for f, pick, want in ((sp.dawsn, lambda y: y, ss.dawsn(x)),
                          (sp.sici, lambda y: y[0], ss.sici(x)[0]),
                          (lambda v: sp.bessel_jn(v, v=2), lambda y: y[2], ss.jv(2, x)),
                          (lambda v: sp.poch(v, v), lambda y: y, ss.poch(x, x))):
        for _ in range(2):
            before = compiles[0]
            out = f(x)
            # dawsn compiled 31 programs op by op, sici 31; bessel_jn compiled again on
            # every call: now one program, then none
            assert compiles[0] - before <= (1 if _ == 0 else 0)
            np.testing.assert_allclose(np.asarray(pick(out)), want, rtol=2e-5)
    # a custom_jvp function keeps its rule: d Si / dx = sin(x) / x
    np.testing.assert_allclose(np.asarray(spmdc.vmap(spmdc.grad(lambda v: sp.sici(v)[0]))(x)),
                               np.sin(x) / x, rtol=1e-5)
