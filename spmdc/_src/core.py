"""``jax.core`` (and ``jax._src.core``) under the alias: JAX's names for the types of
traced values and abstract values, and the helpers libraries call on them, each the
real spmdc object (spmdc/aliases.py maps ``jax.core`` here; spmdc's own ``spmdc.core``
package is its private implementation)."""
from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core.abstract import AbstractValue, ShapedArray, typeof
from ..core.tracing import Trace, Tracer, current_trace, set_current
from ..core.tracing import compile_time_eval as ensure_compile_time_eval
from ..extend.core import (
    OpaqueTraceState,
    Primitive,
    concrete_or_error,
    find_top_trace,
    get_opaque_trace_state,
    mapped_aval,
    unmapped_aval,
    valid_jaxtype,
)
from ..runtime.array import Array
from ..transforms.jaxpr_view import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    eval_jaxpr,
    jaxpr_as_fun,
    jaxprs_in_params,
    new_jaxpr_eqn,
    subjaxprs,
)

__all__ = ["Tracer", "Trace", "ShapedArray", "AbstractValue", "Primitive", "get_aval",
           "pytype_aval_mappings", "valid_jaxtype", "mapped_aval", "unmapped_aval",
           "get_opaque_trace_state", "OpaqueTraceState", "trace_state_clean",
           "concrete_or_error", "raise_to_shaped", "find_top_trace",
           "Jaxpr", "ClosedJaxpr", "JaxprEqn", "Var", "Literal", "DropVar", "Atom",
           "eval_jaxpr", "jaxpr_as_fun", "jaxprs_in_params", "new_jaxpr_eqn", "subjaxprs",
           "ParamDict", "ensure_compile_time_eval", "eval_context", "max_dim", "min_dim"]

Atom = Var | Literal
"""What an equation's operand is: a variable or a literal."""


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of ``x`` (JAX's older name for ``jax.typeof``): by the function
    ``pytype_aval_mappings`` has for its class or the nearest base class, as in JAX;
    for a value of no class there, ``typeof``'s (a TypeError for what is not an array)."""
    for cls in type(x).__mro__:
        aval_of = pytype_aval_mappings.get(cls)
        if aval_of is not None:
            return aval_of(x)
    return typeof(x)


pytype_aval_mappings: dict[type, Callable[[Any], ShapedArray]] = {
    t: typeof for t in (bool, int, float, complex, np.ndarray, Array, Tracer, *(
        np.dtype(c).type for c in "?bBhHiIlLqQefdgFDG"))}
"""The Python classes whose values are arrays, each with the function giving its
abstract value, read by ``get_aval`` (TFP's JAX substrate registers its Variable
class)."""


def trace_state_clean() -> bool:
    """Whether no transformation is tracing on this thread."""
    return current_trace() is None


def raise_to_shaped(aval: Any, weak_type: bool | None = None) -> ShapedArray:
    """``aval`` as a ShapedArray (with ``weak_type`` when given)."""
    weak = getattr(aval, "weak_type", False) if weak_type is None else weak_type
    return ShapedArray(aval.shape, aval.dtype, weak)


ParamDict = dict[str, Any]
"""The type of an equation's parameters (JAX's alias)."""


@contextlib.contextmanager
def eval_context() -> Iterator[None]:
    """Inside the block, operations run at once on concrete values, even while a
    transformation traces (JAX's evaluation trace); a traced value used there is an
    UnexpectedTracerError, as in JAX."""
    previous = current_trace()
    set_current(None)
    try:
        yield
    finally:
        set_current(previous)


def _dim(d: Any, which: str, fn: str) -> int:
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError(f"argument `{which}` of `core.{fn}` must be a dimension size (an "
                        f"int; spmdc's shapes are static), got {d!r}") from None


def min_dim(d1: Any, d2: Any) -> int:
    """``min(d1, d2)`` of two dimension sizes (JAX's also takes symbolic ones; spmdc's
    shapes are static ints)."""
    return min(_dim(d1, "d1", "min_dim"), _dim(d2, "d2", "min_dim"))


def max_dim(d1: Any, d2: Any) -> int:
    """``max(d1, d2)`` of two dimension sizes (see ``min_dim``)."""
    return max(_dim(d1, "d1", "max_dim"), _dim(d2, "d2", "max_dim"))
