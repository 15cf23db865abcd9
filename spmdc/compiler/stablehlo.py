"""Lowering of a Func to a StableHLO module, with the MLIR Python bindings in jaxlib.

``lower_rules[prim](ctx, eqn, *operands) -> value | [values]`` turns one equation into
StableHLO ops at the current insertion point; ``operands`` are MLIR values (literals are
already materialised as constants). ``lower(func, ...)`` builds the public ``@main`` and
verifies the module. MLIR context set-up lives in ``mlir_context()`` alone.

This module is the compiler's one door to ``jaxlib.mlir``: the lowering rules next to
each primitive use the bindings it re-exports (``ir``, ``hlo`` for StableHLO, ``chlo``),
so a jaxlib upgrade that moves them touches this file alone.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, sdy
from jaxlib.mlir.dialects import func as func_dialect
from jaxlib.mlir.dialects import stablehlo as hlo

from .ir import Func, Lit, TensorType, Var, dtype_name

__all__ = ["ir", "hlo", "chlo", "lower_rules", "LoweringContext", "lower", "lower_text",
           "lower_body", "mlir_context", "mlir_type", "create_op", "elementwise_lowering",
           "LoweringError", "Partitioning", "sharding_attr", "ffi_call"]


class LoweringError(RuntimeError):
    """A Func that cannot be lowered (a missing rule or a module that fails verification)."""


LowerRule = Callable[..., Any]
"""``rule(ctx: LoweringContext, eqn: Eqn, *operands: ir.Value) -> ir.Value | list[ir.Value]``"""

lower_rules: dict[Any, LowerRule] = {}


# Note [one lowering at a time]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# All modules are built in one MLIR context, and the Python bindings keep the current
# context, location and insertion point per thread; but building IR in one context from
# several threads at once is not something the bindings promise to support, and the caches
# of MLIR types and attributes (mlir_type, the dot_general attribute memo) would be
# filled from several threads. Lowering is a small part of a compile (XLA's own work
# dominates), so it is simply serialised: ``lower`` and ``lower_text`` (which also prints
# the module) run under one lock, and so does making the context.

lowering_lock = threading.RLock()


def mlir_context() -> ir.Context:
    """The one MLIR context spmdc builds modules in, with StableHLO and func registered."""
    if _context:
        return _context[0]
    with lowering_lock:
        if not _context:
            _context.append(_make_context())
    return _context[0]


_context: list[ir.Context] = []


def _make_context() -> ir.Context:
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    hlo.register_dialect(ctx)
    chlo.register_dialect(ctx)     # erf, lgamma, ...: PJRT legalises chlo ops
    sdy.register_dialect(ctx)      # Shardy: meshes and shardings (Note [partition form])
    return ctx


def _element_type(dtype: np.dtype) -> ir.Type:
    name = dtype_name(dtype)
    if name == "bool":
        return ir.IntegerType.get_signless(1)
    if name[0] == "i":
        return ir.IntegerType.get_signless(int(name[1:]))
    if name[0] == "u":
        return ir.IntegerType.get_unsigned(int(name[1:]))
    return {"bf16": ir.BF16Type, "f16": ir.F16Type, "f32": ir.F32Type,
            "f64": ir.F64Type}[name].get() if name[0] in "bf" else \
        ir.ComplexType.get({"c64": ir.F32Type, "c128": ir.F64Type}[name].get())


@functools.lru_cache(maxsize=4096)
def mlir_type(t: TensorType) -> ir.RankedTensorType:
    # Cached: types live as long as the one context (mlir_context), and a lowering asks
    # for the same few types over and over. See Note [fast op creation].
    return ir.RankedTensorType.get(list(t.shape), _element_type(t.dtype))


def create_op(op_class: Any, result: TensorType, operands: Sequence[ir.Value],
              attributes: dict[str, ir.Attribute] | None = None) -> ir.Value:
    """``op_class(*operands)`` with a known result type, returning its one result.
    See Note [fast op creation]."""
    return ir.Operation.create(op_class.OPERATION_NAME, results=[mlir_type(result)],
                               operands=operands, attributes=attributes).result


# Note [fast op creation]
# ~~~~~~~~~~~~~~~~~~~~~~~
# Lowering a long chain of ops spends most of its time in the MLIR Python bindings
# (benchmark W2). The generated op classes (``hlo.AddOp(x, y)``) infer the result type in
# C++ and wrap the new op in a Python OpView; ``ir.Operation.create`` with the result
# type that our shape rule already computed is about twice as fast (1.4 us instead of
# 3.2 us per op here). It is used by the rules of the hottest primitives only. A wrong
# result type cannot slip through: ``lower`` verifies the module, and the verifier
# checks each op's result type against the one StableHLO infers.


# Note [partition form]
# ~~~~~~~~~~~~~~~~~~~~~
# pmap and shard_map programs are per-device programs in the *replica* form
# (``mhlo.num_replicas = N``): we wrote every collective ourselves. A jit over arrays laid
# out on a mesh is a *global* program that XLA's SPMD partitioner splits, inserting the
# collectives itself: ``mhlo.num_partitions = N``, ``num_replicas = 1``, a Shardy mesh
# ``sdy.mesh @mesh = <["x"=2, "y"=4]>`` whose device ids are the partition ids 0..N-1 in
# mesh order, and ``sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>`` on each argument
# (and on results whose layout is asked for; XLA chooses the others, and the runtime
# reads its choice back from the executable). A sharding constraint inside the program
# is ``sdy.sharding_constraint``. The executable is compiled with SPMD partitioning and
# the Shardy partitioner on (runtime/pjrt.py), and every device gets its own block.
#
# pmap stays in the replica form. Its reverse mode is the per-device one of Note
# [collective transpose], which the replica form's per-device program expresses directly;
# its launches take jaxlib's C++ dispatcher, which partitioned programs do not (yet); and
# the collectives compile to the same thing in both forms (../shared/notes/distributed.md
# measured their cost equal within noise). Measured here (8 CPU devices, x * 2 on f32[8, 4]
# already on the devices, 300 calls, median of 7, two runs): pmap 155 / 145 us per call,
# jit(shard_map) of the same in the partition form 241 / 193 us, the difference being the
# Python launch.

class Partitioning:
    """The partition form's layout (Note [partition form]): the mesh as (name, size)
    pairs, major first, and per argument / result the mesh axes each dimension is split
    over (a tuple of axis-name tuples), or None for no annotation."""

    def __init__(self, mesh: Sequence[tuple[str, int]],
                 in_specs: Sequence[tuple[tuple[str, ...], ...] | None],
                 out_specs: Sequence[tuple[tuple[str, ...], ...] | None]):
        self.mesh = tuple(mesh)
        self.in_specs = tuple(in_specs)
        self.out_specs = tuple(out_specs)

    @property
    def num_partitions(self) -> int:
        return int(np.prod([s for _, s in self.mesh], dtype=np.int64))


def sharding_attr(spec: tuple[tuple[str, ...], ...]) -> ir.Attribute:
    """``#sdy.sharding<@mesh, [{"x"}, {}]>``: each dimension split over its axes."""
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in spec)
    return ir.Attribute.parse(f"#sdy.sharding<@mesh, [{dims}]>")


def _annotate(main: Any, partitioning: Partitioning) -> None:
    def attrs(specs: Sequence[Any]) -> ir.ArrayAttr:
        return ir.ArrayAttr.get([
            ir.DictAttr.get({} if s is None else {"sdy.sharding": sharding_attr(s)})
            for s in specs])
    main.arg_attrs = attrs(partitioning.in_specs)
    main.result_attrs = attrs(partitioning.out_specs)


def ffi_call(target: str, operands: Sequence[ir.Value], in_types: Sequence[TensorType],
             out_types: Sequence[TensorType], attributes: dict[str, int] | None = None,
             aliases: dict[int, int] | None = None,
             column_major: Sequence[bool] | None = None) -> list[ir.Value]:
    """A ``stablehlo.custom_call`` to an XLA typed-FFI handler (api_version 4), as jaxlib's
    LAPACK kernels expect: ``attributes`` (name -> unsigned 8-bit value, LAPACK's
    characters such as ``ord('L')``) go in the backend config, ``aliases`` map an output
    to the operand whose buffer it reuses. Matrices (the operands and results of the
    largest rank, or those marked in ``column_major``, inputs first) are passed
    column-major, the batch dimensions outermost; the others row-major."""
    rank = max(t.ndim for t in in_types)
    types = [*in_types, *out_types]
    marks = list(column_major) if column_major is not None else [t.ndim == rank for t in types]

    def layout(t: TensorType, col: bool) -> ir.Attribute:
        n = t.ndim
        dims = [n - 2, n - 1, *range(n - 3, -1, -1)] if col and n >= 2 else \
            list(range(n - 1, -1, -1))
        return ir.DenseIntElementsAttr.get(np.asarray(dims, np.int64), type=ir.IndexType.get())

    layouts = [layout(t, c) for t, c in zip(types, marks, strict=True)]
    u8 = ir.IntegerType.get_unsigned(8)
    config = ir.DictAttr.get({k: ir.IntegerAttr.get(u8, v)
                              for k, v in (attributes or {}).items()})
    single = len(out_types) == 1
    alias_attrs = [hlo.OutputOperandAlias.get([] if single else [out], operand, [])
                   for out, operand in (aliases or {}).items()]
    op = hlo.CustomCallOp(
        [mlir_type(t) for t in out_types], list(operands), target,
        has_side_effect=ir.BoolAttr.get(False), backend_config=config,
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
        operand_layouts=ir.ArrayAttr.get(layouts[:len(in_types)]),
        result_layouts=ir.ArrayAttr.get(layouts[len(in_types):]),
        output_operand_aliases=ir.ArrayAttr.get(alias_attrs))
    return list(op.results)


class LoweringContext:
    """What lowering rules may ask for besides their operands."""

    def __init__(self, num_replicas: int = 1, axis_env: dict[str, int] | None = None,
                 mesh_axes: Sequence[str] = (), partitioned: bool = False):
        self.partitioned = partitioned         # the partition form (Note [partition form])
        self.partition_mesh: tuple[tuple[str, int], ...] = ()
        self.manual = False        # inside sdy.manual_computation (primitives/shard_map.py)
        self.num_replicas = num_replicas
        self.axis_env = dict(axis_env or {})   # axis name -> size, outermost first
        self.mesh_axes = tuple(mesh_axes)      # device mesh axis names, major to minor
        self._channel = 0

    def next_channel(self) -> int:
        self._channel += 1
        return self._channel

    # helpers for rules
    mlir_type = staticmethod(mlir_type)
    create_op = staticmethod(create_op)

    def constant(self, value: Any, t: TensorType) -> ir.Value:
        """A constant of type ``t`` filled with the scalar ``value``."""
        element = _element_type(t.dtype)
        if t.dtype == np.bool_:
            attr = ir.IntegerAttr.get(element, int(bool(value)))
        elif t.dtype.kind in "iu":
            attr = ir.IntegerAttr.get(element, int(value))
        elif t.dtype.kind == "c":
            arr = np.full(t.shape, value, t.dtype)
            return hlo.ConstantOp(ir.DenseElementsAttr.get(arr, type=mlir_type(t))).result
        else:
            attr = ir.FloatAttr.get(element, float(value))
        return create_op(hlo.ConstantOp, t, [],       # See Note [fast op creation]
                         {"value": ir.DenseElementsAttr.get_splat(mlir_type(t), attr)})

    def broadcast(self, value: ir.Value, src: TensorType, dst: TensorType,
                  dims: Sequence[int] | None = None) -> ir.Value:
        """broadcast_in_dim of ``value`` (type ``src``) to ``dst``; rank-0 needs no dims."""
        if src.shape == dst.shape:
            return value
        dims = list(range(dst.ndim - src.ndim, dst.ndim)) if dims is None else list(dims)
        return create_op(hlo.BroadcastInDimOp, dst, [value],   # See Note [fast op creation]
                         {"broadcast_dimensions": ir.DenseI64ArrayAttr.get(dims)})


def elementwise_lowering(op_class: Any) -> LowerRule:
    """Lowering for an elementwise op whose rank-0 operands broadcast to the output."""
    def rule(ctx: LoweringContext, eqn: Any, *operands: ir.Value) -> ir.Value:
        out = eqn.outputs[0].type
        args = [x if a.type.shape == out.shape else
                ctx.broadcast(x, a.type, TensorType(out.shape, a.type.dtype))
                for x, a in zip(operands, eqn.inputs, strict=True)]
        return create_op(op_class, out, args)       # See Note [fast op creation]
    return rule


def lower_body(ctx: LoweringContext, func: Func, args: Sequence[ir.Value]) -> list[ir.Value]:
    """Emit ``func``'s equations at the current insertion point with its inputs bound to
    ``args``; return its outputs. ``lower`` uses it for @main, control-flow rules for the
    blocks of their regions (sub-Funcs in params)."""
    env: dict[Var, ir.Value] = dict(zip(func.inputs, args, strict=True))

    def read(a: Any) -> ir.Value:
        return ctx.constant(a.value, a.type) if isinstance(a, Lit) else env[a]

    for eqn in func.eqns:
        rule = lower_rules.get(eqn.prim)
        if rule is None:
            raise LoweringError(f"no lowering rule for primitive {eqn.prim.name!r}")
        outs = rule(ctx, eqn, *[env[a] if a.__class__ is Var else read(a)
                                for a in eqn.inputs])   # the test inlines read's common case
        if isinstance(outs, ir.Value):
            outs = [outs]
        env.update(zip(eqn.outputs, outs, strict=True))
    return [read(a) for a in func.outputs]


def lower(func: Func, *, num_replicas: int = 1, axis_env: dict[str, int] | None = None,
          mesh_axes: Sequence[str] = (), partitioning: Partitioning | None = None
          ) -> ir.Module:
    """Lower ``func`` to a verified StableHLO module whose entry point is ``@main``; with
    ``partitioning``, in the partition form (Note [partition form])."""
    ctx = LoweringContext(num_replicas, axis_env, mesh_axes, partitioning is not None)
    partitions = 1
    if partitioning is not None:
        num_replicas, partitions = 1, partitioning.num_partitions
        ctx.partition_mesh = partitioning.mesh
    with lowering_lock, mlir_context(), ir.Location.unknown():
        module = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, num_replicas)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, partitions)
        ftype = ir.FunctionType.get([mlir_type(t) for t in func.in_types],
                                    [mlir_type(t) for t in func.out_types])
        with ir.InsertionPoint(module.body):
            if partitioning is not None:
                axes = ", ".join(f'"{n}"={s}' for n, s in partitioning.mesh)
                sdy.MeshOp("mesh", ir.Attribute.parse(f"#sdy.mesh<[{axes}]>"))
            main = func_dialect.FuncOp("main", ftype)
            if partitioning is not None:
                _annotate(main, partitioning)
            main.attributes["sym_visibility"] = ir.StringAttr.get("public")
            block = main.add_entry_block()
        with ir.InsertionPoint(block):
            func_dialect.ReturnOp(lower_body(ctx, func, block.arguments))
        if not module.operation.verify():
            raise LoweringError("the StableHLO module spmdc built does not verify")
    return module


def lower_text(func: Func, *, num_replicas: int = 1, axis_env: dict[str, int] | None = None,
               mesh_axes: Sequence[str] = (), partitioning: Partitioning | None = None) -> str:
    """``lower`` and print the module, under the lock (Note [one lowering at a time])."""
    with lowering_lock:
        module = lower(func, num_replicas=num_replicas, axis_env=axis_env,
                       mesh_axes=mesh_axes, partitioning=partitioning)
        text = str(module)
        del module
    return text
