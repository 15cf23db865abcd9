"""custom_vjp with defvjp(fwd, bwd, symbolic_zeros=True) (Note [custom_vjp symbolic
zeros]): fwd sees CustomVJPPrimal(value, perturbed), bwd sees SymbolicZero for zero
output cotangents, as JAX 0.10.2 does (the flags below are JAX's for the same calls);
and the spmdc.custom_derivatives namespace."""

import alias_programs
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)


def _make(seen):
    @spmdc.custom_vjp
    def f(x, y):
        return x * y, x + y

    def fwd(x, y):
        seen.append(("fwd", type(x) is CustomVJPPrimal, x.perturbed, y.perturbed))
        return f(x.value, y.value), (x.value, y.value)

    def bwd(res, ct):
        a, b = ct
        seen.append(("bwd", isinstance(a, SymbolicZero), isinstance(b, SymbolicZero)))
        x, y = res
        gx = (0.0 if isinstance(a, SymbolicZero) else a * y) + \
            (0.0 if isinstance(b, SymbolicZero) else b)
        gy = (0.0 if isinstance(a, SymbolicZero) else a * x) + \
            (0.0 if isinstance(b, SymbolicZero) else b)
        return gx, gy

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    return f


def test_rules_see_what_is_perturbed_and_which_cotangents_are_zero():
    seen = []
    f = _make(seen)
    assert float(spmdc.grad(lambda x: f(x, 3.0)[0])(2.0)) == 3.0
    assert seen == [("fwd", True, True, False), ("bwd", False, True)]
    seen.clear()
    g = spmdc.grad(lambda x, y: f(x, y)[1], argnums=(0, 1))(2.0, 3.0)
    assert (float(g[0]), float(g[1])) == (1.0, 1.0)
    assert seen == [("fwd", True, True, True), ("bwd", True, False)]
    seen.clear()
    assert float(spmdc.jit(spmdc.grad(lambda x, y: sum(f(x, y)), argnums=1))(2.0, 3.0)) == 3.0
    assert seen == [("fwd", True, False, True), ("bwd", False, False)]
    seen.clear()
    np.testing.assert_allclose(spmdc.vmap(spmdc.grad(lambda x: f(x, 3.0)[0]))(jnp.arange(3.0)),
                               3.0)
    assert seen == [("fwd", True, True, False), ("bwd", False, True)]


def test_bwd_may_return_symbolic_zeros_and_none():
    @spmdc.custom_vjp
    def g(x, y):
        return x * y

    def fwd(x, y):
        return g(x.value, y.value), y.value

    def bwd(y, ct):
        return ct * y, SymbolicZero.from_primal_value(y)      # y's cotangent: zero

    g.defvjp(fwd, bwd, symbolic_zeros=True)
    gx, gy = spmdc.grad(g, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (3.0, 0.0)

    @spmdc.custom_vjp
    def h(x, y):
        return x * y
    h.defvjp(lambda x, y: (h(x.value, y.value), x.value), lambda x, ct: (None, ct * x),
             symbolic_zeros=True)
    assert float(spmdc.grad(h, argnums=1)(2.0, 3.0)) == 2.0


def test_helpers():
    tree = {"a": CustomVJPPrimal(1.0, True), "b": [CustomVJPPrimal(2, False)]}
    assert custom_vjp_primal_tree_values(tree) == {"a": 1.0, "b": [2]}
    with pytest.raises(TypeError, match="unexpected leaf type"):
        custom_vjp_primal_tree_values({"a": 1.0})
    zeros = zero_from_primal({"x": jnp.ones(2), "n": jnp.arange(3)})
    np.testing.assert_array_equal(zeros["x"], [0.0, 0.0])
    assert zeros["n"].dtype == spmdc.float0 and zeros["n"].shape == (3,)
    symbolic = zero_from_primal(jnp.ones((2, 3)), symbolic_zeros=True)
    assert isinstance(symbolic, SymbolicZero) and symbolic.shape == (2, 3)
    assert SymbolicZero(spmdc.ShapeDtypeStruct((4,), jnp.float32)).dtype == np.float32


def test_optimize_remat_is_refused_clearly():
    f = spmdc.custom_vjp(lambda x: x)
    with pytest.raises(NotImplementedError, match="optimize_remat"):
        f.defvjp(lambda x: (x, None), lambda r, g: (g,), optimize_remat=True)


ALIAS_PROGRAM = alias_programs.register("custom_derivatives", (
    "import sys, spmdc; sys.modules['jax'] = spmdc\n"
    "import jax\n"
    "from jax.custom_derivatives import SymbolicZero, CustomVJPPrimal\n"
    "assert jax.custom_derivatives.custom_vjp is spmdc.custom_vjp\n"
    "print('ok')\n"))


def test_jax_alias_resolves_custom_derivatives():
    out = alias_programs.run(ALIAS_PROGRAM)      # one child for the alias programs
    assert out.stdout.strip() == "ok", out.stderr


def test_closure_convert_hoists_traced_floats_as_jax():
    c = jnp.arange(3.0)
    converted, consts = spmdc.closure_convert(lambda x: x * c, jnp.ones(3))
    assert consts == []                                  # concrete arrays stay closed over
    np.testing.assert_allclose(converted(jnp.full(3, 2.0)), [0.0, 2.0, 4.0])
    counts = []

    def g(a):
        converted, consts = spmdc.closure_convert(lambda x: x * a + c, jnp.ones(3))
        counts.append(len(consts))
        return converted(jnp.ones(3), *consts).sum()
    assert float(spmdc.grad(g)(2.0)) == 3.0
    assert float(spmdc.jit(g)(2.0)) == 9.0
    assert counts == [1, 1]

    def k(i):                                            # integers are not hoisted
        converted, consts = spmdc.closure_convert(lambda x: x * i, jnp.ones(3))
        counts.append(len(consts))
        return converted(jnp.ones(3), *consts).sum()
    assert float(spmdc.jit(k)(3)) == 9.0 and counts[-1] == 0
    with pytest.raises(TypeError, match="made for arguments"):
        converted(jnp.ones(4))


def test_closure_convert_with_custom_vjp_differentiates_closed_over_values():
    apply = spmdc.custom_vjp(lambda f, x, *consts: f(x, *consts), nondiff_argnums=(0,))

    def fwd(f, x, *consts):
        return f(x, *consts), (x, consts)

    def bwd(f, res, ct):
        x, consts = res
        _, pull = spmdc.vjp(f, x, *consts)
        return pull(ct)
    apply.defvjp(fwd, bwd)

    def loss(a):
        converted, consts = spmdc.closure_convert(lambda x: jnp.sin(a * x), 0.5)
        return apply(converted, 0.5, *consts)
    np.testing.assert_allclose(spmdc.grad(loss)(2.0), 0.5 * np.cos(1.0), rtol=1e-6)


def test_custom_jvp_symbolic_zeros_as_jax():
    # JAX 0.10.2 gives these rules exactly these tangent kinds for these calls
    seen = []

    @spmdc.custom_jvp
    def f(x, n, y):
        return x * n + y

    def f_jvp(primals, tangents):
        seen.append(tuple(type(t).__name__ for t in tangents) +
                    tuple(np.dtype(t.dtype).name for t in tangents))
        x, n, y = primals
        tx, _, ty = tangents
        out = (0.0 if isinstance(tx, SymbolicZero) else tx * n) + \
            (0.0 if isinstance(ty, SymbolicZero) else ty)
        return f(x, n, y), out            # the rule calls its own function
    f.defjvp(f_jvp, symbolic_zeros=True)

    assert float(spmdc.grad(f)(1.0, 2, 3.0)) == 2.0
    assert seen == [("Tracer", "SymbolicZero", "SymbolicZero", "float32", "void", "float32")]
    seen.clear()
    _, t = spmdc.jvp(lambda y: f(1.0, 2, y), (3.0,), (1.0,))
    assert float(t) == 1.0
    assert seen == [("SymbolicZero", "SymbolicZero", "Tracer", "float32", "void", "float32")]


def test_a_rule_calling_its_function_is_traced_once_in_eager_grad():
    calls = []

    @spmdc.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def _(primals, tangents):
        calls.append(1)
        return f(primals[0]), jnp.cos(primals[0]) * tangents[0]

    np.testing.assert_allclose(spmdc.grad(f)(0.5), np.cos(0.5), rtol=1e-6)
    assert len(calls) == 1


def test_user_rules_run_in_program_order():
    # JAX runs a custom_jvp's rule and a custom_vjp's fwd as it reaches them, in program
    # order: a guard that refuses differentiation (Equinox's nondifferentiable, before a
    # filter_custom_vjp) raises before a later fwd runs (regression: the backward sweep
    # traced the later fwd first, and its error won)
    @spmdc.custom_jvp
    def guard(x):
        return x

    @guard.defjvp
    def guard_jvp(primals, tangents):
        raise RuntimeError("guard: not differentiable")

    @spmdc.custom_vjp
    def f(x, y):
        return x + y

    def f_fwd(x, y):
        raise AssertionError("fwd reached")
    f.defvjp(f_fwd, lambda r, g: (g, g))
    for run in (lambda g: g(1.0), lambda g: spmdc.jit(g)(1.0)):
        with pytest.raises(RuntimeError, match="guard: not differentiable"):
            run(spmdc.grad(lambda x: f(x, guard(x))))
    f.defvjp(lambda x, y: (x + y, None), lambda r, g: (g, 2 * g))
    assert float(spmdc.grad(lambda x: f(x, 3 * x))(1.0)) == 7.0


def test_transposed_custom_jvp_rule_leaves_unreached_cotangents_symbolic():
    # Note [symbolic zeros through a transposed custom_jvp rule]: an identity custom_jvp
    # after a custom_vjp, one output used: bwd sees SymbolicZero for the others (JAX's
    # flags and gradient for the same program).
    seen = []

    @spmdc.custom_vjp
    def record(x):
        return x

    def fwd(x):
        return custom_vjp_primal_tree_values(x), None

    def bwd(_, g):
        seen.append(tuple(isinstance(v, SymbolicZero) for v in g))
        return (tuple(None if isinstance(v, SymbolicZero) else v for v in g),)

    record.defvjp(fwd, bwd, symbolic_zeros=True)

    @spmdc.custom_jvp
    def ident(x):
        return x

    ident.defjvp(lambda p, t: (p[0], t[0]))
    vals = (jnp.array(1.0), jnp.array(2.0), jnp.array(3.0))
    g = spmdc.grad(lambda v: ident(record(v))[1] * 2.0)(vals)
    assert seen == [(True, False, True)]
    np.testing.assert_array_equal([float(x) for x in g], [0.0, 2.0, 0.0])


def test_symbolic_zero_tangent_from_a_rule_perturbs_nothing_after_it():
    # Note [symbolic zero tangents from a rule]: a rule's SymbolicZero output tangent
    # leaves that output unperturbed, so a later rule that refuses differentiation is
    # never called (Equinox's nondifferentiable after its while loop's stop_gradient).
    @spmdc.custom_jvp
    def stop_second(x, y):
        return x, y

    def stop_second_jvp(p, t):
        return p, (t[0], SymbolicZero(spmdc.typeof(p[1])))

    stop_second.defjvp(stop_second_jvp, symbolic_zeros=True)

    @spmdc.custom_jvp
    def refuse(x):
        return x

    def refuse_jvp(p, t):
        raise RuntimeError("refuse was differentiated")

    refuse.defjvp(refuse_jvp)

    def h(x):
        a, b = stop_second(x, 2.0 * x)
        return a * 3.0 + refuse(b)

    out, tangent = spmdc.jvp(h, (1.0,), (1.0,))      # JAX: 5.0, 3.0
    assert (float(out), float(tangent)) == (5.0, 3.0)
    assert float(spmdc.grad(h)(1.0)) == 3.0
    assert float(spmdc.jit(spmdc.grad(h))(1.0)) == 3.0
    assert float(spmdc.linearize(h, 1.0)[1](1.0)) == 3.0
