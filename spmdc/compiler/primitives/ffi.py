"""Foreign functions: a call of a handler registered with XLA by name (``jax.ffi``'s
``ffi_call``), and the custom call it lowers to.

``ffi_call(*xs, target_name, shapes, dtypes, vmap_method, input_layouts, output_layouts,
input_output_aliases, custom_call_api_version, legacy_backend_config, attributes)``
calls the handler ``target_name`` (registered through spmdc.ffi.register_ffi_target)
with the operands, which returns results of the declared ``shapes`` and ``dtypes``.
Layouts are XLA's minor-to-major dimension orders, one per operand and per result;
``attributes`` are ``(name, value)`` pairs that reach the handler through the typed FFI
(custom-call API version 4) as its attributes. ``ffi_call_effect`` is the same call with
a side effect (``has_side_effect=True``): never dropped nor merged (Note [effects] in
passes/cleanup.py), marked so XLA keeps it too. Neither has a derivative (JAX's error
names custom_jvp), nor a NumPy reference: only a compiled program can run the handler.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import LoweringError
from ..builder import Builder
from ..ir import Atom, TensorType
from ..passes.autodiff import activity_rules, vjp_rules
from ..passes.cleanup import effectful
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules, broadcast_batch, move_axis
from ..stablehlo import element_type, hlo, ir, lower_rules, mlir_type
from .callbacks import VMAP_METHODS
from .callbacks import _looped as _sequential
from .callbacks import _per_element as _unrolled
from .core import declare

__all__ = ["ffi_call_p", "ffi_call_effect_p", "VMAP_METHODS", "ArrayAttribute", "FrozenDict",
           "ir_attribute", "custom_call", "row_major"]


class ArrayAttribute:
    """A NumPy array passed as an attribute, compared and hashed by its contents (the
    parameters of an equation are compared by value)."""
    __slots__ = ("value", "_key")

    def __init__(self, value: np.ndarray):
        self.value = np.array(value)
        self.value.flags.writeable = False
        self._key = (self.value.dtype.str, self.value.shape, self.value.tobytes())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArrayAttribute) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"ArrayAttribute({self.value!r})"

    def ir_text(self) -> str:
        return np.array2string(self.value, separator=", ").replace("\n", "")


class FrozenDict(dict):
    """A dict passed as an attribute (its values made comparable), hashed by its
    items."""

    def __hash__(self) -> int:           # type: ignore[override]
        return hash(tuple(sorted(self.items())))

    def ir_text(self) -> str:
        return repr(dict(self))


def _scalar_attribute(value: np.generic) -> Any:
    t = element_type(value.dtype)
    if isinstance(t, ir.IntegerType):
        return ir.IntegerAttr.get(t, int(value))
    if isinstance(t, ir.FloatType):
        return ir.FloatAttr.get(t, float(value))
    raise TypeError(f"ffi_call: an attribute of dtype {value.dtype} is not supported; "
                    "pass integers, floats, bools, strings, arrays of those, or dicts")


def ir_attribute(value: Any) -> Any:
    """The MLIR attribute of an attribute value, as JAX makes it: a Python bool, int or
    float is a 1-bit, 64-bit integer or 64-bit float; a NumPy scalar keeps its dtype; an
    array is a dense array; a str is a string; a dict a dictionary, a tuple or list an
    array of attributes."""
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, ArrayAttribute):
        value = value.value
    if isinstance(value, bool):
        return _scalar_attribute(np.bool_(value))
    if isinstance(value, int):
        return _scalar_attribute(np.int64(value))
    if isinstance(value, float):
        return _scalar_attribute(np.float64(value))
    if isinstance(value, (str, bytes)):
        return ir.StringAttr.get(value)
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return _scalar_attribute(np.asarray(value)[()])
    if isinstance(value, np.ndarray):
        return ir.DenseElementsAttr.get(np.ascontiguousarray(value),
                                        type=element_type(value.dtype), shape=value.shape)
    if isinstance(value, dict):
        return ir.DictAttr.get({k: ir_attribute(v) for k, v in value.items()})
    if isinstance(value, (tuple, list)):
        return ir.ArrayAttr.get([ir_attribute(v) for v in value])
    raise TypeError(f"ffi_call: no attribute for a value of type {type(value).__name__} "
                    f"({value!r}); pass integers, floats, bools, strings, NumPy arrays "
                    "or dicts of those")


def row_major(ndim: int) -> tuple[int, ...]:
    """The minor-to-major order of a row-major array of ``ndim`` dimensions."""
    return tuple(range(ndim - 1, -1, -1))


def _layout_attr(layout: Sequence[int]) -> Any:
    return ir.DenseIntElementsAttr.get(np.asarray(layout, np.int64), type=ir.IndexType.get())


def custom_call(target: str, operands: Sequence[Any], results: Sequence[TensorType], *,
                api_version: int = 4, backend_config: Any = None,
                operand_layouts: Sequence[Sequence[int]] | None = None,
                result_layouts: Sequence[Sequence[int]] | None = None,
                has_side_effect: bool = False,
                operand_output_aliases: dict[int, int] | None = None) -> Any:
    """A ``stablehlo.custom_call`` of ``target``: with ``api_version`` 4 (the typed FFI),
    ``backend_config`` is a dict of attributes (or None), with an older API an opaque
    string; layouts are minor-to-major, row-major when not given."""
    if api_version >= 4:
        if backend_config is not None and not isinstance(backend_config, dict):
            raise ValueError("When api_version > 4, backend_config must be a dictionary.")
        config = ir.DictAttr.get({k: ir_attribute(v)
                                  for k, v in (backend_config or {}).items()})
    else:
        config = ir.StringAttr.get(backend_config or "")
    in_layouts = operand_layouts if operand_layouts is not None else \
        [row_major(len(ir.RankedTensorType(v.type).shape)) for v in operands]
    out_layouts = result_layouts if result_layouts is not None else \
        [row_major(t.ndim) for t in results]
    single = len(results) == 1
    aliases = [hlo.OutputOperandAlias.get([] if single else [out], operand, [])
               for operand, out in sorted((operand_output_aliases or {}).items())]
    return hlo.CustomCallOp(
        [mlir_type(t) for t in results], list(operands), target,
        has_side_effect=ir.BoolAttr.get(has_side_effect), backend_config=config,
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), api_version),
        operand_layouts=ir.ArrayAttr.get([_layout_attr(x) for x in in_layouts]),
        result_layouts=ir.ArrayAttr.get([_layout_attr(x) for x in out_layouts]),
        output_operand_aliases=ir.ArrayAttr.get(aliases))


# --- the primitives ---------------------------------------------------------------------

def _result_types(shapes: Sequence[Any], dtypes: Sequence[Any]) -> tuple[TensorType, ...]:
    return tuple(TensorType(tuple(s), np.dtype(d)) for s, d in zip(shapes, dtypes, strict=True))


def _shape_rule(*xs: TensorType, shapes: Any, dtypes: Any, **params: Any
                ) -> tuple[TensorType, ...]:
    return _result_types(shapes, dtypes)


def _no_reference(*xs: Any, target_name: str, **params: Any) -> Any:
    raise LoweringError(f"ffi_call: the foreign function {target_name!r} runs only in a "
                        "compiled program; the NumPy reference interpreter cannot call it")


def _batched(layout: Sequence[int]) -> tuple[int, ...]:
    """``layout`` with a new batch dimension 0, the most major."""
    return (*(n + 1 for n in layout), 0)


def _batch(prim: Any) -> Any:
    def rule(b: Builder, axis: Any, args: list[Atom], dims: list[Any], **params: Any):
        method = params["vmap_method"]
        if method in ("sequential", "sequential_unrolled"):
            split = _sequential if method == "sequential" else _unrolled
            return split(b, prim, axis.size, args, dims, params)
        if method not in VMAP_METHODS or method is None:
            raise NotImplementedError(
                f"vmap is only supported for the ffi_call primitive when vmap_method is "
                f"one of 'sequential', 'sequential_unrolled', 'expand_dims', "
                f"'broadcast_all', or 'legacy_vectorized'. Got vmap_method={method!r}: "
                "pass vmap_method= to spmdc.ffi.ffi_call")
        front = [x if d is None else move_axis(b, x, d, 0)
                 for x, d in zip(args, dims, strict=True)]
        if method == "legacy_vectorized":
            in_layouts = tuple(layout if d is None else _batched(layout) for layout, d
                               in zip(params["input_layouts"], dims, strict=True))
        else:                                   # expand_dims, broadcast_all
            size = axis.size if method == "broadcast_all" else 1
            front = [broadcast_batch(b, x, size, 0) if d is None else x
                     for x, d in zip(front, dims, strict=True)]
            in_layouts = tuple(map(_batched, params["input_layouts"]))
        batched = {**params, "shapes": tuple((axis.size, *s) for s in params["shapes"]),
                   "input_layouts": in_layouts,
                   "output_layouts": tuple(map(_batched, params["output_layouts"]))}
        outs = b.bind(prim, *front, **batched)
        return list(outs), [0] * len(outs)
    return rule


def _no_derivative(*args: Any, target_name: str, **params: Any) -> Any:
    raise ValueError(f"The FFI call to `{target_name}` cannot be differentiated. You can "
                     "use `spmdc.custom_jvp` or `spmdc.custom_vjp` to add support.")


def _lowering(ctx: Any, eqn: Any, *operands: Any) -> list[Any]:
    p = eqn.params
    attributes = dict(p["attributes"])
    if p["custom_call_api_version"] < 4 and attributes:
        raise ValueError("The use of ffi_call attributes requires a custom call API "
                         f"version of at least 4; got api_version="
                         f"{p['custom_call_api_version']}.")
    op = custom_call(
        p["target_name"], operands, _result_types(p["shapes"], p["dtypes"]),
        api_version=p["custom_call_api_version"],
        backend_config=attributes if p["custom_call_api_version"] >= 4
        else p["legacy_backend_config"],
        operand_layouts=p["input_layouts"], result_layouts=p["output_layouts"],
        has_side_effect=p["has_side_effect"],
        operand_output_aliases=dict(p["input_output_aliases"]))
    return list(op.results)


ffi_call_p = declare("ffi_call", _shape_rule, _no_reference, multiple_results=True)
ffi_call_effect_p = declare("ffi_call_effect", _shape_rule, _no_reference,
                            multiple_results=True)
effectful.add(ffi_call_effect_p)                           # See Note [effects]
for _prim in (ffi_call_p, ffi_call_effect_p):
    batch_rules[_prim] = _batch(_prim)
    # As JAX, an error as soon as a differentiated value reaches the call.
    activity_rules[_prim] = _no_derivative
    jvp_rules[_prim] = _no_derivative
    vjp_rules[_prim] = _no_derivative
    lower_rules[_prim] = _lowering
