"""jit's and value_and_grad's calls on arguments holding values of mutable hi-types
(Flax's hijax ``Variable``): the function run through a wrapper that also returns those
arguments as it left them, and the caller's values given their final state (Note
[mutable hi values through jit] in spmdc/core/mutable_hi.py)."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..core import mutable_hi
from ..core.tracing import where
from ..core.tree import _tree_flatten, user_node_type

__all__ = ["call_writing_back", "mutable_hi_positions", "value_and_grad_writing_back"]


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


def mutable_hi_positions(tree: Any) -> tuple[int, ...]:
    """Where the values of mutable hi-types are among ``tree``'s leaves (users' view). A
    tree that contains itself has none here: the call it is given to names the cycle."""
    if not mutable_hi.any_registered():
        return ()
    try:
        leaves = _user_leaves(tree)
    except RecursionError:
        return ()
    return tuple(i for i, x in enumerate(leaves) if mutable_hi.is_mutable_hi(x))


def value_and_grad_writing_back(fun: Callable[..., Any], nums: tuple[int, ...],
                                has_aux: bool, args: tuple[Any, ...],
                                kwargs: dict[str, Any],
                                make_value_and_grad: Callable[[Callable[..., Any]], Any],
                                what: str) -> Any:
    """``value_and_grad``'s call on arguments holding mutable hi values, which it does not
    differentiate: the function also returns them as it left them (an auxiliary output),
    and each caller's value takes that state, as jit's (Note [mutable hi values through
    jit] in core/mutable_hi.py). ``make_value_and_grad(f)`` is the value_and_grad of
    ``f`` with ``has_aux=True`` and the caller's other options; ``nums``: the
    differentiated positional arguments."""
    for i in nums:
        if i < len(args) and mutable_hi_positions(args[i]):
            raise mutable_hi.MutableHiArgument(
                f"{what}: argument {i} holds a value of a mutable hi-type; {what} "
                f"differentiates with respect to arrays, not with respect to a mutable "
                f"value: pass its contents, or make it a non-differentiated argument"
                f"{where()}")
    leaves = _user_leaves((args, kwargs))
    positions = mutable_hi_positions((args, kwargs))

    @functools.wraps(fun)
    def with_finals(*a: Any, **k: Any) -> Any:
        with mutable_hi.allowing_flatten(False):
            out = fun(*a, **k)
        now = _user_leaves((a, k))
        finals = [now[p] for p in positions]
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"{what} with has_aux=True: the function must return a "
                                f"pair (output, aux), got {type(out).__name__}{where()}")
            return out[0], (out[1], finals)
        return out, finals

    with mutable_hi.allowing_flatten(True):
        (value, extra), grads = make_value_and_grad(with_finals)(*args, **kwargs)
    aux, finals = extra if has_aux else (None, extra)
    for p, final in zip(positions, finals, strict=True):
        mutable_hi.write_back(leaves[p], final)
    return ((value, aux), grads) if has_aux else (value, grads)
