"""spmdc.custom_batching (Note [custom vmap] in compiler/primitives/custom_batching.py):
vmap uses the user's rule, with JAX 0.10.2's results (recorded below) eagerly, under
jit, with unbatched arguments and under grad of vmap; sequential_vmap loops; bad rules
and a batched closed-over value are errors naming the rule."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import custom_batching

CALLS = []


@custom_batching.custom_vmap
def f(x, y):
    return jnp.sin(x) * y


@f.def_vmap
def _f_rule(axis_size, in_batched, x, y):
    CALLS.append((axis_size, in_batched))
    return jnp.cos(x) * y, in_batched[0] or in_batched[1]


def test_unbatched_calls_run_the_function():
    # JAX: 1.6829419 both
    np.testing.assert_allclose(f(1.0, 2.0), 1.6829419, rtol=1e-6)
    np.testing.assert_allclose(spmdc.jit(f)(1.0, 2.0), 1.6829419, rtol=1e-6)


@pytest.mark.parametrize("program, in_batched, expected", [
    (lambda: spmdc.vmap(f)(jnp.arange(3.0), jnp.ones(3)), [True, True],
     [1.0, 0.5403023, -0.41614684]),
    (lambda: spmdc.vmap(f, in_axes=(0, None))(jnp.arange(3.0), 2.0), [True, False],
     [2.0, 1.0806046, -0.8322937]),
    (lambda: spmdc.jit(spmdc.vmap(f))(jnp.arange(3.0), jnp.ones(3)), [True, True],
     [1.0, 0.5403023, -0.41614684]),
    (lambda: spmdc.grad(lambda x: spmdc.vmap(f)(x, jnp.ones(3)).sum())(jnp.arange(3.0)),
     [True, True], [0.0, -0.84147096, -0.9092974]),
])
def test_vmap_uses_the_rule(program, in_batched, expected):
    CALLS.clear()
    np.testing.assert_allclose(program(), expected, rtol=1e-6, atol=1e-7)
    assert CALLS == [(3, in_batched)]


def test_rule_sees_pytrees_of_flags_and_batch_first():
    seen = []

    @custom_batching.custom_vmap
    def g(tree):
        return tree["a"] + tree["b"]

    @g.def_vmap
    def rule(axis_size, in_batched, tree):
        seen.append((in_batched, tree["a"].shape, tree["b"].shape))
        return tree["a"] + tree["b"], True

    out = spmdc.vmap(g, in_axes=({"a": 1, "b": None},))({"a": jnp.ones((2, 4)),
                                                        "b": jnp.ones(2)})
    assert out.shape == (4, 2)
    assert seen == [([{"a": True, "b": False}], (4, 2), (2,))]


def test_sequential_vmap_maps_over_the_batch():
    w = jnp.arange(6.0).reshape(2, 3)

    @custom_batching.sequential_vmap
    def g(x):
        return w @ x
    # JAX: four rows of [3, 12]
    np.testing.assert_allclose(spmdc.vmap(g)(jnp.ones((4, 3))), [[3.0, 12.0]] * 4)
    np.testing.assert_allclose(spmdc.jit(spmdc.vmap(g))(jnp.ones((4, 3))), [[3.0, 12.0]] * 4)
    batched = str(spmdc.make_ir(spmdc.vmap(g))(jnp.ones((4, 3))))
    assert "= scan(" in batched and "custom_vmap_call" not in batched   # the rule's loop
    assert "= custom_vmap_call(" in str(spmdc.make_ir(g)(jnp.ones(3)))


def test_derivatives_go_through_the_function():
    np.testing.assert_allclose(spmdc.grad(f)(1.0, 2.0), 1.0806046, rtol=1e-6)
    np.testing.assert_allclose(spmdc.jvp(lambda x: f(x, 2.0), (1.0,), (1.0,))[1], 1.0806046,
                               rtol=1e-6)


def test_errors_name_the_rule():
    @custom_batching.custom_vmap
    def h(x):
        return x * 2

    with pytest.raises(AttributeError, match="No batching rule defined for custom_vmap "
                                             "function h"):
        h(1.0)

    @h.def_vmap
    def bad(axis_size, in_batched, x):
        return x.sum(), False           # marked unbatched, but has the wrong type
    with pytest.raises(TypeError, match=r"bad \(custom_vmap rule of h\) returned an output "
                                        r"of type f32\[\] marked unbatched; expected f32\[2\]"):
        spmdc.vmap(h)(jnp.ones((3, 2)))

    @h.def_vmap
    def not_a_pair(axis_size, in_batched, x):
        return x * 2
    with pytest.raises(TypeError, match="must return a pair"):
        spmdc.vmap(h)(jnp.ones(3))


def test_a_batched_closed_over_value_is_an_error():
    def outer(y):
        @custom_batching.custom_vmap
        def k(x):
            return x + y

        @k.def_vmap
        def rule(axis_size, in_batched, x):
            return x + 1.0, True
        return k(1.0)
    with pytest.raises(spmdc.errors.BatchingError, match="closes over a value that vmap "
                                                         "batches"):
        spmdc.vmap(outer)(jnp.ones(3))
