"""Regression tests for defects the differential fuzzer (tools/fuzz, docs/TESTING.md)
found against JAX 0.10.2. The expected values follow JAX's rules as stated in each test
(checked against JAX 0.10.2 when the fix was made); these tests do not need jax."""
import numpy as np
import pytest

import spmdc as jax
import spmdc.numpy as jnp

UNSIGNED = (np.uint8, np.uint16, np.uint32)
SIGNED = (np.int8, np.int16, np.int32)


def _wrapped(value, dtype):
    """A Python int as JAX converts it: to int32 (x64 off), then cast (wrapping)."""
    return np.int32(value).astype(dtype)


@pytest.mark.parametrize("dtype", UNSIGNED + SIGNED)
@pytest.mark.parametrize("scalar", [-1, -200, 300, 40000, 2**31 - 1, -2**31])
def test_out_of_range_python_int_wraps(dtype, scalar):
    # JAX: jnp.multiply(-1, uint8 array) multiplies by 255 and stays uint8; the same
    # for + and comparisons. spmdc raised NumPy's OverflowError ("out of bounds").
    host = np.array([0, 3, 100], dtype)
    x = jnp.asarray(host)
    s = _wrapped(scalar, dtype)
    with np.errstate(over="ignore"):
        cases = [(scalar * x, s * host), (x + scalar, host + s), (x == scalar, host == s),
                 (x < scalar, host < s), (jnp.maximum(x, scalar), np.maximum(host, s)),
                 (jnp.where(x > 1, x, scalar), np.where(host > 1, host, s)),
                 (jax.jit(lambda a: a * scalar)(x), host * s)]
    for got, want in cases:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)


def test_remainder_by_a_negative_int_of_an_unsigned_array():
    # -3 % an unsigned array divides by the converted divisor, 253 for uint8
    x = jnp.asarray(np.array([0, 3, 200, 254], np.uint8))
    np.testing.assert_array_equal(np.asarray(x % -3), np.array([0, 3, 200, 1], np.uint8))
    np.testing.assert_array_equal(np.asarray(jnp.floor_divide(x, -3)),
                                  np.array([0, 0, 0, 1], np.uint8))


def test_python_int_outside_the_default_int_still_raises():
    x = jnp.asarray(np.array([1, 2], np.uint32))
    for bad in (2**31, -2**31 - 1, 2**40):
        with pytest.raises(OverflowError, match=str(bad)):
            x + bad


def test_python_scalar_beyond_a_float_range_is_inf():
    x = jnp.asarray(np.array([1, -2], np.float16))
    with np.errstate(all="raise"):     # and no NumPy overflow warning on the way
        np.testing.assert_array_equal(np.asarray(x * 1e6), np.array([np.inf, -np.inf]))
        np.testing.assert_array_equal(np.asarray(x + (2**31 - 1)), np.array([np.inf] * 2))


@pytest.mark.parametrize("dtype", UNSIGNED + (np.bool_,))
def test_abs_of_unsigned_and_bool_is_the_identity(dtype):
    # JAX's jnp.abs returns unsigned and boolean arrays unchanged (lax.abs refuses them)
    host = np.array([0, 1, 200 if dtype != np.bool_ else 0], dtype)
    for f in (jnp.abs, jnp.absolute, abs, jax.jit(jnp.abs), jax.vmap(jnp.abs)):
        got = f(jnp.asarray(host))
        assert got.dtype == host.dtype
        np.testing.assert_array_equal(np.asarray(got), host)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_sign_of_unsigned(dtype):
    # JAX: 0 where zero, else 1, in the input's dtype (StableHLO's sign has no unsigned
    # form; spmdc lowers it as min(x, 1))
    host = np.array([0, 1, 7, np.iinfo(dtype).max], dtype)
    for f in (jnp.sign, jax.jit(jnp.sign), jax.vmap(jnp.sign)):
        got = f(jnp.asarray(host))
        assert got.dtype == host.dtype
        np.testing.assert_array_equal(np.asarray(got), np.sign(host))


def test_sign_of_bool_raises():
    b = jnp.asarray(np.array([True, False]))
    with pytest.raises(TypeError, match="sign does not accept dtype bool"):
        jnp.sign(b)


def _scatter_mul_grads(x, idx, u, w):
    """d/dx and d/du of sum(w * x.at[idx].mul(u)) (out-of-range indices dropped), by the
    product rule written out: each update gets w[i] * x[i] * the other updates at i."""
    dx, du = w.copy(), np.zeros_like(u)
    for i in range(len(x)):
        at = [j for j in range(len(idx)) if idx[j] % len(x) == i and -len(x) <= idx[j] < len(x)]
        dx[i] *= np.prod(u[at])
        for j in at:
            du[j] = w[i] * x[i] * np.prod(u[[k for k in at if k != j]])
    return dx, du


@pytest.mark.parametrize("idx, u", [
    ([0, 2, 0, 1], [2.0, 0.5, 4.0, 5.0]),         # a repeated index
    ([3, 3, 3, 1], [2.0, 0.0, 4.0, 5.0]),         # one zero among repeats
    ([3, 3, 3, 1], [0.0, 0.0, 4.0, 5.0]),         # two zeros among repeats
    ([2, 9, -1, 1], [2.0, 3.0, 0.0, 5.0]),        # out of range (dropped), negative
])
def test_grad_of_at_mul(idx, u):
    # JAX differentiates .at[].mul (with unique indices: static ints and slices, or
    # unique_indices=True); spmdc raised for every index. The rule is exact for repeated
    # indices and zero updates as well.
    x = np.array([1.5, 2.0, -0.5, -3.0], np.float32)
    u, w = np.array(u, np.float32), np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    i = jnp.asarray(np.array(idx, np.int32))

    def f(x, u):
        return (x.at[i].mul(u) * w).sum()
    want = _scatter_mul_grads(x, np.array(idx), u, w)
    for g in (jax.grad(f, argnums=(0, 1)), jax.jit(jax.grad(f, argnums=(0, 1)))):
        for got, expected in zip(g(jnp.asarray(x), jnp.asarray(u)), want, strict=True):
            np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_grad_of_at_mul_with_static_indices_and_under_vmap():
    x = jnp.asarray(np.array([[1.5, 2.0, -0.5, -3.0]], np.float32))
    gx, gy = jax.vmap(jax.grad(lambda x, y: (x.at[1:3].mul(y) ** 2).sum(), argnums=(0, 1)))(
        x, jnp.asarray(np.float32([3.0])))
    # d/dx: 2 x y^2 inside the slice, 2 x outside; d/dy: sum of 2 x^2 y over the slice
    np.testing.assert_allclose(np.asarray(gx), [[3.0, 36.0, -9.0, -6.0]])
    np.testing.assert_allclose(np.asarray(gy), [2 * (4.0 + 0.25) * 3.0])


def _saturate(v, dtype):
    """A float converted to an integer type as XLA does: truncated, then saturated."""
    info = np.iinfo(dtype)
    return np.clip(np.trunc(v), info.min, info.max).astype(dtype)


@pytest.mark.parametrize("method, op", [("set", lambda a, b: b), ("add", np.add),
                                        ("mul", np.multiply), ("min", np.minimum),
                                        ("max", np.maximum)])
def test_at_update_is_computed_in_the_promoted_dtype(method, op):
    # JAX promotes x and the values, updates, and converts back to x's dtype:
    # uint8 4 .at[].mul(1.5) is 6 (spmdc cast 1.5 to 1 first and gave 4), and
    # int8 100 .at[].min(int32 300) is 100 (casting first gave min(100, 44)).
    x = np.array([4, 9, 16, 1], np.uint8)
    u = np.array([1.5, -0.7, -1.6, 300.2], np.float32)
    i = jnp.asarray(np.arange(4, dtype=np.int32))
    want = _saturate(op(x.astype(np.float32), u), np.uint8)
    for f in (lambda a, b: getattr(a.at[i], method)(b),
              jax.jit(lambda a, b: getattr(a.at[i], method)(b))):
        got = f(jnp.asarray(x), jnp.asarray(u))
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(np.asarray(got), want)
    x8, u32 = np.array([100, -100, 5, 0], np.int8), np.array([300, -300, 1000, 7], np.int32)
    got = getattr(jnp.asarray(x8).at[i], method)(jnp.asarray(u32))
    np.testing.assert_array_equal(np.asarray(got), op(x8.astype(np.int32), u32).astype(np.int8))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("mode", ["fill", "clip", "wrap"])
def test_take_along_a_leading_axis(axis, mode):
    # jnp.take along any axis but the last raised "too many indices" (the index it built
    # lacked the trailing ':'s). Out-of-range reads: NaN ('fill'), clamped, or wrapped.
    x = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    n = x.shape[axis]
    i = np.array([[-n - 1, 1], [n, -1]], np.int32)
    got = jnp.take(jnp.asarray(x), jnp.asarray(i), axis=axis, mode=mode)
    if mode == "fill":
        ok = (i >= -n) & (i < n)
        want = np.take(x, np.where(ok, i, 0), axis=axis)
        a = axis % x.ndim
        mask = ok.reshape((1,) * a + ok.shape + (1,) * (x.ndim - a - 1))
        want = np.where(mask, want, np.nan)
    else:
        want = np.take(x, i, axis=axis, mode="clip" if mode == "clip" else "wrap")
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("spec, n_ops, dtype", [
    (spec, n, dtype) for spec, n in [("ij->", 1), ("ij->i", 1), ("ii->i", 1), ("ij->j", 1),
                                     ("ij,kj->", 2)]
    for dtype in (np.int8, np.uint8, np.bool_)])
def test_einsum_sums_in_the_operands_dtype(spec, n_ops, dtype):
    # JAX's einsum sums out a letter in the operand's dtype: int8 stays int8 (and wraps),
    # booleans sum as 'or'; spmdc's sum promoted to int32 (found at seed 1630).
    host = (np.arange(9).reshape(3, 3) * 50 % 7 + 40).astype(dtype)
    got = jnp.einsum(spec, *[jnp.asarray(host)] * n_ops)
    assert got.dtype == host.dtype
    if dtype == np.bool_:
        want = np.einsum(spec, *[host.astype(np.int64)] * n_ops) > 0
    else:
        want = np.einsum(spec, *[host.astype(np.int64)] * n_ops).astype(dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_boolean_dot_general_is_or_of_ands():
    # JAX multiplies booleans as 'or' of 'and's (bool @ bool is bool); spmdc's dot_general
    # refused dtype bool, so matmul, dot, vdot, tensordot and einsum of two boolean
    # operands raised (left open by the 5,000-case run; found again probing matmul).
    from spmdc import lax
    rng = np.random.default_rng(0)
    a, b = rng.random((2, 3, 4)) < 0.4, rng.random((4, 5)) < 0.4
    want = np.einsum("ijk,kl->ijl", a.astype(np.int64), b.astype(np.int64)) > 0
    for got in (jnp.matmul(a, b), jax.jit(jnp.matmul)(a, b), jnp.tensordot(a, b, 1),
                jax.vmap(jnp.matmul, in_axes=(0, None))(a, b),
                jnp.einsum("ijk,kl->ijl", a, b)):
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(np.asarray(got), want)
    assert jnp.vdot(a[0, 0], b[:, 0]).dtype == np.bool_
    assert bool(jnp.vdot(a[0, 0], b[:, 0])) == bool(np.any(a[0, 0] & b[:, 0]))
    counted = lax.dot_general(a, b, (((2,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    assert counted.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(counted),
                                  np.einsum("ijk,kl->ijl", a.astype(np.int32), b.astype(np.int32)))


def test_integer_power_of_integer_arrays_is_jaxs():
    # JAX computes int ** int array by binary exponentiation over the exponent's low six
    # bits; spmdc raised "integer ** integer array powers are not supported" (left open by
    # the 5,000-case run). The expected values and dtypes are JAX 0.10.2's.
    x = np.array([-3, -2, -1, 0, 1, 2, 3, 5, 0, 2], np.int8)
    y = np.array([0, 1, 2, 3, 4, 5, 6, 7, -1, 100], np.int8)
    cases = [
        (lambda: jnp.power(x, y), "int8", [1, -2, 1, 0, 1, 32, -39, 45, 0, 0]),
        (lambda: jax.jit(jnp.power)(x.astype(np.int32), y.astype(np.int32)), "int32",
         [1, -2, 1, 0, 1, 32, 729, 78125, 0, 0]),
        (lambda: jax.vmap(jnp.power)(x.astype(np.uint8), y.astype(np.uint8)), "uint8",
         [1, 254, 1, 0, 1, 32, 217, 45, 0, 0]),
        (lambda: jnp.power(x.astype(np.uint8), y), "int16",
         [1, 254, -511, 0, 1, 32, 729, 12589, 0, 0]),
        (lambda: jnp.power(x > 0, y > 0), "int32", [1, 0, 0, 0, 1, 1, 1, 1, 1, 1]),
        (lambda: 2 ** jnp.asarray(y), "int8", [1, 2, 4, 8, 16, 32, 64, -128, 0, 0]),
        (lambda: 3 ** jnp.asarray(y.astype(np.int32)), "int32",
         [1, 3, 9, 27, 81, 243, 729, 2187, 2111105451, -1953380655]),
    ]
    for f, dtype, want in cases:
        got = f()
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(got), np.array(want, dtype))


def test_lax_dynamic_update_slice_refuses_an_update_of_another_dtype():
    # JAX's lax functions do not promote: an int32 operand and a float32 update raise
    # (spmdc converted the update; found at seed 4307). A weak Python scalar is accepted.
    from spmdc import lax
    x = jnp.asarray(np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError, match="same dtypes, got int32, float32"):
        lax.dynamic_update_slice(x, jnp.asarray(np.ones(2, np.float32)), (1,))
    with pytest.raises(TypeError, match="same dtypes"):
        jax.jit(lambda a, u: lax.dynamic_update_slice(a, u, (1,)))(x, np.ones(2, np.float32))
    got = lax.dynamic_update_slice(x, jnp.asarray(np.array([7, 8], np.int32)), (-3,))
    np.testing.assert_array_equal(np.asarray(got), [0, 7, 8, 3])


@pytest.mark.parametrize("a, b, want", [(jnp.bfloat16, np.int32, jnp.bfloat16),
                                        (np.int32, np.float16, np.float16),
                                        (np.uint8, np.int32, np.float32),
                                        (np.float32, np.int8, np.float32)])
def test_arctan2_promotes_before_going_to_float(a, b, want):
    # JAX: arctan2(bfloat16, int32) is bfloat16 (the promotion, then a float type if it is
    # an integer); spmdc made each integer operand float32 first (found at seed 4060).
    x = jnp.asarray(np.array([1.0, 2.0]).astype(a))
    y = jnp.asarray(np.array([3, 4]).astype(b))
    got = jnp.arctan2(x, y)
    assert got.dtype == np.dtype(want)
    np.testing.assert_allclose(np.asarray(got).astype(np.float32),
                               np.arctan2([1.0, 2.0], [3.0, 4.0]), rtol=1e-2)


def test_reduction_initial_converts_to_the_results_dtype():
    # JAX converts initial= to the reduction's dtype: a bool min with initial=0 is bool
    # (spmdc promoted to int32; found at seed 3511), int8 max with initial=300 wraps it
    # to 44, initial=2.5 truncates to 2.
    b = jnp.asarray(np.array([[True, False], [False, False]]))
    got = jnp.min(b, axis=0, where=b, initial=0)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), [False, False])
    assert b.min(axis=-2, where=b, initial=0).dtype == np.bool_
    i8 = jnp.asarray(np.array([[1, 2], [3, 4]], np.int8))
    np.testing.assert_array_equal(np.asarray(jnp.max(i8, axis=0, initial=300)), [44, 44])
    np.testing.assert_array_equal(np.asarray(jnp.max(i8, axis=0, initial=2.5)), [3, 4])
    assert jnp.max(i8, axis=0, initial=2.5).dtype == np.int8
    total = jnp.sum(i8, initial=2.5)              # int8 sums accumulate in int32
    assert total.dtype == np.int32 and int(total) == 12


@pytest.mark.parametrize("dtype", [jnp.bfloat16, np.float16])
def test_half_precision_sums_and_products_round_once(dtype):
    # JAX computes float16/bfloat16 sum, prod, mean and var in float32 and rounds the
    # result; spmdc accumulated in the narrow type (seed 21627: a bfloat16 prod with where=
    # of 18 factors was 6.5 where JAX's, the rounded exact product, is 6.46875).
    rng = np.random.default_rng(0)
    x = (rng.random((4, 300)) + 0.5).astype(dtype)
    p = (rng.random((4, 30)) * 0.5 + 0.8).astype(dtype)
    m = rng.random((4, 30)) < 0.7
    exact = x.astype(np.float64)
    cases = [(jnp.sum(x, axis=1), exact.sum(1)),
             (jax.jit(lambda a: jnp.prod(a, axis=1, where=m))(p),
              np.where(m, p.astype(np.float64), 1).prod(1)),
             (jnp.mean(x, axis=1), exact.mean(1)),
             (jnp.var(x, axis=1), exact.var(1)),
             (jax.vmap(jnp.sum)(x), exact.sum(1))]
    for got, want in cases:
        assert got.dtype == dtype
        # one rounding of a float32 result: the exact value rounded (on these data)
        np.testing.assert_array_equal(np.asarray(got), want.astype(dtype))
    # einsum keeps summing in the operand's dtype, as JAX's does
    assert jnp.einsum("ij->i", x).dtype == dtype
