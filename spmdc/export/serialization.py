"""JAX's byte format of an Exported (``Exported.serialize``, ``deserialize``): a
FlatBuffer (spmdc/export/flatbuffer.py) of JAX 0.10.2's schema
``jax_export.serialization.Exported`` (serialization format 11; it writes 3 in the
version field, as JAX does for old readers), holding the StableHLO portable artifact, the
pytrees, the abstract values, the shardings, the platforms, the effects, the disabled
checks and, up to ``vjp_order``, the VJP exports. Fields are numbered by their slot in
JAX's schema (Note [FlatBuffers layout] in spmdc/export/flatbuffer.py).

Pytrees are written node by node: leaf, None, tuple, list, dict (string keys), or a
custom node registered with ``register_pytree_node_serialization`` (its name and its aux
data as bytes); namedtuples go through ``register_namedtuple_serialization``.
"""
from __future__ import annotations

import collections
import json
import struct
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from ..core.abstract import ShapedArray
from ..core.tree import _node_types, tree_structure
from ..transforms.forward import float0
from .exported import DisabledSafetyCheck, Exported, ExportSharding
from .flatbuffer import Reader, Table, Vector, encode

__all__ = ["serialize", "deserialize", "register_pytree_node_serialization",
           "register_namedtuple_serialization", "node_serializers",
           "node_deserializers"]

# JAX's DType enum.
_DTYPES = {np.dtype(np.bool_): 0, np.dtype(np.int8): 1, np.dtype(np.int16): 2,
           np.dtype(np.int32): 3, np.dtype(np.int64): 4, np.dtype(np.uint8): 5,
           np.dtype(np.uint16): 6, np.dtype(np.uint32): 7, np.dtype(np.uint64): 8,
           np.dtype(np.float16): 9, np.dtype(np.float32): 10, np.dtype(np.float64): 11,
           np.dtype(np.complex64): 12, np.dtype(np.complex128): 13,
           np.dtype(ml_dtypes.bfloat16): 14, np.dtype(float0): 22,
           np.dtype(ml_dtypes.int4): 15, np.dtype(ml_dtypes.uint4): 16,
           np.dtype(ml_dtypes.float8_e4m3b11fnuz): 17, np.dtype(ml_dtypes.float8_e4m3fn): 18,
           np.dtype(ml_dtypes.float8_e4m3fnuz): 19, np.dtype(ml_dtypes.float8_e5m2): 20,
           np.dtype(ml_dtypes.float8_e5m2fnuz): 21, np.dtype(ml_dtypes.float8_e4m3): 23,
           np.dtype(ml_dtypes.float8_e3m4): 24, np.dtype(ml_dtypes.float8_e8m0fnu): 25,
           np.dtype(ml_dtypes.float4_e2m1fn): 26}
_DTYPE_OF = {k: d for d, k in _DTYPES.items()}
_LEAF, _NONE, _TUPLE, _LIST, _DICT, _CUSTOM = range(6)     # JAX's PyTreeDefKind
_PLATFORM_CHECK, _CUSTOM_CALL_CHECK = 0, 1                  # DisabledSafetyCheckKind
_MEMORY_DEVICE = 1

node_serializers: dict[type, tuple[str, Callable[[Any], bytes]]] = {}
node_deserializers: dict[str, tuple[type, Callable[[bytes], Any],
                                          Callable[[Any, Sequence[Any]], Any]]] = {}


def register_pytree_node_serialization(
        nodetype: type, *, serialized_name: str, serialize_auxdata: Callable[[Any], bytes],
        deserialize_auxdata: Callable[[bytes], Any],
        from_children: Callable[[Any, Sequence[Any]], Any] | None = None) -> type:
    """Let exports whose pytrees hold ``nodetype`` nodes be serialized: the node is
    written as ``serialized_name`` with ``serialize_auxdata(aux)`` and read back with
    ``deserialize_auxdata`` and ``from_children(aux, children)`` (default: the unflatten
    function ``tree_util.register_pytree_node`` registered). Returns ``nodetype``."""
    if nodetype in node_serializers:
        raise ValueError(f"Duplicate serialization registration for type `{nodetype}`. "
                         "Previous registration was with serialized_name "
                         f"`{node_serializers[nodetype][0]}`.")
    if serialized_name in node_deserializers:
        raise ValueError("Duplicate serialization registration for serialized_name "
                         f"`{serialized_name}`. Previous registration was for type "
                         f"`{node_deserializers[serialized_name][0]}`.")
    if from_children is None:
        node = _node_types.get(nodetype)
        if node is None:
            raise ValueError("If `from_children` is not present, you must call first "
                             f"`jax.tree_util.register_pytree_node` for `{nodetype}`")
        from_children = node.unflatten
    node_serializers[nodetype] = (serialized_name, serialize_auxdata)
    node_deserializers[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Let exports whose pytrees hold the namedtuple ``nodetype`` be serialized (its field
    names are written; the type must have the same fields when read back)."""
    if not (issubclass(nodetype, tuple) and isinstance(getattr(nodetype, "_fields", None),
                                                       tuple)):
        raise ValueError("Use `jax.export.register_pytree_node_serialization` for types "
                         "other than `collections.namedtuple`.")

    def from_children(fields: Any, children: Sequence[Any]) -> Any:
        return nodetype(**dict(zip(fields, children, strict=True)))
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name,
        serialize_auxdata=lambda aux: json.dumps(nodetype._fields).encode("utf-8"),
        deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
        from_children=from_children)


def _ordered_dict_keys(keys: Any) -> bytes:
    if not all(isinstance(k, str) for k in keys):
        raise NotImplementedError("Serialization of collections.OrderedDict is supported "
                                  f"only when the keys are strings. Found keys: {keys}.")
    return json.dumps(list(keys)).encode("utf-8")


register_pytree_node_serialization(
    collections.OrderedDict, serialized_name="collections.OrderedDict",
    serialize_auxdata=_ordered_dict_keys,
    deserialize_auxdata=lambda b: tuple(json.loads(b.decode("utf-8"))))


# --- writing ---------------------------------------------------------------------------------

def serialize(exp: Exported, vjp_order: int = 0) -> bytearray:
    """JAX's bytes of ``exp`` with ``vjp_order`` orders of VJPs."""
    return bytearray(encode(_exported_table(exp, vjp_order)))


def _exported_table(exp: Exported, vjp_order: int) -> Table:
    avals = list(dict.fromkeys((*exp.in_avals, *exp.out_avals)))
    index = {a: i for i, a in enumerate(avals)}
    shardings = list(dict.fromkeys(s for s in (*exp._in_named_shardings,
                                               *exp._out_named_shardings) if s is not None))
    meshes = list(dict.fromkeys(_mesh_key(s) for s in shardings))
    s_index = {s: i + 1 for i, s in enumerate(shardings)}
    vjp = None
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError("serialization of an Exported that does not have vjps of "
                             "high-enough order")
        vjp = _exported_table(exp.vjp(), vjp_order - 1)

    def sharding_table(s: ExportSharding | None) -> Table:
        return Table() if s is None else Table().set(2, "table", _named_sharding(s, meshes))
    t = Table()
    t.set(0, "u16", 3)
    t.set(1, "string", exp.fun_name)
    t.set(2, "table", _tree_table(exp.in_tree))
    t.set(3, "vector", Vector("table", [_aval_table(a) for a in exp.in_avals]))
    t.set(4, "table", _tree_table(exp.out_tree))
    t.set(5, "vector", Vector("table", [_aval_table(a) for a in exp.out_avals]))
    t.set(7, "vector", Vector("table", [sharding_table(s) for s in exp._in_named_shardings]))
    t.set(8, "vector", Vector("table", [sharding_table(s) for s in exp._out_named_shardings]))
    t.set(9, "vector", Vector("string", list(exp.platforms)))
    t.set(10, "vector", Vector("table", [_effect(e) for e in exp.ordered_effects]))
    t.set(11, "vector", Vector("table", [_effect(e) for e in exp.unordered_effects]))
    t.set(12, "vector", Vector("table", [_check_table(c) for c in exp.disabled_safety_checks]))
    t.set(13, "vector", Vector("u8", exp.mlir_module_serialized))
    t.set(14, "u16", exp.calling_convention_version)
    t.set(15, "vector", Vector("u16", list(exp.module_kept_var_idx)))
    t.set(16, "bool", bool(exp.uses_global_constants))
    t.set(17, "table", vjp)
    t.set(18, "u32", exp.nr_devices)
    t.set(19, "vector", Vector("table", [_aval_table(a) for a in avals]))
    t.set(20, "vector", Vector("table", [_mesh_table(m) for m in meshes]))
    t.set(21, "vector", Vector("table", [_named_sharding(s, meshes) for s in shardings]))
    t.set(22, "vector", Vector("u32", [index[a] for a in exp.in_avals]))
    t.set(23, "vector", Vector("u32", [index[a] for a in exp.out_avals]))
    t.set(24, "vector", Vector("u32", [s_index.get(s, 0) for s in exp._in_named_shardings]))
    t.set(25, "vector", Vector("u32", [s_index.get(s, 0) for s in exp._out_named_shardings]))
    return t


def _tree_table(treedef: Any) -> Table:
    node = treedef.node_data()
    t = Table()
    children = treedef.children()
    if children:
        t.set(1, "vector", Vector("table", [_tree_table(c) for c in children]))
    if node is None:
        return t.set(0, "i8", _LEAF)
    kind, aux = node
    if kind is type(None):
        return t.set(0, "i8", _NONE)
    if kind is tuple:
        return t.set(0, "i8", _TUPLE)
    if kind is list:
        return t.set(0, "i8", _LIST)
    if kind is dict:
        for k in aux:
            if not isinstance(k, str):
                raise TypeError("Serialization is supported only for dictionaries with "
                                f"string keys. Found key {k} of type {type(k)}.")
        return t.set(0, "i8", _DICT).set(2, "vector", Vector("string", list(aux)))
    if kind not in node_serializers:
        raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type "
                         f"`{kind}`. Use `export.register_pytree_node_serialization` or "
                         "`export.register_namedtuple_serialization`.")
    name, serialize_aux = node_serializers[kind]
    data = serialize_aux(aux)
    if not isinstance(data, (bytes, bytearray)):
        raise ValueError("The custom serialization function for `node_type` must return a "
                         f"`bytes` object. It returned a {type(data)}.")
    return (t.set(0, "i8", _CUSTOM).set(3, "string", name)
            .set(4, "vector", Vector("u8", bytes(data))))


def _aval_table(a: ShapedArray) -> Table:
    dtype = np.dtype(a.dtype)
    if dtype not in _DTYPES:
        raise ValueError(f"export: cannot serialize an abstract value of dtype {dtype}")
    return (Table().set(0, "i8", 0).set(1, "vector", Vector("string", [str(d) for d in a.shape]))
            .set(2, "i8", _DTYPES[dtype]).set(3, "i8", _MEMORY_DEVICE))


def _mesh_key(s: ExportSharding) -> tuple[Any, ...]:
    return (s.axis_sizes, s.axis_names, s.axis_types, s.device)


def _mesh_table(mesh: tuple[Any, ...]) -> Table:
    sizes, names, types, device = mesh
    t = (Table().set(0, "vector", Vector("u32", list(sizes)))
         .set(1, "vector", Vector("string", list(names)))
         .set(2, "vector", Vector("i8", list(types))))
    if device is not None:
        kind, cores, platform = device
        d = Table().set(0, "string", kind).set(2, "string", platform)
        t.set(3, "table", d.set(1, "u32", cores))
    return t


def _named_sharding(s: ExportSharding, meshes: list[tuple[Any, ...]]) -> Table:
    def axis(p: Any) -> Table:
        names = [] if p is None else [p] if isinstance(p, str) else list(p)
        return Table().set(0, "vector", Vector("string", names))
    spec = (Table().set(0, "vector", Vector("table", [axis(p) for p in s.spec]))
            .set(1, "vector", Vector("string", [])).set(2, "vector", Vector("string", [])))
    return (Table().set(0, "table", _mesh_table(_mesh_key(s))).set(1, "table", spec)
            .set(2, "string", s.memory_kind).set(3, "u32", meshes.index(_mesh_key(s))))


def _effect(effect: Any) -> Table:
    return Table().set(0, "string", str(type(effect)))


def _check_table(check: DisabledSafetyCheck) -> Table:
    target = check.is_custom_call()
    if target is not None:
        return Table().set(0, "i8", _CUSTOM_CALL_CHECK).set(1, "string", target)
    if check == DisabledSafetyCheck.platform():
        return Table().set(0, "i8", _PLATFORM_CHECK)
    raise NotImplementedError(f"serializing DisabledSafetyCheck: {check}")


# --- reading ---------------------------------------------------------------------------------

def deserialize(blob: bytes | bytearray) -> Exported:
    """The Exported whose JAX bytes are ``blob`` (trusted input: calling it runs its
    custom calls)."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"deserialize: expected the bytes of a serialized Exported, got "
                        f"{type(blob).__name__}")
    try:
        return _exported(Reader(blob))
    except (struct.error, IndexError, UnicodeDecodeError) as e:
        raise ValueError(f"deserialize: these {len(blob)} bytes are not a serialized "
                         f"Exported (Exported.serialize() makes them): {e}") from None


def _exported(r: Reader) -> Exported:
    unique_avals = [_aval(a) for a in r.tables(19)]
    meshes = [_mesh(m) for m in r.tables(20)]
    unique_shardings = [_sharding(s, meshes) for s in r.tables(21)]

    def shardings(idx_slot: int, slot: int) -> tuple[ExportSharding | None, ...]:
        idxs = r.scalars(idx_slot, "u32")
        if idxs:
            return tuple(None if i == 0 else unique_shardings[i - 1] for i in idxs)
        return tuple(_sharding(s.table(2), meshes) if s.has(2) else None
                     for s in r.tables(slot))

    def avals(idx_slot: int, slot: int) -> tuple[ShapedArray, ...]:
        idxs = r.scalars(idx_slot, "u32")
        if idxs:
            return tuple(unique_avals[i] for i in idxs)
        return tuple(_aval(a) for a in r.tables(slot))
    in_avals, out_avals = avals(22, 3), avals(23, 5)
    in_shardings, out_shardings = shardings(24, 7), shardings(25, 8)
    vjp = r.table(17)
    checks = tuple(_check(c) for c in r.tables(12))
    return Exported(
        fun_name=r.string(1) or "", in_tree=_tree(r.table(2), in_avals),
        in_avals=in_avals, out_tree=_tree(r.table(4), out_avals), out_avals=out_avals,
        _has_named_shardings=True, _in_named_shardings=in_shardings,
        _out_named_shardings=out_shardings, in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=r.scalar(18, "u32") or r.scalar(6, "i16"),
        platforms=tuple(r.strings(9)),
        ordered_effects=tuple(_effect_of(e) for e in r.tables(10)),
        unordered_effects=tuple(_effect_of(e) for e in r.tables(11)),
        disabled_safety_checks=checks, mlir_module_serialized=r.raw_bytes(13),
        calling_convention_version=r.scalar(14, "u16"),
        module_kept_var_idx=tuple(r.scalars(15, "u16")),
        uses_global_constants=bool(r.scalar(16, "bool", False)),
        _get_vjp=None if vjp is None else (lambda _exp: _exported(vjp)))


def _tree(r: Reader | None, leaves: Sequence[Any]) -> Any:
    if r is None:
        raise ValueError("deserialize: the serialized Exported has no pytree")
    it = iter(leaves)
    tree = _tree_value(r, it)
    return tree_structure(tree)


class _Placeholder:
    """A leaf standing for an array while a pytree's structure is rebuilt."""
    __slots__ = ("aval",)

    def __init__(self, aval: Any):
        self.aval = aval


def _tree_value(r: Reader, leaves: Any) -> Any:
    kind = r.scalar(0, "i8")
    if kind == _LEAF:
        return _Placeholder(next(leaves))
    children = [_tree_value(c, leaves) for c in r.tables(1)]
    if kind == _NONE:
        return None
    if kind == _TUPLE:
        return tuple(children)
    if kind == _LIST:
        return children
    if kind == _DICT:
        return dict(zip(r.strings(2), children, strict=True))
    if kind == _CUSTOM:
        name = r.string(3)
        if name not in node_deserializers:
            raise ValueError(f"Cannot deserialize a PyTreeDef containing an unregistered "
                             f"type `{name}`. Use `export.register_pytree_node_serialization` "
                             "or `export.register_namedtuple_serialization`.")
        _, deserialize_aux, from_children = node_deserializers[name]
        return from_children(deserialize_aux(r.raw_bytes(4)), children)
    raise ValueError(f"Cannot deserialize PyTreeDef with unknown kind: {kind}")


def _aval(r: Reader) -> ShapedArray:
    code = r.scalar(2, "i8")
    if code not in _DTYPE_OF:
        raise NotImplementedError(f"deserialize: the export has an abstract value of JAX "
                                  f"dtype code {code}, a dtype spmdc does not carry")
    dims = r.strings(1)
    try:
        shape = tuple(int(d) for d in dims)
    except ValueError:
        raise NotImplementedError(
            f"deserialize: the export has the symbolic shape ({', '.join(dims)}); spmdc's "
            "shapes are static, so it calls exports of static shapes only") from None
    return ShapedArray(shape, _DTYPE_OF[code])


def _mesh(r: Reader) -> tuple[Any, ...]:
    device = r.table(3)
    dev = None if device is None else (device.string(0), device.scalar(1, "u32", None),
                                       device.string(2))
    return (tuple(r.scalars(0, "u32")), tuple(r.strings(1)), tuple(r.scalars(2, "i8")), dev)


def _sharding(r: Reader, meshes: list[tuple[Any, ...]]) -> ExportSharding:
    mesh = meshes[r.scalar(3, "u32")] if meshes else _mesh(r.table(0))
    spec = []
    for axis in (r.table(1).tables(0) if r.has(1) else []):
        names = axis.strings(0)
        spec.append(None if not names else names[0] if len(names) == 1 else tuple(names))
    return ExportSharding(mesh[0], mesh[1], mesh[2], tuple(spec), r.string(2), mesh[3])


def _effect_of(r: Reader) -> Any:
    raise NotImplementedError(f"cannot deserialize effect type {r.string(0)}: spmdc calls "
                              "exports without effects")


def _check(r: Reader) -> DisabledSafetyCheck:
    kind = r.scalar(0, "i8")
    if kind == _CUSTOM_CALL_CHECK:
        return DisabledSafetyCheck.custom_call(r.string(1))
    if kind == _PLATFORM_CHECK:
        return DisabledSafetyCheck.platform()
    raise ValueError(f"Cannot deserialize DisabledSafetyCheck with unknown kind: {kind}")
