"""Mutable array references through ``jit``: refs passed as arguments and refs the function
closes over become explicit inputs and outputs of a pure jitted function, and the
caller's refs are updated with its results (Note [refs as threaded state] in
spmdc/core/refs.py). Also the checks JAX makes on refs at transformation boundaries:
no ref returned, no ref passed twice, no ref differentiated."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.refs import Ref, RefsFound, bound_refs, ref_values, write_values
from ..core.tree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from ..errors import at_line, user_source

__all__ = ["has_refs", "call_with_refs", "check_no_ref_results", "check_no_ref_arguments",
           "RefsFound"]


def has_refs(tree: Any) -> bool:
    return any(isinstance(leaf, Ref) for leaf in tree_flatten(tree)[0])


def _fun_text(fun: Callable[..., Any], name: str) -> str:
    code = getattr(fun, "__code__", None)
    return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name


def check_no_ref_results(what: str, fun: Callable[..., Any], name: str, out: Any) -> None:
    """JAX's ValueError when a function traced for ``what`` returned a ref."""
    for path, leaf in tree_flatten_with_path(out)[0]:
        if isinstance(leaf, Ref):
            at = f" (at output component {keystr(path)})" if path else ""
            raise ValueError(
                f"function {_fun_text(fun, name)} traced for {what} returned a mutable array "
                f"reference of type {leaf.aval}{at}, but mutable array references cannot be "
                f"returned; return ref[...] (or jax.freeze(ref)) instead")


def check_no_ref_arguments(what: str, tree: Any, names: Callable[[Any], str]) -> None:
    """JAX's ValueError when ``what`` is asked to differentiate with respect to a ref."""
    for path, leaf in tree_flatten_with_path(tree)[0]:
        if isinstance(leaf, Ref):
            raise ValueError(
                f"{what}: argument {names(path)} is a mutable array reference of type "
                f"{leaf.aval}; {what} differentiates with respect to arrays only: pass "
                f"ref[...] instead, or close over the ref{at_line(user_source())}")


def _arg_refs(what: str, fun: Callable[..., Any], name: str, args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> tuple[list[Any], Any, list[int]]:
    """The argument leaves, their structure and where the refs among them are; JAX's
    ValueError for a ref passed twice (two names for one buffer)."""
    path_leaves, tree = tree_flatten_with_path((args, kwargs))
    leaves = [leaf for _, leaf in path_leaves]
    seen: dict[int, str] = {}
    positions = []
    for i, (path, leaf) in enumerate(path_leaves):
        if isinstance(leaf, Ref):
            where = ("args" if path[0].idx == 0 else "kwargs") + keystr(path[1:])
            if id(leaf) in seen:
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to "
                    f"a function, but when tracing {_fun_text(fun, name)} for {what} the "
                    f"mutable array reference of type {leaf.aval} appeared at both "
                    f"{seen[id(leaf)]} and {where}{at_line(user_source())}")
            seen[id(leaf)] = where
            positions.append(i)
    return leaves, tree, positions


class _Pure:
    """``fun`` as a pure function of its refs' values (one per call layout): explicit ref
    arguments are replaced by their values, closed-over refs' values come first, and it
    returns its outputs with every ref's final value."""

    def __init__(self, fun: Callable[..., Any], tree: Any, positions: list[int],
                 check: Callable[[Any], None]):
        self.fun, self.tree, self.positions, self.check = fun, tree, positions, check
        self.refs: list[Ref] = []            # this call's refs: arguments', then closed-over

    def __call__(self, closed_values: list[Any], leaves: list[Any]) -> Any:
        leaves = list(leaves)
        values = [leaves[p] for p in self.positions] + list(closed_values)
        for p, r in zip(self.positions, self.refs, strict=False):
            leaves[p] = r
        args, kwargs = tree_unflatten(self.tree, leaves)
        with bound_refs(self.refs, values) as finals:
            out = self.fun(*args, **kwargs)
            self.check(out)
        return out, finals


def call_with_refs(jitted: Any, statics: tuple[Any, ...], args: tuple[Any, ...],
                   kwargs: dict[str, Any], closed: list[Ref], make_jit: Callable[..., Any],
                   name: str) -> Any:
    """``jitted``'s call on arguments holding refs, or of a function closing over
    ``closed`` refs: a jitted pure function of the refs' values, then the refs updated.
    Refs found only now are added to ``closed`` and the call made again."""
    fun = jitted._with_statics(statics)
    leaves, tree, positions = _arg_refs("jit", jitted.fun, name, args, kwargs)
    while True:
        arg_refs = [leaves[p] for p in positions]
        closing = [r for r in closed if all(r is not a for a in arg_refs)]
        key = (statics, tree, tuple(positions), tuple(map(id, closing)))
        entry = jitted._ref_jits.get(key)
        if entry is None:
            def check(out: Any) -> None:
                check_no_ref_results("jit", jitted.fun, name, out)
            pure = _Pure(fun, tree, positions, check)
            entry = jitted._ref_jits[key] = (pure, make_jit(pure))
        pure, inner = entry
        pure.refs = arg_refs + closing
        try:
            values = [leaves[i] if i not in positions else None for i in range(len(leaves))]
            for p, v in zip(positions, ref_values(arg_refs), strict=True):
                values[p] = v
            out, finals = inner(ref_values(closing), values)
        except RefsFound as found:
            closed.extend(r for r in found.refs if all(r is not c for c in closed))
            continue
        finally:
            pure.refs = []
        write_values(pure_refs := arg_refs + closing, finals[:len(pure_refs)])
        return out
