"""``jax.experimental.custom_partitioning``: a function whose partitioning over a mesh is
written in Python (``custom_partitioning``, its primitive ``custom_partitioning_p``) and
the Shardy sharding rules it declares (``SdyShardingRule``, ``ArrayMapping``,
``CompoundFactor``, ``BATCHING``: experimental/custom_partitioning_sharding_rule.py).

Note [partitioning in Python]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``f = custom_partitioning(fun)`` with ``f.def_partition(partition=..., sharding_rule=...)``
is ``fun`` everywhere but in a program that XLA's SPMD partitioner splits over a mesh (a
jit over sharded arrays: Note [jit over sharded arrays] in transforms/partitioned.py).
There, as in JAX, the call becomes ``stablehlo.custom_call @CustomSPMDPartitioning``
whose ``backend_config`` is a key, and which carries the rule as an
``sdy.sharding_rule`` attribute (spmdc partitions with Shardy, as JAX 0.10.2 does by
default: the rule is what propagates shardings through the call). When the partitioner
reaches the call, it calls back into Python through jaxlib's custom-call partitioner
(``runtime/pjrt.register_custom_call_partitioner``): ``partition(*static_args, mesh,
arg_shapes, result_shape)`` receives ``ShapeDtypeStruct``s whose ``sharding`` is the
layout the partitioner chose (a NamedSharding over the program's mesh; a GSPMDSharding
when ``decode_shardings=False`` or no spec over the mesh describes it) and returns
``(mesh, lower_fn, result_sharding, arg_shardings)``. ``lower_fn`` is traced on the
per-device block shapes with the mesh's axis names bound (its collectives are over the
mesh), lowered by spmdc's own lowering as a manual program (its collectives between
partitions, as in a shard_map body), and handed back as a module with the shardings,
which the partitioner first lays the operands out by. The partition callback is JAX's;
the two others jaxlib asks for (``infer_sharding_from_operands``,
``propagate_user_sharding``) serve XLA's GSPMD propagation, which Shardy replaces: as
JAX's under Shardy they are not passed to the primitive (jaxlib's callbacks for them
keep the user's sharding and replicate the result), and giving them without a
``sharding_rule`` is JAX's NotImplementedError.

Everywhere else the equation computes ``call``, the traced ``fun``: outside any
transformation (run operation by operation, as JAX's impl), under jit on one device,
under pmap, and lowered in a manual computation. In a shard_map body, where JAX lowers
``call`` in place, ``fun`` is traced in place (shard_map's global emulation vmaps the
body, which the primitive, without a batching rule, would refuse).
There are no batching or derivative rules, as in JAX (vmap and grad of it are JAX's
NotImplementedError); a ``custom_vjp`` around it gives it a derivative.

The key in the backend_config names this process (a random token) and the lowering, so
a module text from another process never shares one (the persistent compilation cache
keys on the text); the callbacks registered under it live as long as the ``partition``
function the equation holds (jit's caches keep it).
"""
from __future__ import annotations

import inspect
import itertools
import math
import uuid
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..compiler.ir import TensorType
from ..compiler.passes.cleanup import cleanup
from ..compiler.passes.collectives import check_collectives
from ..compiler.stablehlo import LoweringContext, hlo, ir, lower, lower_body, mlir_type
from ..core.abstract import ShapeDtypeStruct
from ..core.tracing import Tracer, current_trace, set_current, trace_function, type_of
from ..core.tree import tree_flatten, tree_unflatten
from ..errors import UnexpectedTracerError
from ..extend.core import Primitive, aval_of_type
from ..extend.sharding import GSPMDSharding
from ..interpreters import mlir
from ..runtime import pjrt
from ..runtime.mesh_axes import AbstractMesh
from ..runtime.sharding import (
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    sharding_from_tiles,
)
from ..transforms.jaxpr_view import closed_jaxpr, jaxpr_as_fun
from ..transforms.mapping import in_shard_map_body
from ..transforms.partitioned import mesh_of
from ..transforms.pmap_nested import DeviceAxis
from .custom_partitioning_sharding_rule import (
    BATCHING,
    ArrayMapping,
    CompoundFactor,
    SdyShardingRule,
    sdy_sharding_rule_to_mlir,
    str_to_sdy_sharding_rule,
)

__all__ = ["custom_partitioning", "custom_partitioning_p", "BATCHING", "ArrayMapping",
           "CompoundFactor", "SdyShardingRule"]

_CALL_TARGET = "CustomSPMDPartitioning"

custom_partitioning_p = Primitive("custom_partitioning")
custom_partitioning_p.multiple_results = True


class custom_partitioning:  # noqa: N801  (JAX's name)
    """``fun`` with a partitioning of its own over a mesh (Note [partitioning in Python]):
    ``f.def_partition(partition, ..., sharding_rule=...)``; ``static_argnums`` are the
    positional arguments passed to the callbacks as they are, not traced."""

    def __init__(self, fun: Callable[..., Any], static_argnums: tuple[int, ...] = ()):
        self.fun = fun
        self.static_argnums = static_argnums
        self.partition: Callable[..., Any] | None = None
        self.propagate_user_sharding: Callable[..., Any] | None = None
        self.infer_sharding_from_operands: Callable[..., Any] | None = None
        self.sharding_rule: Any = None

    def __getattr__(self, name: str) -> Any:
        """The wrapped function's attributes (``__name__``, ``__doc__`` ...), as JAX's
        custom decorators forward them."""
        if name == "fun":
            raise AttributeError(name)
        return getattr(self.fun, name)

    def def_partition(self, partition: Callable[..., Any],
                      infer_sharding_from_operands: Callable[..., Any] | None = None,
                      propagate_user_sharding: Callable[..., Any] | None = None,
                      decode_shardings: bool = True, sharding_rule: Any = None, *,
                      reduction_factors: tuple[str, ...] = (),
                      need_replication_factors: tuple[str, ...] = (),
                      permutation_factors: tuple[str, ...] = (),
                      **factor_sizes: int) -> Callable[..., Any]:
        """Set the callbacks; ``sharding_rule`` is an SdyShardingRule, its einsum-like
        text (with the special factors and factor sizes as keywords), or a callable
        ``(*static_args, mesh, operand_types, result_types)`` giving either."""
        self.partition = partition
        self.propagate_user_sharding = propagate_user_sharding
        self.infer_sharding_from_operands = infer_sharding_from_operands
        self.decode_shardings = decode_shardings
        if isinstance(sharding_rule, str):
            self.sharding_rule = str_to_sdy_sharding_rule(
                sharding_rule, reduction_factors=reduction_factors,
                need_replication_factors=need_replication_factors,
                permutation_factors=permutation_factors, **factor_sizes)
            return partition
        extra: dict[str, Any] = dict(factor_sizes)
        for kind, factors in (("reduction_factors", reduction_factors),
                              ("need_replication_factors", need_replication_factors),
                              ("permutation_factors", permutation_factors)):
            if factors:
                extra[kind] = factors
        if extra:
            raise ValueError(f"Unknown keyword arguments: {extra}")
        self.sharding_rule = sharding_rule
        return partition

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            args = inspect.signature(self.fun).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"custom_partitioning {_name(self.fun)}: {e}") from None
        args.apply_defaults()
        if args.kwargs:
            raise TypeError("keyword arguments could not be resolved to positions")
        args = args.args
        static = set(self.static_argnums)
        static_args = tuple(args[i] for i in self.static_argnums)
        if any(isinstance(leaf, Tracer) for leaf in tree_flatten(static_args)[0]):
            raise UnexpectedTracerError(
                "Found a JAX Tracer object passed as an argument to a custom_partitioning "
                "function in a position indicated as static by static_argnums. ")
        if in_shard_map_body():      # manual over the mesh: the function itself, as JAX
            return self.fun(*args)   # lowers it in a fully manual computation
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static)
        args_flat, in_tree = tree_flatten(dyn_args)
        out_trees: list[Any] = []

        def flat_fun(tracers: list[Any]) -> list[Any]:
            dyn = iter(tree_unflatten(in_tree, tracers))
            full = [args[i] if i in static else next(dyn) for i in range(len(args))]
            leaves, out_tree = tree_flatten(self.fun(*full))
            out_trees.append(out_tree)
            return leaves

        sigs = [type_of(x) for x in args_flat]
        call, _, captured = trace_function(flat_fun, [t for t, _ in sigs],
                                           [w for _, w in sigs], _name(self.fun))
        if captured:
            raise ValueError(
                f"custom_partitioning {_name(self.fun)}: the function uses {len(captured)} "
                "array value(s) defined outside it (closed over); the call's operands must "
                "be its arguments alone, which its sharding rule describes: pass them as "
                "arguments")
        if "decode_shardings" not in vars(self):
            raise AttributeError(
                f"custom_partitioning {_name(self.fun)}: def_partition(partition=..., "
                "sharding_rule=...) was not called; define the partitioning before calling "
                "the function")
        if self.sharding_rule is None and (self.propagate_user_sharding is not None or
                                           self.infer_sharding_from_operands is not None):
            raise NotImplementedError(
                "Shardy is used, but sharding propagation callbacks instead of "
                "sharding_rule are provided. Need to provide sharding_rule to migrate to "
                "Shardy.")
        out_flat = custom_partitioning_p.bind(
            *args_flat, call=call, partition=self.partition, propagate_user_sharding=None,
            infer_sharding_from_operands=None, decode_shardings=self.decode_shardings,
            sharding_rule=self.sharding_rule, in_tree=in_tree, out_tree=out_trees[0],
            static_args=static_args)
        return tree_unflatten(out_trees[0], out_flat)


def _name(fun: Any) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


# --- the primitive -------------------------------------------------------------------------

def _abstract_eval(*avals: Any, call: Any, **params: Any) -> list[Any]:
    return [aval_of_type(t) for t in call.out_types]


def _impl(*args: Any, call: Any, **params: Any) -> list[Any]:
    """Outside any transformation: ``call`` run operation by operation, as JAX runs it."""
    return jaxpr_as_fun(closed_jaxpr(call, [], len(call.inputs)))(*args)


custom_partitioning_p.def_abstract_eval(_abstract_eval)
custom_partitioning_p.def_impl(_impl)


class _Lowered:
    """What the partitioner's callbacks need of one lowered equation."""

    def __init__(self, params: dict[str, Any], mesh: Any, platform: str):
        self.partition = params["partition"]
        self.decode_shardings = params["decode_shardings"]
        self.in_tree, self.out_tree = params["in_tree"], params["out_tree"]
        self.static_args = params["static_args"]
        self.mesh, self.platform = mesh, platform
        self.position = {d.id: k for k, d in enumerate(mesh._flat_devices)}

    def decode(self, shape: Any, hlo_sharding: Any) -> ShapeDtypeStruct:
        """The ShapeDtypeStruct a callback sees for an operand or result."""
        ndim = len(shape.dimensions())
        if self.decode_shardings:
            found: Any = None
            if hlo_sharding.is_replicated():
                found = NamedSharding(self.mesh, PartitionSpec())
            elif hlo_sharding.is_tiled() and not hlo_sharding.subgroup_types():
                tiles = (list(hlo_sharding.tile_assignment_dimensions()),
                         list(hlo_sharding.tile_assignment_devices()),
                         hlo_sharding.replicate_on_last_tile_dim())
                found = sharding_from_tiles(self.mesh, tuple(shape.dimensions()), tiles)
            if isinstance(found, NamedSharding):      # one entry per dimension, as JAX's
                spec = tuple(found.spec)
                sharding = NamedSharding(self.mesh, PartitionSpec(
                    *spec, *(None,) * (ndim - len(spec))))
                return ShapeDtypeStruct(shape.dimensions(), shape.numpy_dtype(),
                                        sharding=sharding)
        return ShapeDtypeStruct(shape.dimensions(), shape.numpy_dtype(),
                                sharding=GSPMDSharding(self.mesh._flat_devices, hlo_sharding))

    def encode(self, sharding: Any, ndim: int) -> Any:
        """The HloSharding of a sharding a callback returned."""
        if not isinstance(sharding, Sharding):
            raise ValueError("Custom Partitioning rules must return Sharding.")
        if isinstance(sharding, GSPMDSharding):
            return sharding._to_xla_hlo_sharding(ndim)
        if isinstance(sharding, SingleDeviceSharding) or sharding.is_fully_replicated:
            return pjrt.HloSharding.replicate()
        if not isinstance(sharding, NamedSharding):
            raise ValueError(f"Custom Partitioning rules must return a NamedSharding over "
                             f"the program's mesh; got {sharding!r}")
        mesh, spec = sharding.mesh, sharding.spec
        if isinstance(mesh, AbstractMesh):       # the partitions in its order, as JAX's
            if math.prod(mesh.axis_sizes) != len(self.position):
                raise ValueError(f"Custom Partitioning rules returned {sharding!r}, whose "
                                 f"mesh has {math.prod(mesh.axis_sizes)} devices; the "
                                 f"program runs on {len(self.position)}")
            grid = np.arange(len(self.position))
        else:
            try:
                grid = np.array([self.position[d.id] for d in mesh._flat_devices])
            except KeyError:
                raise ValueError(f"Custom Partitioning rules returned {sharding!r}, whose "
                                 "mesh holds devices the program does not run on") from None
        split = [spec.axes_of(d) for d in range(ndim)]
        used = [a for axes in split for a in axes]
        rest = [a for a in mesh.axis_names if a not in used]
        grid = grid.reshape(mesh.axis_sizes).transpose(
            [mesh.axis_names.index(a) for a in (*used, *rest)])
        counts = [math.prod(mesh.shape[a] for a in axes) for axes in split]
        copies = math.prod(mesh.shape[a] for a in rest)
        proto = pjrt.OpSharding()
        proto.type = pjrt.OpSharding.Type.OTHER
        proto.tile_assignment_dimensions = counts + ([copies] if copies > 1 else [])
        proto.tile_assignment_devices = [int(i) for i in grid.flat]
        proto.replicate_on_last_tile_dim = copies > 1
        return pjrt.HloSharding.from_proto(proto)

    def encode_tree(self, tree: Any, shardings: Any, shapes: list[Any]) -> list[Any]:
        return [self.encode(s, len(shape.dimensions()))
                for s, shape in zip(tree.flatten_up_to(shardings), shapes, strict=True)]


_PROCESS = uuid.uuid4().hex        # See Note [partitioning in Python] (the key)
_keys = itertools.count()
_lowered: dict[bytes, _Lowered] = {}
_registered: list[bool] = []


def _register(params: dict[str, Any], mesh: Any, platform: str) -> str:
    """The backend_config key of a lowered equation, its callbacks' data registered under
    it as long as its ``partition`` lives."""
    if not _registered:
        pjrt.register_custom_call_partitioner(_CALL_TARGET, _propagate_user_sharding,
                                              _partition, _infer_sharding_from_operands)
        _registered.append(True)
    key = f"{_PROCESS}:{next(_keys)}"
    _lowered[key.encode()] = _Lowered(params, mesh, platform)
    try:
        weakref.finalize(params["partition"], _lowered.pop, key.encode(), None)
    except TypeError:            # not weakly referable: kept for the process
        pass
    return key


def _parts(shape: Any, sharding: Any) -> tuple[list[Any], list[Any]]:
    if shape.is_tuple():
        return list(shape.tuple_shapes()), list(sharding.tuple_elements())
    return [shape], [sharding]


def _packed(shape: Any, shardings: list[Any]) -> Any:
    return pjrt.HloSharding.tuple_sharding(shape, shardings) if shape.is_tuple() \
        else shardings[0]


def _propagate_user_sharding(user_sharding: Any, shape: Any, key: bytes) -> Any:
    """XLA's GSPMD backward propagation: the user's sharding, unchanged (Shardy, which
    spmdc partitions with, reads the sharding rule instead)."""
    return user_sharding


def _infer_sharding_from_operands(arg_shapes: Any, arg_shardings: Any, result_shape: Any,
                                  key: bytes) -> Any:
    """XLA's GSPMD forward propagation: the result replicated (Shardy, which spmdc
    partitions with, reads the sharding rule instead)."""
    results = result_shape.tuple_shapes() if result_shape.is_tuple() else [result_shape]
    return _packed(result_shape, [pjrt.HloSharding.replicate()] * len(results))


def _partition(arg_shapes: Any, arg_shardings: Any, result_shape: Any,
               result_sharding: Any, key: bytes) -> tuple[bytes, list[Any], Any]:
    """The per-device module for one call, with the shardings its operands and results
    take (Note [partitioning in Python])."""
    info = _lowered[key]
    result_shapes, result_shardings = _parts(result_shape, result_sharding)
    arg_shapes = list(arg_shapes)
    mesh, lower_fn, out_shardings, in_shardings = info.partition(
        *info.static_args, info.mesh,
        info.in_tree.unflatten([info.decode(s, h) for s, h in
                                zip(arg_shapes, arg_shardings, strict=True)]),
        info.out_tree.unflatten([info.decode(s, h) for s, h in
                                 zip(result_shapes, result_shardings, strict=True)]))
    out_hlo = info.encode_tree(info.out_tree, out_shardings, result_shapes)
    in_hlo = info.encode_tree(info.in_tree, in_shardings, arg_shapes)
    in_types = [_tile(h, s) for h, s in zip(in_hlo, arg_shapes, strict=True)]
    out_types = [_tile(h, s) for h, s in zip(out_hlo, result_shapes, strict=True)]
    module = _per_device_module(lower_fn, mesh, info, in_types, out_types)
    return module, in_hlo, _packed(result_shape, out_hlo)


def _tile(hlo_sharding: Any, shape: Any) -> TensorType:
    block = hlo_sharding.tile(shape)
    return TensorType(tuple(block.dimensions()), np.dtype(block.numpy_dtype()))


def _per_device_module(lower_fn: Callable[..., Any], mesh: Any, info: _Lowered,
                       in_types: list[TensorType], out_types: list[TensorType]) -> bytes:
    """``lower_fn`` traced on the blocks with the mesh's axes bound, lowered as a manual
    program of the partition form (its collectives between partitions)."""
    axes = tuple(mesh.shape.items())
    out_trees: list[Any] = []

    def flat_fun(tracers: list[Any]) -> list[Any]:
        leaves, out_tree = tree_flatten(lower_fn(*info.in_tree.unflatten(tracers)))
        out_trees.append(out_tree)
        return leaves

    outer = current_trace()          # the partitioner may run while a trace is current
    set_current(None)
    try:
        func, _, captured = trace_function(
            flat_fun, in_types, [False] * len(in_types), _name(lower_fn),
            {n: DeviceAxis(s) for n, s in axes})
    finally:
        set_current(outer)
    got = [(t.shape, t.dtype) for t in func.out_types]
    if got != [(t.shape, t.dtype) for t in out_types]:
        raise ValueError(f"Mismatch in result shapes. {_avals(func.out_types)} vs "
                         f"{_avals(out_types)}")
    func = check_collectives(func, axes, [frozenset(n for n, _ in axes)] * len(func.inputs),
                             [False] * len(func.outputs),
                             [f"result {k}" for k in range(len(func.outputs))],
                             "custom_partitioning")
    ctx = LoweringContext(1, dict(axes), tuple(n for n, _ in axes), platform=info.platform)
    ctx.partitioned, ctx.partition_mesh, ctx.manual = True, axes, True
    module = lower(cleanup(func), ctx=ctx, constants=[np.asarray(c) for c in captured])
    if ctx.host_callbacks:
        raise ValueError("custom_partitioning: the per-device function calls back into "
                         "Python (a callback or debug print), which the partitioned "
                         "program's custom call cannot carry")
    return mlir.module_to_bytecode(module)


def _avals(types: Any) -> str:
    return repr([aval_of_type(t) for t in types])


def _lower(ctx: mlir.LoweringRuleContext, *values: Any, call: Any, **params: Any) -> Any:
    """See Note [partitioning in Python]."""
    low = ctx.lowering
    if not low.partitioned or low.manual or math.prod(s for _, s in low.partition_mesh) == 1:
        return lower_body(low, call, list(values))
    mesh = mesh_of(low.partition_mesh, low.partition_device_ids)
    key = _register(params, mesh, low.platform)
    result_types = [mlir_type(t) for t in call.out_types]
    op = hlo.CustomCallOp(
        result_types, list(values), call_target_name=ir.StringAttr.get(_CALL_TARGET),
        has_side_effect=ir.BoolAttr.get(False), api_version=mlir.i32_attr(2),
        called_computations=ir.ArrayAttr.get([]), backend_config=ir.StringAttr.get(key))
    rule = params["sharding_rule"]
    if rule is not None:
        operand_types = [mlir_type(t) for t in call.in_types]
        if callable(rule) and not isinstance(rule, SdyShardingRule):
            rule = rule(*params["static_args"], mesh, operand_types, result_types)
            keywords: dict[str, Any] = {}
            if isinstance(rule, (list, tuple)) and len(rule) == 2:
                rule, keywords = rule
            if isinstance(rule, str):
                rule = str_to_sdy_sharding_rule(rule, **keywords)
            elif not isinstance(rule, SdyShardingRule):
                raise ValueError("sharding_rule callable must produce either an "
                                 "SdyShardingRule object or an Einsum-like notation string.")
        op.attributes["sdy.sharding_rule"] = sdy_sharding_rule_to_mlir(
            rule, operand_types, result_types)
    return list(op.results)


mlir.register_lowering(custom_partitioning_p, _lower)
