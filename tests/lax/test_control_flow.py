"""Structured control flow in whole programs: inside pmap with a collective in the body
(replication and divergent collectives), the IR text round trip, CSE and cleanup of loop
bodies, and lax.optimization_barrier. Each construct's own tests are test_cond.py,
test_loops.py and test_scan.py."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.interpreter import evaluate
from spmdc.compiler.ir import check, parse
from spmdc.compiler.passes.cleanup import cleanup
from spmdc.compiler.passes.collectives import ReplicationError
from spmdc.compiler.primitives.control_flow import DivergentCollectiveError


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# finite differences with a step that suits float32 programs


@pytest.mark.devices(4)
def test_control_flow_inside_pmap_with_psum_in_the_body():
    x = np.arange(4.0, dtype=np.float32)
    f = spmdc.pmap(lambda x: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(x, "i"), x),
                   axis_name="i")
    close(f(x), x + 18)
    g = spmdc.pmap(lambda x: lax.while_loop(lambda c: c < 20.0,
                                            lambda c: c + lax.psum(x, "i"), 0.0),
                   axis_name="i")
    close(g(x), [24] * 4)
    h = spmdc.pmap(lambda x: lax.cond(lax.psum(x, "i") > 1, lambda v: lax.pmax(v, "i"),
                                      lambda v: v, x), axis_name="i")
    close(h(x), [3] * 4)
    k = spmdc.pmap(lambda x: lax.scan(lambda c, v: (c + lax.psum(v * x, "i"), c), 0.0,
                                      jnp.arange(3.0))[0], axis_name="i")
    close(k(x), [18] * 4)


@pytest.mark.devices(4)
def test_pmap_of_grad_through_scan_and_cond_with_collectives_matches_named_vmap():
    def loss(w, x):
        c, ys = lax.scan(lambda c, v: (jnp.tanh(c * w + lax.psum(v * x, "i")), c), 0.1,
                         jnp.arange(3.0))
        return c + jnp.sum(ys) + lax.cond(lax.psum(x, "i") > 0, lambda: w * w, lambda: w)
    x = np.arange(4.0, dtype=np.float32) / 4
    w = np.full(4, 0.5, np.float32)
    value, grads = spmdc.pmap(spmdc.value_and_grad(loss), axis_name="i")(w, x)
    close(grads, spmdc.vmap(spmdc.grad(loss), axis_name="i")(w, x))
    close(value, spmdc.vmap(loss, axis_name="i")(w, x))


@pytest.mark.devices(4)
def test_the_spmd_reference_interpreter_refuses_collectives_in_loop_bodies():
    from spmdc.compiler.interpreter_spmd import evaluate_spmd
    f = spmdc.pmap(lambda x: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(x, "i"), x),
                   axis_name="i")
    func = f.lower(np.arange(4.0, dtype=np.float32)).func
    with pytest.raises(NotImplementedError, match="collective in a sub-function"):
        evaluate_spmd(func, (("i", 4),), np.arange(4.0, dtype=np.float32))


@pytest.mark.devices(4)
def test_loop_results_kept_equal_by_a_psum_may_be_returned_replicated():
    x = np.arange(4.0, dtype=np.float32)
    f = spmdc.pmap(lambda x: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(x, "i"), 0.0),
                   axis_name="i", out_axes=None)
    close(f(x), 18.0)
    g = spmdc.pmap(lambda x: lax.scan(lambda c, v: (c + v, c), 0.0, x)[0], axis_name="i",
                   out_axes=None)
    with pytest.raises(ReplicationError):            # the carry takes in the varying x
        g(np.ones((4, 3), np.float32))


@pytest.mark.devices(4)
def test_a_collective_under_a_device_dependent_predicate_is_an_error_not_a_hang():
    x = np.arange(4.0, dtype=np.float32)
    h = spmdc.pmap(lambda x: lax.cond(x > 1, lambda v: lax.psum(v, "i"), lambda v: v, x),
                   axis_name="i")
    with pytest.raises(DivergentCollectiveError, match=r"psum over axis 'i' \(at .*"
                                                       r"test_control_flow.py"):
        h(x)
    w = spmdc.pmap(lambda x: lax.while_loop(lambda c: c < x, lambda c: c + lax.psum(
        x, "i"), 0.0), axis_name="i")
    with pytest.raises(DivergentCollectiveError, match="lax.while_loop whose predicate"):
        w(x)


def test_ir_round_trip_of_a_function_with_loops():
    def f(x, n):
        c, ys = lax.scan(lambda c, v: (c + v, c * v), 0.0, x)
        m = lax.fori_loop(0, n, lambda i, t: t * 2.0, c)
        return lax.cond(m > 3, lambda v: v + 1, lambda v: v, ys)
    args = (np.arange(3.0, dtype=np.float32), np.int32(2))
    lowered = spmdc.jit(f).lower(*args)
    text = lowered.ir()
    assert "scan(" in text and "while(" in text and "cond(" in text
    parsed = check(parse(text))
    assert str(parsed) == text
    consts = [np.asarray(c) for c in lowered.consts]
    close(evaluate(parsed, *args, *consts)[0], spmdc.jit(f)(*args))


def test_cse_never_merges_different_loops():
    def f(x):
        a = lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)
        b = lax.fori_loop(0, 3, lambda i, c: c * 3.0, x)
        return a, b
    func = cleanup(spmdc.make_ir(f)(np.float32(1)))
    assert str(func).count("scan(") == 2
    a, b = spmdc.jit(f)(np.float32(1))
    assert float(a) == 8.0 and float(b) == 27.0


def test_cleanup_also_cleans_loop_bodies():
    def f(x):
        def step(c, v):
            unused = jnp.exp(v) * 3.0            # noqa: F841  (dead code)
            return c + jnp.sin(v) * jnp.sin(v), v
        return lax.scan(step, 0.0, x)[0]
    text = str(cleanup(spmdc.make_ir(f)(np.arange(3.0, dtype=np.float32))))
    assert "exp" not in text and text.count("sin(") == 1


def test_optimization_barrier_is_the_identity_with_a_barrier():
    f = spmdc.jit(lambda a, b: lax.optimization_barrier((a * 2, b + 1)))
    out = f(np.ones(2, np.float32), np.ones(3, np.float32))
    np.testing.assert_array_equal(out[0], [2, 2])
    np.testing.assert_array_equal(out[1], [2, 2, 2])
    assert "stablehlo.optimization_barrier" in f.lower(np.ones(2), np.ones(3)).as_text()
    np.testing.assert_array_equal(
        spmdc.grad(lambda a: lax.optimization_barrier(a * a).sum())(np.ones(3)), [2, 2, 2])
    np.testing.assert_array_equal(
        spmdc.vmap(lambda a: lax.optimization_barrier(a * 2))(np.ones((2, 3))), 2)
