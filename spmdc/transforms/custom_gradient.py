"""``custom_gradient``: TensorFlow's way of defining a VJP, as JAX offers it (TFP's JAX
substrate defines ``tf.custom_gradient`` with it, and so every distrax distribution that
uses a TFP special function). ``fun(*args)`` returns ``(value, rule)``, and
``rule(cotangent)`` the cotangents of the arguments; the rule is a closure over values
the forward computation made. See Note [custom_gradient as custom_vjp]."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..core.tracing import where
from .custom_derivatives import closure_convert, custom_vjp

__all__ = ["custom_gradient"]


# Note [custom_gradient as custom_vjp]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As in JAX, a custom_gradient function is a custom_vjp function: the primal runs ``fun``
# and drops the rule; the fwd rule runs ``fun`` and turns its rule into residuals. The
# rule closes over traced values of the fwd trace, which the bwd rule, traced later, can
# no longer reach; so fwd closure-converts it at the cotangent's types (the output's):
# the traced floating point values it closes over become the residuals, and the
# converted function is kept beside them for bwd. JAX stages the rule to a jaxpr in
# the same place. Each call of the decorated function makes its own custom_vjp, whose
# fwd is traced before its bwd (custom_vjp's bwd takes its residual types from fwd), so
# the converted rule bwd finds is the one of that call.


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun(*args) -> (value, rule)`` as a function of ``args`` giving ``value``, whose
    VJP is ``rule``: ``rule(cotangent)`` returns one cotangent per positional argument (a
    tuple, or the cotangent itself for a function of one argument). Arguments are
    positional, as in JAX."""
    if not callable(fun):
        raise TypeError(f"custom_gradient expects a callable, got {type(fun).__name__}")

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if kwargs:      # as JAX's: the rule's cotangents are per positional argument
            raise TypeError(f"the custom_gradient function {_name(fun)} takes positional "
                            f"arguments only, got keyword arguments {sorted(kwargs)}"
                            f"{where()}; pass them by position")
        converted: list[Callable[..., Any]] = []

        @functools.wraps(fun)
        def primal(*primal_args: Any) -> Any:
            return _value_and_rule(fun, primal_args)[0]

        def fwd(*fwd_args: Any) -> Any:
            value, rule = _value_and_rule(fun, fwd_args)
            rule_fn, consts = closure_convert(rule, value)  # See Note [custom_gradient ...]
            converted[:] = [rule_fn]
            return value, consts

        def bwd(consts: list[Any], cotangent: Any) -> tuple[Any, ...]:
            got = converted[0](cotangent, *consts)
            return tuple(got) if isinstance(got, (tuple, list)) else (got,)

        f = custom_vjp(primal)
        f.defvjp(fwd, bwd)
        return f(*args)

    return wrapped


def _name(fun: Callable[..., Any]) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _value_and_rule(fun: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, Any]:
    out = fun(*args)
    if not (isinstance(out, (tuple, list)) and len(out) == 2 and callable(out[1])):
        raise TypeError(f"a custom_gradient function must return a pair (value, rule) with "
                        f"rule a function of the output's cotangent, got "
                        f"{type(out).__name__}{where()}")
    return out[0], out[1]
