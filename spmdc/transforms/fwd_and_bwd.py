"""``jax.fwd_and_bwd``: a function's forward pass and its backward pass as two functions
(jitted by default), the backward taking the forward's residuals as an argument, so that
it compiles once (``jit(f_vjp)`` of a fresh vjp closure would compile every time).

Note [residuals of fwd_and_bwd]
JAX's residuals are its VJP object, a pytree of the values its linearized program saved.
spmdc's vjp closes over its residuals (a Python function, not a pytree), so the
residuals here are the primal arguments themselves (a pytree of them, callable as JAX's
is: ``residuals(ct)`` is the vector-Jacobian product), and the backward pass recomputes
the forward from them before transposing it, as a rematerialising checkpoint does. The
values are JAX's; the backward pass does the forward's work again.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from ..core.tree import register_pytree_node
from ..errors import where
from .grad import vjp
from .jit import jit

__all__ = ["fwd_and_bwd"]


def _argnums(argnums: int | Sequence[int]) -> tuple[int, ...]:
    try:
        return (operator.index(argnums),) if not isinstance(argnums, (tuple, list)) else \
            tuple(operator.index(a) for a in argnums)
    except TypeError:
        raise TypeError(f"fwd_and_bwd: argnums must be an int or a sequence of ints, got "
                        f"{argnums!r}{where()}") from None


class Residuals:
    """What the forward pass of ``fwd_and_bwd`` keeps for the backward: its arguments
    (See Note [residuals of fwd_and_bwd]). ``residuals(ct)`` is the VJP."""
    __slots__ = ("args", "_vjp")

    def __init__(self, args: tuple[Any, ...], vjp_of: Callable[[tuple[Any, ...]], Any]):
        self.args = args
        self._vjp = vjp_of

    def __call__(self, ct: Any) -> Any:
        return self._vjp(self.args)[1](ct)


register_pytree_node(Residuals, lambda r: ((r.args,), r._vjp),
                     lambda vjp_of, children: Residuals(children[0], vjp_of))


def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int],
                has_aux: bool = False, jitted: bool = True
                ) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(fwd, bwd)``: ``fwd(*args)`` is ``(fun(*args), residuals)`` (with ``aux`` third
    when ``has_aux``); ``bwd(residuals, ct)`` the cotangents of the arguments ``argnums``
    names (one, not a tuple, for an int ``argnums``). Both are jitted unless ``jitted``
    is False. See Note [residuals of fwd_and_bwd]."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}{where()}")
    nums = _argnums(argnums)

    def vjp_of(args: tuple[Any, ...]) -> Any:
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"fwd_and_bwd: argnums {argnums!r} names argument {i} of "
                                 f"a call with {len(args)} positional arguments{where()}")

        def partial_fun(*dyn: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, dyn, strict=True):
                full[i] = v
            return fun(*full)
        return vjp(partial_fun, *(args[i] for i in nums), has_aux=has_aux)

    def fwd(*args: Any) -> Any:
        out = vjp_of(args)
        residuals = Residuals(args, vjp_of)
        return (out[0], residuals, out[2]) if has_aux else (out[0], residuals)

    def bwd(residuals: Residuals, ct: Any) -> Any:
        grads = residuals(ct)
        return grads[0] if isinstance(argnums, int) else grads

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
