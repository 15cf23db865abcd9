"""Jaxprs as JAX shows them (spmdc/transforms/jaxpr_view.py): printed as JAX 0.10.2 prints
the programs of jaxpr_cases.py (recorded), run by ``jaxpr_as_fun`` / ``eval_jaxpr`` to JAX's
values, under jit, vmap and grad, and rewritten the way libraries rewrite them."""
from __future__ import annotations

import numpy as np
import oracle
import pytest
from jaxpr_cases import CASES, X3

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.abstract import ShapedArray
from spmdc.transforms.jaxpr_view import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    eval_jaxpr,
    jaxpr_as_fun,
    new_jaxpr_eqn,
)

RECORDED = oracle.recorded_cases("jaxprs_reference.json")

# Programs spmdc traces differently from JAX, so their jaxprs differ (each must differ; a
# case that starts to match is removed from here).
DIFFERENT = {
    "jit_nested": "spmdc inlines a nested jit into the caller's program: no jit equation",
    "switch": "JAX converts the weakly typed index with convert_element_type first",
    "fft": "JAX's lax.fft is a jit of its fft primitive (test_fft_type_is_jax_s shows ours)",
    "docs_one_of_three": "as switch",
    "docs_func8": "spmdc passes a branch's captured values after its operands (JAX: before)",
    "docs_func10": "spmdc's jnp.ones converts an int32 1 (JAX: a float32 literal); JAX names "
                   "the loop outputs nobody reads _",
    "docs_func11": "jnp.ones as in docs_func10; JAX converts weakly typed values in the body",
    "docs_func12": "the nested jit is inlined, and jnp.ones as in docs_func10",
}


def _jaxpr(case):
    f, args, options = case(spmdc)
    return spmdc.make_jaxpr(f, **options)(*args), f, args


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_printed_as_jax_prints_it(case):
    closed, _, _ = _jaxpr(case)
    expected = RECORDED[case.__name__]["jaxpr"]
    if case.__name__ in DIFFERENT:
        assert str(closed) != expected, f"{case.__name__} now matches JAX: remove it from DIFFERENT"
    else:
        assert str(closed) == expected


@pytest.mark.parametrize("case", [c for c in CASES if RECORDED[c.__name__]["values"]],
                         ids=lambda c: c.__name__)
def test_jaxpr_as_fun_gives_jax_values(case):
    closed, _, args = _jaxpr(case)
    outs = jaxpr_as_fun(closed)(*spmdc.tree_util.tree_leaves(args))   # a jaxpr takes leaves
    assert isinstance(outs, list)
    leaves = RECORDED[case.__name__]["values"]
    if case.__name__ == "several_outputs":
        # JAX returns its literal output 2.0 as a TypedFloat, a Python float that NumPy
        # reads as float64; spmdc returns the literal's float32 value
        assert leaves[2]["dtype"] == "float64" and outs[2].dtype == np.float32
        leaves = [*leaves[:2], {**leaves[2], "dtype": "float32"}]
    oracle.assert_matches_recorded(tuple(outs), leaves, case.__name__)


def _program(p, x):
    c = jnp.arange(3.0) + 1
    y = lax.cond(p, jnp.sin, jnp.cos, x) * c
    carry, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, y)
    w = lax.while_loop(lambda c: c < 10, lambda c: c + 1, 0)
    return jnp.dot(ys, y) + carry + w + jnp.where(x > 1, x, -x).sum()


def test_eval_jaxpr_under_jit_vmap_and_grad():
    closed = spmdc.make_jaxpr(_program)(True, X3)
    run = jaxpr_as_fun(closed)
    for p in (True, False):
        np.testing.assert_allclose(run(p, X3)[0], _program(p, X3), rtol=1e-6)
        np.testing.assert_allclose(spmdc.jit(run)(p, X3)[0], _program(p, X3), rtol=1e-6)
    xs = np.stack([X3, X3 + 1])
    np.testing.assert_allclose(spmdc.vmap(lambda x: run(True, x)[0])(xs),
                               spmdc.vmap(lambda x: _program(True, x))(xs), rtol=1e-6)
    np.testing.assert_allclose(spmdc.grad(lambda x: run(True, x)[0])(X3),
                               spmdc.grad(lambda x: _program(True, x))(X3), rtol=1e-5)
    assert eval_jaxpr(closed.jaxpr, closed.consts, False, X3)[0] == \
        pytest.approx(float(_program(False, X3)), rel=1e-6)


def test_equations_in_jax_form():
    closed = spmdc.make_jaxpr(lambda x, y: (jnp.dot(x, y), x.astype(jnp.int32)))(
        np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    dot, convert = closed.eqns
    assert dot.primitive is lax.dot_general_p and str(dot.primitive) == "dot_general"
    assert dot.params == {"dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
                          "preferred_element_type": np.dtype(np.float32), "out_sharding": None}
    assert dot.invars == closed.jaxpr.invars and dot.outvars == [closed.jaxpr.outvars[0]]
    assert convert.primitive is lax.convert_element_type_p
    assert convert.primitive.name == "convert_element_type"
    assert convert.params == {"new_dtype": np.dtype(np.int32), "weak_type": False,
                              "sharding": None}
    assert isinstance(closed.jaxpr, Jaxpr) and isinstance(dot, JaxprEqn)
    assert all(isinstance(v, Var) for v in closed.jaxpr.invars)
    assert closed.jaxpr.invars[0].aval == ShapedArray((2, 3), np.float32)
    assert closed.out_avals == [ShapedArray((2, 4), np.float32), ShapedArray((2, 3), np.int32)]
    # an equation alone is named afresh, its outputs first, as JAX names it
    assert repr(convert) == "a:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] b"


def test_sub_jaxprs_are_closed_jaxprs_and_literals_inline():
    closed = spmdc.make_jaxpr(lambda c, xs: lax.scan(lambda c, x: (c + x, c), c, xs))(
        np.float32(0), X3)
    (scan,) = closed.eqns
    assert scan.primitive is lax.scan_p
    body = scan.params["jaxpr"]
    assert isinstance(body, ClosedJaxpr) and body.consts == []
    assert [e.primitive for e in body.eqns] == [lax.add_p]
    assert {k: v for k, v in scan.params.items() if k != "jaxpr"} == {
        "length": 3, "reverse": False, "num_consts": 0, "num_carry": 1, "unroll": 1}
    lit = spmdc.make_jaxpr(lambda x: x + 2.0)(X3).eqns[0].invars[1]
    assert isinstance(lit, Literal) and lit.val == 2.0 and lit.val.dtype == np.float32


def test_rewritten_equations_run():
    # as Equinox and Haiku do: new equations with replace / new_jaxpr_eqn, then eval_jaxpr
    closed = spmdc.make_jaxpr(lambda x: jnp.sin(x) * 2)(X3)
    sin, mul = closed.eqns
    jaxpr = closed.jaxpr.replace(eqns=[sin.replace(primitive=lax.cos_p), mul])
    np.testing.assert_allclose(eval_jaxpr(jaxpr, closed.consts, X3)[0], np.cos(X3) * 2,
                               rtol=1e-6)
    extra = Var(ShapedArray((3,), np.float32))
    exp = new_jaxpr_eqn([jaxpr.outvars[0]], [extra], lax.exp_p, {}, set())
    longer = jaxpr.replace(eqns=[*jaxpr.eqns, exp], outvars=[extra])
    np.testing.assert_allclose(jaxpr_as_fun(ClosedJaxpr(longer, []))(X3)[0],
                               np.exp(np.cos(X3) * 2), rtol=1e-6)
    # an unused output may be dropped
    dropped = longer.replace(eqns=[longer.eqns[0].replace(outvars=[DropVar(extra.aval)])],
                             outvars=[longer.invars[0]])
    assert "_:f32[3] = cos a" in str(dropped)
    np.testing.assert_array_equal(eval_jaxpr(dropped, [], X3)[0], X3)


def test_rewritten_sub_jaxpr_is_traced_again():
    closed = spmdc.make_jaxpr(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(True, X3)
    cond = closed.eqns[-1]
    false_branch, true_branch = cond.params["branches"]
    (sin,) = true_branch.eqns
    tanh_branch = true_branch.replace(jaxpr=true_branch.jaxpr.replace(
        eqns=[sin.replace(primitive=lax.tanh_p)]))
    new_cond = cond.replace(params={"branches": (false_branch, tanh_branch)})
    jaxpr = closed.jaxpr.replace(eqns=[*closed.eqns[:-1], new_cond])
    np.testing.assert_allclose(eval_jaxpr(jaxpr, [], True, X3)[0], np.tanh(X3), rtol=1e-6)
    np.testing.assert_allclose(eval_jaxpr(jaxpr, [], False, X3)[0], np.cos(X3), rtol=1e-6)


def test_jax_named_primitive_objects_bind():
    assert float(lax.square_p.bind(np.float32(3))) == 9.0
    pred = np.array([True, False, True])
    # select_n(pred, on_false, on_true)
    np.testing.assert_array_equal(lax.select_n_p.bind(pred, X3, -X3), np.where(pred, -X3, X3))
    out = lax.convert_element_type_p.bind(X3, new_dtype=np.int32, weak_type=False,
                                          sharding=None)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, X3.astype(np.int32))
    assert lax.bitcast_convert_type_p.name == "bitcast_convert_type"


def test_effects_of_an_io_callback():
    def f(x):
        spmdc.experimental.io_callback(lambda v: None, None, x)
        return x
    closed = spmdc.make_jaxpr(f)(X3)
    assert closed.effects and closed.eqns[0].effects == closed.effects


def test_bad_input():
    closed = spmdc.make_jaxpr(jnp.sin)(X3)
    with pytest.raises(TypeError, match="takes 0 consts and 1 arguments, got 0 and 2"):
        eval_jaxpr(closed.jaxpr, [], X3, X3)
    with pytest.raises(ValueError, match="unknown keyword arguments \\['eqs'\\]"):
        closed.jaxpr.replace(eqs=[])
    with pytest.raises(TypeError, match="select_n: spmdc's select chooses between two cases"):
        lax.select_n_p.bind(np.int32(0), X3, X3, X3)
    with pytest.raises(TypeError, match="convert_element_type: .* sharding=None"):
        lax.convert_element_type_p.bind(X3, new_dtype=np.int32, weak_type=False, sharding="x")
    with pytest.raises(TypeError, match="outvars must be Vars"):
        new_jaxpr_eqn([], [Literal(np.float32(1), ShapedArray((), np.float32))], lax.sin_p,
                      {}, set())
    with pytest.raises(ValueError, match="1 consts for 0 constvars"):
        ClosedJaxpr(closed.jaxpr, [1.0])


def test_pretty_print_options():
    # as JAX 0.10.2 prints them
    closed = spmdc.make_jaxpr(lambda x: jnp.broadcast_to(x + 1, (2, 3)))(X3)
    assert closed.pretty_print(print_shapes=False) == (
        "{ lambda ; a. let\n"
        "    b = add a 1.0:f32[]\n"
        "    c = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
        "  in (c,) }")
    assert closed.pretty_print(custom_pp_eqn_rules=False, width=200) == (
        "{ lambda ; a:f32[3]. let b:f32[3] = add a 1.0:f32[]; c:f32[2,3] = broadcast_in_dim["
        "broadcast_dimensions=(1,) shape=(2, 3) sharding=None] b in (c,) }")
    with pytest.raises(ValueError, match="source_info is not supported"):
        closed.pretty_print(source_info=True)


def test_checkpoint_is_remat2_with_an_open_jaxpr():
    f = spmdc.checkpoint(lambda y: jnp.sin(jnp.sin(y)))
    closed = spmdc.make_jaxpr(f)(X3)
    (eqn,) = closed.eqns
    assert eqn.primitive.name == "remat2" and eqn.params["differentiated"] is False
    assert isinstance(eqn.params["jaxpr"], Jaxpr) and eqn.params["prevent_cse"] is True
    run = jaxpr_as_fun(closed)
    np.testing.assert_allclose(run(X3)[0], np.sin(np.sin(X3)), rtol=1e-6)
    np.testing.assert_allclose(spmdc.grad(lambda x: run(x)[0].sum())(X3),
                               np.cos(np.sin(X3)) * np.cos(X3), rtol=1e-6)


def test_an_interpreter_written_for_jax_runs_a_jaxpr():
    # the loop libraries write as their own eval_jaxpr: the equation's context manager,
    # the primitive's get_bind_params and bind (JaxPrimitives here: select_n, convert)
    pred = np.array([True, False, True])
    closed = spmdc.make_jaxpr(lambda p, x: lax.select(p, x, -x).astype(jnp.int32))(pred, X3)
    env = dict(zip(map(id, closed.jaxpr.invars), [pred, X3], strict=True))
    for eqn in closed.eqns:
        args = [env[id(a)] for a in eqn.invars]
        with eqn.ctx.manager:
            if eqn.primitive is lax.neg_p:
                out = eval_jaxpr(closed.jaxpr.replace(eqns=[eqn], invars=eqn.invars,
                                                      outvars=eqn.outvars), [], *args)[0]
            else:
                params = eqn.primitive.get_bind_params(eqn.params)
                out = eqn.primitive.bind(*args, **params)
        env[id(eqn.outvars[0])] = out
    assert [e.primitive.name for e in closed.eqns] == ["neg", "select_n", "convert_element_type"]
    np.testing.assert_array_equal(env[id(closed.jaxpr.outvars[0])],
                                  np.where(pred, X3, -X3).astype(np.int32))


def test_a_made_jaxpr_as_a_branch_of_a_new_cond():
    # a top-level jaxpr whose scalar constant was written inline is traced again when an
    # equation takes it as a sub-jaxpr (regression: it reused the Func, which takes the
    # constant as an input)
    c = np.float32(3)
    add_c = spmdc.make_jaxpr(lambda x: lax.clamp(c, x, np.float32(5)))(X3)
    neg = spmdc.make_jaxpr(lambda x: -x)(X3)
    assert add_c.consts == [] and add_c.eqns[0].invars[0].val == 3
    template = spmdc.make_jaxpr(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(True, X3)
    cond = template.eqns[-1].replace(params={"branches": (neg, add_c)})
    jaxpr = template.jaxpr.replace(eqns=[*template.eqns[:-1], cond])
    np.testing.assert_allclose(eval_jaxpr(jaxpr, [], True, X3)[0], np.clip(X3, 3, 5))
    np.testing.assert_allclose(eval_jaxpr(jaxpr, [], False, X3)[0], -X3)


def test_params_jax_hides_when_printing():
    closed = spmdc.make_jaxpr(lambda x: jnp.sin(x) * x)(X3)
    sin, mul = closed.eqns
    assert sin.params == {"accuracy": None} and mul.params == {"out_dtype": None}
    # as JAX 0.10.2 prints it without its print rules
    assert closed.pretty_print(custom_pp_eqn_rules=False) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = sin[accuracy=None] a\n"
        "    c:f32[3] = mul[out_dtype=None] b a\n"
        "  in (c,) }")
    changed = closed.jaxpr.replace(eqns=[sin.replace(params={"accuracy": "HIGHEST"}), mul])
    with pytest.raises(TypeError, match="sin: spmdc's primitive takes accuracy=None"):
        eval_jaxpr(changed, [], X3)


def test_fft_type_is_jax_s():
    closed = spmdc.make_jaxpr(lambda x: lax.fft(x, lax.FftType.IFFT, (3,)))(
        X3.astype(np.complex64))
    # the equation JAX 0.10.2 prints inside its jit of lax.fft
    assert str(closed) == ("{ lambda ; a:c64[3]. let "
                           "b:c64[3] = fft[fft_lengths=(3,) fft_type=1] a in (b,) }")
    assert closed.eqns[0].params["fft_type"] == lax.FftType.IFFT
    np.testing.assert_allclose(jaxpr_as_fun(closed)(X3.astype(np.complex64))[0],
                               np.fft.ifft(X3), rtol=1e-6)


def test_pure_callback_has_result_avals():
    def f(x):
        return spmdc.pure_callback(np.sin, spmdc.ShapeDtypeStruct((3,), np.float32), x)
    closed = spmdc.make_jaxpr(f)(X3)
    (eqn,) = closed.eqns
    assert eqn.params["result_avals"] == (ShapedArray((3,), np.float32),)
    assert eqn.params["sharding"] is None and eqn.params["vmap_method"] is None
    np.testing.assert_allclose(jaxpr_as_fun(closed)(X3)[0], np.sin(X3), rtol=1e-6)


def test_a_literal_a_library_made_takes_its_dtype():
    closed = spmdc.make_jaxpr(lambda x: x * 2.0)(X3.astype(np.float16))
    (mul,) = closed.eqns
    # a Python float, as a library writes it, in a float16 literal
    three = Literal(3.0, ShapedArray((), np.float16))
    jaxpr = closed.jaxpr.replace(eqns=[mul.replace(invars=[mul.invars[0], three])])
    out = eval_jaxpr(jaxpr, [], X3.astype(np.float16))[0]
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, X3.astype(np.float16) * 3)


def test_collectives_run_with_the_axis_sizes_of_the_trace():
    from jaxpr_cases import collectives
    f, args, options = collectives(spmdc)
    closed = spmdc.make_jaxpr(f, **options)(*args)
    xs = np.arange(16, dtype=np.float32).reshape(4, 4)
    got = spmdc.vmap(jaxpr_as_fun(closed), axis_name="i")(xs)
    want = spmdc.vmap(f, axis_name="i")(xs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(NameError, match="unbound axis name 'i'"):
        jaxpr_as_fun(closed)(*args)
    two = spmdc.make_jaxpr(lambda x: lax.all_gather(x, "i"), axis_env=[("i", 2)])(X3)
    with pytest.raises(TypeError, match="all_gather: spmdc's primitive takes axis_size=4"):
        spmdc.vmap(jaxpr_as_fun(two), axis_name="i")(np.ones((4, 3), np.float32))


def test_subjaxprs():
    from spmdc.transforms.jaxpr_view import subjaxprs
    closed = spmdc.make_jaxpr(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(True, X3)
    subs = list(subjaxprs(closed.jaxpr))
    assert [[e.primitive for e in j.eqns] for j in subs] == [[lax.cos_p], [lax.sin_p]]
    assert all(isinstance(j, Jaxpr) for j in subs)


def test_an_interpreter_rebinds_equations_holding_sub_jaxprs():
    # Equinox's finalise_eval_jaxpr: ``eqn.primitive.bind(*args, **params)`` on
    # every equation, cond's and while's included, whose params hold jaxprs (regression:
    # spmdc's own primitives had no get_bind_params, and bind took only Funcs)
    def f(p, x):
        y = lax.cond(p, jnp.sin, jnp.cos, x)
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, y))[1]
    closed = spmdc.make_jaxpr(f)(True, X3)
    assert {"cond", "while"} <= {e.primitive.name for e in closed.eqns}

    def run(*args):
        env = dict(zip(map(id, closed.jaxpr.invars), args, strict=True))
        for eqn in closed.eqns:
            params = eqn.primitive.get_bind_params(eqn.params)
            args = [a.val if isinstance(a, Literal) else env[id(a)] for a in eqn.invars]
            out = eqn.primitive.bind(*args, **params)
            for v, o in zip(eqn.outvars, out if eqn.primitive.multiple_results else [out],
                            strict=True):
                env[id(v)] = o
        return env[id(closed.jaxpr.outvars[0])]
    np.testing.assert_allclose(run(True, X3), np.sin(X3) * 8, rtol=1e-6)
    np.testing.assert_allclose(spmdc.jit(run)(False, X3), np.cos(X3) * 8, rtol=1e-6)


def test_new_axes_are_broadcast_in_dim_as_in_jax():
    # x[None], x[:, None] and expand_dims are JAX's broadcast_in_dim (not a reshape):
    # Equinox's test_make_jaxpr counts the primitives. JAX 0.10.2's printout:
    jaxpr = spmdc.make_jaxpr(lambda x: (x[None], x[:, None], x[None, :, None],
                                        jnp.expand_dims(x, -1)))(np.zeros(2, np.float32))
    assert str(jaxpr) == (
        "{ lambda ; a:f32[2]. let\n"
        "    b:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n"
        "    c:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a\n"
        "    d:f32[1,2,1] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n"
        "    e:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a\n"
        "  in (b, c, d, e) }")
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(spmdc.jit(lambda x: x[None, 1:, None])(x), x[None, 1:, None])
    np.testing.assert_array_equal(lax.expand_dims(x, (0, 3)), x[None, :, :, None])
    with pytest.raises(ValueError, match="repeated axis in lax.expand_dims"):
        jnp.expand_dims(x, (0, 0))
