"""JAX's rule makers and rule helpers on library primitives: ``batching.defvectorized``,
``defbroadcasting``, ``defreducer``, ``bdim_at_front``, ``broadcast``, and
``ad.defbilinear``, checked under vmap, jvp and grad against NumPy (spmdc/interpreters/
batching.py and ad.py)."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.core.abstract import ShapedArray
from spmdc.extend.core import Primitive
from spmdc.interpreters import ad, batching, mlir


def _primitive(name, impl, abstract_eval):
    p = Primitive(name)
    p.def_impl(impl)
    p.def_abstract_eval(abstract_eval)
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=False))
    return p


# cube(x) = x ** 3, elementwise
cube_p = _primitive("test_cube", lambda x: x * x * x, lambda x: ShapedArray(x.shape, x.dtype))
batching.defvectorized(cube_p)

# plus(x, y) = x + y, broadcasting as lax.add does (equal shapes or a scalar)
plus_p = _primitive("test_plus", lambda x, y: x + y,
                    lambda x, y: ShapedArray(x.shape if x.shape else y.shape, x.dtype))
batching.defbroadcasting(plus_p)


def _total_abstract(x, *, axes, input_shape):
    assert tuple(input_shape) == tuple(x.shape)
    return ShapedArray(tuple(n for k, n in enumerate(x.shape) if k not in axes), x.dtype)


# total(x, axes, input_shape) = x.sum(axes), with the input_shape param JAX's reducers keep
total_p = _primitive("test_total", lambda x, *, axes, input_shape: jnp.sum(x, axis=axes),
                     _total_abstract)
batching.defreducer(total_p)

# outer_mul(x, y) = x * y (bilinear), transposed by hand
mul_p = _primitive("test_bilinear_mul", lambda x, y: x * y,
                   lambda x, y: ShapedArray(x.shape, x.dtype))
ad.defbilinear(mul_p, lambda ct, x, y: ct * y, lambda ct, x, y: x * ct)

X = np.arange(12, dtype=np.float32).reshape(3, 4) / 7


def test_defvectorized_maps_at_the_operands_batch_dimension():
    out = spmdc.vmap(cube_p.bind, in_axes=1, out_axes=1)(X)
    np.testing.assert_allclose(np.asarray(out), X ** 3, rtol=1e-6)
    assert batching.fancy_primitive_batchers[cube_p].func.__name__ == "_vectorized_batcher"


def test_defbroadcasting_moves_batch_dimensions_and_broadcasts_unbatched_operands():
    y = np.float32(2.5)
    # batched at different dimensions: both moved to the front
    out = spmdc.vmap(plus_p.bind, in_axes=(0, 1))(X, X.T)
    np.testing.assert_allclose(np.asarray(out), X + X, rtol=1e-6)
    # an unbatched scalar keeps the primitive's own broadcasting
    out = spmdc.vmap(lambda a: plus_p.bind(a, y))(X)
    np.testing.assert_allclose(np.asarray(out), X + y, rtol=1e-6)
    # an unbatched array of the element's shape: given a size-1 batch dimension
    out = spmdc.jit(spmdc.vmap(plus_p.bind, in_axes=(1, None)))(X, X[:, 0])
    np.testing.assert_allclose(np.asarray(out), (X + X[:, :1]).T, rtol=1e-6)


def test_defreducer_shifts_the_reduced_axes_past_the_batch_dimension():
    f = lambda a: total_p.bind(a, axes=(0,), input_shape=a.shape)      # noqa: E731
    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = spmdc.vmap(f, in_axes=1)(cube)            # per slice cube[:, j, :]: sum over 0
    np.testing.assert_allclose(np.asarray(out), cube.sum(0).reshape(3, 4), rtol=1e-6)
    out = spmdc.vmap(f, in_axes=2)(cube)
    np.testing.assert_allclose(np.asarray(out), cube.sum(0).T, rtol=1e-6)


def test_reducer_needs_axes():
    p = _primitive("test_axesless", lambda x: x, lambda x: ShapedArray(x.shape, x.dtype))
    batching.defreducer(p)
    with pytest.raises(TypeError, match="needs an 'axes' parameter"):
        spmdc.vmap(p.bind)(X)


def test_bdim_at_front_and_broadcast_on_values():
    np.testing.assert_array_equal(np.asarray(batching.bdim_at_front(X, 1, 4)), X.T)
    np.testing.assert_array_equal(np.asarray(batching.bdim_at_front(X, None, 2)),
                                  np.stack([X, X]))
    np.testing.assert_array_equal(np.asarray(batching.broadcast(X, 5, 1, None)),
                                  np.broadcast_to(X[:, None, :], (3, 5, 4)))
    np.testing.assert_array_equal(np.asarray(batching.moveaxis(X[None], 0, 2)),
                                  X[:, :, None])


def test_defbilinear_jvp_and_both_transposes():
    x, y = X, X[::-1] + 1
    out, tan = spmdc.jvp(mul_p.bind, (x, y), (np.ones_like(x), 2 * np.ones_like(y)))
    np.testing.assert_allclose(np.asarray(out), x * y, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tan), y + 2 * x, rtol=1e-6)
    gx, gy = spmdc.grad(lambda a, b: jnp.sum(mul_p.bind(a, b) * x), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(np.asarray(gx), x * y, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gy), x * x, rtol=1e-6)


def test_bilinear_transpose_takes_one_linear_operand():
    rule = ad.primitive_transposes[mul_p]
    aval = ShapedArray((2,), np.float32)
    with pytest.raises(ValueError, match="exactly one operand"):
        rule(np.ones(2, np.float32), ad.UndefinedPrimal(aval), ad.UndefinedPrimal(aval))
    zero, none = rule(ad.Zero(aval), ad.UndefinedPrimal(aval), np.ones(2, np.float32))
    assert type(zero) is ad.Zero and zero.aval == aval and none is None
