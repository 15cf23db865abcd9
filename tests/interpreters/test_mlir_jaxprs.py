"""Lowering rules that lower jaxprs (``mlir.jaxpr_subcomp``, ``core_call_lowering``), make
constants of a library's types (``register_constant_handler``) and types of its abstract
values (``ir_type_handlers``), and ``TokenSet`` / ``ir_tree_registry``
(spmdc/interpreters/mlir.py, mlir_jaxprs.py), checked against NumPy."""
import functools

import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

import spmdc
import spmdc.numpy as jnp
from spmdc.core.abstract import ShapedArray
from spmdc.extend import source_info_util as siu
from spmdc.extend.core import Primitive, jaxpr_as_fun
from spmdc.interpreters import mlir

X = np.arange(3, dtype=np.float32)
SUB = spmdc.make_jaxpr(lambda x, y: (jnp.sin(x) * y,))(X, np.float32(2))

calls_p = Primitive("test_calls_jaxpr")
calls_p.multiple_results = True
calls_p.def_abstract_eval(lambda x, y, *, call_jaxpr: [ShapedArray(x.shape, x.dtype)])
calls_p.def_impl(lambda x, y, *, call_jaxpr: jaxpr_as_fun(call_jaxpr)(x, y))
mlir.register_lowering(calls_p, functools.partial(mlir.core_call_lowering, name="my_call"))


def test_core_call_lowering_lowers_the_called_jaxpr_under_its_name():
    f = spmdc.jit(lambda x: calls_p.bind(x, np.float32(3), call_jaxpr=SUB)[0])
    np.testing.assert_allclose(np.asarray(f(X)), np.sin(X) * 3, rtol=1e-6)
    text = f.lower(X).as_text(debug_info=True)
    assert 'loc("my_call/sin"' in text and 'loc("my_call/mul"' in text
    grad = spmdc.grad(lambda x: jnp.sum(calls_p.bind(x, np.float32(3),
                                                     call_jaxpr=SUB)[0]))
    with pytest.raises(NotImplementedError):          # no JVP rule given: as in JAX
        grad(X)


def _here():
    return siu.current().traceback


HERE = _here()
body = spmdc.make_jaxpr(lambda x, k: x * k + 1)(X, X)
subcomp_p = Primitive("test_subcomp")
subcomp_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))


def _subcomp_rule(ctx, x):
    k = mlir.ir_constant(np.full(3, 2.0, np.float32))
    outs, tokens = mlir.jaxpr_subcomp(ctx.module_context, body.jaxpr,
                                      siu.new_name_stack("blk"), ctx.tokens_in, [], x, k,
                                      outer_traceback=HERE)
    assert tokens is ctx.tokens_in and len(tokens) == 0
    return outs


mlir.register_lowering(subcomp_p, _subcomp_rule)


def test_jaxpr_subcomp_lowers_in_place():
    f = spmdc.jit(subcomp_p.bind)
    np.testing.assert_allclose(np.asarray(f(X)), X * 2 + 1)
    text = f.lower(X).as_text(debug_info=True)
    line = _here.__code__.co_firstlineno + 1
    assert '"blk/mul"' in text and f'{__file__}":{line}' in text


def test_jaxpr_subcomp_refuses_what_spmdc_has_not():
    bad = Primitive("test_subcomp_bad")
    bad.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(bad, lambda ctx, x: mlir.jaxpr_subcomp(
        ctx.module_context, body.jaxpr, None, ctx.tokens_in, [], x, dim_var_values=[x])[0])
    with pytest.raises(ValueError, match="dim_var_values must be empty"):
        spmdc.jit(bad.bind)(X)
    with pytest.raises(TypeError, match="ctx.module_context"):
        mlir.jaxpr_subcomp(None, body.jaxpr, None, mlir.TokenSet(), [])


class Half:
    """A library's constant type: lowered as half its value."""

    def __init__(self, v):
        self.v = v


mlir.register_constant_handler(Half, lambda val, aval: mlir.ir_constant(np.float32(val.v / 2)))
half_p = Primitive("test_half_constant")
half_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))


def _half_rule(ctx, x):
    t = mlir.aval_to_ir_type(ctx.module_context, ctx.avals_out[0])
    three_halves = hlo.broadcast_in_dim(t, mlir.ir_constant(Half(3.0)),
                                        mlir.dense_int_array([]))
    return [hlo.add(x, three_halves)]


mlir.register_lowering(half_p, _half_rule)


def test_registered_constant_handler_and_type_handlers():
    np.testing.assert_array_equal(np.asarray(spmdc.jit(half_p.bind)(X)), X + 1.5)
    with pytest.raises(TypeError, match="No constant handler for type"):
        mlir.ir_constant(object())
    assert mlir.ir_type_handlers[ShapedArray] is not None
    with mlir.make_ir_context(), mlir.ir.Location.unknown():
        aval = ShapedArray((2, 3), np.int32)
        assert str(mlir.aval_to_ir_type(None, aval)) == "tensor<2x3xi32>"
        assert [str(t) for t in mlir.aval_to_ir_types(None, aval)] == ["tensor<2x3xi32>"]
        with pytest.raises(TypeError, match="No ir_type_handler"):
            mlir.aval_to_ir_type(None, object())


def test_token_sets_and_the_ir_tree_registry():
    with mlir.make_ir_context(), mlir.ir.Location.unknown():
        module = mlir.ir.Module.create()
        with mlir.ir.InsertionPoint(module.body):
            tokens = mlir.TokenSet.create(["a", "b"])
        assert len(tokens) == 2 and tokens.effects() == {"a", "b"}
        assert str(tokens.get("a").type) == "!stablehlo.token"
        assert [e for e, _ in tokens.subset(["b"]).items()] == ["b"]
        assert tokens.update_tokens(mlir.TokenSet()) is tokens
        swapped = tokens.update_tokens(mlir.TokenSet({"a": tokens.get("b")}))
        assert swapped.get("a") == tokens.get("b") and swapped.get("b") == tokens.get("b")
    leaves, tree = mlir.ir_tree_registry.flatten([1, (2, 3)])
    assert leaves == [1, 2, 3] and str(tree) == "PyTreeDef([*, (*, *)])"


def test_lower_with_sharding_in_types_keeps_an_unsharded_result():
    from spmdc.extend import mlir as extend_mlir
    double_p = Primitive("test_double_in_types")
    double_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(double_p, lambda ctx, x: [extend_mlir.lower_with_sharding_in_types(
        ctx, hlo.add(x, x), ctx.avals_out[0])])
    np.testing.assert_array_equal(np.asarray(spmdc.jit(double_p.bind)(X)), 2 * X)
    with pytest.raises(TypeError, match="expected an abstract value with a sharding"):
        extend_mlir.lower_with_sharding_in_types(None, None, object())


def test_ir_constant_of_arrays_and_scalars():
    with mlir.make_ir_context(), mlir.ir.Location.unknown():
        module = mlir.ir.Module.create()
        with mlir.ir.InsertionPoint(module.body):
            assert str(mlir.ir_constant(jnp.ones(2)).type) == "tensor<2xf32>"
            assert str(mlir.ir_constant(3).type) == "tensor<i32>"
            assert str(mlir.ir_constant(True).type) == "tensor<i1>"
            assert str(mlir.ir_constant(2.0, aval=ShapedArray((), np.float16)).type) == \
                "tensor<f16>"
            assert len(mlir.ir_constants(np.zeros((2, 2), np.int8))) == 1
