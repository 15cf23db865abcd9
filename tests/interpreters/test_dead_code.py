"""Dead-code elimination on jaxprs (``jax.interpreters.partial_eval.dce_jaxpr``,
``dce_jaxpr_consts``, ``dce_rules`` and the call rules: spmdc/interpreters/dead_code.py),
against what JAX 0.10.2 prints for the same programs."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.core.abstract import ShapedArray
from spmdc.extend.core import (
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    Var,
    jaxpr_as_fun,
    new_jaxpr_eqn,
)
from spmdc.extend.core.primitives import call_p, closed_call_p
from spmdc.interpreters import mlir
from spmdc.interpreters import partial_eval as pe


def f(x, y, z):
    a = jnp.sin(x)
    b = y * 2
    c = jnp.cos(a) + 1
    return c, b


def test_dce_jaxpr_keeps_what_the_used_outputs_need():
    closed = spmdc.make_jaxpr(f)(1.0, 2.0, 3.0)
    j, used = pe.dce_jaxpr(closed.jaxpr, [True, False])
    assert str(j) == ("{ lambda ; a:f32[]. let\n    b:f32[] = sin a\n    c:f32[] = cos b\n"
                      "    d:f32[] = add c 1.0:f32[]\n  in (d,) }")
    assert used == [True, False, False]
    assert (j.debug_info.arg_names, j.debug_info.result_paths) == (("x",), ("result[0]",))
    out, = jaxpr_as_fun(ClosedJaxpr(j, closed.consts))(1.0)
    np.testing.assert_allclose(np.asarray(out), np.cos(np.sin(1.0)) + 1, rtol=1e-6)
    j, used = pe.dce_jaxpr(closed.jaxpr, [False, True], instantiate=[True, False, False])
    assert str(j) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul b 2.0:f32[] in (c,) }"
    assert used == [True, True, False]
    j, used = pe.dce_jaxpr(closed.jaxpr, False)
    assert (str(j), used) == ("{ lambda ; . let  in () }", [False, False, False])
    with pytest.raises(ValueError, match="used_outputs has 1 entries for 2"):
        pe.dce_jaxpr(closed.jaxpr, [True])


def test_dce_jaxpr_consts_drops_unused_constvars():
    k = np.arange(3.0, dtype=np.float32)
    closed = spmdc.make_jaxpr(lambda x: (x + k, jnp.sin(x)))(np.ones(3, np.float32))
    j, used_consts, used_inputs = pe.dce_jaxpr_consts(closed.jaxpr, [False, True])
    assert str(j) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"
    assert (used_consts, used_inputs) == ([False], [True])
    j, used_consts, used_inputs = pe.dce_jaxpr_consts(closed.jaxpr, [True, True])
    assert len(j.constvars) == 1 and (used_consts, used_inputs) == ([True], [True])


def test_effects_keep_an_equation_and_a_library_rule_is_used():
    def g(x):
        spmdc.debug.print("x={}", x)
        return x + 1, x * 3
    closed = spmdc.make_jaxpr(g)(1.0)
    j, _ = pe.dce_jaxpr(closed.jaxpr, [False, False])
    assert len(j.eqns) == 1 and j.effects == closed.jaxpr.effects != set()

    pair_p = Primitive("test_dce_pair")          # two results, each of one operand
    pair_p.multiple_results = True
    pair_p.def_abstract_eval(lambda a, b: [ShapedArray(a.shape, a.dtype),
                                           ShapedArray(b.shape, b.dtype)])
    pair_p.def_impl(lambda a, b: [a * 2, b * 3])
    mlir.register_lowering(pair_p, mlir.lower_fun(lambda a, b: [a * 2, b * 3]))
    seen = []

    def rule(used_outputs, eqn):
        seen.append(list(used_outputs))
        return list(used_outputs), eqn
    pe.dce_rules[pair_p] = rule
    try:
        closed = spmdc.make_jaxpr(lambda a, b: pair_p.bind(a, b)[1])(1.0, 2.0)
        j, used = pe.dce_jaxpr(closed.jaxpr, [True])
    finally:
        del pe.dce_rules[pair_p]
    assert seen == [[False, True]] and used == [False, True]


def _sub():
    return spmdc.make_jaxpr(lambda x, y: (jnp.sin(x), y * 2))(1.0, 2.0)


@pytest.mark.parametrize("prim", [call_p, closed_call_p], ids=["call", "closed_call"])
def test_call_rules_prune_the_sub_jaxpr(prim):
    sub = _sub()
    param = sub.jaxpr if prim is call_p else sub
    a, b = Var(ShapedArray((), np.float32)), Var(ShapedArray((), np.float32))
    o1, o2 = Var(ShapedArray((), np.float32)), Var(ShapedArray((), np.float32))
    eqn = new_jaxpr_eqn([a, b], [o1, o2], prim, {"call_jaxpr": param}, set())
    outer = Jaxpr([], [a, b], [o2], [eqn])
    j, used = pe.dce_jaxpr(outer, True)
    assert used == [False, True]
    call, = j.eqns
    assert call.invars == [b] and call.outvars == [o2]
    inner = call.params["call_jaxpr"]
    inner = inner if prim is call_p else inner.jaxpr
    assert str(inner) == "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }"
    out, = jaxpr_as_fun(ClosedJaxpr(j, []))(5.0)
    assert float(out) == 10.0
