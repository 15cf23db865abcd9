"""Mutable array references through ``jit``: refs passed as arguments and refs the function
closes over become explicit inputs and outputs of a pure jitted function, and the
caller's refs are updated with its results (Note [refs as threaded state] in
spmdc/core/refs.py). Also the checks JAX makes on refs at transformation boundaries:
no ref returned, no ref passed twice, no ref differentiated."""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..compiler.passes.vmap import BatchingError
from ..core.ref_scopes import _RefsFound, bound_refs
from ..core.refs import Ref, ref_values, write_values
from ..core.tree import (
    _tree_flatten,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
    user_node_type,
)
from ..errors import at_line, user_source
from .arguments import wraps_leniently
from .mapping import mapped_leaves

__all__ = ["has_refs", "call_with_refs", "check_no_ref_results", "check_no_ref_arguments",
           "refs_as_aux", "refs_scoped", "vmap_with_refs",
           "_RefsFound"]


def _path_leaves(tree: Any) -> list[tuple[Any, Any]]:
    """``tree``'s leaves with their paths; none for a tree that cannot be flattened (one
    that contains itself), which the transformation then reports with its own paths."""
    try:
        return tree_flatten_with_path(tree)[0]
    except (ValueError, RecursionError):
        return []


def has_refs(tree: Any) -> bool:
    # as users see the tree: a hi value is a leaf (it holds arrays, never a ref)
    try:
        leaves = _tree_flatten(tree, None, user_node_type)[0]
    except (ValueError, RecursionError):
        return False
    return any(isinstance(leaf, Ref) for leaf in leaves)


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
    for path, leaf in _path_leaves(tree):
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
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                         p.POSITIONAL_OR_KEYWORD)]
    for i, (path, leaf) in enumerate(path_leaves):
        if isinstance(leaf, Ref):
            if path[0].idx == 1:                               # a keyword argument
                where = keystr(path[1:2])[2:-2] + keystr(path[2:])
            elif path[1].idx < len(positional):                # JAX names the parameter
                where = positional[path[1].idx] + keystr(path[2:])
            else:
                where = "args" + keystr(path[1:])
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
    """A jitted function as a pure function of its refs' values (one per call layout):
    explicit ref arguments are replaced by their values, closed-over refs' values come
    first, and it returns its outputs with every ref's final value. What it calls and the
    refs it binds are set for each call only, so that the jit caches shared by every
    wrapper of the function (Note [shared jit cache] in jit.py) do not keep the function."""

    def __init__(self, tree: Any, positions: list[int]):
        self.tree, self.positions = tree, positions
        self.fun: Callable[..., Any] | None = None          # this call's function,
        self.check: Callable[[Any], None] | None = None     # its check of the outputs,
        self.refs: list[Ref] = []            # and its refs: arguments', then closed-over

    def __call__(self, closed_values: list[Any], leaves: list[Any]) -> Any:
        assert self.fun is not None and self.check is not None
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
    leaves, tree, positions = _arg_refs("jit", jitted.fun, name, args, kwargs)

    def check(out: Any) -> None:
        check_no_ref_results("jit", jitted.fun, name, out)
    while True:
        arg_refs = [leaves[p] for p in positions]
        closing = [r for r in closed if all(r is not a for a in arg_refs)]
        key = (statics, tree, tuple(positions), tuple(map(id, closing)))
        entry = jitted._ref_jits.get(key)
        if entry is None:
            pure = _Pure(tree, positions)
            entry = jitted._ref_jits[key] = (pure, make_jit(pure))
        pure, inner = entry
        pure.fun, pure.check, pure.refs = jitted._with_statics(statics), check, [
            *arg_refs, *closing]
        try:
            values = [leaves[i] if i not in positions else None for i in range(len(leaves))]
            for p, v in zip(positions, ref_values(arg_refs), strict=True):
                values[p] = v
            out, finals = inner(ref_values(closing), values)
        except _RefsFound as found:
            closed.extend(r for r in found.refs if all(r is not c for c in closed))
            continue
        finally:
            pure.fun, pure.check, pure.refs = None, None, []
        write_values([*arg_refs, *closing], finals)
        return out


def refs_scoped(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun`` in a scope of its own: a _RefsFound after it names the refs it touched."""
    @wraps_leniently(fun)
    def run(*args: Any, **kwargs: Any) -> Any:
        with bound_refs((), ()):
            return fun(*args, **kwargs)
    return run


def _with_finals(fun: Callable[..., Any], has_aux: bool, refs: list[Ref],
                 values: list[Any]) -> Callable[..., Any]:
    @wraps_leniently(fun)           # the name and attributes messages read
    def run(*args: Any, **kwargs: Any) -> Any:
        with bound_refs(refs, values) as finals:
            out = fun(*args, **kwargs)
        aux = None
        if has_aux:
            out, aux = out
        return out, (aux, finals)
    return run


def refs_as_aux(fun: Callable[..., Any], has_aux: bool,
                run: Callable[[Callable[..., Any], bool], Any],
                unpack: Callable[[Any], tuple[Any, list[Any]]]) -> Any:
    """``run(fun, has_aux)``, a transformation (grad, vjp, jvp) of ``fun``; where ``fun``
    touches refs it did not make, it runs again as ``run(g, True)``, ``g`` returning its
    output with the auxiliary value ``(aux, the refs' final values)``, and ``unpack``
    splits that result into the one ``run(fun, has_aux)`` gives and the final values,
    which are written to the refs. See Note [refs as threaded state] in core/refs.py."""
    refs: list[Ref] = []
    while True:
        values = ref_values(refs)
        try:
            if not refs:
                return run(refs_scoped(fun), has_aux)
            result = run(_with_finals(fun, has_aux, refs, values), True)
        except _RefsFound as found:
            refs.extend(r for r in found.refs if all(r is not q for q in refs))
            continue
        result, finals = unpack(result)
        write_values(refs, finals)
        return result


def vmap_with_refs(fun: Callable[..., Any], name: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any], in_axes: Any,
                   remap: Callable[[Callable[..., Any], list[Any]], Callable[..., Any]]) -> Any:
    """``vmap(fun)(*args, **kwargs)`` where refs are passed or written: a vmap (``remap``,
    given the out axes of the refs' final values) of a pure function of the refs'
    values. A ref argument is batched along its in axis, and its final value too; a
    closed-over ref is not batched, so writing a batched value to it is refused."""
    leaves, tree, positions = _arg_refs("vmap", fun, name, args, kwargs)
    arg_refs = [leaves[p] for p in positions]
    values = list(leaves)
    for p, v in zip(positions, ref_values(arg_refs), strict=True):
        values[p] = v
    a, k = tree_unflatten(tree, values)
    dims = mapped_leaves("vmap", a, k, in_axes)[1]
    closing: list[Ref] = []
    while True:
        closed_values = ref_values(closing)

        def pure(*args: Any, **kwargs: Any) -> Any:
            inner, _ = tree_flatten((args, kwargs))
            bound = [inner[p] for p in positions] + closed_values
            for p, r in zip(positions, arg_refs, strict=True):
                inner[p] = r
            args, kwargs = tree_unflatten(tree, inner)
            with bound_refs(arg_refs + closing, bound) as finals:
                out = fun(*args, **kwargs)
            return out, finals
        try:
            out, finals = remap(pure, [dims[p] for p in positions] + [None] * len(closing))(
                *a, **k)
        except _RefsFound as found:
            closing.extend(r for r in found.refs if all(r is not q for q in closing))
            continue
        except BatchingError as e:       # a batched value written to an unbatched ref
            k_ = next((k_ for k_ in range(len(positions), len(positions) + len(closing))
                       if f"(output[1][{k_}] depends" in str(e)), None)
            if k_ is None:
                raise
            ref = closing[k_ - len(positions)]
            raise Exception(
                "performing a set/swap operation with vmapped value on an unbatched array "
                f"reference of type {ref.aval}. Move the array reference to be an argument "
                f"to the vmapped function?{at_line(user_source())}") from None
        write_values(arg_refs + closing, finals)
        return out
