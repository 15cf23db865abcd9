"""lax.while_loop and lax.fori_loop: values against Python loops and the NumPy reference
interpreter, vmap with batched predicates, pytree carries and closures, static and traced
bounds, grad where it exists (fori_loop with static bounds) and the clear error where it
does not, and the carry-type errors (those of scan included)."""
import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.primitives.control_flow import WhileLoopVJPError

SMALL = settings(max_examples=8)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# finite differences with a step that suits float32 programs


def collatz_steps(n):
    def body(state):
        k, steps = state
        k = jnp.where(k % 2 == 0, k // 2, 3 * k + 1)
        return k, steps + 1
    return lax.while_loop(lambda s: s[0] != 1, body, (n, 0))[1]


def python_collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@SMALL
@given(st.integers(1, 60))
def test_while_loop_values_match_python(n):
    assert int(spmdc.jit(collatz_steps)(n)) == python_collatz(n)


def test_vmap_while_loop_with_batched_predicate():
    ns = np.array([1, 6, 7, 27], np.int32)
    assert list(np.asarray(spmdc.vmap(collatz_steps)(ns))) == [python_collatz(int(n))
                                                               for n in ns]
    # the predicate is batched through a closed-over limit; the body through a const
    def doubling(limit, step):
        return lax.while_loop(lambda c: c[1] < limit, lambda c: (c[0] + 1, c[1] * step),
                              (0, 1.0))
    limits = np.array([1.0, 5.0, 100.0], np.float32)
    n, v = spmdc.vmap(doubling, in_axes=(0, None))(limits, np.float32(2))
    assert list(np.asarray(n)) == [0, 3, 7]
    close(v, [1, 8, 128])
    n, v = spmdc.vmap(doubling, in_axes=(None, 0))(np.float32(10), np.array([2.0, 3.0]))
    assert list(np.asarray(n)) == [4, 3]
    close(v, [16, 27])


def test_while_loop_pytree_carry_closure_and_reference():
    def f(x, limit):
        def body(c):
            return {"n": c["n"] + 1, "v": c["v"] * x}
        return lax.while_loop(lambda c: c["v"][0] < limit, body,
                              {"n": 0, "v": jnp.ones(2)})
    out = spmdc.jit(f)(np.float32(2), np.float32(20))
    assert int(out["n"]) == 5
    close(out["v"], [32, 32])
    n, v = oracle.interpreted(f, np.float32(2), np.float32(20))
    assert int(n) == 5
    close(v, [32, 32])


@SMALL
@given(st.integers(-2, 6), st.integers(-2, 8))
def test_fori_loop_static_and_traced_bounds(lo, hi):
    want = float(sum(i * 0.5 for i in range(lo, hi))) + 1.0
    body = lambda i, x: x + i * 0.5          # noqa: E731
    close(lax.fori_loop(lo, hi, body, 1.0), want)
    close(spmdc.jit(lambda a, b: lax.fori_loop(a, b, body, 1.0))(lo, hi), want)


def test_fori_loop_promotes_a_weakly_typed_init_like_jax():
    out = lax.fori_loop(0, 3, lambda i, x: x + jnp.float32(1.5), 0)
    assert out.dtype == np.float32 and float(out) == 4.5


def test_fori_loop_with_static_bounds_is_differentiable():
    cube = lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0)  # noqa: E731
    close(spmdc.grad(cube)(2.0), 12.0)
    close(spmdc.grad(spmdc.grad(cube))(2.0), 12.0)                # d2 x^3 = 6x
    # concrete (not traced) array bounds are static too, as in JAX
    cube_np = lambda x: lax.fori_loop(np.int32(0), jnp.asarray(3),  # noqa: E731
                                      lambda i, c: c * x, 1.0)
    close(spmdc.grad(cube_np)(2.0), 12.0)


def test_grad_of_while_loop_is_a_clear_error():
    with pytest.raises(WhileLoopVJPError, match="fori_loop with Python int"):
        spmdc.grad(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * x, 1.0))(2.0)
    with pytest.raises(WhileLoopVJPError, match="test_loops.py"):       # n traced by jit
        spmdc.jit(lambda x, n: spmdc.grad(
            lambda x: lax.fori_loop(0, n, lambda i, c: c * x, 1.0))(x))(2.0, 3)
    # a Python int that grad does not differentiate stays one (as in JAX: 12.0)
    close(spmdc.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, 1.0))(2.0, 3), 12.0)
    # an integer-only loop carries no gradient: differentiating around it is fine
    f = lambda x: x * lax.fori_loop(0, jnp.asarray(3), lambda i, c: c + i, 0)  # noqa: E731
    close(spmdc.grad(f)(2.0), 3.0)


def test_carry_type_change_names_the_leaf_both_types_and_the_line():
    body = lambda c: (c[0] + 1, c[1].astype(jnp.int32))   # noqa: E731
    with pytest.raises(TypeError, match=r"init_val\[1\] has type float32\[3\].*int32\[3\]") \
            as e:
        lax.while_loop(lambda c: c[0] < 3, body, (0, jnp.zeros(3, jnp.float32)))
    assert "test_loops.py" in str(e.value) and "carry" in str(e.value)
    with pytest.raises(TypeError, match=r"shapes do not match"):
        lax.scan(lambda c, x: (jnp.stack([c, c]), x), jnp.float32(0), np.arange(3.0))
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.fori_loop(0, 2, lambda i, c: (c, c), 1.0)
    body = lambda i, c: {"a": c["a"].astype(jnp.int32)}      # noqa: E731
    for loop in (lambda x, hi: lax.fori_loop(0, 3, body, {"a": x}),     # a scan
                 lambda x, hi: lax.fori_loop(0, hi, body, {"a": x})):   # a while loop
        with pytest.raises(TypeError, match=r"init_val\['a'\] has type float32\[\].*int32"):
            spmdc.jit(loop)(1.0, 3)


def test_fori_loop_bounds_of_any_one_real_dtype_as_in_jax():
    # recorded with JAX 0.10.2: concrete bounds count range(int(lo), int(hi)) with a weak
    # int index; traced bounds count in their own dtype; unequal dtypes are refused
    body = lambda i, c: c + i  # noqa: E731
    out = lax.fori_loop(0.0, 3.0, body, 0.0)
    assert float(out) == 3.0 and out.dtype == np.float32
    assert float(lax.fori_loop(jnp.float32(0.5), jnp.float32(3), body, 0.0)) == 3.0
    out = lax.fori_loop(np.int16(0), 4, body, np.int16(0))      # the weak index: int16 sum
    assert int(out) == 6 and out.dtype == np.int16
    traced = spmdc.jit(lambda a, b: lax.fori_loop(a, b, body, 0.0))(0.5, 3.0)
    assert float(traced) == 4.5                                   # 0.5 + 1.5 + 2.5
    with pytest.raises(TypeError, match="must have equal types, got int32 and float32"):
        lax.fori_loop(0, 3.0, body, 0.0)
    with pytest.raises(TypeError, match="lower must be a real scalar, got float32"):
        lax.fori_loop(jnp.zeros(2), 3.0, body, 0.0)
