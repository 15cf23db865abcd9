"""The Primitive type, the registry of all primitives, and the builders of shape rules.

A primitive is declared once, with its shape rule (abstract evaluation) and its NumPy
reference implementation; the rules that transformations need are registered directly
under the declaration, in the tables the passes own (``batch_rules`` in passes/vmap.py,
``vjp_rules`` in passes/autodiff.py, ``lower_rules`` in stablehlo.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import ShapeError
from ..ir import TensorType, dtype_name

__all__ = ["Primitive", "registry", "declare", "same_dtype", "same_shape_or_scalar"]

ShapeRule = Callable[..., TensorType | tuple[TensorType, ...]]
"""``shape_rule(*in_types, **params) -> out_type`` (a tuple when ``multiple_results``).
Raises ShapeError with a message that names what is wrong."""

Impl = Callable[..., Any]
"""``impl(*ndarrays, **params) -> ndarray`` (a tuple when ``multiple_results``): the
NumPy reference, the oracle for tests and the IR interpreter."""


class Primitive:
    __slots__ = ("name", "shape_rule", "impl", "multiple_results")

    def __init__(self, name: str, shape_rule: ShapeRule, impl: Impl,
                 multiple_results: bool = False):
        self.name = name
        self.shape_rule = shape_rule
        self.impl = impl
        self.multiple_results = multiple_results

    def abstract_eval(self, *in_types: TensorType, **params: Any) -> tuple[TensorType, ...]:
        out = self.shape_rule(*in_types, **params)
        return tuple(out) if self.multiple_results else (out,)

    def __repr__(self) -> str:
        return self.name


registry: dict[str, Primitive] = {}


def declare(name: str, shape_rule: ShapeRule, impl: Impl,
            multiple_results: bool = False) -> Primitive:
    """Create a primitive and add it to the registry (names are unique)."""
    if name in registry:
        raise ValueError(f"primitive {name!r} is declared twice")
    prim = registry[name] = Primitive(name, shape_rule, impl, multiple_results)
    return prim


# --- pieces of shape rules -----------------------------------------------------------------

def same_dtype(name: str, *types: TensorType) -> np.dtype:
    dtypes = {t.dtype for t in types}
    if len(dtypes) != 1:
        raise ShapeError(f"{name} needs operands of one dtype, got "
                         f"{', '.join(dtype_name(t.dtype) for t in types)}")
    return types[0].dtype


def same_shape_or_scalar(name: str, *types: TensorType) -> tuple[int, ...]:
    """Elementwise operands share one shape; rank-0 operands broadcast to it."""
    shapes = {t.shape for t in types if t.shape != ()}
    if len(shapes) > 1:
        raise ShapeError(f"{name} got incompatible shapes "
                         f"{', '.join(str(t) for t in types)}")
    return shapes.pop() if shapes else ()


# --- declaration builders for the common families ------------------------------------------

def _check_kind(name: str, t: TensorType, kinds: str) -> None:
    if t.dtype.kind not in kinds and not (t.dtype.name == "bfloat16" and "f" in kinds):
        raise ShapeError(f"{name} does not accept dtype {dtype_name(t.dtype)}")


FLOAT = "fc"
NUMBER = "iufc"
INTEGRAL = "iub"
ANY = "biufc"


def elementwise_unary(name: str, impl: Impl, kinds: str = FLOAT) -> Primitive:
    """``y = f(x)`` elementwise; the output type is the input type."""
    def rule(x: TensorType) -> TensorType:
        _check_kind(name, x, kinds)
        return x
    return declare(name, rule, impl)


def elementwise_binary(name: str, impl: Impl, kinds: str = NUMBER) -> Primitive:
    """``z = f(x, y)`` elementwise over operands of one dtype; rank-0 operands broadcast."""
    def rule(x: TensorType, y: TensorType) -> TensorType:
        if x == y:                      # the common case: nothing to compare or build
            _check_kind(name, x, kinds)
            return x
        dtype = same_dtype(name, x, y)
        _check_kind(name, x, kinds)
        return TensorType(same_shape_or_scalar(name, x, y), dtype)
    return declare(name, rule, impl)


def comparison(name: str, impl: Impl, kinds: str = ANY) -> Primitive:
    """``z = x <op> y`` elementwise, giving bool."""
    def rule(x: TensorType, y: TensorType) -> TensorType:
        same_dtype(name, x, y)
        _check_kind(name, x, kinds)
        return TensorType(same_shape_or_scalar(name, x, y), np.dtype(np.bool_))
    return declare(name, rule, impl)
