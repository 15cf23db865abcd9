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
from ..ir import TensorType, dtype_kind, dtype_name

__all__ = ["Primitive", "registry", "bind_params_rules", "library_primitives", "declare",
           "same_dtype", "same_shape_or_scalar", "set_binder"]

ShapeRule = Callable[..., TensorType | tuple[TensorType, ...]]
"""``shape_rule(*in_types, **params) -> out_type`` (a tuple when ``multiple_results``).
Raises ShapeError with a message that names what is wrong."""

Impl = Callable[..., Any]
"""``impl(*ndarrays, **params) -> ndarray`` (a tuple when ``multiple_results``): the
NumPy reference, the oracle for tests and the IR interpreter."""


# Note [Primitive.bind]
# ~~~~~~~~~~~~~~~~~~~~~
# JAX's primitives are applied with ``prim.bind(*args, **params)``, and libraries that
# rewrite programs call it on the built-in ones (``lax.sqrt_p.bind(x)``). Binding is
# tracing's work (core/tracing.py: emit into the current trace, or run eagerly), and the
# compiler may not import the core (tests/e2e/test_layering.py). So the dependency that
# points up is turned around and made explicit, as for eager execution: core/tracing.py
# hands its ``bind`` to ``set_binder`` when it is imported, which happens whenever
# spmdc is imported, before anything can call ``Primitive.bind``. The params a library
# passes are JAX's, as a jaxpr's equations show them (distrax's Lambda bijector binds
# ``log_p`` with the params of an ``exp`` equation, ``accuracy=None``); so
# transforms/jaxpr_params.py, imported with spmdc too, then installs the binder that
# takes JAX's form back to spmdc's (Note [jaxpr names and params]) before binding. The
# compiler itself never calls ``Primitive.bind``; its rules emit through a Builder.
_binder: Callable[..., Any] | None = None


def set_binder(bind: Callable[..., Any]) -> None:
    """Install ``bind(prim, *args, **params)``, what ``Primitive.bind`` calls (Note
    [Primitive.bind])."""
    global _binder
    _binder = bind


class Primitive:
    __slots__ = ("name", "shape_rule", "impl", "multiple_results")

    # JAX's flags for the primitives whose equations hold a ``call_jaxpr`` to run (a
    # call) or to map (``xla_pmap``); libraries that walk jaxprs (distrax's Lambda
    # bijector) test them on every equation. spmdc's jaxprs show none such: jit calls
    # are ``jit`` equations holding a ``jaxpr``, as in JAX.
    call_primitive = False
    map_primitive = False

    def __init__(self, name: str, shape_rule: ShapeRule, impl: Impl,
                 multiple_results: bool = False):
        self.name = name
        self.shape_rule = shape_rule
        self.impl = impl
        self.multiple_results = multiple_results

    def bind(self, /, *args: Any, **params: Any) -> Any:
        """Apply this primitive to ``args``, as JAX's ``Primitive.bind`` does: emitted
        into the current trace, or run at once (Note [Primitive.bind])."""
        return _binder(self, *args, **params)  # type: ignore[misc]

    def get_bind_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """JAX's: an equation's params as ``bind`` takes them, for interpreters that
        rebind ``eqn.primitive.bind(*args, **bind_params)``; the params as they are, but
        for the primitives of ``bind_params_rules`` (Note [bind params and subfuns] in
        spmdc/extend/core/bind_params.py)."""
        rule = bind_params_rules.get(self)
        return dict(params) if rule is None else rule(params)

    def out_types(self, /, *in_types: TensorType, **params: Any) -> tuple[TensorType, ...]:
        """The output types for these input types (the shape rule's, as a tuple)."""
        out = self.shape_rule(*in_types, **params)
        return tuple(out) if self.multiple_results else (out,)

    abstract_eval = out_types   # JAX's primitives (spmdc/extend/core/__init__.py) take JAX's avals

    def __repr__(self) -> str:
        return self.name


registry: dict[str, Primitive] = {}

bind_params_rules: dict[Primitive, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""``get_bind_params`` of the primitives whose equations hand functions over to ``bind``
(``subfuns``), filled by spmdc/extend/core/bind_params.py."""

library_primitives: set[Primitive] = set()
"""The primitives libraries define (``jax.extend.core.Primitive``, spmdc/extend/core/__init__.py):
not in ``registry``, since JAX does not make their names unique, and with whatever rules
their library registers."""


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
    if dtype_kind(t.dtype) not in kinds:
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
