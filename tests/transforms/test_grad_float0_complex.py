"""float0 tangents/cotangents for integer inputs, allow_int, holomorphic=True and complex
gradients, as JAX 0.10.2 defines them (Note [integer tangents] in transforms/forward.py)."""
import pathlib
import sys

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.dtypes import float0

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
import complex_cases  # noqa: E402
import oracle  # noqa: E402

COMPLEX_REFERENCE = oracle.recorded_cases("complex_grad_reference.json")


def _is_float0_zeros(x, shape):
    return isinstance(x, np.ndarray) and x.dtype == float0 and x.shape == shape


def test_float0_is_jax_dtype():
    assert spmdc.dtypes.float0 == np.dtype([("float0", np.void, 0)])
    assert spmdc.float0 == float0


def test_grad_of_an_int_argument_raises_as_jax():
    with pytest.raises(TypeError, match="requires real- or complex-valued inputs.*int32.*"
                                        "allow_int"):
        spmdc.grad(lambda i: i * 2.0)(1)


def test_allow_int_gives_float0_gradients():
    g = spmdc.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(1.0, 2)
    assert float(g[0]) == 2.0 and _is_float0_zeros(g[1], ())
    g = spmdc.grad(lambda x, i: (x * i).sum(), argnums=1, allow_int=True)(
        jnp.ones(3), jnp.arange(3))
    assert _is_float0_zeros(g, (3,))
    (v, aux), g = spmdc.value_and_grad(lambda p: ((p["x"] * p["n"]).sum(), p["n"]),
                                       has_aux=True, allow_int=True)(
        {"x": jnp.ones(2), "n": jnp.array([1, 2])})
    assert float(v) == 3.0 and np.asarray(aux).tolist() == [1, 2]
    np.testing.assert_allclose(g["x"], [1.0, 2.0])
    assert _is_float0_zeros(g["n"], (2,))


def test_vjp_with_integer_and_bool_primals_gives_float0():
    _, pull = spmdc.vjp(lambda x, i: x * i, 1.0, 2)
    gx, gi = pull(1.0)
    assert float(gx) == 2.0 and _is_float0_zeros(gi, ())
    _, pull = spmdc.vjp(lambda x, b: jnp.where(b, x, 0.0), jnp.ones(2), jnp.array([True, False]))
    gx, gb = pull(jnp.ones(2))
    np.testing.assert_allclose(gx, [1.0, 0.0])
    assert _is_float0_zeros(gb, (2,))


def test_vjp_accepts_float0_cotangents_for_integer_outputs():
    _, pull = spmdc.vjp(lambda x: (x * 3.0, x.astype(jnp.int32)), 1.0)
    assert float(pull((1.0, np.zeros((), float0)))[0]) == 3.0
    assert float(pull((1.0, 0))[0]) == 3.0           # JAX takes integer zeros as well


def test_jvp_with_integer_primals():
    out, t = spmdc.jvp(lambda x, i: (x * i, i), (1.0, 2), (1.0, np.zeros((), float0)))
    assert float(t[0]) == 2.0 and _is_float0_zeros(t[1], ())


def test_jacrev_allow_int_gives_integer_zero_blocks_as_jax():
    jx, ji = spmdc.jacrev(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(
        jnp.ones(2), jnp.arange(2))
    np.testing.assert_allclose(jx, np.diag([0.0, 1.0]))
    assert ji.dtype == np.int32 and ji.shape == (2, 2) and not np.asarray(ji).any()


def test_bfloat16_vjp():
    _, pull = spmdc.vjp(lambda x: x * 2, jnp.ones(2, jnp.bfloat16))
    (g,) = pull(jnp.ones(2, jnp.bfloat16))
    assert g.dtype == jnp.bfloat16
    np.testing.assert_allclose(np.asarray(g, np.float32), 2.0)


Z = np.array([1.0 + 2.0j, -0.5 + 0.3j], np.complex64)


def test_holomorphic_grad_and_jacobians():
    # d/dz (z sin z) = sin z + z cos z, with no conjugation (JAX's convention)
    def want(z):
        return np.sin(z) + z * np.cos(z)
    for z in Z:
        g = spmdc.grad(lambda z: z * jnp.sin(z), holomorphic=True)(z)
        np.testing.assert_allclose(g, want(z), rtol=1e-5)
    np.testing.assert_allclose(spmdc.jacrev(lambda z: z * jnp.sin(z), holomorphic=True)(Z),
                               np.diag(want(Z)), rtol=1e-5)
    np.testing.assert_allclose(spmdc.jacfwd(lambda z: z * jnp.sin(z), holomorphic=True)(Z),
                               np.diag(want(Z)), rtol=1e-5)
    np.testing.assert_allclose(spmdc.hessian(lambda z: z * z * z, holomorphic=True)(Z[0]),
                               6 * Z[0], rtol=1e-5)


def test_complex_vjp_is_the_unconjugated_transpose():
    _, pull = spmdc.vjp(lambda z: z * z, jnp.asarray(Z))
    np.testing.assert_allclose(pull(jnp.ones(2, jnp.complex64))[0], 2 * Z, rtol=1e-6)


@pytest.mark.parametrize("call, message", [
    (lambda: spmdc.grad(lambda z: z * z)(1.0 + 2.0j),
     "requires real-valued outputs.*complex64.*holomorphic=True"),
    (lambda: spmdc.grad(lambda z: z * 2.0, holomorphic=True)(1.0),
     "holomorphic=True requires inputs with complex dtype, but got float32"),
    (lambda: spmdc.grad(lambda z: jnp.sum(z * 0, dtype=jnp.float32), holomorphic=True)(1j),
     "holomorphic=True requires outputs with complex dtype, but got float32"),
    (lambda: spmdc.grad(lambda x: (x * 2.0).astype(jnp.int32))(1.0),
     "requires real-valued outputs.*int32.*integer outputs"),
    (lambda: spmdc.jacfwd(lambda z: z * z)(jnp.asarray(Z)),
     "jacfwd requires real-valued inputs.*complex64.*holomorphic=True"),
    (lambda: spmdc.jacfwd(lambda z: jnp.sum(z * 0, dtype=jnp.float32), holomorphic=True)(
        jnp.asarray(Z)), "jacfwd with holomorphic=True requires outputs with complex"),
    (lambda: spmdc.jacrev(lambda z: z * z)(jnp.asarray(Z)), "jacrev requires real-valued"),
])
def test_complex_and_integer_errors_as_jax(call, message):
    with pytest.raises(TypeError, match=message):
        call()


@pytest.mark.parametrize("name", sorted(COMPLEX_REFERENCE))
def test_complex_derivatives_match_jax(name):
    """Real-valued functions of complex inputs give JAX's conjugate convention
    (Note [complex derivatives] in compiler/primitives/complex_parts.py)."""
    leaves = spmdc.tree_util.tree_leaves(complex_cases.cases(spmdc)[name]())
    oracle.assert_matches_recorded(tuple(leaves), COMPLEX_REFERENCE[name], name, rtol=2e-5,
                                   atol=2e-6)


def test_complex_parts_lower_and_batch():
    z = jnp.asarray(complex_cases.Z)
    np.testing.assert_allclose(spmdc.jit(lambda z: (z.real, z.imag, z.conj(), abs(z)))(z),
                               (Z_.real, Z_.imag, Z_.conj(), np.abs(Z_)), rtol=1e-6)
    np.testing.assert_allclose(spmdc.vmap(spmdc.lax.complex)(z.real, z.imag), Z_)
    with pytest.raises(TypeError, match="complex operand"):
        spmdc.lax.real(jnp.ones(2))
    with pytest.raises(TypeError, match="same dtypes"):
        spmdc.lax.complex(jnp.ones(2), jnp.ones(2, jnp.int32))


Z_ = complex_cases.Z
