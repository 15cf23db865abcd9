"""jax.interpreters.partial_eval's tracing entry points as Flax calls them (``lazy_init``,
``nn.scan``'s broadcast pass): trace_to_jaxpr_nounits computes the known outputs and
returns the rest as a jaxpr; trace_to_jaxpr_dynamic traces at abstract values."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import api_util
from spmdc._src.core import ShapedArray, eval_jaxpr
from spmdc.extend import linear_util as lu
from spmdc.interpreters import partial_eval as pe

F3 = ShapedArray((3,), np.float32)
A = np.arange(3.0, dtype=np.float32)
B = np.array([1.0, -2.0, 0.5], np.float32)


def _f(a, b):
    c = jnp.sin(a) * 2.0
    return [c, c * b + 1.0, a.shape[0] * jnp.ones(2)]


def test_nounits_computes_known_outputs_and_leaves_the_rest_as_a_jaxpr():
    jaxpr, outs, consts = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(_f), [pe.PartialVal.known(A), pe.PartialVal.unknown(F3)])
    assert [pv.is_known() for pv in outs] == [True, False, True]
    np.testing.assert_allclose(outs[0].get_known(), np.sin(A) * 2, rtol=1e-6)
    np.testing.assert_array_equal(outs[2].get_known(), [3.0, 3.0])
    assert outs[1].get_aval() == F3
    assert [e.primitive.name for e in jaxpr.eqns] == ["mul", "add"]
    assert len(jaxpr.invars) == 1 and len(jaxpr.constvars) == len(consts) == 1
    (unknown,) = eval_jaxpr(jaxpr, consts, B)
    np.testing.assert_allclose(unknown, np.sin(A) * 2 * B + 1, rtol=1e-6)


def test_nounits_instantiate_makes_a_known_output_unknown():
    jaxpr, outs, consts = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(_f), [pe.PartialVal.known(A), pe.PartialVal.unknown(F3)],
        instantiate=[True, False, False])
    assert [pv.is_known() for pv in outs] == [False, False, True]
    first, second = eval_jaxpr(jaxpr, consts, B)
    np.testing.assert_allclose(first, np.sin(A) * 2, rtol=1e-6)
    np.testing.assert_allclose(second, np.sin(A) * 2 * B + 1, rtol=1e-6)


def test_nounits_under_jit_gives_known_values_of_the_enclosing_trace():
    @spmdc.jit
    def g(x):
        _, outs, _ = pe.trace_to_jaxpr_nounits(
            lu.wrap_init(_f), [pe.PartialVal.known(x), pe.PartialVal.unknown(F3)])
        return outs[0].get_known()
    np.testing.assert_allclose(g(A), np.sin(A) * 2, rtol=1e-6)


def test_lazy_init_as_flax_writes_it():
    """Flax's core/partial_eval.py ``lazy_init``: pytrees flattened by api_util, shapes
    of ShapeDtypeStruct arguments unknown, every output known."""
    def init(key, x):
        return {"w": spmdc.random.normal(key, (x.shape[-1], 2)), "n": x.shape[0]}
    args = (spmdc.random.PRNGKey(0), spmdc.ShapeDtypeStruct((4, 3), np.float32))
    leaves, in_tree = spmdc.tree_util.tree_flatten((args, {}))
    info = api_util.debug_info("lazy_init", init, (in_tree,), {})
    f_flat, out_tree = api_util.flatten_fun(lu.wrap_init(init, debug_info=info), in_tree)
    pvals = [pe.PartialVal.unknown(ShapedArray(x.shape, x.dtype))
             if isinstance(x, spmdc.ShapeDtypeStruct) else pe.PartialVal.known(x)
             for x in leaves]
    _, out_pvals, _ = pe.trace_to_jaxpr_nounits(f_flat, pvals)
    assert all(pv.is_known() for pv in out_pvals)
    out = spmdc.tree_util.tree_unflatten(out_tree(), [pv.get_known() for pv in out_pvals])
    np.testing.assert_array_equal(out["w"], spmdc.random.normal(args[0], (3, 2)))
    assert int(out["n"]) == 4


def test_dynamic_traces_at_abstract_values():
    jaxpr, avals, consts = pe.trace_to_jaxpr_dynamic(lu.wrap_init(_f), [F3, F3])
    assert avals == [F3, F3, ShapedArray((2,), np.float32)] and consts == []
    outs = eval_jaxpr(jaxpr, consts, A, B)
    np.testing.assert_allclose(outs[1], np.sin(A) * 2 * B + 1, rtol=1e-6)


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="WrappedFun"):
        pe.trace_to_jaxpr_dynamic(_f, [F3, F3])
    with pytest.raises(TypeError, match="not an abstract value"):
        pe.trace_to_jaxpr_dynamic(lu.wrap_init(_f), [(3,), F3])
    with pytest.raises(TypeError, match="must return a list"):
        pe.trace_to_jaxpr_dynamic(lu.wrap_init(lambda a: a), [F3])
