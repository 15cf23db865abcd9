"""jax.extend.core and jax.core (spmdc/extend/core/__init__.py, spmdc/_src/core.py): JAX's
Primitive on spmdc's, type tests on traced values and abstract values, the aval helpers;
and the values JAX's rules see (ad.Zero, UndefinedPrimal, PartialVal)."""
import typing

import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc._src import core as jax_core
from spmdc.core.abstract import AbstractValue, ShapedArray
from spmdc.errors import ConcretizationTypeError
from spmdc.extend import core
from spmdc.interpreters import ad, batching, mlir, partial_eval

X = np.arange(1.0, 4.0, dtype=np.float32)


def test_definers_return_the_rule_and_abstract_eval_is_jaxs():
    p = core.Primitive("twice")

    @p.def_impl
    def impl(x, *, k):
        return x * k

    @p.def_abstract_eval
    def abstract(x, *, k):
        return ShapedArray(x.shape, x.dtype)
    assert impl(X, k=2).tolist() == [2, 4, 6] and p.impl is impl
    out, effects = p.abstract_eval(ShapedArray((3,), np.float32), k=2)
    assert out == ShapedArray((3,), np.float32) and effects == set()
    assert p.bind(X, k=2).tolist() == [2, 4, 6]
    assert repr(p) == "twice" and not p.multiple_results


def test_params_may_take_the_names_bind_uses():
    # Equinox's vprim binds with prim=...; the names of bind's own arguments are free.
    p = core.Primitive("named_params")
    p.def_impl(lambda x, *, prim, b, ct: x + prim)
    p.def_abstract_eval(lambda x, *, prim, b, ct: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x, *, prim, b, ct: x + prim, False))
    batching.primitive_batchers[p] = lambda args, dims, **params: (p.bind(*args, **params),
                                                                   dims[0])
    ad.primitive_jvps[p] = lambda xs, ts, **params: (p.bind(*xs, **params), ts[0])
    ad.primitive_transposes[p] = lambda ct, x, **params: [ct]
    f = lambda x: p.bind(x, prim=1.0, b=2, ct=3)           # noqa: E731
    assert spmdc.jit(f)(X).tolist() == [2, 3, 4]
    assert spmdc.vmap(f)(X).tolist() == [2, 3, 4]
    assert spmdc.grad(lambda x: f(x).sum())(X).tolist() == [1, 1, 1]


def test_effectful_abstract_eval_keeps_the_equation():
    p = core.Primitive("effect")
    p.def_effectful_abstract_eval(lambda x: (x, {"an effect"}))
    mlir.register_lowering(p, lambda ctx, x: [hlo.AddOp(x, x).result])
    assert p.abstract_eval(ShapedArray((3,), np.float32))[1] == {"an effect"}
    text = spmdc.jit(lambda x: (p.bind(x), x * 3)[1]).lower(X).as_text()
    assert "stablehlo.add" in text


def test_builtin_primitives_take_jaxs_bind():
    from spmdc.compiler.primitives.elementwise import cos_p
    assert float(cos_p.bind(np.float32(0.0))) == 1.0
    np.testing.assert_allclose(spmdc.vmap(lambda x: cos_p.bind(x))(X), np.cos(X), rtol=1e-6)


def test_traced_values_pass_jaxs_type_tests():
    seen = []

    def f(x):
        seen.append((isinstance(x, jax_core.Tracer), isinstance(x, spmdc.Array),
                     isinstance(x, ad.JVPTracer), isinstance(x, batching.BatchTracer),
                     jax_core.trace_state_clean()))
        return x
    spmdc.jit(f)(X)
    spmdc.vmap(f)(X)
    # jit's and vmap's values are not JAX's JVPTracers (see the jvp test below)
    assert seen == [(True, True, False, True, False)] * 2
    assert jax_core.trace_state_clean()
    assert isinstance(jnp.ones(2), spmdc.Array) and not isinstance(X, spmdc.Array)
    assert not isinstance(jnp.ones(2), jax_core.Tracer)


def test_abstract_values():
    a = jax_core.get_aval(X)
    assert isinstance(a, jax_core.ShapedArray) and isinstance(a, AbstractValue)
    assert a == ShapedArray((3,), np.float32) and a.update(shape=(2,)).shape == (2,)
    assert a.to_tangent_aval() == a and a.at_least_vspace() == a
    assert jax_core.get_aval(np.arange(3)).to_tangent_aval().dtype == \
        np.dtype([("float0", np.void, 0)])
    assert jax_core.get_aval(1.0).weak_type
    assert jax_core.raise_to_shaped(a, weak_type=True).weak_type
    assert core.mapped_aval(3, 0, ShapedArray((3, 4), np.float32)).shape == (4,)
    assert core.unmapped_aval(5, 1, ShapedArray((3, 4), np.float32)).shape == (3, 5, 4)
    assert core.mapped_aval(3, None, a) is a
    with pytest.raises(ValueError, match="axis 0 of float32\\[3\\] has size 3, not 4"):
        core.mapped_aval(4, 0, a)
    assert core.valid_jaxtype(X) and core.valid_jaxtype(1.5)
    assert not core.valid_jaxtype("text") and not core.valid_jaxtype(object())
    for value in (True, 2, 2.5, X, np.float32(1), jnp.ones(2)):
        assert jax_core.pytype_aval_mappings[type(value)](value) == jax_core.get_aval(value)


def test_opaque_trace_state_and_concrete_or_error():
    outside = core.get_opaque_trace_state(None)
    inside = []
    spmdc.jit(lambda x: inside.append(core.get_opaque_trace_state(None)) or x)(X)
    assert outside == core.get_opaque_trace_state(None) and inside[0] != outside
    assert jax_core.concrete_or_error(int, 3.0) == 3
    assert jax_core.concrete_or_error(None, X) is X
    with pytest.raises(ConcretizationTypeError, match="in my op: a concrete value is "
                                                      "needed, but got a traced f32\\[3\\]"):
        spmdc.jit(lambda x: jax_core.concrete_or_error(None, x, "in my op"))(X)
    # Under eager grad the value is known, as in JAX.
    assert spmdc.grad(lambda x: x * jax_core.concrete_or_error(float, x))(2.0) == 2.0


def test_zeros_and_undefined_primals():
    z = ad.Zero.from_primal_value(X)
    assert z.aval == ShapedArray((3,), np.float32) and repr(z) == "Zero(float32[3])"
    assert ad.instantiate_zeros(z).tolist() == [0, 0, 0]
    assert ad.instantiate_zeros(X) is X
    assert ad.zeros_like_aval(ShapedArray((2,), np.int32)).dtype == np.int32
    assert ad.add_tangents(z, X) is X and ad.add_tangents(X, z) is X
    u = ad.UndefinedPrimal(ShapedArray((3,), np.float32))
    assert ad.is_undefined_primal(u) and not ad.is_undefined_primal(X)
    leaves, tree = spmdc.tree_util.tree_flatten([u, z, X])      # no leaves of their own
    assert len(leaves) == 1 and spmdc.tree_util.tree_unflatten(tree, leaves)[0].aval == u.aval


def test_definers():
    p = core.Primitive("cube")
    p.def_impl(lambda x: x ** 3)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x ** 3, multiple_results=False))
    ad.defjvp(p, lambda t, x: 3 * x ** 2 * t)
    np.testing.assert_allclose(spmdc.grad(lambda x: p.bind(x).sum())(X), 3 * X ** 2)
    ad.defjvp2(p, lambda t, out, x: 3 * out / x * t)
    np.testing.assert_allclose(spmdc.jvp(lambda x: p.bind(x), (X,), (X,))[1], 3 * X ** 3,
                               rtol=1e-6)
    ad.defjvp_zero(p)
    assert spmdc.grad(lambda x: p.bind(x).sum())(X).tolist() == [0, 0, 0]
    neg = core.Primitive("negate")
    neg.def_impl(lambda x: -x)
    neg.def_abstract_eval(lambda x: x)
    mlir.register_lowering(neg, mlir.lower_fun(lambda x: -x, multiple_results=False))
    ad.deflinear(neg, lambda ct: [-ct])
    np.testing.assert_allclose(spmdc.grad(lambda x: (neg.bind(x) * x).sum())(X), -2 * X)
    ad.deflinear2(neg, lambda ct, x: [lax.neg(ct)])
    np.testing.assert_allclose(spmdc.grad(lambda x: (neg.bind(x) * x).sum())(X), -2 * X)
    assert ad.primitive_jvps[neg] is not None and ad.get_primitive_transpose(neg)
    del ad.primitive_jvps[neg]               # the transpose rule alone: still linear
    np.testing.assert_allclose(spmdc.grad(lambda x: neg.bind(x).sum())(X), -np.ones(3))
    with pytest.raises(NotImplementedError, match="no JVP rule for 'negate'"):
        spmdc.jvp(lambda x: neg.bind(x), (X,), (X,))
    del ad.primitive_transposes[neg]
    with pytest.raises(NotImplementedError, match="no VJP rule for 'negate'"):
        spmdc.grad(lambda x: neg.bind(x).sum())(X)


def test_partial_val():
    known = partial_eval.PartialVal.known(X)
    assert known.is_known() and known.get_known() is X
    assert known.get_aval() == ShapedArray((3,), np.float32)
    aval = ShapedArray((2,), np.float32)
    unknown = partial_eval.PartialVal.unknown(aval)
    assert not unknown.is_known() and unknown.get_known() is None
    assert unknown.get_aval() is aval and tuple(unknown) == (aval, None)
    with pytest.raises(ValueError, match="exactly one"):
        partial_eval.PartialVal((None, None))
    with pytest.raises(TypeError, match="not an abstract value"):
        partial_eval.PartialVal(((2,), None))


def test_find_top_trace_and_the_trace_tag():
    # Equinox's filter_jvp: the outputs that are tracers of the top trace are the ones
    # differentiated; a trace's ``main`` is the tag its tracers share.
    def f(x):
        top = core.find_top_trace((x,))
        y = x * 2
        assert isinstance(y, ad.JVPTracer) and y._trace.main is top.main
        return y
    _, t = spmdc.jvp(f, (X,), (X,))
    np.testing.assert_allclose(t, 2 * X)


def test_jvp_tracers_are_the_values_with_a_tangent():
    # JAX's maybe_jvp_tracer: only values that depend differentiably on an input with a
    # tangent are JVPTracers (Equinox's filter_jvp gives None tangents for the rest).
    const, i = np.float32(3.0), np.int32(2)
    seen = {}

    def f(x, n):
        seen["x"], seen["n"] = x, n
        seen["x * 2"] = x * 2
        seen["const * 2"] = const * jnp.ones(())            # closed over: no tangent
        seen["x > 0"] = x > 0                               # bool: float0 tangent
        seen["floor(x) as int"] = jnp.floor(x).astype(np.int32)
        seen["int back to float"] = seen["floor(x) as int"].astype(np.float32)
        seen["stop_gradient"] = lax.stop_gradient(x)
        seen["n * x"] = n * x
        return x
    spmdc.jvp(f, (np.float32(1.5), i), (np.float32(1.0), np.zeros((), spmdc.float0)))
    got = {k: isinstance(v, ad.JVPTracer) for k, v in seen.items()}
    assert got == {"x": True, "n": False, "x * 2": True, "const * 2": False, "x > 0": False,
                   "floor(x) as int": False, "int back to float": False,
                   "stop_gradient": False, "n * x": True}
    seen.clear()
    spmdc.grad(f)(np.float32(1.5), i)      # grad's values are LinearizeTracers in JAX
    assert not isinstance(seen["x * 2"], ad.JVPTracer)
    assert core.find_top_trace(()) is None and jax_core.find_top_trace is core.find_top_trace


def test_jax_core_eval_context_and_dims():
    core = jax_core

    def f(x):
        with core.eval_context():              # runs at once, on concrete values
            y = jnp.ones(2) * 3
            assert not isinstance(y, core.Tracer)
        return x + y
    np.testing.assert_array_equal(np.asarray(spmdc.jit(f)(jnp.ones(2))), [4.0, 4.0])

    def g(x):
        with core.eval_context():
            return x + 1
    with pytest.raises(spmdc.errors.UnexpectedTracerError):
        spmdc.jit(g)(1.0)
    assert (core.max_dim(2, 3), core.min_dim(2, 3)) == (3, 2)
    with pytest.raises(TypeError, match="argument `d2` of `core.min_dim`"):
        core.min_dim(2, 1.5)
    assert core.ParamDict == dict[str, typing.Any]
    assert core.ensure_compile_time_eval is spmdc.ensure_compile_time_eval


def test_check_jaxpr_and_the_helpers():
    closed = spmdc.make_jaxpr(lambda x: jnp.sin(x) * 2)(1.0)
    core.check_jaxpr(closed)                          # well formed: no error
    swapped = core.Jaxpr([], closed.jaxpr.invars, closed.jaxpr.outvars,
                         [closed.jaxpr.eqns[1], closed.jaxpr.eqns[0]])
    with pytest.raises(spmdc.errors.JaxprTypeError, match=r"not defined \(equation 0, mul\)"):
        core.check_jaxpr(swapped)
    twice = core.Primitive("twice_checked")
    twice.def_impl(lambda x: 2 * x)
    twice.def_abstract_eval(lambda x: x)
    eqn = spmdc.make_jaxpr(twice.bind)(jnp.ones(3)).jaxpr.eqns[0]
    wrong = core.Var(ShapedArray((4,), np.float32))
    mistyped = core.Jaxpr([], eqn.invars, [wrong], [core.new_jaxpr_eqn(
        eqn.invars, [wrong], eqn.primitive, eqn.params, eqn.effects)])
    with pytest.raises(core.JaxprTypeError, match=r"typed \(float32\[4\]\) but the "
                                                  r"primitive's abstract evaluation gives"):
        core.check_jaxpr(mistyped)
    assert core.JaxprTypeError is spmdc.errors.JaxprTypeError
    assert issubclass(core.InconclusiveDimensionOperation, Exception)
    assert core.primal_dtype_to_tangent_dtype(np.int32) == spmdc.float0
    assert core.primal_dtype_to_tangent_dtype(np.float32) == np.float32
    assert core.no_effects == frozenset() and np.ndarray in core.array_types
    assert isinstance(core.gensym()(ShapedArray((2,), np.float32)), core.Var)
    assert core.concrete_or_error(int, np.int32(3)) == 3
    seen = []

    def probe(x):
        seen.append((core.unsafe_get_axis_names_DO_NOT_USE(),
                     core.nonempty_axis_env_DO_NOT_USE()))
        return x
    spmdc.vmap(probe, axis_name="i")(jnp.ones(2))
    assert seen == [(["i"], True)] and core.unsafe_get_axis_names_DO_NOT_USE() == []


def test_am_i_under_probes_as_jax():
    seen = []

    def probe(tag):
        def f(x):
            seen.append((tag, core.unsafe_am_i_under_a_jit_DO_NOT_USE(),
                         core.unsafe_am_i_under_a_vmap_DO_NOT_USE()))
            return x * 2
        return f
    x = jnp.ones(2)
    probe("eager")(x)
    spmdc.jit(probe("jit"))(x)
    spmdc.vmap(probe("vmap"))(x)
    spmdc.grad(lambda y: probe("grad")(y).sum())(x)
    spmdc.jit(spmdc.vmap(probe("jit-vmap")))(x)
    lax.scan(lambda c, y: (probe("scan")(c), y), x, jnp.ones(3))
    # JAX 0.10.2 answers the same for the same program
    assert seen == [("eager", False, False), ("jit", True, False), ("vmap", False, True),
                    ("grad", False, False), ("jit-vmap", True, True), ("scan", True, False)]


def test_a_refusing_jvp_rule_speaks_before_grads_output_check():
    # JAX differentiates while it traces, so a library primitive whose JVP rule refuses
    # (Equinox's nontraceable) raises its error even where the function's output is not
    # a scalar, before grad's own TypeError (regression: the TypeError came first)
    p = core.Primitive("refuses_jvp")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x, False))

    def refuse(primals, tangents):
        raise RuntimeError("refuses_jvp cannot be differentiated")
    ad.primitive_jvps[p] = refuse
    with pytest.raises(RuntimeError, match="cannot be differentiated"):
        spmdc.grad(lambda x: [p.bind(x)])(1.0)
    with pytest.raises(TypeError, match="requires a function returning a scalar"):
        spmdc.grad(lambda x: [x])(1.0)


def test_every_primitive_in_a_jaxpr_is_a_jax_primitive():
    # Equinox's finalise_jaxpr type-checks ``prim: jax.extend.core.Primitive`` on every
    # equation: built-in primitives (add), renamed ones (select_n, convert_element_type)
    # and call primitives are all instances in JAX, and so of the class libraries subclass.
    from spmdc.extend.core import primitives as P

    def f(x, i):
        return lax.select(x > 0, x + 1.0, x), i.astype(np.float32), jnp.sin(x)
    jaxpr = spmdc.make_jaxpr(f)(X, np.int32(1))
    names = [e.primitive.name for e in jaxpr.eqns]
    assert {"add", "select_n", "convert_element_type", "sin"} <= set(names)
    assert all(isinstance(e.primitive, core.Primitive) for e in jaxpr.eqns)
    assert all(isinstance(p, jax_core.Primitive) for p in (P.jit_p, P.call_p, lax.add_p))
    assert issubclass(type(lax.sin_p), core.Primitive)
    assert not isinstance(1, core.Primitive) and not isinstance(X, core.Primitive)
    mine = core.Primitive("mine")
    assert isinstance(mine, core.Primitive) and type(mine) is core.Primitive


def test_an_impl_without_a_lowering_runs_on_the_host():
    # Haiku's stateful tests count the calls of a primitive with only def_impl and
    # deflinear under value_and_grad and checkpoint outside jit, where JAX evaluates
    # the impl eagerly: spmdc's compiled gradient calls it on the host (regression: "no
    # lowering rule for primitive"). JAX's values: (9., 6.), one forward call each.
    calls = []
    p = core.Primitive("counted")
    p.def_impl(lambda x, *, scale: (calls.append("forward"), x * scale)[1])
    p.def_abstract_eval(lambda x, *, scale: x)
    ad.deflinear(p, lambda ct, *, scale: (calls.append("backward"), (ct * scale,))[1])

    def f(x):
        return p.bind(x * x, scale=2.0)
    for g in (f, spmdc.checkpoint(f)):
        calls.clear()
        value, grad = spmdc.value_and_grad(g)(3.0)
        assert (float(value), float(grad)) == (18.0, 12.0)
        assert sorted(calls) == ["backward", "forward"]
    np.testing.assert_allclose(spmdc.jit(lambda x: p.bind(x, scale=3.0))(X), X * 3)
    mlir.register_lowering(p, mlir.lower_fun(lambda x, *, scale: -x, False))
    calls.clear()
    np.testing.assert_allclose(spmdc.jit(lambda x: p.bind(x, scale=1.0))(X), -X)
    assert calls == []
