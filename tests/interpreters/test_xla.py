"""``jax.interpreters.xla.canonicalize_dtype_handlers`` (TFP's JAX substrate registers its
Variable class there at import, so distrax needs it), and the call flags of the
primitives in a jaxpr that distrax's Lambda bijector reads (``call_primitive``,
``map_primitive``). See Note [registered array types] in spmdc/core/dtypes.py."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.core import dtypes
from spmdc.extend import core as jex_core
from spmdc.interpreters import xla


class Box:
    """An array-like class without ``dtype``: spmdc does not take it until registered."""

    def __init__(self, value):
        self.value = np.asarray(value)

    def __array__(self, dtype=None, copy=None):
        return self.value if dtype is None else self.value.astype(dtype)


@pytest.fixture
def registered_box():
    xla.canonicalize_dtype_handlers[Box] = xla.canonicalize_dtype_handlers[np.ndarray]
    yield
    del dtypes._value_handlers[Box]


def test_the_ndarray_handler_canonicalizes_as_jax():
    out = xla.canonicalize_dtype_handlers[np.ndarray](np.arange(3.0))
    assert out.dtype == np.float32 and out.tolist() == [0.0, 1.0, 2.0]  # JAX: float32
    assert xla.canonicalize_dtype_handlers[np.float64](np.float64(2.5)).dtype == np.float32
    assert np.ndarray in xla.canonicalize_dtype_handlers
    assert Box not in xla.canonicalize_dtype_handlers


def test_an_unregistered_class_is_not_an_array():
    with pytest.raises(TypeError, match="Box"):
        spmdc.jit(lambda b: b * 2)(Box([1.0, 2.0]))
    with pytest.raises(KeyError, match="canonicalize_dtype_handlers"):
        xla.canonicalize_dtype_handlers[Box]


def test_a_registered_class_is_an_array_typed_by_its_handler(registered_box):
    assert Box in xla.canonicalize_dtype_handlers
    out = spmdc.jit(lambda b: b * 2)(Box([1.0, 2.0]))
    assert out.dtype == np.float32 and out.tolist() == [2.0, 4.0]
    ints = jnp.add(Box(np.array([1, 2], np.int64)), 1)
    assert ints.dtype == np.int32 and ints.tolist() == [2, 3]
    assert spmdc.typeof(Box(np.zeros((2, 3)))).shape == (2, 3)


def test_tfp_registration_pattern():
    # TFP's backend/jax/ops.py at import: a subclass of a native type takes its handler.
    class Variable(np.ndarray):
        pass

    xla.canonicalize_dtype_handlers[Variable] = xla.canonicalize_dtype_handlers[np.ndarray]
    try:
        v = np.arange(3.0).view(Variable)
        assert spmdc.jit(jnp.sum)(v).tolist() == 3.0
    finally:
        del dtypes._value_handlers[Variable]


def test_a_handler_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        xla.canonicalize_dtype_handlers[Box] = "float32"


def _dependent_variables(jaxpr, dependent):
    # distrax's walk (utils/transformations.py): which variables depend on the inputs.
    for eqn in jaxpr.eqns:
        assert not (eqn.primitive.call_primitive or eqn.primitive.map_primitive)
        if any(isinstance(v, jex_core.Var) and v in dependent for v in eqn.invars):
            dependent.update(eqn.outvars)
    return dependent


@pytest.mark.parametrize("fn, constant", [(lambda v: 2.0 * jnp.exp(v) + 1.0, False),
                                          (lambda v: 3.0 * v - 1.0, True)])
def test_distrax_constant_jacobian_walk(fn, constant):
    jaxpr = spmdc.make_jaxpr(spmdc.jacfwd(fn))(jnp.array(0.0)).jaxpr
    dependent = _dependent_variables(jaxpr, set(jaxpr.invars))
    is_constant = not any(isinstance(v, jex_core.Var) and v in dependent
                          for v in jaxpr.outvars)
    assert is_constant is constant          # distrax.Lambda's is_constant_jacobian on JAX


def test_jax_core_get_aval_reads_pytype_aval_mappings():
    # TFP registers its Variable with ndarray's function; get_aval then uses it.
    from spmdc._src import core as jax_core

    class Marked(np.ndarray):
        pass

    seen = []

    def aval_of(value):
        seen.append(type(value))
        return jax_core.ShapedArray(value.shape, np.dtype(np.float32))

    jax_core.pytype_aval_mappings[Marked] = aval_of
    try:
        aval = jax_core.get_aval(np.zeros((2, 2), np.int8).view(Marked))
    finally:
        del jax_core.pytype_aval_mappings[Marked]
    assert seen == [Marked] and aval == jax_core.ShapedArray((2, 2), np.dtype(np.float32))
    assert jax_core.get_aval(np.float64(1.0)).dtype == np.float32
