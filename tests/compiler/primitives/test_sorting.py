"""The sort primitive (compiler/primitives/sorting.py) and jnp.sort / argsort / lax.sort:
the lowering against the NumPy reference (Note [sort order]: NaNs last, -0.0 == 0.0,
stable), vmap against a loop, the VJP against finite differences. Values against JAX are
in tests/e2e/test_reference_cases.py."""
import numpy as np
import pytest
from primcheck import check_grad, check_lowering, check_vmap

import spmdc as jax
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.primitives.core import ShapeError, registry
from spmdc.compiler.primitives.sorting import sort_p


def _keys(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        x = rng.integers(-3, 4, shape).astype(dtype)      # ties on purpose
        x.reshape(-1)[::5] = np.nan
        x.reshape(-1)[1::7] = -0.0
        x.reshape(-1)[2::9] = np.inf
        return x
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint8, np.bool_])
@pytest.mark.parametrize("shape,dimension", [((7,), 0), ((3, 5), 1), ((4, 3), 0),
                                             ((2, 3, 4), 1)])
def test_sort_lowering_matches_reference(dtype, shape, dimension):
    rng = np.random.default_rng(0)
    keys = _keys(rng, shape, dtype)
    values = rng.normal(size=shape).astype(np.float32)
    positions = np.broadcast_to(np.arange(shape[dimension]).reshape(
        [-1 if d == dimension else 1 for d in range(len(shape))]), shape).astype(np.int32)
    params = dict(dimension=dimension, is_stable=True, num_keys=1)
    check_lowering(sort_p, [keys], params)
    check_lowering(sort_p, [keys, values, positions], params)
    # stability: equal keys keep their original order
    _, _, order = sort_p.impl(keys, values, positions, **params)
    sorted_keys = np.take_along_axis(keys, order.astype(np.int64), axis=dimension)
    ties = np.diff(order, axis=dimension) < 0
    with np.errstate(invalid="ignore"):              # inf - inf
        same = _same_neighbours(sorted_keys, dimension, shape)
    assert not (ties & same).any()


def _same_neighbours(sorted_keys, dimension, shape):
    return np.equal(np.diff(sorted_keys.astype(np.float64), axis=dimension), 0) | (
        np.isnan(np.take(sorted_keys.astype(np.float64), range(1, shape[dimension]),
                         axis=dimension)) &
        np.isnan(np.take(sorted_keys.astype(np.float64), range(shape[dimension] - 1),
                         axis=dimension)))


def test_sort_reference_order_is_total():
    x = np.array([np.nan, 1.0, -0.0, 0.0, -np.inf, -np.nan, np.inf, -2.0], np.float32)
    (out,) = sort_p.impl(x, dimension=0, is_stable=True, num_keys=1)
    np.testing.assert_array_equal(out[:6], [-np.inf, -2.0, -0.0, 0.0, 1.0, np.inf])
    assert np.signbit(out[2]) and not np.signbit(out[3])     # stable: -0.0 came first
    assert np.isnan(out[6:]).all()


def test_sort_with_two_keys():
    a = np.array([2, 1, 2, 1, 1], np.int32)
    b = np.array([0.5, 3.0, -1.0, 3.0, 2.0], np.float32)
    c = np.arange(5, dtype=np.int32)
    params = dict(dimension=0, is_stable=True, num_keys=2)
    check_lowering(sort_p, [a, b, c], params)
    _, _, order = sort_p.impl(a, b, c, **params)
    np.testing.assert_array_equal(order, [4, 1, 3, 2, 0])


@pytest.mark.parametrize("in_dims", [(0, 0), (1, None), (None, 0)])
def test_sort_vmap(in_dims):
    rng = np.random.default_rng(1)
    args = [_keys(rng, (3, 4) if d is not None else (4,), np.float32) for d in in_dims]
    if in_dims[0] == 1:
        args[0] = args[0].T.copy()
    check_vmap(sort_p, args, dict(dimension=0, is_stable=True, num_keys=1), in_dims, 3)


@pytest.mark.parametrize("num_keys", [1, 2])
def test_sort_grad(num_keys):
    rng = np.random.default_rng(2)
    x = rng.permutation(12).astype(np.float64).reshape(3, 4)   # no ties: differentiable
    y = rng.normal(size=(3, 4))
    check_grad(sort_p, [x, y], dict(dimension=1, is_stable=True, num_keys=num_keys))


def test_grad_of_sort_is_the_inverse_permutation():
    x = jnp.array([3.0, 1.0, 2.0, 0.0])
    w = jnp.arange(4.0)
    g = jax.grad(lambda v: (jnp.sort(v) * w).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(w)[np.argsort(np.argsort(x))])
    h = jax.grad(lambda v: jax.grad(lambda u: (jnp.sort(u) ** 2 * w).sum())(v).sum())(x)
    np.testing.assert_allclose(np.asarray(h), 2 * np.asarray(w)[np.argsort(np.argsort(x))])


def test_sort_shape_errors():
    from spmdc.compiler.ir import TensorType
    f32 = np.dtype(np.float32)
    with pytest.raises(ShapeError, match="one shape"):
        sort_p.shape_rule(TensorType((3,), f32), TensorType((4,), f32), dimension=0,
                          is_stable=True, num_keys=1)
    with pytest.raises(ShapeError, match="num_keys"):
        sort_p.shape_rule(TensorType((3,), f32), dimension=0, is_stable=True, num_keys=2)
    with pytest.raises(ShapeError, match="out of range"):
        sort_p.shape_rule(TensorType((3,), f32), dimension=1, is_stable=True, num_keys=1)


def test_frontend_errors_name_the_argument():
    with pytest.raises(TypeError, match="kind="):
        jnp.sort(jnp.ones(3), kind="quicksort")
    with pytest.raises(ValueError, match="num_keys=3"):
        lax.sort((jnp.ones(2), jnp.ones(2)), num_keys=3)
    with pytest.raises(TypeError, match="one shape"):
        lax.sort((jnp.ones(2), jnp.ones(3)))
    assert "sort" in registry


def test_sort_and_argsort_under_jit_agree_with_numpy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 6)).astype(np.float32)
    for axis in (0, 1, -1, None):
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: jnp.sort(v, axis=axis))(x)),
                                      np.sort(x, axis=axis))
        np.testing.assert_array_equal(
            np.asarray(jax.jit(lambda v: jnp.argsort(v, axis=axis))(x)),
            np.argsort(x, axis=axis, kind="stable"))


def test_sort_jvp_permutes_the_tangent():
    x = jnp.array([3.0, 1.0, 2.0])
    t = jnp.array([10.0, 20.0, 30.0])
    y, ty = jax.jvp(jnp.sort, (x,), (t,))
    np.testing.assert_array_equal(np.asarray(y), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(ty), [20.0, 30.0, 10.0])
    keys, vals = jnp.array([2, 0, 1]), jnp.array([1.0, 2.0, 3.0])
    _, (tk, tv) = jax.jvp(lambda v: lax.sort_key_val(keys, v), (vals,), (t,))
    np.testing.assert_array_equal(np.asarray(tv), [20.0, 30.0, 10.0])


@pytest.mark.parametrize("updates", [[2.0, 3.0, 0.5, 4.0], [2.0, 0.0, 0.5, 4.0],
                                     [0.0, 0.0, 0.5, 4.0]])
def test_jvp_of_scatter_mul_with_duplicates_and_zeros(updates):
    # (kept with the permutation tests: x.at[i].mul is the other product-of-updates rule)
    x = np.array([1.5, -2.0, 3.0], np.float32)
    idx = np.array([0, 0, 2, 0])
    u = np.array(updates, np.float32)
    tx, tu = np.array([0.1, 0.2, 0.3], np.float32), np.array([1.0, -1.0, 0.5, 2.0], np.float32)

    def f(a, v):
        return a.at[idx].mul(v)
    _, t = jax.jvp(f, (x, u), (tx, tu))
    eps = 1e-3
    f64 = lambda a, v: np.asarray(f(jnp.asarray(a), jnp.asarray(v)), np.float64)  # noqa: E731
    numeric = (f64(x + eps * tx, u + eps * tu) - f64(x - eps * tx, u - eps * tu)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(t), numeric, rtol=1e-2, atol=1e-2)
