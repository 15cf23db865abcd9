"""spmdc/numpy/ufuncs.py, float_ufuncs.py and comparisons.py against NumPy:
logaddexp (value and gradient), hypot and the small elementwise helpers, signs and parts,
Python's floor division and JAX's division by zero, isclose, ldexp, bitwise_count,
iscomplex/isreal; and the programs a broadcast binary operation emits."""

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


def test_logaddexp():
    a = np.array([-1e30, 0.0, 3.0, -np.inf, np.inf, 1e-3, np.nan], np.float32)
    b = np.array([-1e30, 1e-10, 3.0, -np.inf, 1.0, -80.0, 0.0], np.float32)
    with np.errstate(invalid="ignore"):
        want, want2 = np.logaddexp(a, b), np.logaddexp2(a, b)
    np.testing.assert_allclose(jnp.logaddexp(a, b), want, rtol=1e-6)
    np.testing.assert_allclose(jnp.logaddexp2(a, b), want2, rtol=1e-6)
    assert jnp.logaddexp(np.int32(1), np.int32(1)).dtype == np.float32
    # the softmax gradient, also at x == y (see Note [logaddexp gradient])
    for x, y in [(2.0, 2.0), (1.0, 0.0), (-50.0, 50.0)]:
        g = spmdc.grad(lambda t, y=y: jnp.logaddexp(t, y))(np.float32(x))
        np.testing.assert_allclose(g, 1 / (1 + np.exp(y - x)), rtol=1e-6, atol=1e-30)


def test_elementwise_helpers():
    x = np.array([-3.0, 0.0, 0.5, 2.0, np.inf], np.float32)
    y = np.array([4.0, 0.0, -1.5, np.nan, 1.0], np.float32)
    np.testing.assert_allclose(jnp.hypot(x, y), np.hypot(x, y), rtol=1e-6)
    assert np.isfinite(jnp.hypot(np.float32(3e30), np.float32(4e30)))
    np.testing.assert_allclose(jnp.sinc(x[:4]), np.sinc(x[:4]), rtol=1e-6)
    np.testing.assert_array_equal(jnp.fmax(x, y), np.fmax(x, y))
    np.testing.assert_array_equal(jnp.fmin(x, y), np.fmin(x, y))
    np.testing.assert_array_equal(jnp.heaviside(x, 0.5), np.heaviside(x, 0.5))
    np.testing.assert_allclose(jnp.deg2rad(x[:4]), np.deg2rad(x[:4]), rtol=1e-6)
    np.testing.assert_allclose(jnp.degrees(x[:4]), np.degrees(x[:4]), rtol=1e-6)
    z = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    np.testing.assert_array_equal(jnp.nan_to_num(z), np.nan_to_num(z))
    np.testing.assert_array_equal(jnp.nan_to_num(z, nan=1, posinf=2, neginf=3), [1, 2, 3, 1])
    np.testing.assert_array_equal(jnp.isposinf(z), np.isposinf(z))
    np.testing.assert_array_equal(jnp.isneginf(z), np.isneginf(z))
    np.testing.assert_array_equal(jnp.fabs(np.array([-2, 3])), [2.0, 3.0])
    assert jnp.fabs(np.array([-2, 3])).dtype == np.float32
    np.testing.assert_array_equal(jnp.positive(np.array([-2, 3])), [-2, 3])
    np.testing.assert_allclose(jnp.acos(0.5), np.arccos(0.5), rtol=1e-6)
    np.testing.assert_array_equal(jnp.bitwise_left_shift(np.int32(1), 3), 8)


def test_sign_and_parts():
    x = np.array([-0.0, 0.0, -2.5, 3.25, np.inf, -np.inf], np.float32)
    np.testing.assert_array_equal(jnp.signbit(x), np.signbit(x))
    np.testing.assert_array_equal(jnp.copysign(np.float32(2), x), np.copysign(np.float32(2), x))
    for got, want in zip(jnp.modf(x), np.modf(x), strict=True):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    for got, want in zip(jnp.divmod(np.array([7, -7]), 3), np.divmod(np.array([7, -7]), 3),
                         strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jnp.signbit(np.array([-1, 2])), [True, False])


# --- differences from JAX 0.10.2 found by running the same calls in both ---------------------

def test_floor_divide_and_divmod_of_floats_are_pythons():
    # spmdc computed floor(x / y): 1 // 0.1 gave 10 (Python, NumPy and JAX: 9), -inf // 2
    # gave -inf (NaN); now CPython's float_divmod, as JAX.
    x = np.array([1.0, -np.inf, 7.0, -7.0, 0.5, np.inf, -0.0, 0.0], np.float32)
    y = np.array([0.1, 2.0, -np.inf, 3.0, 0.0, 2.0, -0.75, -0.75], np.float32)
    with np.errstate(all="ignore"):
        want_q, want_r = np.floor_divide(x, y), np.remainder(x, y)
    np.testing.assert_array_equal(np.asarray(jnp.floor_divide(x, y)), want_q)
    np.testing.assert_array_equal(np.asarray(x // jnp.asarray(y)), want_q)
    q, r = jnp.divmod(x, y)
    np.testing.assert_array_equal(np.asarray(q), want_q)
    np.testing.assert_array_equal(np.asarray(r), want_r)
    assert jnp.floor_divide(7.0, 2).weak and jnp.floor_divide(7.0, 2).dtype == np.float32


def test_integer_division_by_zero_is_jaxs():
    # An integer zero divisor: % and fmod give 0 (JAX and NumPy; spmdc gave XLA's x % 0 ==
    # x); // gives JAX's value (XLA's -1, stepped down where the signs differ).
    x = np.array([3, -3, 0, 7, -7], np.int8)
    y = np.array([0, 0, 0, 2, -2], np.int8)
    np.testing.assert_array_equal(np.asarray(jnp.remainder(x, y)), [0, 0, 0, 1, -1])
    np.testing.assert_array_equal(np.asarray(jnp.fmod(x, y)), [0, 0, 0, 1, -1])
    np.testing.assert_array_equal(np.asarray(spmdc.jit(jnp.floor_divide)(x, y)), [-2, -2, -1, 3, 3])
    q, r = jnp.divmod(x, y)
    assert q.dtype == r.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(r), [0, 0, 0, 1, -1])
    b, c = np.array([True, False, True]), np.array([True, True, False])
    np.testing.assert_array_equal(np.asarray(jnp.floor_divide(b, c)), [1, 0, -2])
    np.testing.assert_array_equal(np.asarray(jnp.remainder(b, c)), [0, 0, 0])
    np.testing.assert_array_equal(np.asarray(jnp.fmod(b, c)), [0, 0, 1])   # as JAX
    assert jnp.remainder(b, c).dtype == np.int32
    assert (jnp.remainder(7, 3) + np.int8(1)).dtype == np.int8           # weak stays weak


def test_isclose_handles_infinities_nans_and_integers():
    # spmdc's isclose was |a - b| <= atol + rtol |b| in the operands' type: equal infinities
    # were not close, int8 differences wrapped, and equal_nan was missing.
    a = np.array([np.inf, -np.inf, np.nan, 1.0, np.inf], np.float32)
    b = np.array([np.inf, -np.inf, np.nan, 1.000001, -np.inf], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.isclose(a, b)), np.isclose(a, b))
    np.testing.assert_array_equal(np.asarray(jnp.isclose(a, b, equal_nan=True)),
                                  np.isclose(a, b, equal_nan=True))
    i, j = np.array([-128, 127, 5], np.int8), np.array([127, -128, 5], np.int8)
    np.testing.assert_array_equal(np.asarray(jnp.isclose(i, j)), [False, False, True])
    assert bool(jnp.allclose(a, a, equal_nan=True)) and not bool(jnp.allclose(a, a))
    c = a + 1j
    np.testing.assert_array_equal(np.asarray(jnp.isclose(c, c)), np.isclose(c, c))


def test_complex_isfinite_isinf_and_nan_to_num():
    # JAX takes a complex number's parts; spmdc's isfinite/isinf rejected complex64 and
    # nan_to_num raised.
    c = np.array([1 + 1j, complex(np.nan, 0), complex(np.nan, np.inf), complex(-np.inf, 1),
                  complex(2, -np.inf)], np.complex64)
    np.testing.assert_array_equal(np.asarray(jnp.isfinite(c)), np.isfinite(c))
    np.testing.assert_array_equal(np.asarray(spmdc.jit(jnp.isinf)(c)), np.isinf(c))
    np.testing.assert_array_equal(np.asarray(jnp.nan_to_num(c)), np.nan_to_num(c))


def test_heaviside_of_nan_is_nan():
    x = np.array([np.nan, -1.0, 0.0, 2.0], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.heaviside(x, 0.5)), np.heaviside(x, 0.5))


def test_a_size_one_axis_broadcasts_without_a_squeeze_first():
    # issue 18 (W11): x - max(x, keepdims=True) squeezed the size-1 axis with a reshape
    # before broadcast_in_dim; broadcast_in_dim stretches it itself, as JAX emits it
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)

    def f(x):
        return x - jnp.max(x, axis=-1, keepdims=True)
    ir = str(spmdc.make_ir(f)(x))
    assert ir.count("reshape(") == 1, ir                 # the keepdims one only
    assert "broadcast_dimensions=(0, 1, 2)" in ir, ir
    shifted = x - x.max(-1, keepdims=True)
    np.testing.assert_allclose(spmdc.jit(f)(x), shifted, rtol=1e-6)
    np.testing.assert_allclose(spmdc.vmap(f)(x), shifted, rtol=1e-6)
    # d/dx sum((x - max x)^2): 2 (x - max) and, at the maximum, minus the row's sum of it
    row = 2 * shifted
    expected = row - (x == x.max(-1, keepdims=True)) * row.sum(-1, keepdims=True)
    np.testing.assert_allclose(spmdc.grad(lambda x: jnp.sum(f(x) ** 2))(x), expected,
                               rtol=1e-5, atol=1e-6)


def test_a_numpy_operand_is_captured_unbroadcast():
    # A NumPy operand was broadcast on the host and captured at the full shape: comparing
    # a [64, 48, 1] index with np.arange(48) made a [64, 48, 48] constant argument.
    def f(p):
        return jnp.expand_dims(p, -1) == np.arange(48, dtype=np.int32)
    p = np.random.default_rng(0).integers(0, 48, size=(64, 48)).astype(np.int32)
    # jit compiles the captured array into its program (Note [captured arrays are constants])
    text = spmdc.jit(f).lower(p).as_text()
    constants = [line for line in text.splitlines() if "stablehlo.constant" in line]
    assert [c.rsplit(": ", 1)[1] for c in constants] == ["tensor<48xi32>"], text
    np.testing.assert_array_equal(spmdc.jit(f)(p), p[..., None] == np.arange(48))
    np.testing.assert_array_equal(f(p), p[..., None] == np.arange(48))        # eagerly
    np.testing.assert_array_equal(spmdc.vmap(f)(p), p[..., None] == np.arange(48))


def test_ldexp_bitwise_count_geomspace():
    np.testing.assert_array_equal(jnp.ldexp(np.float32(3), np.array([1, -2])),
                                  np.ldexp(np.float32(3), np.array([1, -2])))
    v = np.array([-1, 7, 255, -256], np.int32)
    np.testing.assert_array_equal(jnp.bitwise_count(v), np.bitwise_count(v))
    assert jnp.bitwise_count(v).dtype == np.uint8
    np.testing.assert_allclose(jnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4), rtol=1e-6)
    np.testing.assert_allclose(jnp.geomspace(-2, -32, 5, endpoint=False),
                               np.geomspace(-2, -32, 5, endpoint=False), rtol=1e-6)
    with pytest.raises(ValueError, match="non-zero"):
        jnp.geomspace(0, 1)


def test_iscomplex_isreal():
    z = np.array([1 + 0j, 2 + 1j, 3 - 0j, -1j], np.complex64)
    np.testing.assert_array_equal(jnp.iscomplex(z), np.iscomplex(z))
    np.testing.assert_array_equal(jnp.isreal(z), np.isreal(z))
    r = np.array([1.0, -2.0], np.float32)
    np.testing.assert_array_equal(jnp.iscomplex(r), np.iscomplex(r))
    np.testing.assert_array_equal(spmdc.jit(jnp.isreal)(r), np.isreal(r))


def test_a_converted_weak_operand_stays_weak_like_jax():
    # jnp promotes a weak int and a weak float to a weak float32, converting the int
    # weakly (JAX 0.10.2: jit(jnp.divide)(3, 2.5).weak_type is True, as is power's).
    for fn in (jnp.divide, jnp.true_divide, jnp.power, jnp.add):
        out = spmdc.jit(fn)(3, 2.5)
        assert out.weak and out.dtype == np.float32, fn.__name__
    np.testing.assert_allclose(spmdc.jit(jnp.divide)(3, 2.5), 1.2)
    # is_finite keeps its operand's weak type (JAX: jnp.isfinite(2.5).weak_type is True)
    assert jnp.isfinite(2.5).weak and bool(jnp.isfinite(2.5))


def test_python_scalars_stay_literals_through_lax():
    # jnp's elementwise functions call lax, whose result is weak iff every operand is: a
    # Python scalar operand stays a weak literal of the program.
    func = spmdc.make_ir(lambda x: jnp.where(x > 1, x * 2.0, 3))(np.ones(4, np.float32))
    text = str(func)
    assert len(func.inputs) == 1
    assert "gt(%0, 1.0:f32)" in text and "mul(%0, 2.0:f32)" in text and "3.0:f32" in text
    out = spmdc.jit(lambda x: jnp.add(x, 2))(2.5)
    assert out.weak and float(out) == 4.5
