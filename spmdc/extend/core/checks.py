"""The rest of ``jax.extend.core``'s helpers: checking a jaxpr (``check_jaxpr``, which
raises ``JaxprTypeError``), making fresh variables (``gensym``), forcing a concrete value
(``concrete_or_error``), the tangent dtype of a primal dtype, the effect sets, the array
types, and the names of the axes bound where a function is being traced.

Note [checking a jaxpr]
~~~~~~~~~~~~~~~~~~~~~~~~
JAX's ``check_jaxpr`` type-checks a jaxpr a library built or rewrote before it is
evaluated or lowered. spmdc's jaxprs are views of its IR, which its verifier checks
after every pass; a jaxpr a library assembles from ``new_jaxpr_eqn`` has no IR behind it.
So ``check_jaxpr`` checks the jaxpr itself: every variable an equation reads is an input,
a constant or an earlier equation's output; no variable is defined twice; each output
variable is defined; and an equation of a primitive with an abstract evaluation (JAX's
Primitive) has outputs of the types it gives. Sub-jaxprs in parameters are checked the
same way. The first problem is a ``JaxprTypeError`` naming the equation.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core import tracing
from ...errors import ConcretizationTypeError, InconclusiveDimensionOperation, JaxprTypeError
from ...runtime.array import Array
from ...transforms.forward import float0
from ...transforms.jaxpr_view import ClosedJaxpr, Jaxpr, Var, jaxprs_in_params
from . import library_primitives  # (the package's, imported before this module)

__all__ = ["check_jaxpr", "gensym", "concrete_or_error", "primal_dtype_to_tangent_dtype",
           "no_effects", "Effects", "array_types", "JaxprTypeError",
           "InconclusiveDimensionOperation", "nonempty_axis_env_DO_NOT_USE",
           "unsafe_get_axis_names_DO_NOT_USE", "unsafe_am_i_under_a_jit_DO_NOT_USE",
           "unsafe_am_i_under_a_vmap_DO_NOT_USE"]

Effects = set
"""The type of a jaxpr's or an equation's effects (a set of effect objects)."""
no_effects: frozenset[Any] = frozenset()
"""The effects of a pure equation."""
array_types: set[type] = {np.ndarray, Array, *(np.dtype(c).type for c in "?bBhHiIlLqQefdFD")}
"""The classes whose instances are arrays to JAX's machinery (NumPy arrays and scalars,
spmdc's Array)."""


def _short(aval: Any) -> str:
    short = getattr(aval, "str_short", None)
    return short() if callable(short) else str(aval)


def check_jaxpr(jaxpr: Any) -> None:
    """Check that ``jaxpr`` (a Jaxpr or ClosedJaxpr) is well formed (See Note [checking a
    jaxpr]); a JaxprTypeError otherwise."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(f"check_jaxpr expects a Jaxpr or ClosedJaxpr, got {type(jaxpr)}")
    _check(jaxpr)


def _check(jaxpr: Jaxpr) -> None:
    defined: set[int] = set()

    def define(v: Any, where: str) -> None:
        if getattr(v, "is_dropvar", False):
            return
        if id(v) in defined:
            raise JaxprTypeError(f"Variable '{v!r}' already bound ({where})")
        defined.add(id(v))

    def read(v: Any, where: str) -> None:
        if not getattr(v, "is_literal", False) and id(v) not in defined:
            raise JaxprTypeError(f"Variable '{v!r}' not defined ({where})")

    for v in (*jaxpr.constvars, *jaxpr.invars):
        define(v, "an input of the jaxpr")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i}, {eqn.primitive}"
        for v in eqn.invars:
            read(v, where)
        for sub in jaxprs_in_params(eqn.params):
            _check(sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub)
        _check_types(eqn, where)
        for v in eqn.outvars:
            define(v, where)
    for v in jaxpr.outvars:
        read(v, "an output of the jaxpr")


def _check_types(eqn: Any, where: str) -> None:
    if eqn.primitive not in library_primitives:
        return                  # one of spmdc's own primitives: the IR verifier's job
    rule = eqn.primitive.abstract_eval
    try:
        out, _ = rule(*(v.aval for v in eqn.invars), **eqn.params)
    except Exception as e:
        raise JaxprTypeError(f"{where}: its abstract evaluation failed: {e}") from None
    outs = list(out) if eqn.primitive.multiple_results else [out]
    given = [v.aval for v in eqn.outvars]
    if len(outs) != len(given) or any(
            (tuple(a.shape), np.dtype(a.dtype)) != (tuple(b.shape), np.dtype(b.dtype))
            for a, b in zip(outs, given, strict=False)):
        raise JaxprTypeError(
            f"{where}: the outputs are typed ({', '.join(map(_short, given))}) but the "
            f"primitive's abstract evaluation gives ({', '.join(map(_short, outs))})")


def gensym(suffix: str = "") -> Callable[[Any], Var]:
    """A function making a fresh jaxpr variable of an abstract value (names are given
    when a jaxpr is printed; ``suffix`` is JAX's printing hint)."""
    counter = itertools.count()

    def fresh(aval: Any) -> Var:
        next(counter)
        return Var(aval)
    return fresh


def concrete_or_error(force: Callable[[Any], Any] | None, value: Any,
                      context: str = "") -> Any:
    """``force(value)`` for a concrete value (``value`` itself when ``force`` is
    None); a traced value is forced when its value is known, and is a
    ConcretizationTypeError otherwise."""
    force = (lambda v: v) if force is None else force
    if isinstance(value, tracing.Tracer):
        known = tracing.known_value(value)
        if known is None:
            where = f"{context}: " if context else ""
            raise ConcretizationTypeError(
                f"{where}a concrete value is needed, but got a traced {value.type}; mark "
                "the argument static or compute the value outside the transformation")
        return force(known)
    return force(value)


def primal_dtype_to_tangent_dtype(primal_dtype: Any) -> Any:
    """The dtype of a tangent of a value of ``primal_dtype``: the same for inexact
    dtypes, ``float0`` for integers and booleans (as in JAX)."""
    dtype = np.dtype(primal_dtype)
    return dtype if np.issubdtype(dtype, np.inexact) else float0


def nonempty_axis_env_DO_NOT_USE() -> bool:   # noqa: N802  (JAX's name)
    """Whether some named axis (vmap's or pmap's ``axis_name``) is bound here."""
    trace = tracing.current_trace()
    return trace is not None and bool(trace.axis_env)


def _traces() -> list[Any]:
    trace, out = tracing.current_trace(), []
    while trace is not None:
        out.append(trace)
        trace = trace.parent
    return out


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:   # noqa: N802  (JAX's name)
    """Whether the code runs while a function is staged out as a program (jit, scan and
    loop bodies, make_jaxpr ...), not under eager transformations alone (an abstract
    trace, whose values are not known, is in the stack)."""
    return any(t.sources is None for t in _traces())


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:   # noqa: N802  (JAX's name)
    """Whether the code runs while ``vmap`` traces a function."""
    return any(t.view is not None and t.view.kind == "vmap" for t in _traces())


def unsafe_get_axis_names_DO_NOT_USE() -> list[Any]:   # noqa: N802  (JAX's name)
    """The named axes bound where the current function is being traced."""
    trace = tracing.current_trace()
    return [] if trace is None else list(trace.axis_env)
