"""Lowering a jaxpr inside a lowering rule (``jax.interpreters.mlir.jaxpr_subcomp``, and
``core_call_lowering``, the rule of a primitive that calls a jaxpr), the set of tokens
JAX threads through effectful lowerings (``TokenSet``), and ``ir_tree_registry``, the
pytree registry of IR values (lists, tuples and ``ir.OpResultList``s of ``ir.Value``s).

A jaxpr is lowered as ``lower_fun`` lowers a function: it is traced into spmdc's IR (its
equations rebound, Note [running a jaxpr] in transforms/jaxpr_view.py) by itself and
that IR is lowered in place, at the rule's insertion point, with spmdc's own lowering
rules. spmdc orders effects with its own token chain (Note [effects] in
compiler/passes/cleanup.py), so the TokenSet a rule threads holds no tokens: it is
returned as it came.
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.ir import TensorType
from ..compiler.passes.cleanup import cleanup
from ..compiler.stablehlo import dense_constant, hlo, ir, lower_body
from ..core import names
from ..core.tracing import trace_detached, type_of
from ..errors import LoweringError, pin_source
from ..runtime import pjrt
from ..transforms.jaxpr_view import ClosedJaxpr, Jaxpr, eval_jaxpr
from .mlir import LoweringRuleContext, ModuleContext, ir_constant

__all__ = ["TokenSet", "jaxpr_subcomp", "core_call_lowering", "ir_tree_registry"]


class TokenSet:
    """The tokens (``!stablehlo.token`` values) that order a lowering's effects, one per
    effect, in insertion order; immutable (``update_tokens`` gives a new set)."""
    __slots__ = ("_tokens",)

    def __init__(self, tokens: dict[Any, Any] | None = None):
        self._tokens = dict(tokens) if tokens is not None else {}

    def __len__(self) -> int:
        return len(self._tokens)

    def get(self, effect: Any) -> Any:
        return self._tokens[effect]

    @classmethod
    def create(cls, effects: Sequence[Any]) -> TokenSet:
        """A fresh token per effect (at the current insertion point)."""
        return TokenSet({e: hlo.AfterAllOp([]).result for e in effects})

    def items(self) -> tuple[tuple[Any, Any], ...]:
        return tuple(self._tokens.items())

    def effects(self) -> set[Any]:
        return set(self._tokens)

    def subset(self, effects: Sequence[Any]) -> TokenSet:
        return TokenSet({e: self._tokens[e] for e in effects})

    def update_tokens(self, tokens: TokenSet) -> TokenSet:
        """This set with the tokens ``tokens`` has for its effects replaced."""
        if not tokens:
            return self
        return TokenSet({e: tokens._tokens.get(e, t) for e, t in self._tokens.items()})


ir_tree_registry = pjrt.pytree_registry(enable_none=False, enable_tuple=True,
                                        enable_namedtuple=False, enable_list=True,
                                        enable_dict=False)
ir_tree_registry.register_node(ir.OpResultList, lambda results: (results, None),
                               lambda _, results: list(results))


def _flat_value(x: Any, what: str) -> Any:
    if isinstance(x, ir.Value):
        return x
    if isinstance(x, (list, tuple)) and len(x) == 1 and isinstance(x[0], ir.Value):
        return x[0]
    raise TypeError(f"{what}: expected an ir.Value per argument, got {x!r}")


def jaxpr_subcomp(ctx: ModuleContext, jaxpr: Jaxpr, name_stack: Any, tokens: TokenSet,
                  consts_for_constvars: Sequence[Any], *args: Any,
                  dim_var_values: Sequence[Any] = (), const_lowering: Any = None,
                  outer_traceback: Any = None) -> tuple[list[Any], TokenSet]:
    """Lower ``jaxpr`` inline at the current insertion point: ``consts_for_constvars``
    and ``args`` are the ir.Values of its constvars and invars; returns the ir.Values of
    its outvars and the tokens. Its operations are named under ``name_stack`` and, when
    ``outer_traceback`` is given (a ``source_info_util.current().traceback``), located
    there. ``ctx`` is a
    lowering rule's ``ctx.module_context``; ``const_lowering`` maps constants (by
    ``(id, aval)``) to the values standing for them."""
    if not isinstance(ctx, ModuleContext) or ctx.lowering is None:
        raise TypeError("jaxpr_subcomp: ctx must be the module context a lowering rule "
                        "received (ctx.module_context)")
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(f"jaxpr_subcomp: expected a Jaxpr (a ClosedJaxpr's is its .jaxpr), "
                        f"got {type(jaxpr).__name__}")
    if dim_var_values:
        raise ValueError("jaxpr_subcomp: spmdc's shapes are static; there are no dimension "
                         "variables to pass (dim_var_values must be empty)")
    if not isinstance(tokens, TokenSet) or len(tokens):
        raise ValueError("jaxpr_subcomp: spmdc orders effects with its own token chain; "
                         "pass an empty TokenSet (ctx.tokens_in)")
    n = len(jaxpr.constvars)
    if len(consts_for_constvars) != n or len(args) != len(jaxpr.invars):
        raise ValueError(f"jaxpr_subcomp: the jaxpr takes {n} consts and "
                         f"{len(jaxpr.invars)} arguments, got {len(consts_for_constvars)} "
                         f"and {len(args)}")
    values = [_flat_value(x, "jaxpr_subcomp") for x in (*consts_for_constvars, *args)]
    types = [TensorType(tuple(v.aval.shape), np.dtype(v.aval.dtype))
             for v in (*jaxpr.constvars, *jaxpr.invars)]
    scope = str(name_stack) if name_stack is not None else ""

    def body(xs: list[Any]) -> list[Any]:
        with names.named_scope(scope) if scope else contextlib.nullcontext():
            return eval_jaxpr(jaxpr, xs[:n], *xs[n:])
    before = pin_source(outer_traceback) if outer_traceback is not None else None
    try:
        func, captured = trace_detached(body, types, "jaxpr_subcomp")
    finally:
        if outer_traceback is not None:
            pin_source(before)
    constants = [_constant(c, const_lowering) for c in captured]
    outs = lower_body(ctx.lowering, cleanup(func), [*values, *constants])
    return list(outs), tokens


def _constant(value: Any, const_lowering: Any) -> Any:
    if const_lowering is not None:
        return ir_constant(value, const_lowering=const_lowering)
    return dense_constant(np.asarray(value), type_of(value)[0])


def core_call_lowering(ctx: LoweringRuleContext, *args: Any, name: str, backend: Any = None,
                       call_jaxpr: Jaxpr | ClosedJaxpr) -> list[Any]:
    """The lowering rule of a primitive whose equation calls ``call_jaxpr`` on its
    operands (``register_lowering(p, partial(core_call_lowering, name='my_call'))``): the
    jaxpr lowered in place, its operations named under ``name``. ``backend``, when
    given, is the platform being lowered for."""
    if backend is not None and backend != ctx.module_context.platform:
        raise LoweringError(f"core_call_lowering: call '{name}' asks for backend "
                            f"{backend!r} while lowering for {ctx.module_context.platform}")
    if isinstance(call_jaxpr, ClosedJaxpr):
        jaxpr, consts = call_jaxpr.jaxpr, [ir_constant(c) for c in call_jaxpr.consts]
    elif isinstance(call_jaxpr, Jaxpr):
        jaxpr, consts = call_jaxpr, []
    else:
        raise TypeError(f"core_call_lowering: call_jaxpr must be a Jaxpr or ClosedJaxpr, "
                        f"got {type(call_jaxpr).__name__}")
    outs, _ = jaxpr_subcomp(ctx.module_context, jaxpr, name, TokenSet(), consts, *args)
    return outs
