"""Forward-mode autodiff (JVP) as a pass over the IR, and the partial evaluation that
turns a JVP program into ``linearize``'s primal and linear halves.

``jvp_func(func, tangent_in, tangent_out)`` returns a Func with inputs ``func.inputs +
(one tangent per input marked in tangent_in)`` and outputs ``func.outputs + (one tangent
per output marked in tangent_out)``. It walks the equations once, in order: an equation
none of whose operands carries a tangent is copied; otherwise its primitive's JVP rule
emits the primal result and its tangent together. ``None`` is a symbolic zero, so work on
values that do not depend on the differentiated inputs is never done twice, and the whole
program costs about one forward pass plus the tangent arithmetic (no VJP is involved).

Only floating point values carry tangents: an integer or bool result's tangent is always a
symbolic zero (the frontend gives such outputs JAX's ``float0`` zeros).

``partial_eval(func, known)`` splits a Func by which inputs are known: the known Func
computes everything that depends on known inputs only, plus the residuals the rest needs;
the unknown Func takes the residuals and the unknown inputs. Applied to a JVP program with
the primals known it gives linearize's two halves (see Note [linearize]).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..builder import Builder, lit
from ..ir import Atom, Eqn, Func, Lit, TensorType, Var
from .autodiff import is_float, nondifferentiable, vjp_rules, zeros

__all__ = ["jvp_rules", "JVPRule", "jvp_func", "partial_eval", "instantiate", "linear_jvp",
           "diagonal_jvp", "reduction_jvp", "zero_jvp", "partials_jvp", "sum_jvp",
           "tangent_types", "tangent_only", "zero_tangent"]

JVPRule = Callable[..., tuple[Sequence[Atom], Sequence[Atom | None]]]
"""``rule(b, primals, tangents, **params) -> (primal outputs, tangent outputs)``

``primals`` are the operands in the new program, ``tangents[k]`` the tangent of
``primals[k]`` or ``None`` for a symbolic zero (at least one is not None). The rule emits
the primal result (usually one ``b.bind`` of the primitive) and its tangent into ``b``;
both are lists (one entry per result), a tangent may be ``None``."""

jvp_rules: dict[Any, JVPRule] = {}

tangent_only: set[Any] = set()
"""Primitives whose results are only ever tangents, and which may not be evaluated
(``custom_lin``, Note [forward mode of custom_vjp] in primitives/custom_derivatives.py):
where ``partial_eval`` keeps a primal copy of a control-flow equation, they become zeros
in it (Note [linearize])."""


def instantiate(b: Builder, t: Atom | None, like: Atom) -> Atom:
    """``t``, or zeros of ``like``'s type for a symbolic zero."""
    return zeros(b, like.type) if t is None else t


def tangent_types(types: Sequence[TensorType]) -> list[bool]:
    """Which of these values can carry a tangent (floating point ones)."""
    return [is_float(t) for t in types]


# --- rule builders ---------------------------------------------------------------------------

def linear_jvp(prim: Any, *positions: int) -> JVPRule:
    """The JVP of a primitive linear in the operands at ``positions`` (all when none are
    given) and constant in the others (indices, predicates): the primitive applied to the
    tangents, zeros standing in for absent ones."""
    def rule(b, primals, tangents, **params):
        out = b.bind(prim, *primals, **params)
        outs = list(out) if prim.multiple_results else [out]
        linear = positions or range(len(primals))
        if all(tangents[k] is None for k in linear):
            return outs, [None] * len(outs)
        args = [instantiate(b, tangents[k], x) if k in linear else x
                for k, x in enumerate(primals)]
        tout = b.bind(prim, *args, **params)
        return outs, list(tout) if prim.multiple_results else [tout]
    return rule


def sum_jvp(prim: Any, negate_y: bool = False) -> JVPRule:
    """The JVP of ``x + y`` (``x - y`` with ``negate_y``): the tangents combined the same
    way; an absent one is skipped, not added as zeros."""
    def rule(b, primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = b.bind(prim, x, y)
        if tx is not None and ty is not None:
            t = b.bind(prim, tx, ty)
        else:
            t = tx if ty is None else (b.neg(ty) if negate_y else ty)
        if t.type.shape != out.type.shape:
            t = b.broadcast_in_dim(t, shape=out.type.shape, broadcast_dimensions=())
        return [out], [t]
    return rule


def diagonal_jvp(prim: Any) -> JVPRule:
    """The JVP of an elementwise unary primitive from its VJP rule.

    See Note [diagonal JVP]."""
    def rule(b, primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = b.bind(prim, x, **params)
        return [out], vjp_rules[prim](b, t, x, **params)
    return rule


# Note [diagonal JVP]
# ~~~~~~~~~~~~~~~~~~~
# An elementwise unary primitive has a diagonal Jacobian, which is its own transpose, so
# its VJP rule ``ct -> ct * f'(x)`` applied to a tangent is exactly its JVP ``t -> f'(x) t``
# (also for complex holomorphic ops: JAX's VJP is the transpose, not the adjoint). The
# derivative is then written once, in the VJP rule; the JVP costs the same arithmetic as
# writing it by hand and involves no reverse sweep.


def reduction_jvp(prim: Any) -> JVPRule:
    """The JVP of a reduction ``y = reduce(x, axes)``: each element of ``x`` feeds exactly
    one element of ``y``, so ``dy = reduce_sum(dy/dx * t)`` with ``dy/dx`` the VJP rule's
    answer for a cotangent of ones (the same handling of ties and zeros as grad)."""
    def rule(b, primals, tangents, *, axes, **params):
        (x,), (t,) = primals, tangents
        out = b.bind(prim, x, axes=axes, **params)
        (slope,) = vjp_rules[prim](b, _ones(b, out.type), x, axes=axes, **params)
        return [out], [b.reduce_sum(b.mul(slope, t), axes=axes)]
    return rule


def _ones(b: Builder, t: TensorType) -> Atom:
    one = lit(1, t.dtype)
    return one if t.shape == () else b.broadcast_in_dim(one, shape=t.shape,
                                                        broadcast_dimensions=())


zero_tangent: set[Any] = set()
"""The primitives whose JVP is ``zero_jvp``: their outputs' tangents are symbolic zeros."""


def zero_jvp(prim: Any) -> JVPRule:
    """The JVP of a piecewise-constant primitive (floor, sign, stop_gradient): zero."""
    zero_tangent.add(prim)

    def rule(b, primals, tangents, **params):
        out = b.bind(prim, *primals, **params)
        outs = list(out) if prim.multiple_results else [out]
        return outs, [None] * len(outs)
    return rule


# --- the pass --------------------------------------------------------------------------------

def jvp_func(func: Func, tangent_in: Sequence[bool],
             tangent_out: Sequence[bool] | None = None,
             tangent_vars: set[Var] | None = None) -> Func:
    """``tangent_out[k]``: output k gets a tangent output, zeros where it is a symbolic
    zero (default: every floating point output). ``tangent_vars``, if given, receives every
    tangent Var of the result (for ``partial_eval``)."""
    tangent_vars = set() if tangent_vars is None else tangent_vars
    b = Builder(func.name)
    primals = [b.input(v.type) for v in func.inputs]
    tangent_inputs = [b.input(v.type) if t else None
                      for v, t in zip(func.inputs, tangent_in, strict=True)]
    env: dict[Var, Atom] = dict(zip(func.inputs, primals, strict=True))
    tangents: dict[Var, Atom] = {v: t for v, t in zip(func.inputs, tangent_inputs, strict=True)
                                 if t is not None}
    for eqn in func.eqns:
        ins = [a if isinstance(a, Lit) else env[a] for a in eqn.inputs]
        tins = [None if isinstance(a, Lit) else tangents.get(a) for a in eqn.inputs]
        b.source = eqn.source
        if all(t is None for t in tins) or eqn.prim in nondifferentiable:
            outs = tuple(Var(v.type) for v in eqn.outputs)
            b.eqns.append(Eqn(eqn.prim, tuple(ins), eqn.params, outs, eqn.source))
            env.update(zip(eqn.outputs, outs, strict=True))
            continue
        rule = jvp_rules.get(eqn.prim)
        if rule is None:
            raise NotImplementedError(f"jvp: no JVP rule for {eqn.prim.name!r}")
        outs, touts = rule(b, ins, tins, **eqn.params)
        for v, o, t in zip(eqn.outputs, outs, touts, strict=True):
            env[v] = o
            if t is not None and is_float(v.type):
                tangents[v] = t
                if isinstance(t, Var):
                    tangent_vars.add(t)
    tangent_out = (tangent_types(func.out_types) if tangent_out is None else tangent_out)
    results = [a if isinstance(a, Lit) else env[a] for a in func.outputs]
    touts = [instantiate(b, None if isinstance(a, Lit) else tangents.get(a), a)
             for a, t in zip(func.outputs, tangent_out, strict=True) if t]
    tangent_vars.update(t for t in [*tangent_inputs, *touts] if isinstance(t, Var))
    return b.build([*results, *touts])


# Note [linearize]
# ~~~~~~~~~~~~~~~~
# ``linearize(f, x)`` is ``jvp`` followed by partial evaluation with the primal inputs
# known and the tangent inputs unknown. Every equation whose operands are all known goes
# to the known Func, which runs once, at ``linearize`` time, and returns the primal
# outputs plus the residuals: the known values that unknown equations read. The unknown
# Func takes the residuals and the tangents and holds only tangent arithmetic, so calling
# the linear function does no primal work. One exception, as in JAX's while loop: a
# control-flow equation that carries tangents (cond, while, scan) runs as a whole in the
# unknown Func, recomputing its primal part alongside the tangents; its primal outputs
# also come from a copy in the known Func with zero tangents. That copy's tangents are
# dead, and a ``tangent_only`` primitive in its sub-Funcs (``custom_lin``, which has no
# value, only a transpose) becomes zeros there, so the known Func never evaluates it.

def partial_eval(func: Func, known: Sequence[bool], tangent_vars: set[Var],
                 unknown_out: Sequence[bool]) -> tuple[Func, Func, int]:
    """Split a JVP program into ``(known_func, unknown_func, n_residuals)``.

    ``known_func(*known inputs) -> (*known outputs, *residuals)``;
    ``unknown_func(*residuals, *unknown inputs) -> (*unknown outputs)``, the outputs being
    split as ``unknown_out`` says (the caller's choice: no output marked known may depend
    on an unknown input). ``tangent_vars`` (filled by ``jvp_func``)
    says which results of a control-flow equation are tangents."""
    unknown: set[Var] = {v for v, k in zip(func.inputs, known, strict=True) if not k}
    kb, ub = Builder(func.name), Builder(func.name + "_linear")
    kenv: dict[Var, Atom] = {v: kb.input(v.type)
                             for v, k in zip(func.inputs, known, strict=True) if k}
    uenv: dict[Var, Atom] = {v: Var(v.type) for v in func.inputs if v in unknown}
    residuals: list[Atom] = []          # known-side values the unknown side reads, in order
    residual_inputs: dict[Var, Var] = {}

    def kread(a: Atom) -> Atom:
        return a if isinstance(a, Lit) else kenv[a]

    def uread(a: Atom) -> Atom:
        if isinstance(a, Lit):
            return a
        if a in uenv:
            return uenv[a]
        value = kenv[a]
        if isinstance(value, Lit):
            return value
        if value not in residual_inputs:
            residuals.append(value)
            residual_inputs[value] = Var(a.type)
        return residual_inputs[value]

    def copy(builder: Builder, eqn: Eqn, ins: tuple[Atom, ...]) -> tuple[Var, ...]:
        outs = tuple(Var(v.type) for v in eqn.outputs)
        builder.eqns.append(Eqn(eqn.prim, ins, eqn.params, outs, eqn.source))
        return outs

    for eqn in func.eqns:
        if unknown.isdisjoint(eqn.inputs):
            kenv.update(zip(eqn.outputs, copy(kb, eqn, tuple(map(kread, eqn.inputs))),
                            strict=True))
            continue
        uenv.update(zip(eqn.outputs, copy(ub, eqn, tuple(map(uread, eqn.inputs))),
                        strict=True))
        # Only a multi-result (control-flow) equation mixes primal and tangent results;
        # the results of every other equation reading a tangent are tangent values.
        primal = [v for v in eqn.outputs if v not in tangent_vars]
        if not (eqn.prim.multiple_results and primal and len(primal) < len(eqn.outputs)):
            unknown.update(eqn.outputs)
            continue
        # A control-flow equation carrying primals and tangents: its primal results come
        # from a copy in the known Func, with zeros for the tangents. See Note [linearize].
        kins = tuple(zeros(kb, a.type) if isinstance(a, Var) and a in unknown else kread(a)
                     for a in eqn.inputs)
        primal_eqn = Eqn(eqn.prim, eqn.inputs, _primal_params(eqn.params), eqn.outputs,
                         eqn.source)
        kenv.update(zip(eqn.outputs, copy(kb, primal_eqn, kins), strict=True))
        unknown.update(v for v in eqn.outputs if v in tangent_vars)
    is_unknown = list(unknown_out)
    for a, u in zip(func.outputs, is_unknown, strict=True):
        if not u and isinstance(a, Var) and a in unknown:
            raise ValueError("partial_eval: an output marked known depends on unknown inputs")
    known_outs = [kread(a) for a, u in zip(func.outputs, is_unknown, strict=True) if not u]
    unknown_outs = [uread(a) for a, u in zip(func.outputs, is_unknown, strict=True) if u]
    known_func = kb.build([*known_outs, *residuals])
    unknown_inputs = [residual_inputs[r] for r in residuals]
    unknown_inputs += [uenv[v] for v, k in zip(func.inputs, known, strict=True) if not k]
    unknown_func = Func(ub.name, tuple(unknown_inputs), tuple(ub.eqns), tuple(unknown_outs))
    return known_func, unknown_func, len(residuals)


def _primal_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with the ``tangent_only`` equations of its sub-Funcs made zeros."""
    return {k: _primal_param(v) for k, v in params.items()}


def _primal_param(v: Any) -> Any:
    if isinstance(v, Func):
        return _primal_func(v)
    if isinstance(v, tuple) and any(isinstance(x, Func) for x in v):
        return tuple(_primal_param(x) for x in v)
    return v


def _holds_tangent_only(func: Func) -> bool:
    return any(eqn.prim in tangent_only or any(
        _holds_tangent_only(f) for v in eqn.params.values()
        for f in (v if isinstance(v, tuple) else (v,)) if isinstance(f, Func))
        for eqn in func.eqns)


def _primal_func(func: Func) -> Func:
    """``func`` with each ``tangent_only`` equation (at any depth) replaced by zeros: for
    a copy whose tangents are dead (Note [linearize])."""
    if not _holds_tangent_only(func):
        return func
    b = Builder(func.name)
    env: dict[Var, Atom] = {v: b.input(v.type) for v in func.inputs}

    def read(a: Atom) -> Atom:
        return a if isinstance(a, Lit) else env[a]

    for eqn in func.eqns:
        if eqn.prim in tangent_only:
            env.update((v, zeros(b, v.type)) for v in eqn.outputs)
            continue
        outs = tuple(Var(v.type) for v in eqn.outputs)
        b.eqns.append(Eqn(eqn.prim, tuple(map(read, eqn.inputs)), _primal_params(eqn.params),
                          outs, eqn.source))
        env.update(zip(eqn.outputs, outs, strict=True))
    return b.build([read(a) for a in func.outputs])


def partials_jvp(prim: Any, dx: Callable[..., Atom] | None,
                 dy: Callable[..., Atom] | None) -> JVPRule:
    """The JVP of an elementwise ``z = f(x, y)`` from its partial derivatives
    ``dx(b, x, y)``, ``dy(b, x, y)`` (None: no dependence): ``tx dz/dx + ty dz/dy``."""
    def rule(b, primals, tangents, **params):
        x, y = primals
        out = b.bind(prim, x, y, **params)
        terms = [b.mul(t, d(b, x, y)) for t, d in zip(tangents, (dx, dy), strict=True)
                 if t is not None and d is not None]
        return [out], [summed_tangent(b, terms, out)]
    return rule


def summed_tangent(b: Any, terms: list[Atom], out: Atom) -> Atom | None:
    """The tangent of ``out`` as the sum of its ``terms`` (None if there are none), each
    of an operand's shape: a scalar operand's is broadcast to ``out``'s shape."""
    if not terms:
        return None
    tout = terms[0] if len(terms) == 1 else b.add(*terms)
    if tout.type.shape != out.type.shape:
        tout = b.broadcast_in_dim(tout, shape=out.type.shape, broadcast_dimensions=())
    return tout
