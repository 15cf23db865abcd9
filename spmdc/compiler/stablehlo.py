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

from ..errors import LoweringError
from .ir import Func, Lit, SourceInfo, TensorType, Var, dtype_kind, dtype_name
from .passes.cleanup import effectful, has_effects

__all__ = ["ir", "hlo", "chlo", "lower_rules", "LoweringContext", "lower", "lower_text",
           "lower_program", "parse_module", "lower_body", "mlir_context", "mlir_type",
           "dense_constant", "element_type",
           "create_op", "elementwise_lowering", "host_callback_op",
           "Partitioning", "sharding_attr", "ffi_call", "PLATFORMS", "by_platform"]


LowerRule = Callable[..., Any]
"""``rule(ctx: LoweringContext, eqn: Eqn, *operands: ir.Value) -> ir.Value | list[ir.Value]``"""

lower_rules: dict[Any, LowerRule] = {}

# The platforms a module can be lowered for (Note [lowering per platform]).
PLATFORMS = ("cpu", "cuda")


# Note [lowering per platform]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A module is lowered for one platform, ``LoweringContext.platform``: the runtime passes
# its client's (cpu or cuda), ``jit(f).trace(x).lower(lowering_platforms=('cuda',))``
# any, with no client at all. Almost every rule emits the same StableHLO everywhere; the
# exceptions are custom calls to kernels that a platform's runtime provides: the host
# callbacks (jaxlib's CPU handler, the CUDA plugin's GPU one: Note [host callbacks]) and
# linear algebra (LAPACK on the CPU, cuSOLVER on GPUs: Note [cuSOLVER custom calls] in
# primitives/linalg_cuda.py). Such a primitive's rule is ``by_platform(cpu=..., cuda=...)``;
# a platform it lacks is a clear error naming both, not a module that fails to compile.

def by_platform(**rules: LowerRule) -> LowerRule:
    """A lowering rule that runs ``rules[ctx.platform]`` (Note [lowering per platform])."""
    def rule(ctx: LoweringContext, eqn: Any, *operands: ir.Value) -> Any:
        chosen = rules.get(ctx.platform)
        if chosen is None:
            raise LoweringError(
                f"{eqn.prim.name} has no lowering for the {ctx.platform} platform in spmdc "
                f"(it has one for {', '.join(rules)})")
        return chosen(ctx, eqn, *operands)
    return rule


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


upstream_dialects = ir.DialectRegistry()
"""The MLIR dialects jaxlib links in (func, arith, ...), registered into spmdc's context."""
_jax_mlir_ext.register_dialects(upstream_dialects)


class JaxIrContext(ir.Context):
    """The class of spmdc's MLIR context (JAX's name): made without ``ir.Context``'s own
    initialisation, which would load every dialect linked into jaxlib; the context loads
    those of ``upstream_dialects`` and StableHLO's."""

    def __init__(self, *args: Any, **kwargs: Any):
        super(ir.Context, self).__init__(*args, **kwargs)


def _make_context() -> ir.Context:
    ctx = JaxIrContext()
    ctx.append_dialect_registry(upstream_dialects)
    ctx.load_all_available_dialects()
    hlo.register_dialect(ctx)
    chlo.register_dialect(ctx)     # erf, lgamma, ...: PJRT legalises chlo ops
    sdy.register_dialect(ctx)      # Shardy: meshes and shardings (Note [partition form])
    return ctx


_FLOAT_TYPES = {"bf16": "BF16Type", "f16": "F16Type", "f32": "F32Type", "f64": "F64Type",
                "f4_e2m1fn": "Float4E2M1FNType", "f8_e3m4": "Float8E3M4Type",
                "f8_e4m3": "Float8E4M3Type", "f8_e8m0fnu": "Float8E8M0FNUType",
                "f8_e4m3b11fnuz": "Float8E4M3B11FNUZType", "f8_e4m3fn": "Float8E4M3FNType",
                "f8_e4m3fnuz": "Float8E4M3FNUZType", "f8_e5m2": "Float8E5M2Type",
                "f8_e5m2fnuz": "Float8E5M2FNUZType"}


def _element_type(dtype: np.dtype) -> ir.Type:
    name = dtype_name(dtype)
    if name == "bool":
        return ir.IntegerType.get_signless(1)
    if name[0] == "i":
        return ir.IntegerType.get_signless(int(name[1:]))
    if name[0] == "u":
        return ir.IntegerType.get_unsigned(int(name[1:]))
    if name[0] == "c":
        return ir.ComplexType.get({"c64": ir.F32Type, "c128": ir.F64Type}[name].get())
    return getattr(ir, _FLOAT_TYPES[name]).get()


element_type = _element_type      # the MLIR element type of a NumPy dtype


@functools.lru_cache(maxsize=4096)
def mlir_type(t: TensorType) -> ir.RankedTensorType:
    # Cached: types live as long as the one context (mlir_context), and a lowering asks
    # for the same few types over and over. See Note [fast op creation].
    return ir.RankedTensorType.get(list(t.shape), _element_type(t.dtype))


def dense_constant(value: Any, t: TensorType) -> ir.Value:
    """A constant of type ``t`` holding the array ``value`` element by element."""
    arr = np.ascontiguousarray(np.asarray(value, t.dtype))
    if t.dtype.kind == "V":             # bfloat16 and the narrow types: the bindings take bits
        attr = _bits_constant(arr, t)
    else:
        attr = ir.DenseElementsAttr.get(arr, type=mlir_type(t))
    return hlo.ConstantOp(attr).result


def _bits_constant(arr: np.ndarray, t: TensorType) -> ir.Attribute:
    """A dense attribute of an ml_dtypes array (See Note [narrow dtypes] in core/dtypes.py):
    the bindings read 16-bit types from their bits, and the sub-byte and 8-bit types from
    one byte per element, as JAX's lowering hands them over."""
    if arr.dtype.itemsize == 2:
        return ir.DenseElementsAttr.get(arr.view(np.uint16), type=_element_type(t.dtype),
                                        shape=list(t.shape))
    return ir.DenseElementsAttr.get(arr.view(np.uint8), type=_element_type(t.dtype),
                                    shape=list(t.shape))


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
# the Shardy partitioner on (runtime/pjrt/compilation.py), and every device gets its own block.
#
# pmap stays in the replica form. Its reverse mode is the per-device one of Note
# [collective transpose], which the replica form's per-device program expresses directly;
# its launches take jaxlib's C++ dispatcher, which partitioned programs do not (yet); and
# the collectives compile to the same thing in both forms (their cost measured equal
# within noise). Measured here (8 CPU devices, x * 2 on f32[8, 4]
# already on the devices, 300 calls, median of 7, two runs): pmap 155 / 145 us per call,
# jit(shard_map) of the same in the partition form 241 / 193 us, the difference being the
# Python launch. (Since Note [grouped launch] in runtime/launcher.py partitioned
# programs launch through jaxlib's C++ dispatcher as well, at JAX's cost.)

class Partitioning:
    """The partition form's layout (Note [partition form]): the mesh as (name, size)
    pairs, major first, and per argument / result the mesh axes each dimension is split
    over (a tuple of axis-name tuples), or None for no annotation; ``device_ids``: the ids
    of the mesh's devices in mesh order (partition k runs on ``device_ids[k]``), for rules
    that hand the mesh to Python (experimental/custom_partitioning.py)."""

    def __init__(self, mesh: Sequence[tuple[str, int]],
                 in_specs: Sequence[tuple[tuple[str, ...], ...] | None],
                 out_specs: Sequence[tuple[tuple[str, ...], ...] | None],
                 device_ids: Sequence[int] = ()):
        self.mesh = tuple(mesh)
        self.in_specs = tuple(in_specs)
        self.out_specs = tuple(out_specs)
        self.device_ids = tuple(device_ids)

    @property
    def num_partitions(self) -> int:
        return int(np.prod([s for _, s in self.mesh], dtype=np.int64))


def sharding_attr(spec: tuple[tuple[str, ...], ...]) -> ir.Attribute:
    """``#sdy.sharding<@mesh, [{"x"}, {}]>``: each dimension split over its axes."""
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in spec)
    return ir.Attribute.parse(f"#sdy.sharding<@mesh, [{dims}]>")


def donation_aliases(in_types: Sequence[TensorType], out_types: Sequence[TensorType],
                     donated: Sequence[int]) -> dict[int, int]:
    """Which output reuses each donated input's buffer (Note [donation]): input position ->
    output position, pairing each donated input, in order, with the first output of its
    type not already taken. Donated inputs left out have no output to go to."""
    free: dict[TensorType, list[int]] = {}
    for k, t in enumerate(out_types):
        free.setdefault(t, []).append(k)
    aliases = {}
    for i in sorted(set(donated)):
        outs = free.get(in_types[i])
        if outs:
            aliases[i] = outs.pop(0)
    return aliases


# Note [donation]
# ~~~~~~~~~~~~~~~
# ``jit(f, donate_argnums=...)`` (and pmap's) gives the arguments' buffers to the program:
# an output of the same type (shape and dtype; in the partition form also the same
# layout) is written into the donated input's memory, so a training step that returns
# new parameters in place of the old ones needs no second copy. The lowering marks each
# such input ``tf.aliasing_output = k``; PJRT then takes the buffer from the caller at
# launch and the argument Array is deleted: reading it afterwards is an error, as in JAX.
# A donated input with no output of its type cannot be reused: it is left alone (not
# deleted) and the compile warns, as JAX does ("Some donated buffers were not usable").
# jaxlib crashes the process when a multi-device program is launched with a deleted
# multi-device array (JAX 0.10.2 does too: pass a donated sharded array again), so every
# launch of one checks its arguments first: the Python paths before packing, the C++
# dispatchers' flattening of an Array (runtime/array.py), which runs before their launch.


def _annotate(main: Any, n_args: int, partitioning: Partitioning | None,
              aliases: dict[int, int]) -> None:
    """Set the entry point's argument (and result) attributes: shardings in the partition
    form (Note [partition form]), ``tf.aliasing_output`` for donated inputs."""
    i32 = ir.IntegerType.get_signless(32)
    args: list[dict[str, ir.Attribute]] = [{} for _ in range(n_args)]
    if partitioning is not None:
        for a, spec in zip(args, partitioning.in_specs, strict=True):
            if spec is not None:
                a["sdy.sharding"] = sharding_attr(spec)
        main.result_attrs = ir.ArrayAttr.get([
            ir.DictAttr.get({} if s is None else {"sdy.sharding": sharding_attr(s)})
            for s in partitioning.out_specs])
    for i, k in aliases.items():
        args[i]["tf.aliasing_output"] = ir.IntegerAttr.get(i32, k)
    if partitioning is not None or aliases:
        main.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in args])


def ffi_call(target: str, operands: Sequence[ir.Value], in_types: Sequence[TensorType],
             out_types: Sequence[TensorType],
             attributes: dict[str, int | bool | np.int32] | None = None,
             aliases: dict[int, int] | None = None,
             column_major: Sequence[bool] | None = None) -> list[ir.Value]:
    """A ``stablehlo.custom_call`` to an XLA typed-FFI handler (api_version 4), as jaxlib's
    LAPACK and cuSOLVER kernels expect: ``attributes`` (name -> unsigned 8-bit value,
    such as LAPACK's characters ``ord('L')``, or a bool) go in the backend config,
    ``aliases`` map an output to the operand whose buffer it reuses. A ``np.int32`` value is a
    signed 32-bit attribute (``gehrd``'s ``low``/``high``). Matrices (the
    operands and results of the largest rank, or those marked in ``column_major``, inputs
    first) are passed column-major, the batch dimensions outermost; the others row-major."""
    rank = max(t.ndim for t in in_types)
    types = [*in_types, *out_types]
    marks = list(column_major) if column_major is not None else [t.ndim == rank for t in types]

    def layout(t: TensorType, col: bool) -> ir.Attribute:
        n = t.ndim
        dims = [n - 2, n - 1, *range(n - 3, -1, -1)] if col and n >= 2 else \
            list(range(n - 1, -1, -1))
        return ir.DenseIntElementsAttr.get(np.asarray(dims, np.int64), type=ir.IndexType.get())

    layouts = [layout(t, c) for t, c in zip(types, marks, strict=True)]
    u8, i32 = ir.IntegerType.get_unsigned(8), ir.IntegerType.get_signless(32)
    config = ir.DictAttr.get({k: ir.BoolAttr.get(v) if isinstance(v, bool) else
                              ir.IntegerAttr.get(i32, int(v)) if isinstance(v, np.int32)
                              else ir.IntegerAttr.get(u8, v)
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
                 mesh_axes: Sequence[str] = (), debug_info: bool = False,
                 partitioned: bool = False, platform: str = "cpu"):
        if platform not in PLATFORMS:
            raise LoweringError(f"spmdc lowers for the platforms {', '.join(PLATFORMS)}, "
                                f"not {platform!r}")
        self.platform = platform     # Note [lowering per platform]
        self.partitioned = partitioned         # the partition form (Note [partition form])
        self.partition_mesh: tuple[tuple[str, int], ...] = ()
        self.partition_device_ids: tuple[int, ...] = ()      # Partitioning.device_ids
        self.manual = False        # inside sdy.manual_computation (primitives/shard_map.py)
        self.num_replicas = num_replicas
        self.debug_info = debug_info         # every op gets its source as its location
        self.axis_env = dict(axis_env or {})   # axis name -> size, outermost first
        self.mesh_axes = tuple(mesh_axes)      # device mesh axis names, major to minor
        self._channel = 0
        # Python callables the module calls on the host (Note [host callbacks]); the
        # custom call for host_callbacks[k] carries index k.
        self.host_callbacks: list[Callable[..., Any]] = []
        self.has_side_effects = False          # some callback is an effect
        self.token: ir.Value | None = None     # the ordered effects' token in this body

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
        elif dtype_kind(t.dtype) in "iu":
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
    outer_token, ctx.token = ctx.token, None    # each region orders its own effects

    def read(a: Any) -> ir.Value:
        return ctx.constant(a.value, a.type) if isinstance(a, Lit) else env[a]

    for eqn in func.eqns:
        rule = lower_rules.get(eqn.prim)
        if rule is None:
            raise LoweringError(f"no lowering rule for primitive {eqn.prim.name!r}")
        operands = [env[a] if a.__class__ is Var else read(a)
                    for a in eqn.inputs]       # the test inlines read's common case
        sequenced = effectful and eqn.prim not in effectful and has_effects(eqn)
        if sequenced:                       # control flow holding effects: in the chain
            operands = _after_token(ctx, operands)
        if eqn.source.__class__ is SourceInfo or (ctx.debug_info and eqn.source):
            with _location(eqn):
                outs = rule(ctx, eqn, *operands)
        else:
            outs = rule(ctx, eqn, *operands)
        if sequenced:
            outs = _after_token(ctx, [outs] if isinstance(outs, ir.Value) else outs)
        if isinstance(outs, ir.Value):
            outs = [outs]
        env.update(zip(eqn.outputs, outs, strict=True))
    ctx.token = outer_token
    return [read(a) for a in func.outputs]


def _after_token(ctx: LoweringContext, values: Sequence[ir.Value]) -> list[ir.Value]:
    """``values`` tied to the effects' token (one optimization_barrier over both): what
    uses the results runs after the previous effects, and the next token comes after
    the values. See Note [host callbacks]."""
    if ctx.token is None:
        ctx.token = hlo.CreateTokenOp().result
    token, *values = hlo.OptimizationBarrierOp([ctx.token, *values]).results
    ctx.token = token
    return list(values)


def _location(eqn: Any) -> ir.Location:
    """The location of the ops of ``eqn``: its ``file:line``, named
    ``scope/primitive`` when it was traced under named_scope names (as JAX names them)."""
    where = str(eqn.source)
    file, _, line = where.rpartition(":")
    loc = (ir.Location.file(file, int(line), 0) if line.isdigit() else
           ir.Location.unknown())
    if eqn.source.__class__ is SourceInfo:
        loc = ir.Location.name(f"{eqn.source.scope}/{eqn.prim.name}", childLoc=loc)
    return loc


def lower(func: Func, *, num_replicas: int = 1, axis_env: dict[str, int] | None = None,
          mesh_axes: Sequence[str] = (), ctx: LoweringContext | None = None,
          partitioning: Partitioning | None = None,
          aliases: dict[int, int] | None = None,
          constants: Sequence[Any] = ()) -> ir.Module:
    """Lower ``func`` to a verified StableHLO module whose entry point is ``@main``
    (``ctx``, if given, is the LoweringContext to use: it collects the host callbacks);
    with ``partitioning``, in the partition form (Note [partition form]); ``aliases``
    (input -> output position) are donated inputs' buffers to reuse (Note [donation]).
    ``constants``: the values of ``func``'s last inputs, written into the module as
    ``stablehlo.constant`` ops; ``@main`` takes the inputs before them (Note [captured
    arrays are constants] in transforms/stages.py)."""
    ctx = ctx or LoweringContext(num_replicas, axis_env, mesh_axes)
    replicas, partitions = ctx.num_replicas, 1
    if partitioning is not None:
        ctx.partitioned, ctx.partition_mesh = True, partitioning.mesh
        ctx.partition_device_ids = partitioning.device_ids
        replicas, partitions = 1, partitioning.num_partitions
    with lowering_lock, mlir_context(), ir.Location.unknown():
        module = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, replicas)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, partitions)
        n_params = len(func.inputs) - len(constants)
        ftype = ir.FunctionType.get([mlir_type(t) for t in func.in_types[:n_params]],
                                    [mlir_type(t) for t in func.out_types])
        with ir.InsertionPoint(module.body):
            if partitioning is not None:
                axes = ", ".join(f'"{n}"={s}' for n, s in partitioning.mesh)
                sdy.MeshOp("mesh", ir.Attribute.parse(f"#sdy.mesh<[{axes}]>"))
            main = func_dialect.FuncOp("main", ftype)
            _annotate(main, n_params, partitioning, aliases or {})
            main.attributes["sym_visibility"] = ir.StringAttr.get("public")
            block = main.add_entry_block()
        with ir.InsertionPoint(block):
            embedded = [dense_constant(c, t) for c, t in
                        zip(constants, func.in_types[n_params:], strict=True)]
            func_dialect.ReturnOp(lower_body(ctx, func, [*block.arguments, *embedded]))
        if not module.operation.verify():
            raise LoweringError("the StableHLO module spmdc built does not verify")
    return module


def lower_text(func: Func, *, num_replicas: int = 1, axis_env: dict[str, int] | None = None,
               mesh_axes: Sequence[str] = (), debug_info: bool = False,
               partitioning: Partitioning | None = None,
               aliases: dict[int, int] | None = None, platform: str = "cpu",
               constants: Sequence[Any] = ()) -> str:
    """``lower`` and print the module, under the lock (Note [one lowering at a time]);
    with ``debug_info``, with every op's location."""
    return lower_program(func, num_replicas=num_replicas, axis_env=axis_env,
                         mesh_axes=mesh_axes, debug_info=debug_info,
                         partitioning=partitioning, aliases=aliases, platform=platform,
                         constants=constants)[0]


def lower_program(func: Func, *, num_replicas: int = 1,
                  axis_env: dict[str, int] | None = None, mesh_axes: Sequence[str] = (),
                  debug_info: bool = False, partitioning: Partitioning | None = None,
                  aliases: dict[int, int] | None = None, platform: str = "cpu",
                  constants: Sequence[Any] = ()
                  ) -> tuple[str, list[Callable[..., Any]], bool]:
    """The module's text for ``platform`` (Note [lowering per platform]), the host
    callbacks it calls, in index order (Note [host callbacks]; the executable must be
    compiled with exactly these), and whether any of them is an effect (a launch must
    then wait for them)."""
    ctx = LoweringContext(num_replicas, axis_env, mesh_axes, debug_info, platform=platform)
    with lowering_lock:
        module = lower(func, ctx=ctx, partitioning=partitioning, aliases=aliases,
                       constants=constants)
        text = (module.operation.get_asm(enable_debug_info=True) if debug_info
                else str(module))
        del module
    return text, ctx.host_callbacks, ctx.has_side_effects


def parse_module(text: str) -> ir.Module:
    """A module object from its text (what PJRT's compile takes along with host
    callbacks)."""
    with lowering_lock, mlir_context():
        return ir.Module.parse(text)


# Note [host callbacks]
# ~~~~~~~~~~~~~~~~~~~~~
# How a compiled program calls Python on the host, with jaxlib alone (jaxlib 0.10.2, PJRT
# CPU; what JAX's emit_python_callback in jax/_src/callback.py does):
# - jaxlib registers an XLA FFI handler named ``xla_ffi_python_cpu_callback`` for the
#   host platform (jaxlib/py_client_cpu.cc). On CUDA the handler is
#   ``xla_ffi_python_gpu_callback`` (jaxlib/gpu/py_client_gpu.cc), which the runtime
#   registers with the CUDA plugin (Note [CUDA custom calls] in runtime/pjrt/custom_calls.py); it
#   copies the operands to the host, calls the callable the same way, and copies the
#   results back to the device, but checks neither their shapes nor their dtypes, which
#   spmdc's callables do themselves (primitives/callbacks.py). Same attributes, same
#   ``host_callbacks`` at compile time. The module calls it with
#       stablehlo.custom_call @xla_ffi_python_cpu_callback(%operands...)
#           {api_version = 4 : i32, backend_config = {index = K : ui64},
#            has_side_effect = true|false}
#   (api_version 4 is the typed FFI; its attributes are the dictionary in
#   backend_config). ``has_side_effect = true`` stops XLA from removing or merging it.
# - The callables are handed to the compile: ``client.compile_and_load(module,
#   devices, options, host_callbacks=[f0, f1, ...])``. That overload takes the MLIR
#   module *object* (``parse_module``), not text. jaxlib wraps each callable in a
#   loaded host callback that the executable owns (so it lives as long as the
#   executable); at run time the handler finds callable K in the execution's user data.
# - The handler calls ``f_K(*operands)`` with the GIL held, each operand a read-only
#   NumPy view of the device buffer (valid only during the call: copy what you keep; a
#   token operand arrives as None), and expects a tuple with one array per result of
#   the custom call (a token result takes anything, e.g. None); it checks each array's
#   shape and dtype against the result, copies it into the result buffer, and turns a
#   Python exception into a failed execution.
# - Each replica of a program calls the callback with its own operands, on its own
#   thread: under pmap the callback runs once per device.
# - Order: XLA keeps a side-effecting op, but two with no data dependence between them
#   may run in either order (they do: the unrolled prints of a vmap came out shuffled).
#   So effects thread a token: the custom call takes a ``!stablehlo.token`` operand and
#   returns a new one first among its results (the callable receives and returns it
#   too). ``LoweringContext.token`` holds the current one within a body; each
#   control-flow region starts its own chain, and a control-flow op holding effects is
#   put in the outer chain by an ``optimization_barrier`` over the token and its
#   operands before it (it starts after the previous effects) and another over the
#   token and its results after it (the next effects wait for it to finish). spmdc
#   chains every effect of a program this way, ordered or not (primitives/callbacks.py);
#   pure callbacks are not chained.
# - A launch returns before the program has run (replicas run on their own threads), and
#   a program whose effects have no outputs gives nothing to wait on. So the runtime
#   launches programs with effects asking for the execution's token and waits for it
#   before returning (and never hands them to the C++ dispatcher, which would not
#   wait): when a call returns, its prints are out, in call order.

_CALLBACK_TARGETS = {"cpu": "xla_ffi_python_cpu_callback",
                     "cuda": "xla_ffi_python_gpu_callback"}


def _place_callback(ctx: LoweringContext, op: Any, n_results: int) -> None:
    """A host callback in the partition form needs a layout for XLA's partitioner: in a
    manual computation (shard_map's body) it runs on every device, on that device's
    values; in the global program it runs once, on the first device of the mesh, on the
    whole values (as JAX places it). One annotation per result, at least one."""
    if ctx.manual:
        ranks = [len(r.type.shape) if hasattr(r.type, "shape") else 0
                 for r in op.results] or [0]
        each = ["<mesh<[]>, [" + ", ".join(["{}"] * n) + "]>" for n in ranks]
    else:
        each = ["<mesh<[], device_ids=[0]>, []>"] * max(1, n_results)
    op.attributes["sdy.sharding"] = ir.Attribute.parse(
        "#sdy.sharding_per_value<[" + ", ".join(each) + "]>")


def host_callback_op(ctx: LoweringContext, callback: Callable[..., Any],
                     operands: Sequence[ir.Value], results: Sequence[TensorType], *,
                     has_side_effect: bool, ordered: bool) -> list[ir.Value]:
    """A custom call of the platform's host-callback handler that runs ``callback`` (which
    takes one array per operand and returns a tuple of arrays of the ``results`` types).
    See Note [host callbacks]."""
    result_types: list[ir.Type] = [mlir_type(t) for t in results]
    operands = list(operands)
    if ordered:
        if ctx.token is None:
            ctx.token = hlo.CreateTokenOp().result
        token_type = hlo.TokenType.get()
        operands.insert(0, ctx.token)
        result_types.insert(0, token_type)
        inner = callback

        def callback(token: Any, *args: Any) -> tuple[Any, ...]:
            return (token, *inner(*args))
    index = len(ctx.host_callbacks)
    ctx.host_callbacks.append(callback)
    ctx.has_side_effects |= has_side_effect
    u64 = ir.IntegerType.get_unsigned(64)
    op = ir.Operation.create(
        "stablehlo.custom_call", results=result_types, operands=operands,
        attributes={
            "call_target_name": ir.StringAttr.get(_CALLBACK_TARGETS[ctx.platform]),
            "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
            "backend_config": ir.DictAttr.get({"index": ir.IntegerAttr.get(u64, index)}),
            "has_side_effect": ir.BoolAttr.get(has_side_effect)})
    if ctx.partitioned:
        _place_callback(ctx, op, len(result_types))
    outs = list(op.results)
    if ordered:
        ctx.token = outs.pop(0)
    return outs
