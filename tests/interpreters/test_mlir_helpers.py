"""jax.interpreters.mlir's module, value and attribute helpers (spmdc/interpreters/mlir.py)
used by a lowering rule that emits ops itself, and jax.extend.mlir's portable artifacts
and converters (spmdc/extend/mlir.py)."""
from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir.dialects import func as func_dialect
from jaxlib.mlir.dialects import stablehlo as hlo

import spmdc
from spmdc.extend import mlir as extend_mlir
from spmdc.extend.core import Primitive
from spmdc.interpreters import mlir

X = np.array([1.0, -2.0, 3.5], np.float32)


def _module(text: str):
    with mlir.make_ir_context():
        return mlir.ir.Module.parse(text)


ADD_ONE = """
func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %0 = call @helper(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @helper(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %cst = stablehlo.constant dense<1.0> : tensor<3xf32>
  %0 = stablehlo.add %arg0, %cst : tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


def test_a_rule_splices_a_module_with_merge_mlir_modules() -> None:
    add_one_p = Primitive("test_spliced_add_one")
    add_one_p.def_abstract_eval(lambda x: x)

    def lowering(ctx, x):
        block = mlir.ir.InsertionPoint.current.block
        module = block.owner
        while module.name != "builtin.module":
            module = module.parent
        name = mlir.merge_mlir_modules(module, "add_one", _module(ADD_ONE))
        call = func_dialect.CallOp([mlir.aval_to_ir_type(ctx.avals_out[0])],
                                   mlir.ir.FlatSymbolRefAttr.get(name), [x])
        return list(call.results)
    mlir.register_lowering(add_one_p, lowering)
    f = spmdc.jit(lambda x: add_one_p.bind(add_one_p.bind(x)))   # two merges: fresh names
    np.testing.assert_allclose(np.asarray(f(X)), X + 2.0)
    text = f.lower(X).as_text()
    assert "@add_one(" in text and "@add_one_0(" in text and "@helper_0(" in text


def test_extend_lowering_names_the_rule_context() -> None:
    from spmdc.extend import lowering
    assert lowering.LoweringRuleContext is mlir.LoweringRuleContext


def test_text_bytecode_and_values() -> None:
    module = _module(ADD_ONE)
    text = mlir.module_to_string(module)
    assert "stablehlo.add" in text and "loc(" not in text
    again = _module(ADD_ONE)
    with mlir.make_ir_context():
        from_bytes = mlir.ir.Module.parse(mlir.module_to_bytecode(again))
    assert mlir.module_to_string(from_bytes) == text
    with mlir.make_ir_context(), mlir.ir.Location.unknown():
        assert str(mlir.dense_int_elements([1, 2])) == "dense<[1, 2]> : tensor<2xi64>"
        assert str(mlir.ir_attribute([True, 3, "s"])) == '[true, 3, "s"]'
        assert str(mlir.token_type()) == "!stablehlo.token"
        handle = hlo.ChannelHandle.get(5, mlir.SEND_TO_HOST_TYPE)
        assert str(handle) == "#stablehlo.channel_handle<handle = 5, type = 2>"
        assert (mlir.DEVICE_TO_DEVICE_TYPE, mlir.RECV_FROM_HOST_TYPE) == (1, 3)
        assert mlir.Token is mlir.ir.Value and mlir.Mesh is spmdc.sharding.Mesh
        with pytest.raises(TypeError, match="no MLIR attribute"):
            mlir.ir_attribute(object())
        f32 = mlir.ir.F32Type.get()
        i32 = mlir.ir.IntegerType.get_signless(32)
        assert mlir.flatten_ir_types([f32, (i32, f32)]) == [f32, i32, f32]
        m = mlir.ir.Module.create()
        with mlir.ir.InsertionPoint(m.body):
            fn = func_dialect.FuncOp("f", mlir.ir.FunctionType.get([], []))
        with mlir.ir.InsertionPoint(fn.add_entry_block()):
            a, b, c = (mlir.ir_constants(np.int32(k))[0] for k in range(3))
            assert mlir.flatten_ir_values([a, (b, c)]) == [a, b, c]
            assert mlir.unflatten_ir_values_like_types([a, b, c], [i32, (i32, i32)]) == \
                [a, (b, c)]
            shape = mlir.shape_tensor([2, a])
            assert str(shape.type) == "tensor<2xi32>"
            func_dialect.ReturnOp([])
        assert isinstance(shape, mlir.Value)


def test_extend_mlir_portable_artifacts() -> None:
    exp = spmdc.export.export(spmdc.jit(lambda x: x * 2.0))(X)
    module = extend_mlir.deserialize_portable_artifact(exp.mlir_module_serialized)
    assert "stablehlo.multiply" in str(module)
    blob = extend_mlir.serialize_portable_artifact(str(module), "1.0.0")
    assert "stablehlo.multiply" in str(extend_mlir.deserialize_portable_artifact(blob))
    proto = spmdc.jit(lambda x: x * 2.0).lower(X).compiler_ir("hlo")
    bytecode = extend_mlir.hlo_to_stablehlo(proto.as_serialized_hlo_module_proto())
    refined = extend_mlir.refine_polymorphic_shapes(bytecode)
    assert "stablehlo.multiply" in str(_module(refined))
    with pytest.raises(TypeError, match="StableHLO version"):
        extend_mlir.serialize_portable_artifact(module, 1)


def test_extend_backend() -> None:
    from spmdc.extend import backend
    client = backend.get_backend()
    assert backend.backends() == {client.platform: client}
    assert backend.get_backend(client) is client
    assert backend.get_backend(backend.get_default_device().platform) is client
    assert backend.get_default_device() == spmdc.devices()[0]
    assert backend.backend_xla_version() is None
    with pytest.raises(RuntimeError, match="Unknown backend"):
        backend.get_backend("tpu")
    f = spmdc.jit(lambda x: x + 1.0)
    f(X)
    backend.clear_in_memory_compilation_cache()
    np.testing.assert_allclose(np.asarray(f(X)), X + 1.0)


def test_emit_python_callback_as_a_library_lowers_with_it() -> None:
    # Equinox's noinline lowers its primitive to a host call this way.
    seen = []
    host_p = Primitive("test_host_square")
    host_p.multiple_results = True
    host_p.def_abstract_eval(lambda x: [x])

    def on_host(x):
        seen.append(np.array(x))
        return [np.square(x)]

    def lowering(ctx, x):
        results, token, keepalive = mlir.emit_python_callback(
            ctx, on_host, None, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False,
            sharding=None)
        ctx.module_context.add_keepalive(keepalive)
        assert token is None
        return results
    mlir.register_lowering(host_p, lowering)
    out = spmdc.jit(lambda x: host_p.bind(x + 1.0)[0] * 2.0)(X)
    np.testing.assert_allclose(np.asarray(out), np.square(X + 1.0) * 2.0)
    np.testing.assert_allclose(seen[-1], X + 1.0)

    ordered_p = Primitive("test_host_ordered")
    ordered_p.multiple_results = True
    ordered_p.def_effectful_abstract_eval(lambda x: ([x], {spmdc.extend.core.Effect()}))

    def ordered_lowering(ctx, x):
        token = hlo.CreateTokenOp().result
        results, token_out, _ = mlir.emit_python_callback(
            ctx, on_host, token, [x], ctx.avals_in, ctx.avals_out, has_side_effect=True)
        assert str(token_out.type) == "!stablehlo.token"
        return results
    mlir.register_lowering(ordered_p, ordered_lowering)
    np.testing.assert_allclose(np.asarray(spmdc.jit(lambda x: ordered_p.bind(x)[0])(X)),
                               np.square(X))

    bad_p = Primitive("test_host_wrong_shape")
    bad_p.multiple_results = True
    bad_p.def_abstract_eval(lambda x: [x])
    mlir.register_lowering(bad_p, lambda ctx, x: mlir.emit_python_callback(
        ctx, lambda v: [v[:1]], None, [x], ctx.avals_in, ctx.avals_out,
        has_side_effect=False)[0])
    with pytest.raises(Exception, match="Incorrect output 0 from callback"):
        np.asarray(spmdc.jit(lambda x: bad_p.bind(x)[0])(X))


def test_extend_xla_runs_a_pass_over_the_hlo_module() -> None:
    from spmdc.extend import xla
    seen: list[int] = []

    def look(module: bytes) -> None:
        seen.append(len(module))
    cache_dir = spmdc.config.read("jax_compilation_cache_dir")
    spmdc.config.update("jax_compilation_cache_dir", None)    # every program compiles
    xla.register_hlo_module_transformation(look, name="test_look", platforms="cpu")
    try:
        spmdc.jit(lambda x: x * 3.125 - 0.5)(X)        # a program not compiled before
        assert seen and seen[-1] > 0
        assert xla.clear_hlo_module_transformation("test_look", platforms="cpu")
        n = len(seen)
        spmdc.jit(lambda x: x * 5.125 - 0.5)(X)
        assert len(seen) == n
    finally:
        xla.clear_hlo_module_transformation("test_look", platforms="cpu")
        spmdc.config.update("jax_compilation_cache_dir", cache_dir)
    assert not xla.clear_hlo_module_transformation("test_look", platforms="cpu")
    with pytest.raises(TypeError, match="PipelineStage"):
        xla.register_hlo_module_transformation(look, name="t", stage=0)
    with pytest.raises(ValueError, match="names 'tpu'"):
        xla.register_hlo_module_transformation(look, name="t", platforms=("tpu",))
