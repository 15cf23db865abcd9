"""``linear_call(fun, fun_transpose, residual_args, linear_args)`` (JAX's
``jax.custom_derivatives.linear_call``): a function linear in ``linear_args`` whose
transpose is ``fun_transpose``.

Note [linear_call from custom rules]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
JAX makes ``linear_call`` a primitive whose JVP applies it to the tangents (it is
linear) and whose transpose is ``linear_call(fun_transpose, fun, ...)`` on the
cotangents. spmdc builds the same from its two custom rules, with no primitive of its
own: the call is a ``custom_jvp`` function whose tangent is ``lin(r, dx)``, and ``lin``
(``fun`` on the tangents) is a ``custom_vjp`` function whose backward pass is
``linear_call(fun_transpose, fun, r, ct)``. So ``jvp`` applies ``fun`` to the tangents,
``grad``/``vjp``/``linear_transpose`` run ``fun_transpose`` on the cotangents, and a
transpose of a transpose runs ``fun`` again, as JAX's rules do. As in JAX, ``fun`` must
be linear in ``linear_args`` and not be differentiated in ``residual_args`` (that is a
ValueError here; JAX fails an internal assertion), and ``fun_transpose`` must be linear in
its second argument (a ``fun_transpose`` that ignores it gives a zero transpose here).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.operands import full
from ..core.tree import tree_leaves, tree_map, tree_structure
from ..errors import where
from .custom_derivatives import SymbolicZero, custom_jvp, custom_vjp

__all__ = ["linear_call"]


def _is_zero(t: Any) -> bool:
    return isinstance(t, SymbolicZero)


def linear_call(fun: Callable[..., Any], fun_transpose: Callable[..., Any],
                residual_args: Any, linear_args: Any) -> Any:
    """``fun(residual_args, linear_args)``, transposed by ``fun_transpose(residual_args,
    cotangent)``; See Note [linear_call from custom rules]."""
    if not callable(fun) or not callable(fun_transpose):
        raise TypeError(f"linear_call: fun and fun_transpose must be callable, got "
                        f"{type(fun).__name__} and {type(fun_transpose).__name__}{where()}")
    in_tree = tree_structure(linear_args)

    @custom_vjp
    def lin(r: Any, x: Any) -> Any:
        return fun(r, x)

    def lin_fwd(r: Any, x: Any) -> Any:
        return fun(r, x), r

    def lin_bwd(r: Any, ct: Any) -> Any:
        out = linear_call(fun_transpose, fun, r, ct)
        if tree_structure(out) != in_tree:
            raise TypeError("transpose output pytree structure must match that of linear "
                            f"inputs, got output structure {tree_structure(out)} and input "
                            f"structure {in_tree}.")
        return tree_map(lambda _: None, r), out
    lin.defvjp(lin_fwd, lin_bwd)

    @custom_jvp
    def call(r: Any, x: Any) -> Any:
        return fun(r, x)

    def call_jvp(primals: Any, tangents: Any) -> Any:
        r, x = primals
        dr, dx = tangents
        if not all(_is_zero(t) for t in tree_leaves(dr, is_leaf=_is_zero)):
            raise ValueError(f"linear_call: {getattr(fun, '__name__', fun)} is "
                             "differentiated with respect to residual_args, in which it "
                             "need not be linear; pass the values you differentiate as "
                             f"linear_args{where()}")
        dx = tree_map(lambda t, v: full(t.shape, 0, t.dtype) if _is_zero(t) else t, dx, x,
                      is_leaf=_is_zero)
        return call(r, x), lin(r, dx)
    call.defjvp(call_jvp, symbolic_zeros=True)
    return call(residual_args, linear_args)
