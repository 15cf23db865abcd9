"""spmdc.export (jax.export) on spmdc alone: the FlatBuffers writer and reader, exports
made and called by spmdc under jit, grad (second order through vjp_order=2) and vmap,
the platform index of an export lowered for two platforms, the pytree registrations and
the errors JAX gives for bad input. Exports exchanged with JAX: test_export_jax.py."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import export
from spmdc.export.flatbuffer import Reader, Table, Vector, encode

X = np.array([0.25, -1.0, 2.0], np.float32)


def test_flatbuffer_writes_what_it_reads() -> None:
    inner = Table().set(0, "string", "leaf").set(1, "i8", -3)
    root = (Table().set(0, "u16", 7).set(1, "string", "name").set(2, "table", inner)
            .set(3, "vector", Vector("u32", [1, 2, 70000]))
            .set(5, "vector", Vector("string", ["a", "bc"]))
            .set(6, "vector", Vector("table", [inner, Table().set(1, "i8", 5)]))
            .set(7, "vector", Vector("u8", b"\x00\xff\x10")).set(8, "bool", True))
    r = Reader(encode(root))
    assert (r.scalar(0, "u16"), r.string(1)) == (7, "name")
    assert (r.table(2).string(0), r.table(2).scalar(1, "i8")) == ("leaf", -3)
    assert r.scalars(3, "u32") == [1, 2, 70000]
    assert r.strings(4) == [] and r.scalar(4, "u32", 9) == 9     # absent: the default
    assert r.strings(5) == ["a", "bc"]
    assert [t.scalar(1, "i8") for t in r.tables(6)] == [-3, 5]
    assert r.raw_bytes(7) == b"\x00\xff\x10" and r.scalar(8, "bool") is True
    assert r.scalar(30, "u16", 11) == 11                       # past the vtable


def _exported(f, *args, **kwargs):
    return export.export(spmdc.jit(f))(*args, **kwargs)


def test_export_serialize_deserialize_call_under_transformations() -> None:
    exp = _exported(lambda x: jnp.sin(x) * x, X)
    assert exp.in_avals == (spmdc.ShapedArray((3,), np.float32),)
    assert exp.platforms == (export.default_export_platform(),)
    loaded = export.deserialize(exp.serialize(vjp_order=2))
    assert loaded.vjp() is loaded.vjp() and exp.vjp() is exp.vjp()     # made once each
    want = np.sin(X) * X
    np.testing.assert_allclose(np.asarray(loaded.call(X)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(spmdc.jit(loaded.call)(X)), want, rtol=1e-6)
    d1 = spmdc.grad(lambda x: loaded.call(x).sum())
    np.testing.assert_allclose(np.asarray(d1(X)), np.cos(X) * X + np.sin(X), rtol=1e-5)
    d2 = spmdc.grad(lambda x: d1(x).sum())                    # through the VJP's VJP
    np.testing.assert_allclose(np.asarray(d2(X)), 2 * np.cos(X) - np.sin(X) * X, rtol=1e-5)
    xs = np.stack([X, X + 1.0])
    np.testing.assert_allclose(np.asarray(spmdc.vmap(loaded.call)(xs)),
                               np.sin(xs) * xs, rtol=1e-6)
    once = export.deserialize(exp.serialize(vjp_order=1))
    with pytest.raises(ValueError, match="No VJP is available"):
        spmdc.grad(lambda x: spmdc.grad(lambda y: once.call(y).sum())(x).sum())(X)


def test_chlo_ops_are_serialized_as_composites() -> None:
    exp = _exported(lambda x: spmdc.lax.erf(x) * 2.0, X)     # was "failed to serialize"
    assert 'stablehlo.composite "chlo.erf"' in exp.mlir_module()
    loaded = export.deserialize(exp.serialize())
    np.testing.assert_allclose(np.asarray(loaded.call(X)),
                               2 * np.array([0.27632639, -0.84270079, 0.99532227]), rtol=1e-5)


def test_an_export_calls_an_export() -> None:
    inner = _exported(lambda x: x * 3.0, X)
    outer = _exported(lambda x: inner.call(x) + inner.call(x + 1.0), X)
    np.testing.assert_allclose(np.asarray(export.deserialize(outer.serialize()).call(X)),
                               6 * X + 3.0, rtol=1e-6)


def test_called_per_device_and_over_a_mesh() -> None:
    from spmdc.sharding import NamedSharding
    from spmdc.sharding import PartitionSpec as P
    exp = export.deserialize(_exported(lambda x: jnp.sin(x) * 2.0, X).serialize())
    n = min(4, spmdc.device_count())
    xs = np.stack([X + k for k in range(n)])
    np.testing.assert_allclose(np.asarray(spmdc.pmap(exp.call)(xs)), np.sin(xs) * 2,
                               rtol=1e-6)
    mesh = spmdc.make_mesh((n,), ("i",))
    per_device = spmdc.shard_map(lambda x: exp.call(x[0])[None], mesh=mesh,
                                 in_specs=P("i"), out_specs=P("i"))
    np.testing.assert_allclose(np.asarray(spmdc.jit(per_device)(xs)), np.sin(xs) * 2,
                               rtol=1e-6)
    rows = _exported(lambda x: jnp.sin(x) * 2.0, xs)
    sharded = spmdc.device_put(xs, NamedSharding(mesh, P("i")))
    np.testing.assert_allclose(np.asarray(spmdc.jit(rows.call)(sharded)), np.sin(xs) * 2,
                               rtol=1e-6)


def test_two_platforms_switch_on_the_platform_index() -> None:
    exp = export.export(spmdc.jit(lambda x: x + 1.0), platforms=("cpu", "gpu"))(X)
    assert exp.platforms == ("cpu", "cuda") and exp.uses_global_constants
    text = exp.mlir_module()
    assert 'jax.global_constant = "_platform_index"' in text and "stablehlo.case" in text
    np.testing.assert_allclose(np.asarray(exp.call(X)), X + 1.0)
    only_cuda = export.export(spmdc.jit(lambda x: x + 1.0), platforms=("cuda",))(X)
    if export.default_export_platform() != "cuda":
        with pytest.raises(ValueError, match="was exported for platforms"):
            only_cuda.call(X)
        lenient = export.export(spmdc.jit(lambda x: x + 1.0), platforms=("cuda",),
                                disabled_checks=[export.DisabledSafetyCheck.platform()])(X)
        np.testing.assert_allclose(np.asarray(lenient.call(X)), X + 1.0)


def test_pytrees_and_their_registrations() -> None:
    Point = collections.namedtuple("Point", ["x", "y"])
    exp = _exported(lambda p, d: {"sum": p.x + p.y, "d": d["k"] * 2.0},
                    Point(X, X), {"k": X})
    with pytest.raises(ValueError, match="unregistered type"):
        exp.serialize()
    export.register_namedtuple_serialization(Point, serialized_name="test_export.Point")
    with pytest.raises(ValueError, match="Duplicate serialization registration"):
        export.register_namedtuple_serialization(Point, serialized_name="other")
    with pytest.raises(ValueError, match="types other than"):
        export.register_namedtuple_serialization(dict, serialized_name="dict")
    loaded = export.deserialize(exp.serialize())
    assert loaded.in_tree == exp.in_tree
    out = loaded.call(Point(X, X + 1.0), {"k": X})
    np.testing.assert_allclose(np.asarray(out["sum"]), 2 * X + 1.0)

    class Box:
        def __init__(self, v, tag):
            self.v, self.tag = v, tag
    spmdc.tree_util.register_pytree_node(Box, lambda b: ((b.v,), b.tag),
                                         lambda tag, ch: Box(ch[0], tag))
    export.register_pytree_node_serialization(
        Box, serialized_name="test_export.Box",
        serialize_auxdata=lambda tag: tag.encode(), deserialize_auxdata=bytes.decode)
    box = export.deserialize(_exported(lambda b: Box(b.v * 2.0, b.tag), Box(X, "t"))
                             .serialize()).call(Box(X, "t"))
    assert box.tag == "t"
    np.testing.assert_allclose(np.asarray(box.v), 2 * X)


def test_integer_values_have_float0_cotangents() -> None:
    exp = _exported(lambda i, x: (x * i, i + 1), np.int32(2), X)
    vjp = exp.vjp()
    assert [a.dtype for a in vjp.in_avals] == [np.int32, np.float32, np.float32, spmdc.float0]
    assert [a.dtype for a in vjp.out_avals] == [spmdc.float0, np.float32]
    assert "tensor<i1>" in vjp.mlir_module()            # float0 values as i1, as JAX's
    loaded = export.deserialize(exp.serialize(vjp_order=1))
    np.testing.assert_allclose(
        np.asarray(spmdc.grad(lambda x: loaded.call(np.int32(2), x)[0].sum())(X)),
        np.full(3, 2.0))


def test_the_example_of_jax_docs() -> None:
    exported = export.export(jnp.sin)(np.arange(4, dtype=np.float32))
    assert exported.in_avals == (spmdc.ShapedArray((4,), np.float32),)
    rehydrated = export.deserialize(exported.serialize())
    assert rehydrated.fun_name == "sin"
    x = np.array([.1, .2, .3, .4], dtype=np.float32)
    np.testing.assert_allclose(np.asarray(rehydrated.call(x)),
                               [0.09983342, 0.19866933, 0.29552022, 0.38941833], rtol=1e-6)
    out = spmdc.eval_shape(rehydrated.call, spmdc.ShapeDtypeStruct((4,), np.float32))
    assert (out.shape, out.dtype) == ((4,), np.float32)


def test_export_refusals() -> None:
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(lambda x: x)
    with pytest.raises(ValueError, match="not 'tpu'"):
        export.export(spmdc.jit(lambda x: x), platforms=("tpu",))
    with pytest.raises(TypeError, match="sequence of platform names"):
        export.export(spmdc.jit(lambda x: x), platforms="cpu")

    def printing(x):
        spmdc.debug.print("x={x}", x=x)
        return x * 2.0
    with pytest.raises(ValueError, match="no compatibility guarantees"):
        _exported(printing, X)
    with pytest.raises(ValueError, match="vjps of high-enough order"):
        export.deserialize(_exported(jnp.sin, X).serialize()).serialize(vjp_order=1)
    with pytest.raises(ValueError, match="not a serialized Exported"):
        export.deserialize(b"\x08\x00\x00\x00garbage!")
    with pytest.raises(TypeError, match="bytes of a serialized Exported"):
        export.deserialize("text")
    with pytest.raises(ValueError, match="export.Exported"):
        spmdc.export.calling.call("not an export")


def test_small_names() -> None:
    assert (export.minimum_supported_calling_convention_version,
            export.maximum_supported_calling_convention_version) == (9, 10)
    assert not export.is_symbolic_dim(3)
    check = export.DisabledSafetyCheck.custom_call("my_target")
    assert check.is_custom_call() == "my_target" and str(check) == "custom_call:my_target"
    assert export.DisabledSafetyCheck.platform().is_custom_call() is None
    exp = _exported(lambda x: x, X)
    mesh = spmdc.make_mesh((1,), ("a",))
    assert exp.in_shardings_jax(mesh) == (None,) and exp.out_shardings_jax(mesh) == (None,)
    assert str(exp) == "Exported(fun_name=<lambda>, ...)"
    assert "{exported=@<lambda>#" in str(spmdc.make_ir(exp.call)(X))
    tree = spmdc.tree_util.tree_structure(({"b": 1, "a": 2}, None))
    assert tree.node_data() == (tuple, None)
    assert [c.node_data() for c in tree.children()] == [(dict, ("a", "b")), (type(None), None)]
    assert spmdc.tree_util.tree_structure(1).node_data() is None


def test_float8_and_int4_arguments_serialize_with_jax_dtype_codes() -> None:
    # JAX's DType enum: f8_e4m3fn 18, i4 15 (serialization.fbs); the export round-trips.
    q = spmdc.ShapeDtypeStruct((3,), jnp.float8_e4m3fn)
    i = spmdc.ShapeDtypeStruct((3,), jnp.int4)
    exp = _exported(lambda q, i: q.astype(np.float32) * i.astype(np.float32), q, i)
    loaded = export.deserialize(exp.serialize())
    assert [a.dtype for a in loaded.in_avals] == [jnp.float8_e4m3fn, jnp.int4]
    x = jnp.asarray(X).astype(jnp.float8_e4m3fn)
    n = jnp.asarray(np.array([1, -2, 7], np.int32)).astype(jnp.int4)
    np.testing.assert_array_equal(np.asarray(loaded.call(x, n)), X * [1, -2, 7])
