"""spmdc.experimental.jet against JAX 0.10.2's results, recorded by `tools/record.py jet` from
tests/jet_cases.py in tests/data/jet_reference.json (one program per Taylor rule, the
options, bad input), and against repeated jvp: the k-th output term is the k-th derivative
of t -> f(x + h1 t + h2 t^2/2 + ...). The programs run on the NumPy reference interpreter
(one trace each, no compile); the compiled paths (jit, eager, vmap, grad, a jet inside a
jet) are checked on a few, and every program compiled with ``-m slow``."""
from __future__ import annotations

import functools
import math

import jet_cases
import numpy as np
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax, tree_util
from spmdc.experimental.jet import jet, taylor_rules

RECORDED = oracle.recorded_cases("jet_reference.json")
PROGRAMS = jet_cases.programs(spmdc)
# JAX's jet fails on a custom_jvp function (softplus: an escaped tracer); spmdc's runs the
# function the rule is for, as JAX's jet means to.
JAX_FAILS = {"softplus": "UnexpectedTracerError"}
# A linear rule gives a float-to-int conversion nonzero (truncated) terms, where a jvp's
# tangent is zero; ties of max/min share the terms, where jvp picks one side.
NOT_A_DERIVATIVE = {"convert", "max", "min", "reduce_max", "reduce_min", "cummax"}


def _interpreted_jet(f, primals, series, **options):
    leaves, tree = tree_util.tree_flatten((primals, series))
    out_tree = []

    def run(*flat):
        out = jet(f, *tree_util.tree_unflatten(tree, list(flat)), **options)
        flat_out, structure = tree_util.tree_flatten(out)
        out_tree.append(structure)
        return flat_out
    flat_out = oracle.interpreted(run, *leaves)
    return tree_util.tree_unflatten(out_tree[0], list(flat_out))


@functools.cache
def _program_jet(name):
    """The jet of PROGRAMS[name], interpreted once for the tests that read it."""
    return _interpreted_jet(*PROGRAMS[name])


def test_every_case_is_recorded():
    assert sorted(jet_cases.cases(spmdc)) == sorted(RECORDED)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_rule_as_jax(name):
    got, want = _program_jet(name), RECORDED[f"rule.{name}"]
    if name in JAX_FAILS:
        assert want.startswith(JAX_FAILS[name]), want
        return
    primal, terms = got
    want_primal, want_terms = want
    np.testing.assert_allclose(np.asarray(primal), want_primal, rtol=2e-5, atol=2e-6)
    assert len(terms) == jet_cases.ORDER
    np.testing.assert_allclose(np.stack([np.asarray(t) for t in terms]), want_terms,
                               rtol=2e-4, atol=2e-5)


def _path(x, terms):
    """t -> x + sum_k terms[k] t^(k+1) / (k+1)!"""
    return lambda t: x + sum(term * t ** (k + 1) / math.factorial(k + 1)
                             for k, term in enumerate(terms))


def _derivatives(g, order):
    """[g(0), g'(0), ..., g^(order)(0)] by repeated jvp in t."""
    out, current = [], g
    for _ in range(order + 1):
        out.append(current(np.float32(0.)))
        current = (lambda h: lambda t: spmdc.jvp(h, (t,), (np.float32(1.),))[1])(current)
    return out


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - NOT_A_DERIVATIVE))
def test_rule_against_repeated_jvp(name):
    f, primals, series = PROGRAMS[name]
    jet_primal, jet_terms = _program_jet(name)
    leaves, tree = tree_util.tree_flatten((primals, series))

    def derivatives(*flat):
        xs, ss = tree_util.tree_unflatten(tree, list(flat))
        paths = [_path(x, s) for x, s in zip(xs, ss, strict=True)]
        return _derivatives(lambda t: f(*[p(t) for p in paths]), jet_cases.ORDER)
    want = oracle.interpreted(derivatives, *leaves)
    np.testing.assert_allclose(np.asarray(jet_primal), want[0], rtol=1e-5, atol=1e-6)
    for k, term in enumerate(jet_terms):
        np.testing.assert_allclose(np.asarray(term), want[k + 1], rtol=1e-3, atol=1e-3,
                                   err_msg=f"{name}: term {k}")


def test_options_as_jax():
    s, ts = jet_cases.SIGNED, jet_cases.TERMS["signed"]
    unscaled = _interpreted_jet(jnp.exp, (s,), (ts,), factorial_scaled=False)
    want = RECORDED["option.unscaled"]
    np.testing.assert_allclose(np.asarray(unscaled[0]), want[0], rtol=2e-5)
    np.testing.assert_allclose(np.stack([np.asarray(t) for t in unscaled[1]]), want[1],
                               rtol=2e-5, atol=1e-6)
    out = _interpreted_jet(lambda x, y: {"a": jnp.sin(x), "b": (x * y, jnp.ones(2))},
                           (s, jet_cases.OTHER), (ts, jet_cases.TERMS["other"]))
    assert tree_util.tree_structure(out[0]) == tree_util.tree_structure(
        {"a": 0, "b": (0, 0)})
    assert isinstance(out[1]["b"][1], list) and len(out[1]["b"][1]) == jet_cases.ORDER
    want = RECORDED["option.pytree_out"]
    np.testing.assert_allclose(np.asarray(out[1]["a"]), want[1]["a"], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(out[1]["b"][0]), want[1]["b"][0], rtol=2e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(np.asarray(out[1]["b"][1]), 0.)    # a constant's terms
    order5 = _interpreted_jet(lambda x: jnp.tanh(jnp.sin(x)), (s,), (jet_cases.TERMS5,))
    np.testing.assert_allclose(np.stack([np.asarray(t) for t in order5[1]]),
                               RECORDED["option.order5"][1], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["rule.sin", "option.vmap", "option.grad",
                                  "option.nested"])
def test_compiled_vmap_grad_and_nested_as_jax(name):
    got, want = jet_cases.cases(spmdc)[name](), RECORDED[name]
    if name == "option.grad":
        np.testing.assert_allclose(got, want, rtol=1e-5)
        return
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(np.stack([np.asarray(t) for t in got[1]]), want[1],
                               rtol=2e-5, atol=1e-6)


def _weak(x) -> bool:
    return "weak_type=True" in repr(x)


def test_eager_values_and_weak_types_as_jax():
    # See Note [weak types of jet's values]: JAX's results for a Python scalar are weak
    primal, terms = jet_cases.cases(spmdc)["option.eager"]()
    want = RECORDED["option.eager"]
    np.testing.assert_allclose(np.asarray(primal), want[0], rtol=1e-6)
    np.testing.assert_allclose(np.stack([np.asarray(t) for t in terms]), want[1], rtol=1e-6)
    assert _weak(primal) and all(_weak(t) for t in terms)


def test_weak_types_under_jit_as_jax():
    def jets(weak, strong):
        return (jet(jnp.exp, (weak,), ((1., 0.),)), jet(jnp.sin, (strong,), ((1.,),)),
                jet(lambda x: x > 0, (weak,), ((1.,),))[0])
    (exp, exp_terms), (sin, sin_terms), positive = spmdc.jit(jets)(0.5, np.float32(0.5))
    assert _weak(exp) and all(_weak(t) for t in exp_terms) and _weak(positive)
    assert not _weak(sin) and not _weak(sin_terms[0])
    np.testing.assert_allclose([exp, *exp_terms], np.exp(0.5), rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - set(JAX_FAILS)))
def test_rule_compiled_as_jax(name):
    primal, terms = jet_cases.cases(spmdc)[f"rule.{name}"]()
    want_primal, want_terms = RECORDED[f"rule.{name}"]
    np.testing.assert_allclose(np.asarray(primal), want_primal, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.stack([np.asarray(t) for t in terms]), want_terms,
                               rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name", sorted(n for n in RECORDED if n.startswith("error.")))
def test_bad_input_raises_jaxs_exception(name):
    want = RECORDED[name]
    kind, message = want.split(": ", 1)
    with pytest.raises({"KeyError": KeyError, "ValueError": ValueError,
                        "TypeError": TypeError}[kind]) as info:
        jet_cases.cases(spmdc)[name]()
    assert str(info.value) == message


def test_missing_rule_names_the_primitive():
    with pytest.raises(KeyError) as info:
        jet(jnp.tan, (0.3,), ((1.0,),))
    assert str(info.value) == "tan"
    assert any("no Taylor rule for the primitive 'tan'" in note
               for note in info.value.__notes__)


def test_primals_and_series_of_different_lengths():
    # JAX pairs them with zip and calls fun with fewer arguments; spmdc says so
    with pytest.raises(ValueError, match="2 primals and 1 series"):
        jet(lax.mul, (0.5, 0.2), ((1.0,),))


def test_rem_series_follows_truncation():
    # d rem(x, y)/dy = -trunc(x / y): -(-1) for x = -3, y = 2 (JAX's composite floors: 2)
    out = _interpreted_jet(lax.rem, (np.float32(-3.), np.float32(2.)),
                           ((np.float32(0.),), (np.float32(1.),)))
    np.testing.assert_allclose(np.asarray(out[0]), -1.)
    np.testing.assert_allclose(np.asarray(out[1][0]), 1.)


def test_rule_table_keys_are_primitives_of_the_jaxpr_view():
    names = {prim.name for prim in taylor_rules}
    assert {"exp", "select_n", "convert_element_type", "scatter", "dot_general"} <= names
    assert len(names) == len(taylor_rules)


def test_custom_rules_are_ignored_as_jax_means_to():
    # JAX's jet calls the function of a custom_jvp/custom_vjp, not its rule
    @spmdc.custom_jvp
    def f(x):
        return jnp.sin(x)
    f.defjvp(lambda primals, tangents: (f(primals[0]), 100. * tangents[0]))

    @spmdc.custom_vjp
    def g(x):
        return jnp.exp(x)
    g.defvjp(lambda x: (g(x), x), lambda x, ct: (100. * ct,))
    x = np.float32(0.3)
    out = _interpreted_jet(lambda x: f(x) + g(x), (x,), ((np.float32(1.), np.float32(0.)),))
    np.testing.assert_allclose(np.asarray(out[1][0]), np.cos(x) + np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out[1][1]), -np.sin(x) + np.exp(x), rtol=1e-5)
