"""Library primitives whose batching rules leave a result unbatched (Equinox's
``unvmap_any`` and ``nonbatchable``), inside a vmapped while loop (Note [batching
analysis] in compiler/primitives/control_flow.py), and rules that use array constants
(Note [rules on values])."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.abstract import ShapedArray
from spmdc.extend.core import Primitive
from spmdc.interpreters import batching, mlir


def _identity_primitive(name):
    p = Primitive(name)
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False))
    return p


# unvmap_any(x): whether x holds anywhere in the batch (unbatched), as Equinox's
unvmap_any_p = Primitive("test_unvmap_any")
unvmap_any_p.def_impl(lambda x: x)
unvmap_any_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
mlir.register_lowering(unvmap_any_p, mlir.lower_fun(lambda x: x, multiple_results=False))
batching.primitive_batchers[unvmap_any_p] = \
    lambda args, dims: (jnp.any(args[0], axis=dims[0]), batching.not_mapped)

# unbatched_only(x): refuses a batched operand, as Equinox's nonbatchable
unbatched_only_p = _identity_primitive("test_unbatched_only")


def _refuse_batched(args, dims):
    if dims[0] is not None:
        raise ValueError("test_unbatched_only: unexpected batch tracer")
    return args[0], None


batching.primitive_batchers[unbatched_only_p] = _refuse_batched

# first_of_batch(x): the batch's first element (a rule using a gather with constants)
first_of_batch_p = _identity_primitive("test_first_of_batch")
batching.primitive_batchers[first_of_batch_p] = \
    lambda args, dims: (jnp.take(args[0], 0, axis=dims[0]), None)


def test_loop_with_an_unbatched_predicate_keeps_its_counter_unbatched():
    def f(limit):
        def cond(carry):
            step, x = carry
            return unvmap_any_p.bind(x < limit)

        def body(carry):
            step, x = carry
            return unbatched_only_p.bind(step) + 1, jnp.where(x < limit, x + 1.0, x)

        return lax.while_loop(cond, body, (0, 0.0))

    limits = np.array([1.0, 3.0, 2.0], np.float32)
    steps, xs = spmdc.jit(spmdc.vmap(f))(limits)
    np.testing.assert_array_equal(np.asarray(steps), [3, 3, 3])
    np.testing.assert_array_equal(np.asarray(xs), [1.0, 3.0, 2.0])


def test_a_rule_gathering_with_constants_under_vmap():
    x = np.arange(6, dtype=np.int32).reshape(3, 2)
    got = spmdc.jit(spmdc.vmap(first_of_batch_p.bind))(x)
    np.testing.assert_array_equal(np.asarray(got), [[0, 1]] * 3)


# add_constants(x): a rule making and dropping many small constants, whose ids Python
# reuses; each must stay the value it was (a constant keyed by a reused id would not)
add_constants_p = _identity_primitive("test_add_constants")


def _add_constants(args, dims):
    x = args[0]
    for k in range(8):
        flag = jnp.asarray(np.array(k % 3 == 0))
        x = jnp.where(flag, x, x + 1)
        del flag
        x = x + jnp.asarray(np.int32(k))
    return x, dims[0]


batching.primitive_batchers[add_constants_p] = _add_constants


def test_a_rule_making_and_dropping_constants_under_vmap():
    got = spmdc.jit(spmdc.vmap(add_constants_p.bind))(np.arange(3, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(got), np.arange(3) + 28 + 5)


def test_batched_operand_of_a_refusing_primitive_still_raises():
    with pytest.raises(ValueError, match="unexpected batch tracer"):
        spmdc.vmap(unbatched_only_p.bind)(np.arange(3, dtype=np.int32))
