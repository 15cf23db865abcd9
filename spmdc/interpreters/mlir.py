"""``jax.interpreters.mlir``: registering a primitive's lowering to StableHLO.

``register_lowering(prim, rule, platform=None)`` with ``rule(ctx, *operands, **params)
-> [ir.Value per output]``: ``ctx`` is a ``LoweringRuleContext`` (``avals_in``,
``avals_out``, ``module_context``, ``primitive``), the operands are MLIR values, and the
rule builds StableHLO ops with jaxlib's MLIR bindings (``mlir.ir``,
``jaxlib.mlir.dialects.stablehlo``) at the insertion point spmdc's lowering is at, so its
ops are spliced into the module. ``lower_fun(fun, multiple_results)`` makes such a rule
from a function written with jnp/lax: it traces ``fun`` into spmdc's IR and lowers that
in place. The rules become the entries of spmdc's lowering table for the primitive
(compiler/stablehlo.py ``lower_rules``): Note [JAX's rule tables] in
spmdc/interpreters/tables.py. The helpers such rules use are here under JAX's names:
types and constants (``aval_to_ir_type`` by ``ir_type_handlers``, ``ir_constant`` by
the handlers ``register_constant_handler`` adds, ``ir_attribute``, ``shape_tensor``
...), modules (``merge_mlir_modules`` splices another module's functions in,
``module_to_string``, ``module_to_bytecode``) and host calls (``emit_python_callback``);
lowering jaxprs in a rule is in interpreters/mlir_jaxprs.py. This module reaches
jaxlib's MLIR bindings through compiler/stablehlo.py, their one door.
"""
from __future__ import annotations

import functools
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from ..compiler.ir import Eqn, TensorType
from ..compiler.passes.cleanup import cleanup
from ..compiler.stablehlo import (
    PLATFORMS,
    LoweringContext,
    dense_constant,
    element_type,
    hlo,
    host_callback_op,
    ir,
    lower_body,
    lower_rules,
    mlir_context,
    mlir_type,
)
from ..core import dtypes
from ..core.abstract import ShapedArray
from ..core.tracing import trace_detached, type_of
from ..errors import LoweringError
from ..runtime.array import Array
from ..runtime.sharding import Mesh
from .tables import aval_of_type, run_rule

__all__ = ["register_lowering", "lower_fun", "LoweringRuleContext", "ModuleContext",
           "ir", "ir_constant", "aval_to_ir_type", "aval_to_ir_types", "dtype_to_ir_type",
           "i32_attr", "i64_attr", "dense_int_array", "LoweringRule", "Value",
           "make_ir_context", "module_to_string", "module_to_bytecode", "merge_mlir_modules",
           "dense_int_elements", "flatten_ir_values", "flatten_ir_types",
           "unflatten_ir_values_like_types", "ir_constants", "token_type", "shape_tensor",
           "ir_attribute", "Token", "DEVICE_TO_DEVICE_TYPE", "SEND_TO_HOST_TYPE",
           "RECV_FROM_HOST_TYPE", "Mesh", "emit_python_callback", "ConstantHandler",
           "register_constant_handler", "ir_type_handlers", "TokenSet", "jaxpr_subcomp",
           "core_call_lowering", "ir_tree_registry"]

LoweringRule = Callable[..., Sequence[Any]]
"""``rule(ctx: LoweringRuleContext, *operands: ir.Value, **params) -> [ir.Value, ...]``"""

_lowerings: dict[Any, LoweringRule] = {}
"""The rules registered for every platform."""

_platform_specific_lowerings: dict[str, dict[Any, LoweringRule]] = {
    p: {} for p in (*PLATFORMS, "rocm", "tpu")}
"""The rules registered for one platform, by platform (spmdc lowers for cpu and cuda)."""

# JAX's platform names, and the platforms each covers.
_PLATFORM_NAMES = {"cpu": ("cpu",), "cuda": ("cuda",), "rocm": ("rocm",),
                   "gpu": ("cuda", "rocm"), "tpu": ("tpu",)}


@dataclass(frozen=True)
class ModuleContext:
    """What a lowering rule may ask of the module being built."""
    context: Any                     # the ir.Context
    platforms: tuple[str, ...]       # the platform being lowered for
    keepalives: list[Any] = field(default_factory=list)
    lowering: Any = field(default=None, repr=False)   # spmdc's LoweringContext

    def add_keepalive(self, keepalive: Any) -> None:
        """Hold ``keepalive`` (what ``emit_python_callback`` returns) with the module."""
        self.keepalives.append(keepalive)

    @property
    def platform(self) -> str:
        return self.platforms[0]


@dataclass(frozen=True)
class LoweringRuleContext:
    """The context a lowering rule gets: the abstract values of the operands and
    results, and the module's context."""
    module_context: ModuleContext
    primitive: Any
    avals_in: Sequence[Any]
    avals_out: Sequence[Any]
    lowering: LoweringContext = field(repr=False)   # spmdc's, for lower_fun
    tokens_in: Any = None                           # a TokenSet (spmdc: empty)

    def replace(self, **changes: Any) -> LoweringRuleContext:
        return replace(self, **changes)


def register_lowering(prim: Any, rule: LoweringRule, platform: str | None = None
                      ) -> LoweringRule:
    """Lower ``prim`` with ``rule`` (on ``platform`` only: 'cpu', 'cuda', 'rocm', 'gpu'
    or 'tpu'; every platform when None). Returns the rule."""
    if platform is None:
        _lowerings[prim] = rule
    else:
        names = _PLATFORM_NAMES.get(platform)
        if names is None:
            raise ValueError(f"register_lowering: unknown platform {platform!r} for "
                             f"primitive '{prim}'; use one of {', '.join(_PLATFORM_NAMES)}")
        for name in names:
            _platform_specific_lowerings[name][prim] = rule
    lower_rules[prim] = functools.partial(_lower, prim)
    return rule


def _lower(prim: Any, ctx: LoweringContext, eqn: Eqn, /, *operands: Any) -> list[Any]:
    rule = _platform_specific_lowerings.get(ctx.platform, {}).get(prim, _lowerings.get(prim))
    if rule is None:
        have = sorted(p for p, rules in _platform_specific_lowerings.items() if prim in rules)
        raise LoweringError(
            f"primitive '{prim}' has no lowering for the {ctx.platform} platform (it has "
            f"one for {', '.join(have)}); register one with "
            "jax.interpreters.mlir.register_lowering")
    what = f"the lowering rule of primitive '{prim}'"
    rule_ctx = LoweringRuleContext(
        ModuleContext(ir.Context.current, (ctx.platform,), lowering=ctx), prim,
        [aval_of_type(a.type) for a in eqn.inputs], [aval_of_type(v.type) for v in eqn.outputs],
        ctx, TokenSet())
    with run_rule(what):
        out = rule(rule_ctx, *operands, **eqn.params)
    values = _flat_values(out, what)
    if len(values) != len(eqn.outputs):
        raise LoweringError(f"{what} gave {len(values)} values for {len(eqn.outputs)} "
                            "outputs")
    for k, (value, v) in enumerate(zip(values, eqn.outputs, strict=True)):
        if value.type != mlir_type(v.type):
            raise LoweringError(
                f"{what} gave a value of type {value.type} for output {k}, whose type is "
                f"{v.type} ({mlir_type(v.type)}); the ops it emits must give the types of "
                "its abstract evaluation")
    return values


def _flat_values(out: Any, what: str) -> list[Any]:
    if isinstance(out, ir.Value):
        return [out]
    if isinstance(out, ir.OpView | ir.Operation):
        return list(out.results)
    if not isinstance(out, (list, tuple)):
        raise LoweringError(f"{what} returned {type(out).__name__}; a lowering rule "
                            "returns a list of ir.Values, one per output")
    values = []
    for o in out:
        if isinstance(o, (list, tuple)) and len(o) == 1:
            o = o[0]
        if not isinstance(o, ir.Value):
            raise LoweringError(f"{what} returned {o!r} where an ir.Value was expected")
        values.append(o)
    return values


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> LoweringRule:
    """A lowering rule that lowers ``fun(*operands, **params)``, written with spmdc's
    jnp and lax, by tracing it into spmdc's IR and lowering that in place. ``fun`` is
    traced by itself, when the program is lowered, after the passes that give named
    axes their meaning: it computes on its operands alone (a collective over an axis
    name in it is an unbound-axis error)."""
    def rule(ctx: LoweringRuleContext, /, *operands: Any, **params: Any) -> list[Any]:
        in_types = [TensorType(tuple(a.shape), np.dtype(a.dtype)) for a in ctx.avals_in]

        def body(xs: list[Any]) -> list[Any]:
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]
        func, captured = trace_detached(body, in_types, f"{ctx.primitive}_lowering")
        constants = [dense_constant(np.asarray(c), type_of(c)[0]) for c in captured]
        return lower_body(ctx.lowering, cleanup(func), [*operands, *constants])
    return rule


# --- helpers that lowering rules use ----------------------------------------------------------

def _array_ir_type(aval: Any) -> Any:
    return mlir_type(TensorType(tuple(aval.shape), np.dtype(aval.dtype)))


ir_type_handlers: dict[type, Callable[[Any], Any]] = {ShapedArray: _array_ir_type}
"""The MLIR type (or types) of an abstract value, by the abstract value's class; a
library registers its own abstract value class here."""


def _ir_types_of(args: tuple[Any, ...], what: str) -> Any:
    if len(args) not in (1, 2):
        raise TypeError(f"{what}(ctx, aval) takes the module context and an abstract "
                        f"value, got {len(args)} arguments")
    aval = args[-1]
    handler = ir_type_handlers.get(type(aval))
    if handler is None:
        raise TypeError(f"No ir_type_handler for aval type: {type(aval)}")
    return handler(aval)


def aval_to_ir_type(*args: Any) -> Any:
    """``aval_to_ir_type(ctx, aval)`` (JAX's form; ``aval_to_ir_type(aval)`` too): the
    one MLIR type of an abstract value (``ir_type_handlers``)."""
    t = _ir_types_of(args, "aval_to_ir_type")
    if isinstance(t, ir.Type):
        return t
    raise TypeError(f"Expected a single IR type, got {t}")


def aval_to_ir_types(*args: Any) -> tuple[Any, ...]:
    """``aval_to_ir_types(ctx, aval)``: the MLIR types of an abstract value."""
    t = _ir_types_of(args, "aval_to_ir_types")
    return (t,) if isinstance(t, ir.Type) else tuple(t)


def dtype_to_ir_type(dtype: Any) -> Any:
    """The MLIR element type of a dtype."""
    return element_type(np.dtype(dtype))


class ConstantHandler(Protocol):
    """``handler(val, aval) -> ir.Value or tuple of them``: the constant(s) standing for
    a value of a registered type (``aval`` its abstract value, when known)."""

    def __call__(self, val: Any, aval: Any) -> Any: ...


def _array_constant(val: Any, aval: Any) -> Any:
    """A StableHLO constant holding the array-like ``val`` (at ``aval``'s dtype when
    given, else its own made canonical as JAX does: 32-bit unless x64 is enabled)."""
    arr = np.asarray(val)
    dtype = np.dtype(aval.dtype) if aval is not None else dtypes.canonicalize(arr.dtype)
    return dense_constant(arr, TensorType(arr.shape, dtype))


_constant_handlers: dict[type, ConstantHandler] = dict.fromkeys(
    (np.ndarray, np.generic, bool, int, float, complex, Array), _array_constant)


def register_constant_handler(type_: type, handler_fun: ConstantHandler) -> None:
    """Lower the values of ``type_`` (and its subclasses) that a lowering rule makes
    constants of with ``handler_fun(val, aval)``."""
    if not isinstance(type_, type) or not callable(handler_fun):
        raise TypeError(f"register_constant_handler: expected a type and a handler "
                        f"function, got {type_!r} and {handler_fun!r}")
    _constant_handlers[type_] = handler_fun


def _ir_constant(val: Any, const_lowering: dict[Any, Any] | None, aval: Any) -> Any:
    if const_lowering is not None and (id(val), aval) in const_lowering:
        return const_lowering[id(val), aval]
    for t in type(val).__mro__:
        handler = _constant_handlers.get(t)
        if handler is not None:
            return handler(val, aval)
    if hasattr(val, "__jax_array__"):
        return _ir_constant(val.__jax_array__(), const_lowering, aval)
    raise TypeError(f"No constant handler for type: {type(val)}")


def ir_constant(val: Any, *, const_lowering: dict[Any, Any] | None = None,
                aval: Any = None) -> Any:
    """The StableHLO constant standing for ``val``, by the handler registered for its
    type (``register_constant_handler``; arrays and scalars built in), or the value
    ``const_lowering`` holds for it (keyed by ``(id(val), aval)``)."""
    value = _ir_constant(val, const_lowering, aval)
    if isinstance(value, tuple):
        raise ValueError(f"Expected a constant to produce a single ir.Value, got {value}")
    return value


def i32_attr(i: int) -> Any:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), i)


def i64_attr(i: int) -> Any:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)


def dense_int_array(xs: Sequence[int]) -> Any:
    return ir.DenseI64ArrayAttr.get([int(x) for x in xs])


# --- modules, values and attributes (JAX's helpers of the same names) ----------------------

Value = ir.Value
"""An MLIR SSA value (what lowering rules take and return)."""

Token = ir.Value
"""A value of StableHLO's token type (``token_type()``), as JAX names it."""

# The channel types of a ``stablehlo.channel_handle`` (send, recv), as XLA numbers them.
DEVICE_TO_DEVICE_TYPE = 1
SEND_TO_HOST_TYPE = 2
RECV_FROM_HOST_TYPE = 3


def make_ir_context() -> Any:
    """The MLIR context spmdc builds its modules in (StableHLO, CHLO, Shardy and func
    registered): a rule's module or one a library builds is then one spmdc can splice."""
    return mlir_context()


def module_to_string(module: Any, enable_debug_info: bool | None = None) -> str:
    """A module's text (with each op's location when ``enable_debug_info``)."""
    return module.operation.get_asm(enable_debug_info=bool(enable_debug_info))


def module_to_bytecode(module: Any) -> bytes:
    """A module as MLIR bytecode (``ir.Module.parse`` reads it back)."""
    out = io.BytesIO()
    module.operation.write_bytecode(out)
    return out.getvalue()


def merge_mlir_modules(dst_module: Any, sym_name: str, src_module: Any,
                       dst_symtab: Any = None) -> str:
    """Move ``src_module``'s functions into ``dst_module`` (an ``ir.Module`` or a module
    operation), made private and renamed where a name is taken; ``src_module``'s
    ``@main`` is named ``sym_name`` or a fresh variant of it, which is returned.
    ``src_module`` is left empty. Both must be in one context."""
    dst = dst_module.operation if isinstance(dst_module, ir.Module) else dst_module
    dst_table = dst_symtab if dst_symtab is not None else ir.SymbolTable(dst)
    src_table = ir.SymbolTable(src_module.operation)
    if "main" not in src_table:
        raise ValueError("merge_mlir_modules: the module to merge has no @main")
    renamed: dict[str, str] = {}
    for op in src_module.body.operations:
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name == "main" or name in dst_table:
            base = sym_name if name == "main" else name
            new, k = base, 0
            while new in src_table or new in dst_table or new in renamed.values():
                new, k = f"{base}_{k}", k + 1
            renamed[name] = new
    private = ir.StringAttr.get("private")
    for op in src_module.body.operations:
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name in renamed:
            src_table.set_symbol_name(op, renamed[name])
        if op.name == "func.func":
            op.attributes["sym_visibility"] = private
    for old, new in renamed.items():
        for op in src_module.body.operations:
            src_table.replace_all_symbol_uses(old, new, op)
    body = dst.regions[0].blocks[0]
    for op in list(src_module.body.operations):
        body.append(op)
        dst_table.insert(op)
    return renamed["main"]


def dense_int_elements(xs: Sequence[int]) -> Any:
    """A 64-bit integer DenseElementsAttr of ``xs``."""
    return ir.DenseIntElementsAttr.get(np.asarray(xs, np.int64))


def flatten_ir_values(xs: Sequence[Any]) -> list[Any]:
    """Values and sequences of values, flattened one level into a list of values."""
    out: list[Any] = []
    for x in xs:
        if isinstance(x, ir.Value):
            out.append(x)
        else:
            out.extend(x)
    return out


def flatten_ir_types(xs: Sequence[Any]) -> list[Any]:
    """Types and sequences of types, flattened one level into a list of types."""
    out: list[Any] = []
    for x in xs:
        if isinstance(x, ir.Type):
            out.append(x)
        else:
            out.extend(x)
    return out


def unflatten_ir_values_like_types(xs: Sequence[Any], ys: Sequence[Any]) -> list[Any]:
    """The values ``xs`` grouped as the types ``ys`` are: a value per type, a tuple of
    values per sequence of types."""
    it = iter(xs)
    out = [next(it) if isinstance(y, ir.Type) else tuple(next(it) for _ in y) for y in ys]
    if next(it, None) is not None:
        raise ValueError("unflatten_ir_values_like_types: more values than the types hold")
    return out


def ir_constants(val: Any, *, const_lowering: dict[Any, Any] | None = None,
                 aval: Any = None) -> tuple[Any, ...]:
    """The constants that stand for ``val`` (a registered type's handler may give
    several)."""
    value = _ir_constant(val, const_lowering, aval)
    return (value,) if isinstance(value, ir.Value) else tuple(value)


def token_type() -> Any:
    """The type of StableHLO's tokens."""
    return hlo.TokenType.get()


def shape_tensor(sizes: Sequence[Any]) -> Any:
    """A 1-D ``tensor<Nxi32>`` of ``sizes``: ints, or scalar integer ``ir.Value``s."""
    i32 = ir.IntegerType.get_signless(32)
    parts = []
    for d in sizes:
        if isinstance(d, ir.Value):
            scalar = d if ir.RankedTensorType(d.type).element_type == i32 else \
                hlo.convert(ir.RankedTensorType.get([], i32), d)
            parts.append(hlo.reshape(ir.RankedTensorType.get([1], i32), scalar))
        else:
            parts.append(ir_constant(np.array([int(d)], np.int32)))
    if not parts:
        return ir_constant(np.zeros((0,), np.int32))
    return parts[0] if len(parts) == 1 else hlo.concatenate(parts, 0)


def emit_python_callback(ctx: LoweringRuleContext, callback: Callable[..., Any], token: Any,
                         operands: Sequence[Any], operand_avals: Sequence[Any],
                         result_avals: Sequence[Any], *, has_side_effect: bool,
                         returns_token: bool = True, partitioned: bool = False,
                         sharding: Any = None) -> tuple[list[Any], Any, Any]:
    """Emit a call of the Python function ``callback`` on the host: it receives one NumPy
    array per operand and returns one array per result abstract value. With ``token``
    (a ``!stablehlo.token`` value) the call is ordered after it and gives the next
    token. Returns ``(results, token_out, keepalive)``; hold ``keepalive`` with
    ``ctx.module_context.add_keepalive``. spmdc places callbacks itself (once, or per
    device inside shard_map: Note [host callbacks] in compiler/stablehlo.py), so
    ``partitioned`` and ``sharding`` must keep their defaults."""
    if partitioned or sharding is not None:
        raise ValueError("emit_python_callback: spmdc places host callbacks itself; "
                         "partitioned=True and sharding= are not supported")
    if len(operands) != len(operand_avals):
        raise ValueError(f"emit_python_callback: {len(operands)} operands and "
                         f"{len(operand_avals)} operand abstract values")
    results = [TensorType(tuple(a.shape), dtypes.canonicalize(np.dtype(a.dtype)))
               for a in result_avals]

    def on_host(*args: Any) -> tuple[Any, ...]:
        outs = callback(*args)
        if len(outs) != len(results):
            raise RuntimeError(f"Mismatched number of outputs from callback. Expected: "
                               f"{len(results)}, Actual: {len(outs)}")
        arrays = tuple(np.asarray(o) for o in outs)
        for k, (a, t) in enumerate(zip(arrays, results, strict=True)):
            if a.shape != t.shape or a.dtype != t.dtype:
                raise RuntimeError(f"Incorrect output {k} from callback: expected "
                                   f"{t}, got {a.dtype.name}{list(a.shape)}")
        return arrays
    lowering = ctx.lowering
    if token is None:
        values = host_callback_op(lowering, on_host, operands, results,
                                  has_side_effect=has_side_effect, ordered=False)
        return values, None, on_host
    outer, lowering.token = lowering.token, token
    try:
        values = host_callback_op(lowering, on_host, operands, results,
                                  has_side_effect=has_side_effect, ordered=True)
        token_out = lowering.token
    finally:
        lowering.token = outer
    return values, token_out if returns_token else None, on_host


def ir_attribute(value: Any) -> Any:
    """The MLIR attribute of a Python value: a bool, int (i64), float (f64), str, NumPy
    array (dense elements), or a list or tuple of those (an array attribute)."""
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, (int, np.integer)):
        return i64_attr(int(value))
    if isinstance(value, (float, np.floating)):
        return ir.FloatAttr.get(ir.F64Type.get(), float(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, np.ndarray):
        return ir.DenseElementsAttr.get(value)
    if isinstance(value, (list, tuple)):
        return ir.ArrayAttr.get([ir_attribute(v) for v in value])
    raise TypeError(f"ir_attribute: no MLIR attribute for a value of type "
                    f"{type(value).__name__}")


# Lowering jaxprs inside lowering rules (``jaxpr_subcomp``, ``core_call_lowering``), tokens
# (``TokenSet``) and the pytree registry of IR values (``ir_tree_registry``).
from .mlir_jaxprs import (  # noqa: E402
    TokenSet,
    core_call_lowering,
    ir_tree_registry,
    jaxpr_subcomp,
)
