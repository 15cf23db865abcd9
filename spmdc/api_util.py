"""``jax.api_util``: the function-transformation helpers libraries build their own
transformations from (Flax's lifted transforms and ``lazy_init``, NumPyro's
provenance, distrax's jaxpr interpreters): ``flatten_fun`` / ``flatten_fun_nokwargs``
turn a ``linear_util.WrappedFun`` of pytrees into one of flat argument lists, with a
thunk giving the output's tree structure after the call; ``debug_info`` describes a
function for the jaxprs traced from it; ``shaped_abstractify`` gives a value's abstract
value; ``safe_map`` is ``map`` over equally long sequences, as a list. For
transformations with static and donated arguments: ``argnums_partial`` fixes the
static ones of a WrappedFun, ``donation_vector`` says which leaves are donated,
``rebase_donate_argnums`` renumbers donations once statics are taken out, and
``flatten_axes`` broadcasts an axis-spec prefix over a pytree structure."""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from .core.abstract import ShapedArray, typeof
from .core.tree import (
    broadcast_prefix,
    keystr,
    tree_flatten,
    tree_leaves,
    tree_leaves_with_path,
    tree_unflatten,
)
from .extend.linear_util import WrappedFun, transformation2, transformation_with_aux2
from .transforms.jaxpr_view import DebugInfo

__all__ = ["flatten_fun", "flatten_fun_nokwargs", "debug_info", "shaped_abstractify",
           "safe_map", "argnums_partial", "donation_vector", "flatten_axes",
           "rebase_donate_argnums"]


def _flatten_fun(f: Callable[..., Any], store: Any, in_tree: Any, *args_flat: Any) -> Any:
    args, kwargs = tree_unflatten(in_tree, args_flat)
    out_flat, out_tree = tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return out_flat


def _flatten_fun_nokwargs(f: Callable[..., Any], store: Any, in_tree: Any,
                          *args_flat: Any) -> Any:
    out_flat, out_tree = tree_flatten(f(*tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return out_flat


def flatten_fun(fun: WrappedFun, in_tree: Any) -> tuple[WrappedFun, Callable[[], Any]]:
    """``fun(*args, **kwargs)`` as a function of the flat leaves of ``(args, kwargs)``
    (whose tree structure is ``in_tree``) returning a flat list of leaves; the thunk
    gives the output's tree structure once the function has run."""
    return transformation_with_aux2(_flatten_fun, fun, in_tree)


def flatten_fun_nokwargs(fun: WrappedFun, in_tree: Any
                         ) -> tuple[WrappedFun, Callable[[], Any]]:
    """As ``flatten_fun``, for ``in_tree`` the structure of the positional-argument
    tuple alone."""
    return transformation_with_aux2(_flatten_fun_nokwargs, fun, in_tree)


def _source_info(fun: Callable[..., Any]) -> str:
    inner = inspect.unwrap(fun) if callable(fun) else fun
    name = getattr(inner, "__qualname__", None) or getattr(inner, "__name__", None) or \
        type(inner).__name__
    try:
        filename = inspect.getsourcefile(inner)
        _, line = inspect.getsourcelines(inner)
    except (TypeError, OSError):
        return str(name)
    return f"{name} at {filename}:{line}"


def _arg_names(fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
               static_argnums: Sequence[int], static_argnames: Sequence[str]
               ) -> tuple[str, ...] | None:
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    static_names = set(static_argnames)
    params = list(inspect.signature(fun).parameters)
    static_names.update(params[i] for i in static_argnums if -len(params) <= i < len(params))
    names: list[str] = []
    for name, value in bound.arguments.items():
        if name not in static_names:
            names += [name + keystr(path) for path, _ in tree_leaves_with_path(value)]
    return tuple(names)


def debug_info(traced_for: str, fun: Callable[..., Any], args: Sequence[Any],
               kwargs: dict[str, Any], *, static_argnums: Sequence[int] = (),
               static_argnames: Sequence[str] = (),
               result_paths_thunk: Callable[[], tuple[str, ...]] | None = None,
               sourceinfo: str | None = None) -> DebugInfo:
    """What ``traced_for`` (e.g. ``'jit'``) records about ``fun`` called on ``args``
    and ``kwargs``: its name and source line (``sourceinfo`` overrides), a name per
    non-static argument leaf (None where ``args`` do not bind to ``fun``'s signature)
    and, when ``result_paths_thunk`` is given, the result leaves' paths."""
    return DebugInfo(traced_for, sourceinfo or _source_info(fun),
                     _arg_names(fun, tuple(args), dict(kwargs), static_argnums,
                                static_argnames),
                     None if result_paths_thunk is None else tuple(result_paths_thunk()))


def shaped_abstractify(x: Any) -> ShapedArray:
    """The abstract value (shape, dtype, weak type) of an array-like value."""
    return typeof(x)


def safe_map(f: Callable[..., Any], *seqs: Sequence[Any]) -> list[Any]:
    """``list(map(f, *seqs))``, for sequences of one length (a ValueError otherwise)."""
    lists = [list(s) for s in seqs]
    lengths = {len(s) for s in lists}
    if len(lengths) > 1:
        raise ValueError(f"safe_map: the sequences have different lengths "
                         f"{[len(s) for s in lists]}")
    return list(map(f, *lists))


class _Fixed:
    """A static argument fixed by ``argnums_partial``: equal only to one of the same type
    and value (``1`` and ``1.0`` differ), so caches keyed by it tell them apart; an
    unhashable one is equal to itself alone."""
    __slots__ = ("val", "_hashable")

    def __init__(self, val: Any, hashable: bool):
        self.val, self._hashable = val, hashable

    def __hash__(self) -> int:
        return hash((type(self.val), self.val)) if self._hashable else id(self.val)

    def __eq__(self, other: object) -> bool:
        if type(other) is not _Fixed:
            return False
        if not self._hashable:
            return self.val is other.val
        return type(self.val) is type(other.val) and bool(self.val == other.val)


def _fill_in(f: Callable[..., Any], dyn_argnums: tuple[int, ...],
             fixed: tuple[_Fixed, ...], *dyn_args: Any, **kwargs: Any) -> Any:
    n = len(fixed) + len(dyn_args)
    given = dict(zip(dyn_argnums, dyn_args, strict=True))
    rest = iter(fixed)
    return f(*[given[i] if i in given else next(rest).val for i in range(n)], **kwargs)


def argnums_partial(f: WrappedFun, dyn_argnums: int | Sequence[int], args: Sequence[Any],
                    require_static_args_hashable: bool = True
                    ) -> tuple[WrappedFun, tuple[Any, ...]]:
    """``f`` with every argument not in ``dyn_argnums`` fixed to its value in ``args``,
    as a function of the others, which are returned with it. Fixed arguments must be
    hashable (a ValueError) unless ``require_static_args_hashable=False``."""
    nums = (dyn_argnums,) if isinstance(dyn_argnums, int) else tuple(dyn_argnums)
    n = len(args)
    for i in nums:
        if isinstance(i, bool) or not isinstance(i, int) or not -n <= i < n:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value "
                f"greater than or equal to -len(args) and less than len(args), but got "
                f"value {i} for len(args) == {n}.")
    nums = tuple(sorted({i % n for i in nums}))
    fixed = []
    for i, arg in enumerate(args):
        if i in nums:
            continue
        if require_static_args_hashable:
            try:
                hash(arg)
            except TypeError:
                raise ValueError(
                    "Non-hashable static arguments are not supported, as this can lead to "
                    f"unexpected cache-misses. Static argument (index {i}) of type "
                    f"{type(arg)} for function {getattr(f, '__name__', f)} is "
                    "non-hashable.") from None
        fixed.append(_Fixed(arg, require_static_args_hashable))
    return (transformation2(_fill_in, f, nums, tuple(fixed)),
            tuple(args[i] for i in nums))


def donation_vector(donate_argnums: Sequence[int], donate_argnames: Sequence[str],
                    in_tree: Any, kws: bool = True) -> tuple[bool, ...]:
    """One bool per leaf of the ``(args, kwargs)`` pair whose structure is ``in_tree``
    (of ``args`` alone with ``kws=False``): whether its argument is donated, by position
    (``donate_argnums``) or by keyword (``donate_argnames``)."""
    positions = in_tree.unflatten(list(range(in_tree.num_leaves)))
    args, kwargs = positions if kws else (positions, {})
    out = [False] * in_tree.num_leaves
    for i, arg in enumerate(args):
        for leaf in tree_leaves(arg):
            out[leaf] = i in donate_argnums
    for key, value in kwargs.items():
        for leaf in tree_leaves(value):
            out[leaf] = key in donate_argnames
    return tuple(out)


def rebase_donate_argnums(donate_argnums: Sequence[int], static_argnums: Sequence[int]
                          ) -> tuple[int, ...]:
    """``donate_argnums`` renumbered for the argument list without ``static_argnums``
    (``rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)``); an argument both static and
    donated is a ValueError."""
    static, donated = sorted(set(static_argnums)), sorted(set(donate_argnums))
    both = set(static) & set(donated)
    if both:
        raise ValueError(f"`static_argnums` {static} and `donate_argnums` {donated} "
                         "cannot intersect.")
    return tuple(d - sum(1 for s in static if s < d) for d in donated)


class _Position:
    """A leaf standing for one leaf of a structure (``flatten_axes``)."""
    __slots__ = ()


def flatten_axes(name: str, treedef: Any, axis_tree: Any, *, kws: bool = False,
                 tupled_args: bool = False) -> list[Any]:
    """The axis spec ``axis_tree`` (a tree prefix of ``treedef``, with ints and Nones at
    its leaves, None being a leaf) broadcast to one entry per leaf of ``treedef``. A spec
    that is not a prefix is a ValueError naming ``name``."""
    full = treedef.unflatten([_Position() for _ in range(treedef.num_leaves)])
    try:
        return broadcast_prefix(axis_tree, full, what=name)
    except ValueError as e:
        hint = ""
        if tupled_args:
            hint = (f" Note that {name} that are non-trivial pytrees should always be "
                    "wrapped in a tuple representing the argument list.")
        raise ValueError(f"{name} specification must be a tree prefix of the "
                         f"corresponding value;{hint} ({e})") from None
