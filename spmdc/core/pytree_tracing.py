"""Tracing functions of pytrees: what jit, vmap, grad, pmap and the control flow share.

``trace_pytree`` flattens the arguments, traces the function over abstract leaves
(tracing.trace_function) and remembers the output's tree structure.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..compiler.ir import Func, TensorType
from .refs import Ref, ref_argument, returned_ref
from .tracer_text import TracerView
from .tracing import Tracer, trace_function, type_of
from .tree import tree_flatten, tree_unflatten

__all__ = ["trace_pytree", "fun_name"]


def trace_pytree(fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
                 name: str, in_types: Sequence[TensorType] | None = None,
                 in_weak: Sequence[bool] | None = None,
                 axis_env: dict[str, Any] | None = None, concrete: bool = False,
                 sources: Sequence[Any] | None = None, view: TracerView | None = None,
                 typed: bool = False, typed_by: Sequence[Any] | None = None,
                 constrain: bool = True
                 ) -> tuple[Func, list[bool], list[Any], Any, list[Any]]:
    """Trace ``fun(*args, **kwargs)`` with every array leaf abstract.

    Returns (Func, out weak flags, captured values, out treedef, argument leaves).
    ``in_types`` overrides the leaves' own types (vmap traces per-example slices).
    ``concrete``: the trace may read values (Note [concrete values while tracing] in
    core/concrete.py), each input's being its leaf's, or ``sources``' where given.
    ``view``: how JAX sees the traced values (Note [tracer text] in core/tracer_text.py).
    The inputs' types take the leaves' shardings over Explicit axes (Note [shardings in
    types]) when the leaves' own types are used, or ``typed`` says so, or those of
    ``typed_by`` (one value per leaf: a control-flow body's operands); ``constrain``: as
    trace_function's."""
    leaves, in_tree = tree_flatten((tuple(args), kwargs))
    if any(isinstance(leaf, Ref) for leaf in leaves):
        ref_argument(name, (tuple(args), kwargs))
    if typed_by is None and typed:
        typed_by = leaves
    if in_types is None:
        sigs = [type_of(v) for v in leaves]
        in_types = [t for t, _ in sigs]
        in_weak = [w for _, w in sigs]
        typed_by = leaves            # See Note [shardings in types]
    out_tree_box: list[Any] = []

    def flat_fun(tracers: list[Tracer]) -> list[Any]:
        a, k = tree_unflatten(in_tree, tracers)
        out = fun(*a, **k)
        out_leaves, out_tree = tree_flatten(out)
        if any(isinstance(leaf, Ref) for leaf in out_leaves):
            returned_ref(name, out)
        out_tree_box.append(out_tree)
        return out_leaves

    if concrete and sources is None:
        sources = leaves
    func, out_weak, captured = trace_function(flat_fun, in_types, in_weak, name, axis_env,
                                              sources if concrete else None, view,
                                              typed_by, constrain)
    return func, out_weak, captured, out_tree_box[0], leaves


def fun_name(fun: Callable[..., Any]) -> str:
    name = getattr(fun, "__name__", None)
    if not isinstance(name, str) or not name:     # an object whose __name__ is no name
        name = type(fun).__name__
    return name if name.isidentifier() else "f"
