"""``jax.interpreters.ad``: JAX's tables of JVP and transpose rules (``primitive_jvps``,
``primitive_transposes``), their definers (``defjvp``, ``defjvp2``, ``defjvp_zero``,
``deflinear``, ``deflinear2``, ``defbilinear``), and the values those rules see:
``Zero`` (a symbolic zero tangent or cotangent, with its abstract value) and
``UndefinedPrimal`` (a linear input of a transpose rule).

A JVP rule registered here becomes the rule of spmdc's forward pass for that primitive
(passes/forward.py ``jvp_rules``); reverse mode (passes/autodiff.py ``vjp_rules``) is
built from the JVP and transpose rules: Note [linearize and transpose]. See Note [JAX's
rule tables] in spmdc/interpreters/tables.py.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..compiler.builder import Builder
from ..compiler.ir import Atom, TensorType
from ..compiler.passes.autodiff import (
    activity_rules,
    transpose_state,
    transposing,
    vjp_func,
    vjp_rules,
    wants_activity,
    zeros,
)
from ..compiler.passes.forward import jvp_rules
from ..core.abstract import typeof
from ..core.tracer_text import held_as_jvp_tracer
from ..core.tracing import Trace, Tracer, emitting_into, to_atom, value_of
from ..core.tree import register_pytree_node
from .tables import RuleTable, aval_of_type, run_rule

__all__ = ["Zero", "UndefinedPrimal", "is_undefined_primal", "zeros_like_aval",
           "instantiate_zeros", "add_tangents", "primitive_jvps", "primitive_transposes",
           "get_primitive_transpose", "defjvp", "defjvp2", "defjvp_zero", "deflinear",
           "deflinear2", "defbilinear", "JVPTracer", "JVPTrace"]

# spmdc has no per-transformation tracer classes: one Tracer and one Trace serve every
# transformation (docs/ARCHITECTURE.md, "Passes"). A type test against JAX's JVP tracer
# is answered as JAX would answer it for the value (Note [which values are JVPTracers]
# in core/tracer_text.py).


class _JVPTracerClass(type):
    def __instancecheck__(cls, x: Any) -> bool:
        return isinstance(x, Tracer) and held_as_jvp_tracer(x)


class JVPTracer(Tracer, metaclass=_JVPTracerClass):
    """JAX's tracer of ``jvp``, for type tests: ``isinstance(x, JVPTracer)`` is true of
    a traced value that depends differentiably on an input of its ``jvp`` with a tangent."""
    __slots__ = ()


JVPTrace = Trace


class Zero:
    """A symbolic zero tangent or cotangent of abstract value ``aval``."""
    __slots__ = ("aval",)

    def __init__(self, aval: Any):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval})"

    @staticmethod
    def from_primal_value(value: Any) -> Zero:
        """The zero tangent of ``value``."""
        return Zero(typeof(value).to_tangent_aval())

    def instantiate(self) -> Any:
        return zeros_like_aval(self.aval)


class UndefinedPrimal:
    """A linear input of a transpose rule: only its abstract value ``aval`` is known."""
    __slots__ = ("aval",)

    def __init__(self, aval: Any):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval})"


# As in JAX: leaves of nothing, so tree maps carry them along untouched.
register_pytree_node(Zero, lambda z: ((), z.aval), lambda aval, _: Zero(aval))
register_pytree_node(UndefinedPrimal, lambda u: ((), u.aval),
                     lambda aval, _: UndefinedPrimal(aval))


def is_undefined_primal(x: Any) -> bool:
    return type(x) is UndefinedPrimal


def zeros_like_aval(aval: Any) -> Any:
    """An array of zeros of ``aval``'s shape and dtype (NumPy's for float0)."""
    dtype = np.dtype(aval.dtype)
    if dtype.kind == "V":                            # float0: no values to compute
        return np.zeros(aval.shape, dtype)
    return lax.full(aval.shape, 0, dtype)


def instantiate_zeros(tangent: Any) -> Any:
    """``tangent``, with a symbolic ``Zero`` made an array of zeros."""
    return zeros_like_aval(tangent.aval) if type(tangent) is Zero else tangent


def add_tangents(x: Any, y: Any) -> Any:
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return lax.add(x, y)


# --- the tables ---------------------------------------------------------------------------

def _install_jvp(prim: Any, rule: Any) -> None:
    jvp_rules[prim] = _jvp_adapter(prim, rule)
    _install_vjp(prim)


def _uninstall_jvp(prim: Any) -> None:
    jvp_rules.pop(prim, None)
    _uninstall_vjp(prim)


# spmdc's own reverse rules of built-in primitives that a library's rule shadows, with
# whether they take ``active`` (See Note [linearize and transpose])
_own_vjp: dict[Any, tuple[Any, bool]] = {}


# and their own activity rules, which hold except while transposing (stop_gradient's
# makes its output inactive; a library's transpose rule for it passes the cotangent on)
_own_activity: dict[Any, Any] = {}


def _install_vjp(prim: Any, rule: Any = None) -> None:
    own = vjp_rules.get(prim)
    if own is not None and prim not in _own_vjp and not (
            isinstance(own, functools.partial) and own.func is _vjp_adapter):
        _own_vjp[prim] = (own, prim in wants_activity)
    own_activity = activity_rules.get(prim)
    if own_activity is not None and prim not in _own_activity:
        _own_activity[prim] = own_activity
        activity_rules[prim] = functools.partial(_activity_adapter, prim)
    vjp_rules[prim] = functools.partial(_vjp_adapter, prim)
    wants_activity.add(prim)


def _activity_adapter(prim: Any, active: Sequence[bool], **params: Any) -> list[bool]:
    outputs = _own_activity[prim](active, **params)
    return [any(active)] * len(outputs) if _state.transposing else outputs


def _uninstall_vjp(prim: Any) -> None:
    if prim not in primitive_jvps and prim not in primitive_transposes:
        if prim in _own_activity:
            activity_rules[prim] = _own_activity.pop(prim)
        own = _own_vjp.pop(prim, None)
        if own is None:
            vjp_rules.pop(prim, None)
            wants_activity.discard(prim)
            return
        vjp_rules[prim] = own[0]
        if not own[1]:
            wants_activity.discard(prim)


primitive_jvps = RuleTable("primitive_jvps", _install_jvp, _uninstall_jvp)
"""``jvp(primals, tangents, **params) -> (primal outputs, tangent outputs)``; a tangent
is a value or a ``Zero``. Outputs are lists when the primitive has multiple results."""

primitive_transposes = RuleTable("primitive_transposes", _install_vjp, _uninstall_vjp)
"""``transpose(cotangents, *inputs, **params) -> [cotangent or None per input]``; the
linear inputs are ``UndefinedPrimal``s, a cotangent may be a ``Zero``."""


def get_primitive_transpose(prim: Any) -> Callable[..., Any]:
    try:
        return primitive_transposes[prim]
    except KeyError:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{prim}' not "
            "implemented") from None


def _zero_of(value: Any) -> Zero:
    return Zero(typeof(value).to_tangent_aval())


def _zero(t: TensorType) -> Zero:
    """The symbolic zero tangent of a value of IR type ``t`` (float0 for integers)."""
    return Zero(aval_of_type(t).to_tangent_aval())


def defjvp(prim: Any, *rules: Callable[..., Any] | None) -> None:
    """One rule per operand, ``rule(tangent, *primals, **params) -> tangent``
    (None: the output does not depend on that operand); the JVP is their sum."""
    _single_result("defjvp", prim)

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        parts = [rule(t, *primals, **params) for rule, t in zip(rules, tangents, strict=True)
                 if rule is not None and type(t) is not Zero]
        return out, functools.reduce(add_tangents, parts, _zero_of(out))
    primitive_jvps[prim] = jvp


def defjvp2(prim: Any, *rules: Callable[..., Any] | None) -> None:
    """As ``defjvp``, the rules also getting the output: ``rule(t, out, *primals)``."""
    _single_result("defjvp2", prim)

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        parts = [rule(t, out, *primals, **params)
                 for rule, t in zip(rules, tangents, strict=True)
                 if rule is not None and type(t) is not Zero]
        return out, functools.reduce(add_tangents, parts, _zero_of(out))
    primitive_jvps[prim] = jvp


def defjvp_zero(prim: Any) -> None:
    """The output's tangent is zero whatever the inputs' are."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return out, ([_zero_of(o) for o in out] if prim.multiple_results else _zero_of(out))
    primitive_jvps[prim] = jvp


def _linear_jvp(prim: Any, primals: Sequence[Any], tangents: Sequence[Any],
                **params: Any) -> tuple[Any, Any]:
    out = prim.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents):
        return out, ([_zero_of(o) for o in out] if prim.multiple_results else _zero_of(out))
    return out, prim.bind(*map(instantiate_zeros, tangents), **params)


def deflinear(prim: Any, transpose_rule: Callable[..., Any]) -> None:
    """A primitive linear in all its operands; ``transpose_rule(ct, **params)`` gives
    the cotangent of each operand."""
    primitive_jvps[prim] = functools.partial(_linear_jvp, prim)

    def transpose(ct, *args, **params):
        if type(ct) is Zero:
            return [None] * len(args)
        return transpose_rule(ct, **params)
    primitive_transposes[prim] = transpose


def deflinear2(prim: Any, transpose_rule: Callable[..., Any]) -> None:
    """As ``deflinear``, the transpose rule also getting the operands:
    ``transpose_rule(ct, *args, **params)``."""
    primitive_jvps[prim] = functools.partial(_linear_jvp, prim)

    def transpose(ct, *args, **params):
        if type(ct) is Zero:
            return [None] * len(args)
        return transpose_rule(ct, *args, **params)
    primitive_transposes[prim] = transpose


def defbilinear(prim: Any, lhs_rule: Callable[..., Any], rhs_rule: Callable[..., Any]
                ) -> None:
    """A primitive ``prim(x, y)`` linear in each operand separately (a product, as
    ``dot_general``): its tangent is ``prim(tx, y) + prim(x, ty)``, and its transpose
    with respect to ``x`` is ``lhs_rule(ct, x, y, **params)`` (``x`` an
    ``UndefinedPrimal``), with respect to ``y`` ``rhs_rule(ct, x, y, **params)``."""
    _single_result("defbilinear", prim)
    defjvp(prim, lambda t, x, y, **params: prim.bind(t, y, **params),
           lambda t, x, y, **params: prim.bind(x, t, **params))
    primitive_transposes[prim] = functools.partial(_bilinear_transpose, prim, lhs_rule,
                                                   rhs_rule)


def _bilinear_transpose(prim: Any, lhs_rule: Callable[..., Any], rhs_rule: Callable[..., Any],
                        ct: Any, x: Any, y: Any, **params: Any) -> list[Any]:
    if is_undefined_primal(x) == is_undefined_primal(y):
        raise ValueError(f"the bilinear transpose of primitive '{prim}' is taken with "
                         "respect to exactly one operand; got "
                         f"{'both' if is_undefined_primal(x) else 'neither'} as linear "
                         "inputs (UndefinedPrimal)")
    if is_undefined_primal(x):
        return [Zero(x.aval.to_tangent_aval()) if type(ct) is Zero else
                lhs_rule(ct, x, y, **params), None]
    return [None, Zero(y.aval.to_tangent_aval()) if type(ct) is Zero else
            rhs_rule(ct, x, y, **params)]


def _single_result(definer: str, prim: Any) -> None:
    if prim.multiple_results:
        raise ValueError(f"{definer}: primitive '{prim}' has multiple results; assign a "
                         "rule to ad.primitive_jvps[prim] instead")


# --- the adapters: JAX's rules as the passes' ----------------------------------------------

def _results(prim: Any, out: Any, what: str, n: int | None = None) -> list[Any]:
    """A rule's outputs as a list (one per result), checked for their number."""
    if prim.multiple_results:
        if not isinstance(out, (list, tuple)):
            raise TypeError(f"{what} returned {type(out).__name__}; primitive '{prim}' has "
                            "multiple results, so its rules return a list per result")
        out = list(out)
    else:
        out = [out]
    if n is not None and len(out) != n:
        raise ValueError(f"{what} returned {len(out)} values for {n} outputs")
    return out


def _checked(trace: Trace, value: Any, want: TensorType, what: str) -> Atom:
    atom = to_atom(trace, value)
    if atom.type != want:
        raise TypeError(f"{what} returned a value of type {atom.type} where the type "
                        f"{want} was expected")
    return atom


def _jvp_adapter(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    what = f"the JVP rule of primitive '{prim}'"

    def jvp(b: Builder, primals: list[Atom], tangents: list[Atom | None], /,
            **params: Any) -> tuple[list[Atom], list[Atom | None]]:
        with emitting_into(b, what) as trace:
            xs = [value_of(trace, p) for p in primals]
            ts = [_zero(p.type) if t is None else value_of(trace, t)
                  for p, t in zip(primals, tangents, strict=True)]
            with run_rule(what), _not_transposing():
                out, tout = rule(xs, ts, **params)
            want = prim.out_types(*[p.type for p in primals], **params)
            outs = [_checked(trace, o, t, what + f" (output {k})") for k, (o, t) in
                    enumerate(zip(_results(prim, out, what, len(want)), want, strict=True))]
            touts = _results(prim, tout, what + " (tangents)", len(outs))
            return outs, [None if type(t) is Zero or t is None else
                          _checked(trace, t, o.type, what + f" (tangent {k})")
                          for k, (o, t) in enumerate(zip(outs, touts, strict=True))]
    return jvp


# Note [linearize and transpose]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX differentiates a primitive in reverse by its JVP rule, then transposes the linear
# part, calling transpose rules with ``UndefinedPrimal`` for the linear inputs. spmdc's
# reverse pass asks each primitive for a VJP rule, so the VJP of a library's primitive
# is built the same way, as a program: its JVP rule is traced with a symbolic tangent
# input per active operand (Note [activity]) into a Func G(primals, tangents) ->
# tangents, and the VJP of G with respect to the tangents is spmdc's own reverse pass
# over G, inlined at the equation. G is linear in its tangents, so the tangent values it
# is given (zeros) are dead and dropped by DCE. Within G, the reverse pass meets
# primitives applied to tangents; while it runs, a library primitive's VJP is its
# transpose rule (``_state.transposing``), called with ``UndefinedPrimal`` for the active
# operands, exactly as JAX's backward pass would call it. A primitive with a transpose
# rule and no JVP rule is linear in the operands it is differentiated in (JAX uses it
# only where it is, in ``linear_transpose`` and in the linear part of a JVP), and its
# transpose rule is its VJP everywhere. spmdc's ``linear_transpose`` is its reverse pass
# run with the flag set, so there a primitive with both rules is transposed by its
# transpose rule, never linearized by its JVP rule, as JAX's linear_transpose does
# (Equinox's vprims have a JVP rule that is not the derivative their transpose implies).
# Except for a built-in primitive that spmdc differentiates with its own rule: a transpose
# that a library gives it (Lineax gives ``stop_gradient_p`` one that passes the cotangent
# through, for where it is applied to a tangent) is its VJP only while transposing; in
# reverse mode elsewhere it keeps spmdc's rule (stop_gradient's is zero), as in JAX, where
# its JVP is what grad uses and the transpose rule is never reached. The same holds for
# its activity rule (stop_gradient's output is inactive elsewhere, so what it feeds is not
# differentiated): while transposing, such a primitive's output is active where an input is.
# Every library rule runs with the flag cleared, so a rule that itself differentiates
# linearizes anew.

_state = transpose_state       # the flag (compiler/passes/autodiff.py, where
_transposing = transposing     # linear_transpose can set it too)


def _not_transposing() -> Any:
    return _transposing(False)


def _vjp_adapter(prim: Any, b: Builder, ct: Any, /, *inputs: Atom,
                 active: Sequence[bool], **params: Any) -> list[Atom | None]:
    cts = list(ct) if prim.multiple_results else [ct]
    own = _own_vjp.get(prim)
    if own is not None and not _state.transposing and prim not in primitive_jvps:
        return own[0](b, ct, *inputs, **params, **({"active": active} if own[1] else {}))
    if _state.transposing or prim not in primitive_jvps:
        return _transpose(prim, b, cts, inputs, active, params)
    return _linearize_and_transpose(prim, b, cts, inputs, active, params)


def _transpose(prim: Any, b: Builder, cts: list[Atom | None], inputs: Sequence[Atom],
               active: Sequence[bool], params: dict[str, Any]) -> list[Atom | None]:
    what = f"the transpose rule of primitive '{prim}'"
    rule = get_primitive_transpose(prim)
    out_types = prim.out_types(*[a.type for a in inputs], **params)
    with emitting_into(b, what) as trace:
        args = [UndefinedPrimal(aval_of_type(a.type)) if act else value_of(trace, a)
                for a, act in zip(inputs, active, strict=True)]
        cts_in = [_zero(t) if c is None else value_of(trace, c)
                  for c, t in zip(cts, out_types, strict=True)]
        with run_rule(what), _not_transposing():
            res = rule(cts_in if prim.multiple_results else cts_in[0], *args, **params)
        if not isinstance(res, (list, tuple)) or len(res) != len(inputs):
            n = len(res) if isinstance(res, (list, tuple)) else type(res).__name__
            raise ValueError(f"{what} returned {n} cotangents for {len(inputs)} operands; "
                             "it returns one per operand (None for none)")
        return [None if r is None or type(r) is Zero or not act else
                _checked(trace, r, a.type, what + f" (cotangent {k})")
                for k, (r, a, act) in enumerate(zip(res, inputs, active, strict=True))]


def _linearize_and_transpose(prim: Any, b: Builder, cts: list[Atom | None],
                             inputs: Sequence[Atom], active: Sequence[bool],
                             params: dict[str, Any]) -> list[Atom | None]:
    what = f"the JVP rule of primitive '{prim}'"
    g = Builder(f"{prim}_jvp")
    primals = [g.input(a.type) for a in inputs]
    tangents = [g.input(a.type) for a, act in zip(inputs, active, strict=True) if act]
    with emitting_into(g, what) as trace:
        xs = [value_of(trace, p) for p in primals]
        given = iter(tangents)
        ts = [value_of(trace, next(given)) if act else _zero(a.type)
              for a, act in zip(inputs, active, strict=True)]
        with run_rule(what), _not_transposing():
            out, tout = primitive_jvps[prim](xs, ts, **params)
        outs = _results(prim, out, what)
        touts = _results(prim, tout, what + " (tangents)", len(outs))
        seeded = [k for k, (t, c) in enumerate(zip(touts, cts, strict=True))
                  if c is not None and t is not None and type(t) is not Zero]
        out_types = prim.out_types(*[a.type for a in inputs], **params)
        results = [_checked(trace, touts[k], out_types[k], what + f" (tangent {k})")
                   for k in seeded]
    if not seeded:
        return [None] * len(inputs)
    linear = g.build(results)
    with _transposing(True):
        transposed = vjp_func(linear, [False] * len(primals) + [True] * len(tangents))
    dummies = [zeros(b, t.type) for t in tangents]     # dead: G is linear in them
    outs = b.inline(transposed, [*inputs, *dummies, *[cts[k] for k in seeded]])
    grads = iter(outs[len(results):])
    return [next(grads) if act else None for act in active]
