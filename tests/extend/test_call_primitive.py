"""``jax.extend.core.CallPrimitive`` / ``call_impl`` / ``TraceTag`` (a library's own call
primitive, Note [call primitives] in spmdc/extend/core/primitives.py) and
``jax.extend.lowering``'s ``JaxIrContext`` / ``upstream_dialects``."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.extend import core, lowering
from spmdc.extend import linear_util as lu
from spmdc.interpreters import mlir

my_call_p = core.CallPrimitive("test_my_call")
seen = []


def _impl(f, *args, **params):
    seen.append(params)
    return core.call_impl(f, *args, **params)


my_call_p.def_impl(_impl)
FUN = lu.wrap_init(lambda x, y: [jnp.sin(x) * y])


def test_a_library_call_primitive_calls_its_function():
    out = my_call_p.bind(FUN, np.float32(1.0), np.float32(2.0), name="blk")
    np.testing.assert_allclose(np.asarray(out[0]), 2 * np.sin(1.0), rtol=1e-6)
    assert seen[-1] == {"name": "blk"}                  # the impl gets the params
    assert my_call_p.multiple_results and my_call_p.call_primitive
    jitted = spmdc.jit(lambda x: my_call_p.bind(FUN, x, 3.0, name="b")[0])(1.0)
    np.testing.assert_allclose(np.asarray(jitted), 3 * np.sin(1.0), rtol=1e-6)
    g = spmdc.grad(lambda x: my_call_p.bind(FUN, x, 3.0)[0])(1.0)
    np.testing.assert_allclose(np.asarray(g), 3 * np.cos(1.0), rtol=1e-6)
    # inlined into the trace, as every call in spmdc
    assert str(spmdc.make_jaxpr(lambda x: my_call_p.bind(FUN, x, 3.0)[0])(1.0)) == \
        "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 3.0:f32[] in (c,) }"


def test_a_call_primitive_without_impl_says_so():
    other = core.CallPrimitive("test_other_call")
    with pytest.raises(NotImplementedError, match="def_impl"):
        other.bind(FUN, 1.0, 2.0)
    with pytest.raises(TypeError, match="name must be a str"):
        core.CallPrimitive(3)


def test_trace_tags_are_all_equal():
    assert core.TraceTag() == core.TraceTag() and core.TraceTag() != object()
    assert hash(core.TraceTag()) == hash(core.TraceTag())
    assert len({core.TraceTag(), core.TraceTag()}) == 1


def test_spmdcs_context_is_a_jax_ir_context():
    ctx = mlir.make_ir_context()
    assert isinstance(ctx, lowering.JaxIrContext)
    assert isinstance(lowering.upstream_dialects, mlir.ir.DialectRegistry)
    assert ctx.is_registered_operation("func.func")
    assert ctx.is_registered_operation("stablehlo.add")
    with ctx, mlir.ir.Location.unknown():
        assert str(mlir.ir.RankedTensorType.get([2], mlir.ir.F32Type.get())) == \
            "tensor<2xf32>"


def test_an_equation_of_a_library_call_primitive_runs_its_jaxpr():
    from spmdc.core.abstract import ShapedArray
    sub = spmdc.make_jaxpr(lambda x: (jnp.cos(x),))(1.0)
    x, y = core.Var(ShapedArray((), np.float32)), core.Var(ShapedArray((), np.float32))
    eqn = core.new_jaxpr_eqn([x], [y], my_call_p, {"call_jaxpr": sub.jaxpr, "tag": 7}, set())
    out, = core.jaxpr_as_fun(core.ClosedJaxpr(core.Jaxpr([], [x], [y], [eqn]), []))(0.5)
    np.testing.assert_allclose(np.asarray(out), np.cos(0.5), rtol=1e-6)
    assert seen[-1] == {"tag": 7}                        # through the impl, with its params
