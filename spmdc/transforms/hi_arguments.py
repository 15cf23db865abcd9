"""jit's call on arguments holding values of mutable hi-types (Flax's hijax ``Variable``):
the function run through a wrapper that also returns those arguments as it left them,
and the caller's values given their final state (Note [mutable hi values through jit] in
spmdc/core/mutable_hi.py)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import mutable_hi
from ..core.tree import _tree_flatten, user_node_type

__all__ = ["call_writing_back"]


def _user_leaves(tree: Any) -> list[Any]:
    """``tree``'s leaves as users see them: a hi value is one leaf."""
    return _tree_flatten(tree, None, user_node_type)[0]


class _WithArguments:
    """A jitted function that also returns its mutable hi arguments (at ``positions`` of
    the arguments' leaves) as it left them. What it calls is set for each call only, so
    that the jit caches shared by every wrapper of the function (Note [shared jit cache]
    in jit.py) do not keep the function."""

    def __init__(self, positions: tuple[int, ...]):
        self.positions = positions
        self.fun: Callable[..., Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        assert self.fun is not None
        with mutable_hi.allowing_flatten(False):   # the function's own transformations
            out = self.fun(*args, **kwargs)
        leaves = _user_leaves((args, kwargs))
        return out, [leaves[p] for p in self.positions]


def call_writing_back(fun: Callable[..., Any], args: tuple[Any, ...],
                      kwargs: dict[str, Any], cache: dict[Any, Any],
                      make_jit: Callable[[Callable[..., Any]], Any]) -> Any:
    """``fun(*args, **kwargs)`` jitted (``make_jit`` makes the jit of a function with
    ``fun``'s options; ``cache`` keeps it per layout of the mutable hi arguments), then
    each mutable hi argument given the state the function left it in."""
    leaves = _user_leaves((args, kwargs))
    positions = tuple(i for i, x in enumerate(leaves) if mutable_hi.is_mutable_hi(x))
    entry = cache.get(positions)
    if entry is None:
        wrapper = _WithArguments(positions)
        entry = cache[positions] = (wrapper, make_jit(wrapper))
    wrapper, jitted = entry
    wrapper.fun = fun
    try:
        with mutable_hi.allowing_flatten(True):
            out, finals = jitted(*args, **kwargs)
    finally:
        wrapper.fun = None
    for p, final in zip(positions, finals, strict=True):
        mutable_hi.write_back(leaves[p], final)
    return out
