"""Jaxprs as JAX shows them: ``Jaxpr``, ``ClosedJaxpr``, ``JaxprEqn``, ``Var``, ``Literal``,
``DropVar``, and ``eval_jaxpr`` / ``jaxpr_as_fun`` / ``new_jaxpr_eqn`` to run and build them.

A jaxpr here is a view of spmdc's IR (``closed_jaxpr(func, ...)``): one JaxprEqn per IR
Eqn, under JAX's primitive names and params (Note [jaxpr names and params] in
transforms/jaxpr_params.py), printed in JAX's syntax (transforms/jaxpr_print.py). spmdc's
own IR stays what ``make_ir`` and ``spmdc dump`` show. The objects are JAX's shape, so a
library that reads a jaxpr, or builds a new one with ``Jaxpr.replace`` /
``JaxprEqn.replace`` / ``new_jaxpr_eqn``, and runs it with ``eval_jaxpr`` works:
``eval_jaxpr`` binds each equation's primitive, so it runs eagerly, or emits into the
current trace under jit, vmap, grad and the rest (Note [running a jaxpr]).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..compiler.ir import Eqn, Func, Lit, TensorType
from ..compiler.ir import Var as IRVar
from ..compiler.passes.cleanup import has_effects
from ..compiler.primitives.structural import broadcast_in_dim_p
from ..core.abstract import ShapedArray
from ..core.tracing import Tracer, trace_function
from .jaxpr_params import SIZE_ONE_STRETCHING, bind_jax, jax_form, jax_primitive
from .jaxpr_print import PrintContext, format_doc, pp_eqn, pp_toplevel

__all__ = ["Jaxpr", "ClosedJaxpr", "JaxprEqn", "JaxprEqnContext", "Var", "Literal", "DropVar",
           "DebugInfo", "eval_jaxpr", "jaxpr_as_fun", "new_jaxpr_eqn",
           "jaxprs_in_params", "subjaxprs",
           "closed_jaxpr", "DebugEffect", "OrderedDebugEffect", "spmdc_params",
           "set_source_info_maker"]

# Note [running a jaxpr]
# eval_jaxpr walks the equations and binds each one's primitive with its params turned
# back into spmdc's (jaxpr_params.bind_jax), so a jaxpr runs wherever a traced function
# would: eagerly op by op, or into the trace of an enclosing jit/vmap/grad. A param that
# holds a sub-jaxpr (cond's branches, a loop body) must be a spmdc Func to bind: a
# sub-jaxpr this module made from a Func and that nobody changed since gives that Func
# back; any other (built or rewritten by a library) is traced into a Func by evaluating
# it, as jit traces a function. Sub-jaxprs are closed, as spmdc's sub-Funcs are: one
# with constants of its own is refused (JAX's control flow passes constants as operands).

# Note [an equation's source info]
# A JaxprEqn's ``source_info`` is JAX's: ``.traceback`` (the user's frame) and
# ``.name_stack`` (the named_scope names, ``str`` joined by ``/``), which Haiku's
# jaxpr_info reads to nest equations under their modules. JAX's SourceInfo class is
# jax.extend.source_info_util's (spmdc/extend/source_info_util.py), a floor above this
# one, so that module hands its maker down when it is imported (``import spmdc`` imports
# it); until then an equation's source is spmdc's own (a ``file:line`` string).
_source_info_of: Callable[[Any], Any] = lambda source: source


def set_source_info_maker(maker: Callable[[Any], Any]) -> None:
    """``maker(source)``: an IR equation's source as a JaxprEqn's ``source_info``. See Note
    [an equation's source info]."""
    global _source_info_of
    _source_info_of = maker


class Var:
    """A variable of a jaxpr: its abstract value (``aval``, a ShapedArray). Compared by
    identity; named only when printed."""
    __slots__ = ("aval",)
    is_literal = False
    is_dropvar = False

    def __init__(self, aval: Any):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var(id={id(self)}):{self.aval.str_short()}"


class DropVar(Var):
    """An output nobody reads, printed ``_``."""
    __slots__ = ()
    is_dropvar = True

    def __repr__(self) -> str:
        return "_"


class Literal:
    """A scalar constant written inline (``1.0:f32[]``); ``val`` is a NumPy scalar."""
    __slots__ = ("val", "aval")
    is_literal = True
    is_dropvar = False

    def __init__(self, val: Any, aval: Any):
        self.val, self.aval = val, aval

    def __repr__(self) -> str:
        return f"Literal({self.val})"


class DebugInfo(NamedTuple):
    """Where a jaxpr came from, as JAX's ``jaxpr.debug_info``: what traced it, the
    function (``name at file:line``), a name per argument leaf (``x[0]``) and per result
    leaf (``result['a']``); the names are None where they are not known."""
    traced_for: str
    func_src_info: str
    arg_names: tuple[str, ...] | None
    result_paths: tuple[str, ...] | None

    @property
    def func_name(self) -> str:
        return self.func_src_info.split(" ")[0]


def _effects_of(eqns: Sequence[JaxprEqn]) -> set[Any]:
    return set().union(*(e.effects for e in eqns)) if eqns else set()


class JaxprEqnContext:
    """The context an equation runs in (JAX's ``eqn.ctx``): JAX keeps a compute type and
    XLA metadata there; spmdc's equations carry neither, so entering ``manager`` sets
    nothing. Interpreters written for JAX enter it around each equation."""
    __slots__ = ()

    @property
    def manager(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


_NO_CONTEXT = JaxprEqnContext()


class JaxprEqn:
    """One equation: ``outvars = primitive[params] invars``."""
    __slots__ = ("invars", "outvars", "primitive", "params", "effects", "source_info", "ctx")

    def __init__(self, invars: list[Any], outvars: list[Any], primitive: Any,
                 params: dict[str, Any], effects: Any = frozenset(), source_info: Any = None,
                 ctx: Any = None):
        self.invars, self.outvars = list(invars), list(outvars)
        self.primitive, self.params = primitive, params
        self.effects, self.source_info = set(effects), source_info
        self.ctx = _NO_CONTEXT if ctx is None else ctx

    def replace(self, invars: list[Any] | None = None, outvars: list[Any] | None = None,
                primitive: Any = None, params: dict[str, Any] | None = None,
                effects: Any = None, source_info: Any = None, ctx: Any = None) -> JaxprEqn:
        return JaxprEqn(self.invars if invars is None else invars,
                        self.outvars if outvars is None else outvars,
                        self.primitive if primitive is None else primitive,
                        self.params if params is None else params,
                        self.effects if effects is None else effects,
                        self.source_info if source_info is None else source_info,
                        self.ctx if ctx is None else ctx)

    def __repr__(self) -> str:
        return format_doc(pp_eqn(self, PrintContext())).rstrip()


def new_jaxpr_eqn(invars: Sequence[Any], outvars: Sequence[Any], primitive: Any,
                  params: dict[str, Any], effects: Any, source_info: Any = None,
                  ctx: Any = None) -> JaxprEqn:
    """A new equation (JAX's ``core.new_jaxpr_eqn``)."""
    for a in invars:
        if not isinstance(a, (Var, Literal)):
            raise TypeError(f"new_jaxpr_eqn: invars must be Vars or Literals, got {a!r}")
    for v in outvars:
        if not isinstance(v, Var):
            raise TypeError(f"new_jaxpr_eqn: outvars must be Vars, got {v!r}")
    return JaxprEqn(list(invars), list(outvars), primitive, params, effects, source_info,
                    ctx)


class Jaxpr:
    """A program: ``{ lambda constvars ; invars . let eqns in (outvars) }``."""
    __slots__ = ("_constvars", "_invars", "_outvars", "_eqns", "_effects", "_debug_info",
                 "_source", "name", "__weakref__")

    def __init__(self, constvars: Sequence[Any], invars: Sequence[Any],
                 outvars: Sequence[Any], eqns: Sequence[JaxprEqn], effects: Any = None,
                 debug_info: Any = None):
        self._constvars, self._invars = list(constvars), list(invars)
        self._outvars, self._eqns = list(outvars), list(eqns)
        self._effects = _effects_of(self._eqns) if effects is None else effects
        self._debug_info = debug_info
        self._source: tuple[Func, tuple[Any, ...]] | None = None    # See Note [running a jaxpr]
        self.name = "jaxpr"

    constvars = property(lambda self: self._constvars)
    invars = property(lambda self: self._invars)
    outvars = property(lambda self: self._outvars)
    eqns = property(lambda self: self._eqns)
    effects = property(lambda self: self._effects)
    debug_info = property(lambda self: self._debug_info)
    in_avals = property(lambda self: [v.aval for v in self._invars])
    out_avals = property(lambda self: [v.aval for v in self._outvars])

    def replace(self, **changes: Any) -> Jaxpr:
        fields = ("constvars", "invars", "outvars", "eqns", "effects", "debug_info")
        unknown = set(changes) - set(fields)
        if unknown:
            raise ValueError(f"Jaxpr.replace: unknown keyword arguments {sorted(unknown)}; "
                             f"it takes {', '.join(fields)}")
        info = self._debug_info
        if isinstance(info, DebugInfo) and ("invars" in changes or "outvars" in changes):
            info = info._replace(arg_names=None, result_paths=None)    # no longer known
        changes.setdefault("debug_info", info)
        new = Jaxpr(*(changes.get(f, getattr(self, f)) for f in fields))
        new.name = self.name
        return new

    def pretty_print(self, *, print_shapes: bool = True, custom_pp_eqn_rules: bool = True,
                     width: int = 80, source_info: bool = False, name_stack: bool = False,
                     print_effects: bool = False, use_color: bool = False) -> str:
        """The jaxpr in JAX's syntax, ``width`` columns wide; ``print_shapes=False`` leaves
        the binders' types out, ``custom_pp_eqn_rules=False`` shows every param. JAX's
        annotations (source lines, name stacks, effects, colour) are not printed: asking
        for one is a ValueError."""
        asked = [name for name, on in (("source_info", source_info), ("name_stack", name_stack),
                                       ("print_effects", print_effects),
                                       ("use_color", use_color)) if on]
        if asked:
            raise ValueError(f"Jaxpr.pretty_print: {', '.join(asked)} is not supported by "
                             f"spmdc's jaxpr printer; make_ir(f)(*args) shows the IR with "
                             f"each equation's named scope")
        return format_doc(pp_toplevel(self, print_shapes, custom_pp_eqn_rules), width)

    def __str__(self) -> str:
        return format_doc(pp_toplevel(self))

    __repr__ = __str__

    def _func(self) -> Func | None:
        """The Func this jaxpr is a view of, if it is unchanged since."""
        if self._source is None:
            return None
        func, parts = self._source
        now = (*self._constvars, *self._invars, *self._outvars, *self._eqns)
        unchanged = len(now) == len(parts) and all(a is b for a, b in
                                                   zip(now, parts, strict=True))
        return func if unchanged else None


class ClosedJaxpr:
    """A Jaxpr with the values of its constvars (JAX's ``ClosedJaxpr``)."""
    __slots__ = ("_jaxpr", "_consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]):
        if len(consts) != len(jaxpr.constvars):
            raise ValueError(f"ClosedJaxpr: {len(consts)} consts for "
                             f"{len(jaxpr.constvars)} constvars")
        self._jaxpr, self._consts = jaxpr, list(consts)

    jaxpr = property(lambda self: self._jaxpr)
    consts = property(lambda self: self._consts)
    literals = consts
    constvars = property(lambda self: self._jaxpr.constvars)
    invars = property(lambda self: self._jaxpr.invars)
    outvars = property(lambda self: self._jaxpr.outvars)
    eqns = property(lambda self: self._jaxpr.eqns)
    effects = property(lambda self: self._jaxpr.effects)
    debug_info = property(lambda self: self._jaxpr.debug_info)
    in_avals = property(lambda self: self._jaxpr.in_avals)
    out_avals = property(lambda self: self._jaxpr.out_avals)

    def map_jaxpr(self, f: Callable[[Jaxpr], Jaxpr]) -> ClosedJaxpr:
        return ClosedJaxpr(f(self._jaxpr), self._consts)

    def replace(self, *, jaxpr: Jaxpr | None = None, consts: Any = None) -> ClosedJaxpr:
        return ClosedJaxpr(self._jaxpr if jaxpr is None else jaxpr,
                           self._consts if consts is None else consts)

    def pretty_print(self, **options: Any) -> str:
        """See ``Jaxpr.pretty_print``."""
        return self._jaxpr.pretty_print(**options)

    def __str__(self) -> str:
        return str(self._jaxpr)

    __repr__ = __str__


def jaxprs_in_params(params: dict[str, Any]) -> Iterator[Jaxpr]:
    """The Jaxprs in an equation's params (a ClosedJaxpr gives its Jaxpr), as JAX's
    ``core.jaxprs_in_params``."""
    for value in params.values():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, Jaxpr):
                yield v
            elif isinstance(v, ClosedJaxpr):
                yield v.jaxpr


def subjaxprs(jaxpr: Jaxpr | ClosedJaxpr) -> Iterator[Jaxpr]:
    """The sub-jaxprs of ``jaxpr``'s equations, not recursively (JAX's ``core.subjaxprs``)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


# --- the view of a Func -------------------------------------------------------------------

class _Viewer:
    """Turns Funcs into Jaxprs, one Jaxpr per Func object (a Func used twice is one
    shared jaxpr, as JAX prints it)."""

    def __init__(self) -> None:
        self.jaxprs: dict[int, tuple[Func, Jaxpr]] = {}

    def jaxpr(self, func: Func, n_consts: int = 0,
              in_weak: Sequence[bool] | None = None,
              out_weak: Sequence[bool] | None = None,
              inline: dict[int, Any] | None = None) -> Jaxpr:
        """``func`` as a Jaxpr whose last ``n_consts`` inputs are its constvars, but for
        those in ``inline`` (constant index -> scalar value), which become Literals."""
        key = id(func)
        if key in self.jaxprs and n_consts == 0 and in_weak is None:
            return self.jaxprs[key][1]
        names: dict[IRVar, Var] = {}

        def var(v: IRVar, weak: bool = False) -> Var:
            out = names[v] = Var(ShapedArray(v.type.shape, v.type.dtype, weak))
            return out

        def atom(a: Any) -> Any:
            if isinstance(a, Lit):
                return Literal(np.asarray(a.value, a.type.dtype)[()],
                               ShapedArray((), a.type.dtype, True))
            return names[a]

        n_args = len(func.inputs) - n_consts
        weak = list(in_weak) if in_weak is not None else [False] * n_args
        invars = [var(v, w) for v, w in zip(func.inputs[:n_args], weak, strict=True)]
        inline = inline or {}
        constvars = []
        for i, v in enumerate(func.inputs[n_args:]):
            if i in inline:
                names[v] = Literal(np.asarray(inline[i], v.type.dtype)[()],
                                   ShapedArray((), v.type.dtype))
            else:
                constvars.append(var(v))
        folded = _folded_broadcasts(func)     # See Note [size-1 dimensions of lax operations]
        eqns = []
        for e in func.eqns:
            if id(e) in folded:
                names[e.outputs[0]] = atom(e.inputs[0])
            else:
                eqns.append(self.eqn(e, atom, var))
        outvars = [atom(a) for a in func.outputs]
        if out_weak is not None:           # outputs' weak types, as the trace knows them
            outvars = [_with_weak(a, w) for a, w in zip(outvars, out_weak, strict=True)]
        jaxpr = Jaxpr(constvars, invars, outvars, eqns)
        jaxpr.name = func.name
        if n_consts == 0:                   # the Jaxpr takes exactly the Func's inputs
            jaxpr._source = (func, (*constvars, *invars, *outvars, *eqns))
        self.jaxprs[key] = (func, jaxpr)
        return jaxpr

    def eqn(self, e: Eqn, atom: Callable[[Any], Any], var: Callable[..., Var]) -> JaxprEqn:
        form = jax_form(e.prim)
        params = dict(e.params) if form is None else form.to_jax(e.params, e)
        opened = form.open_params if form is not None else ()
        params = {k: self.value(v, k in opened) for k, v in params.items()}
        invars = [atom(a) for a in e.inputs]
        if form is not None and form.order is not None:
            invars = [invars[i] for i in form.order]
        effects = {_effect_of(e)} if has_effects(e) else set()
        return JaxprEqn(invars, [var(v) for v in e.outputs], jax_primitive(e.prim), params,
                        effects, _source_info_of(e.source))

    def value(self, v: Any, open_jaxpr: bool = False) -> Any:
        if isinstance(v, Func):
            jaxpr = self.jaxpr(v)
            return jaxpr if open_jaxpr else ClosedJaxpr(jaxpr, [])
        if type(v) is tuple and any(isinstance(x, Func) for x in v):
            return tuple(self.value(x, open_jaxpr) for x in v)
        return v


def _folded_broadcasts(func: Func) -> set[int]:
    """The ids of ``func``'s ``broadcast_in_dim`` equations that only stretch size-1
    dimensions for binary operations JAX lets stretch them themselves: the jaxpr shows
    those operations on the unstretched operand, as JAX's (Note [size-1 dimensions of lax
    operations] in core/operands.py)."""
    candidates: dict[IRVar, Eqn] = {}
    for e in func.eqns:
        if e.prim is broadcast_in_dim_p and isinstance(e.inputs[0], IRVar):
            before, after = e.inputs[0].type.shape, e.outputs[0].type.shape
            if (before != after and len(before) == len(after)
                    and e.params["broadcast_dimensions"] == tuple(range(len(after)))
                    and all(m in (n, 1) for m, n in zip(before, after, strict=True))):
                candidates[e.outputs[0]] = e
    if not candidates:
        return set()
    kept = {a for a in func.outputs if isinstance(a, IRVar)}
    for e in func.eqns:
        if e.prim not in SIZE_ONE_STRETCHING:
            kept.update(a for a in e.inputs if isinstance(a, IRVar))
    return {id(e) for v, e in candidates.items() if v not in kept}


def _with_weak(a: Any, weak: bool) -> Any:
    if a.is_literal or a.aval.weak_type == weak:
        return a
    a.aval = ShapedArray(a.aval.shape, a.aval.dtype, weak)
    return a


class DebugEffect:
    """The effect of a ``jax.debug`` callback's equation (print, log, callback,
    breakpoint) in a jaxpr's ``effects``, as JAX's ``jax.debug.DebugEffect``; ``str`` is
    JAX's "Debug"."""
    __str__ = lambda self: "Debug"      # noqa: E731


class OrderedDebugEffect:
    """The effect of an ``ordered=True`` ``jax.debug`` callback (JAX's "OrderedDebug")."""
    __str__ = lambda self: "OrderedDebug"    # noqa: E731


debug_effect, ordered_debug_effect = DebugEffect(), OrderedDebugEffect()


def _effect_of(e: Eqn) -> Any:
    if e.params.get("kind") == "debug":
        return ordered_debug_effect if e.params.get("ordered") else debug_effect
    return _Effect(e.prim.name)


class _Effect:
    """The effect of an effectful primitive's equation (an io_callback, a debug print):
    it is kept and ordered, not dropped (Note [effects] in compiler/passes/cleanup.py)."""
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other: object) -> bool:
        return type(other) is _Effect and other.name == self.name

    def __hash__(self) -> int:
        return hash(("effect", self.name))

    def __repr__(self) -> str:
        return f"{self.name}Effect"


def closed_jaxpr(func: Func, consts: Sequence[Any], n_args: int,
                 in_weak: Sequence[bool] | None = None,
                 out_weak: Sequence[bool] | None = None,
                 debug_info: DebugInfo | None = None) -> ClosedJaxpr:
    """The ClosedJaxpr view of a traced ``func``: its first ``n_args`` inputs are the
    arguments, the rest the captured ``consts``: its constvars, but for scalars, which
    are written inline as Literals, as JAX writes scalar constants."""
    scalars = {i: c for i, (c, v) in enumerate(zip(consts, func.inputs[n_args:], strict=True))
               if v.type.shape == () and not isinstance(c, Tracer)}
    jaxpr = _Viewer().jaxpr(func, len(func.inputs) - n_args, in_weak, out_weak, scalars)
    jaxpr._debug_info = debug_info
    return ClosedJaxpr(jaxpr, [c for i, c in enumerate(consts) if i not in scalars])


# --- running a jaxpr ------------------------------------------------------------------------

def _func_of(j: Any) -> Func:
    """A sub-jaxpr param as the Func spmdc's primitive takes (Note [running a jaxpr])."""
    jaxpr = j.jaxpr if isinstance(j, ClosedJaxpr) else j
    consts = j.consts if isinstance(j, ClosedJaxpr) else []
    func = jaxpr._func()
    if func is not None and not consts:
        return func
    if jaxpr.constvars:
        raise ValueError(f"eval_jaxpr: a sub-jaxpr in an equation's params has "
                         f"{len(jaxpr.constvars)} constvars; spmdc's sub-programs are closed, "
                         f"so pass the constants as operands of the equation instead")
    types = [TensorType(tuple(v.aval.shape), np.dtype(v.aval.dtype)) for v in jaxpr.invars]
    func, _, captured = trace_function(lambda args: eval_jaxpr(jaxpr, [], *args), types,
                                       [False] * len(types), jaxpr.name)
    if captured:
        raise ValueError("eval_jaxpr: a sub-jaxpr uses values from outside it; spmdc's "
                         "sub-programs are closed")
    return func


def _spmdc_value(v: Any) -> Any:
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return _func_of(v)
    if type(v) is tuple and any(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in v):
        return tuple(_spmdc_value(x) for x in v)
    return v


def spmdc_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with each sub-jaxpr (alone or in a tuple) as the Func spmdc's primitive
    takes (Note [running a jaxpr])."""
    if not any(isinstance(v, (Jaxpr, ClosedJaxpr, tuple)) for v in params.values()):
        return params
    return {k: _spmdc_value(v) for k, v in params.items()}


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Run ``jaxpr`` on ``consts`` and ``args`` by binding its equations (Note [running a
    jaxpr]); returns the list of its outputs."""
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.constvars)} consts and "
                        f"{len(jaxpr.invars)} arguments, got {len(consts)} and {len(args)}")
    env: dict[int, Any] = {}

    def read(a: Any) -> Any:
        if isinstance(a, Literal):
            # a library's Literal may hold a Python scalar: give it the literal's dtype
            if isinstance(a.val, (np.ndarray, np.generic)):
                return a.val
            return np.asarray(a.val, a.aval.dtype)[()]
        try:
            return env[id(a)]
        except KeyError:
            raise ValueError(f"eval_jaxpr: {a!r} is used before it is assigned") from None

    for v, x in zip([*jaxpr.constvars, *jaxpr.invars], [*consts, *args], strict=True):
        env[id(v)] = x
    for eqn in jaxpr.eqns:
        out = bind_jax(eqn.primitive, [read(a) for a in eqn.invars], eqn.params)
        outs = out if eqn.primitive.multiple_results else [out]
        for v, x in zip(eqn.outvars, outs, strict=True):
            if not isinstance(v, DropVar):
                env[id(v)] = x
    return [read(a) for a in jaxpr.outvars]


def eval_eqn(eqn: JaxprEqn, invals: Sequence[Any]) -> list[Any]:
    """One equation on the values of its non-literal inputs (``invals``, one per invar),
    run as a one-equation jaxpr through ``eval_jaxpr`` (which turns params holding
    sub-jaxprs into spmdc's sub-programs); ``None`` for each dropped output."""
    operands = [(a, x) for a, x in zip(eqn.invars, invals, strict=True)
                if not isinstance(a, Literal)]
    unique = list({id(a): (a, x) for a, x in operands}.values())
    outvars = [v for v in eqn.outvars if not isinstance(v, DropVar)]
    program = Jaxpr([], [a for a, _ in unique], outvars, [eqn])
    results = iter(eval_jaxpr(program, [], *(x for _, x in unique)))
    return [None if isinstance(v, DropVar) else next(results) for v in eqn.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr, *args: Any) -> Any:
    """``jaxpr_as_fun(closed)(*args)``: the ClosedJaxpr as a function (a list of outputs)."""
    if not args:
        return lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a)
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)

