"""custom_jvp and custom_vjp: functions whose derivatives the user defines.

Calling a decorated function under a trace traces the function to a Func and emits one
``custom_jvp_call`` / ``custom_vjp_call`` equation (compiler/primitives/
custom_derivatives.py) whose params hold it and the rules; ``spmdc dump`` shows the call
in the traced stage and the rule's equations after ``grad``. The rules are traced when a
transformation first needs them (``_Rule``), once per argument types (and, for
``symbolic_zeros``, per set of nonzero tangents). Outside any trace (plain eager use) the
function just runs. Arguments in ``nondiff_argnums`` are static Python values (functions,
numbers, ...) that are not differentiated; they reach the rules first, as in JAX.

Values the function closes over become explicit inputs of the equation; a derivative
that reaches one is an error (Note [differentiating closed-over values]). The rules may
close over Python scalars, functions and the like but not over arrays or traced values:
they are traced later, where those values are out of reach (pass them as arguments).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.builder import Builder, lit
from ..compiler.ir import Func, TensorType
from ..compiler.passes.autodiff import is_float
from ..compiler.passes.cleanup import cleanup
from ..compiler.primitives.custom_derivatives import (
    custom_jvp_call_p,
    custom_vjp_call_p,
    tangent_part,
)
from ..core.concrete import concrete_value, concretisations, values_readable
from ..core.devices import put_implicitly
from ..core.operands import asarray, dtype_of, full, shape_of
from ..core.tracer_text import perturbed_values
from ..core.tracing import (
    Tracer,
    apply_func,
    bind,
    current_trace,
    trace_function,
    type_of,
    where,
)
from ..core.tree import tree_flatten, tree_map, tree_structure, tree_unflatten
from ..runtime.array import Array
from ..tracebacks import api_boundary
from .forward import float0
from .jit_inline import signature_key

__all__ = ["custom_jvp", "custom_vjp", "SymbolicZero", "CustomVJPPrimal",
           "custom_vjp_primal_tree_values", "zero_from_primal", "closure_convert"]


class SymbolicZero:
    """A tangent or cotangent known to be zero (``symbolic_zeros=True`` rules see these):
    it has the shape and dtype of the value it stands for. Made as JAX's, from an
    abstract value (anything with ``shape`` and ``dtype``), or from a shape and a dtype."""

    def __init__(self, aval: Any, dtype: Any = None):
        shape = aval if dtype is not None else aval.shape
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype if dtype is not None else aval.dtype)

    @property
    def aval(self) -> TensorType:
        return TensorType(self.shape, self.dtype)

    @staticmethod
    def from_primal_value(value: Any) -> SymbolicZero:
        """The symbolic zero tangent of ``value`` (float0 for integers and bools)."""
        t = type_of(value)[0]
        return SymbolicZero(t.shape, t.dtype if is_float(t) else float0)

    def __repr__(self) -> str:
        return f"SymbolicZero({self.aval})"


def zero_from_primal(value: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents for the pytree ``value``: SymbolicZeros, or zero arrays (float0 for
    integer and bool leaves), as JAX's ``custom_derivatives.zero_from_primal``."""
    def zero(x: Any) -> Any:
        z = SymbolicZero.from_primal_value(x)
        if symbolic_zeros:
            return z
        return np.zeros(z.shape, float0) if z.dtype == float0 else full(z.shape, 0, z.dtype)
    return tree_map(zero, value)


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
    """What a ``custom_vjp`` fwd rule defined with ``symbolic_zeros=True`` receives for
    each leaf of the differentiable arguments: the ``value``, and whether it is
    ``perturbed`` (differentiated; if not, its cotangent is not needed)."""
    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """``tree`` with each CustomVJPPrimal leaf replaced by its value (as JAX's)."""
    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_map(value, tree, is_leaf=lambda x: type(x) is CustomVJPPrimal)


def _positional(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                what: str) -> tuple[Any, ...]:
    """Keyword arguments resolved to positions, and the defaults of parameters not passed
    filled in (so ``nondiff_argnums`` may name a defaulted one), as JAX does for custom
    functions; a ``functools.partial``'s signature is opaque, as in JAX."""
    if isinstance(fun, functools.partial):
        return _positional(lambda *a, **k: None, args, kwargs, what)
    try:
        signature = inspect.signature(fun)
    except (TypeError, ValueError) as e:
        if not kwargs:                   # no signature to read (a builtin): as passed
            return args
        raise TypeError(f"{what}: cannot bind the arguments of {_name(fun)}: {e}") from None
    try:
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        if not kwargs:                   # the call itself reports the mismatch
            return args
        raise TypeError(f"{what}: cannot bind the arguments of {_name(fun)}: {e}") from None
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _name(fun: Any) -> str:
    name = getattr(fun, "__name__", None) or type(fun).__name__
    return name if name.isidentifier() else "f"


def _nondiff(argnums: Sequence[int], nargs: int, what: str) -> tuple[int, ...]:
    out = []
    for i in argnums:
        if not -nargs <= i < nargs:
            raise ValueError(f"{what}: nondiff_argnums={tuple(argnums)} is out of range for a "
                             f"call with {nargs} positional arguments{where()}")
        out.append(i % nargs)
    return tuple(sorted(set(out)))


def _concrete_nondiff(args: tuple[Any, ...], nondiff: tuple[int, ...]) -> tuple[Any, ...]:
    """Note [traced nondiff arguments of custom_vjp]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    JAX refuses a Tracer in a ``nondiff_argnums`` position, but its eager ``grad``
    traces only the differentiated arguments, so an array passed there by an argument
    ``grad`` does not differentiate is concrete and allowed (Flax's ``nnx.custom_vjp``
    passes a module's other state that way). spmdc's eager ``grad`` traces every
    argument, and the rules, traced after the call's trace has ended, could not reach
    such a Tracer. In eager autodiff its value is known (Note [concrete values while
    tracing] in core/concrete.py), so the rules get that value, as under JAX: the
    program is then specialised to it (never cached). Anywhere else the Tracer stays."""
    out = list(args)
    for i in nondiff:
        leaves, tree = tree_flatten(args[i])
        if not any(isinstance(v, Tracer) for v in leaves):
            continue
        values = []
        for v in leaves:
            if isinstance(v, Tracer):
                known = concrete_value(v)
                if known is None:
                    return args
                v = put_implicitly(known)
                v = Array(v._buffers, v.type, True, v._devices) if v.weak else v
            values.append(v)
        out[i] = tree_unflatten(tree, values)
    return tuple(out)


class _Args:
    """The signature of a call's arguments: the differentiable ones flattened (their
    types, weak flags and tree: the operands) and the nondiff ones (kept as Python
    values). It holds no operand value, because the rules that close over it outlive
    the call: see Note [rules hold no traced values]."""

    def __init__(self, args: tuple[Any, ...], nondiff: tuple[int, ...]):
        self.count, self.nondiff = len(args), nondiff
        diff = tuple(a for i, a in enumerate(args) if i not in nondiff)
        self.n_diff = len(diff)
        leaves, self.tree = tree_flatten(diff)
        sigs = [type_of(v) for v in leaves]
        self.types = [t for t, _ in sigs]
        self.weak = [w for _, w in sigs]
        self.float = [is_float(t) for t in self.types]
        self.nondiff_values = tuple(args[i] for i in nondiff)

    @staticmethod
    def leaves(args: tuple[Any, ...], nondiff: tuple[int, ...]) -> list[Any]:
        """The operands: the differentiable arguments' leaves."""
        return tree_flatten(tuple(a for i, a in enumerate(args) if i not in nondiff))[0]

    def full(self, diff: Sequence[Any]) -> list[Any]:
        """All positional arguments, with ``diff`` in the differentiable positions."""
        it = iter(diff)
        given = dict(zip(self.nondiff, self.nondiff_values, strict=True))
        return [given[i] if i in given else next(it) for i in range(self.count)]


# Note [rules hold no traced values]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A custom_jvp's JVP rule and a custom_vjp's fwd and bwd rules are traced later, on
# demand (``_Rule``), by closures that go into the program as the equation's params and
# into the outermost trace's ``kept`` table (Note [a custom_jvp traced once per
# signature]): they outlive the call, and the trace the call was made in. So they close
# over the arguments' signature (``_Args``), never the operands: an operand is a Tracer
# of the calling trace, and holding it past that trace is a leak (which
# ``jax.check_tracer_leaks`` reports: a custom_jvp called inside a JVP rule, as TFP's
# betainc under NumPyro's truncated StudentT, kept its rule trace's Tracers alive).


class _Rule:
    """A user's rule function, traced to a Func per key on first use (``get``).
    ``zero_outputs``, filled by a custom_jvp rule as it is traced: per key, which of its
    tangent outputs were symbolic zeros (Note [symbolic zero tangents from a rule])."""

    def __init__(self, name: str, build: Callable[[Any], tuple[Callable[..., Any],
                                                                 list[TensorType], list[bool]]],
                 zero_outputs: dict[Any, frozenset[int]] | None = None):
        self.name, self._build = name, build
        self._cache: dict[Any, Func] = {}
        self._zero_outputs = {} if zero_outputs is None else zero_outputs

    def symbolic_zero_outputs(self, key: Any) -> frozenset[int]:
        """The positions, among the tangent outputs of the rule traced for ``key``, of
        those the rule gave as symbolic zeros."""
        self.get(key)
        return self._zero_outputs.get(key, frozenset())

    def get(self, key: Any, sources: Sequence[Any] | None = None) -> Func:
        func = self._cache.get(key)
        if func is None:
            fn, types, weak = self._build(key)
            with tangent_part(False):   # See Note [custom_jvp applied to tangents]
                func, _, captured = trace_function(fn, types, weak, self.name,
                                                   sources=sources)
            if captured:
                func = _embed_constants(func, captured, self.name)
            self._cache[key] = func
        return func

    def prepare(self, key: Any, sources: Sequence[Any] | None, reraise: bool = False) -> None:
        """Trace the rule for ``key`` now, where its inputs' values (``sources``) may be
        read (eager autodiff; Note [concrete values while tracing] in core/concrete.py).
        A failure is left to the trace on first use to report (``reraise``: raised to the
        caller, who decides). Rules called while a rule is prepared (a rule calling its
        own function, typically) are prepared as deep as the enclosing derivatives reach
        (Note [rules closing over known values])."""
        depth = getattr(_preparing, "depth", 0)
        limit = _derivative_levels() if depth == 0 else _preparing.limit
        if key in self._cache or depth >= limit:
            return
        _preparing.depth, _preparing.limit = depth + 1, limit
        try:
            self.get(key, sources)
        except Exception:               # noqa: BLE001  (reported by the lazy trace)
            if reraise:
                raise
        finally:
            _preparing.depth = depth

    def ir_text(self) -> str:
        return f"@{self.name}"


_preparing = threading.local()     # see _Rule.prepare


def _derivative_levels() -> int:
    """How many ``grad``/``jvp`` traces enclose the current one (Note [tracer text])."""
    levels, trace = 0, current_trace()
    while trace is not None:
        levels += trace.view is not None and trace.view.kind in ("grad", "jvp")
        trace = trace.parent
    return levels


MAX_EMBEDDED_CONSTANT = 256
"""The largest non-uniform array a rule may close over (it becomes equations)."""


def _embed_constants(func: Func, captured: list[Any], name: str) -> Func:
    """``func`` with its captured inputs (arrays the rule closed over, or made with
    ``jnp.zeros`` and the like) built inside it from literals: a rule is traced where no
    enclosing program can pass them. Traced values cannot be embedded: an error."""
    b = Builder(func.name)
    n = len(func.inputs) - len(captured)
    inputs = [b.input(v.type) for v in func.inputs[:n]]
    consts = []
    for value, var in zip(captured, func.inputs[n:], strict=True):
        if isinstance(value, Tracer):   # See Note [rules closing over known values]
            known = concrete_value(value)
            value = value if known is None else known
        if isinstance(value, Tracer):
            raise TypeError(
                f"the custom derivative rule {name} closes over a traced value of type "
                f"{var.type}; rules are traced when a transformation needs them, where it "
                "is out of reach. Pass it as an argument of the function instead")
        array = np.asarray(value, var.type.dtype)
        flat = array.reshape(-1)
        if flat.size and not np.all(flat == flat[0]) and flat.size > MAX_EMBEDDED_CONSTANT:
            raise TypeError(
                f"the custom derivative rule {name} closes over an array of type {var.type}; "
                f"rules are traced when a transformation needs them, so only small arrays "
                f"(up to {MAX_EMBEDDED_CONSTANT} elements) can be built into them. Pass it "
                "as an argument of the function instead")
        consts.append(_constant(b, array, var.type))
    outs = b.inline(func, [*inputs, *consts])
    return b.build(outs)


# Note [rules closing over known values]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A rule may close over a value the traced function computed: a solver object built
# inside ``grad`` keeps its bracket (jaxopt's ``Bisection(lower=stop_gradient(...))``) and
# its ``custom_vjp`` fwd runs the solver again. Under JAX the value is concrete in eager
# autodiff (a stopped gradient leaves no JVP tracer) and a live tracer under ``jit``.
# spmdc traces rules lazily, after the call's trace has ended, where such a Tracer is out
# of reach; but in eager autodiff the fwd rule is prepared at the call (``_Rule.prepare``)
# and the Tracer's value is known there (Note [concrete values while tracing] in
# core/concrete.py), so it is built into the rule as a constant, like an array the rule
# closes over. Reading it specialises the program to the value (never cached), as any
# read does. A Tracer whose value is not known stays an error naming the rule.
#
# The fwd rule that calls its own function makes a new call there, whose rules the next
# derivative out needs (``grad`` of a function that takes a ``value_and_grad`` through
# the solver): so a rule prepared while another is prepared is prepared too, as many
# levels deep as there are ``grad``/``jvp`` traces around the outermost call (each
# differentiates one level of calls made by the rules inlined by the one inside it).
# The count is fixed at the outermost call, so the recursion ends.


def _constant(b: Builder, array: np.ndarray, t: TensorType) -> Any:
    flat = array.reshape(-1)
    if flat.size == 0 or np.all(flat == flat[0]):
        scalar = lit(flat[0] if flat.size else 0, t.dtype)
        return b.broadcast_in_dim(scalar, shape=t.shape, broadcast_dimensions=())
    pieces = [b.broadcast_in_dim(lit(v, t.dtype), shape=(1,), broadcast_dimensions=())
              for v in flat]
    return b.reshape(b.concatenate(*pieces, dimension=0), new_sizes=t.shape)


def _check_like(what: str, got: Any, want_tree: Any, want_types: Sequence[TensorType],
                name: str) -> list[Any]:
    leaves, tree = tree_flatten(got)
    if tree != want_tree:
        raise TypeError(f"{what} of {name} must have the structure {want_tree}, got {tree}"
                        f"{where()}")
    for k, (v, t) in enumerate(zip(leaves, want_types, strict=True)):
        if v is None or isinstance(v, SymbolicZero) or getattr(v, "dtype", None) == float0:
            continue
        got_t = type_of(v)[0]
        if got_t.shape != t.shape:
            raise TypeError(f"{what} of {name}: leaf {k} has shape {got_t.shape}, expected "
                            f"{t.shape}{where()}")
    return leaves


def _zeros_for(leaves: list[Any], types: Sequence[TensorType]) -> list[Any]:
    out = []
    for v, t in zip(leaves, types, strict=True):
        if v is None or isinstance(v, SymbolicZero) or getattr(v, "dtype", None) == float0:
            out.append(full(t.shape, 0, t.dtype))
        else:
            out.append(asarray(v).astype(t.dtype) if type_of(v)[0].dtype != t.dtype
                       else v)
    return out


# --- custom_jvp ------------------------------------------------------------------------------

class custom_jvp:  # noqa: N801  (JAX's name)
    """A function with a user-defined JVP rule: ``f = custom_jvp(f)`` then
    ``@f.defjvp def f_jvp(primals, tangents): return out, tangent_out``."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()):
        if not callable(fun):
            raise TypeError(f"custom_jvp expects a callable, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Define the JVP rule ``jvp(*nondiff_args, primals, tangents) -> (out, t_out)``."""
        if not callable(jvp):
            raise TypeError(f"defjvp expects a callable, got {type(jvp).__name__}")
        self.jvp, self.symbolic_zeros = jvp, bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule per argument, ``jvp_k(t_k, out, *primals)`` (None: no dependence); the
        output tangent is their sum."""
        if self.nondiff_argnums:
            raise TypeError("defjvps does not support nondiff_argnums; use defjvp")

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            if len(jvps) != len(primals):
                raise TypeError(f"defjvps got {len(jvps)} rules for a function of "
                                f"{len(primals)} arguments")
            out = self.fun(*primals)
            total = None
            for rule, t in zip(jvps, tangents, strict=True):
                if rule is None or isinstance(t, SymbolicZero):
                    continue
                term = rule(t, out, *primals)
                total = term if total is None else _tree_add(total, term)
            if total is None:
                total = _tree_zeros(out)
            return out, total
        self.defjvp(jvp)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    @api_boundary  # See Note [library frames] (errors.py)
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using "
                                 "defjvp.")
        args = _positional(self.fun, args, kwargs, "custom_jvp")
        if current_trace() is None:          # eager: nothing will differentiate it
            return self.fun(*args)
        nondiff = _nondiff(self.nondiff_argnums, len(args), "custom_jvp")
        eager = values_readable()          # See Note [concrete values while tracing]
        kept_at = self._kept_at(args, eager)
        trace = current_trace()
        kept = trace.kept.get(kept_at) if kept_at is not None else None
        if kept is not None:          # See Note [a custom_jvp traced once per signature]
            call_func, out_weak, consts, out_tree, jvp_rule = kept
            return self._bind(tree_flatten(args)[0], call_func, out_weak, consts, out_tree,
                              jvp_rule)
        a, leaves = _Args(args, nondiff), _Args.leaves(args, nondiff)
        out_box: list[Any] = []

        def call(tracers: list[Tracer]) -> list[Any]:
            out = self.fun(*a.full(tree_unflatten(a.tree, tracers)))
            leaves, tree = tree_flatten(out)
            out_box[:] = [tree, [type_of(v)[0] for v in leaves]]
            return leaves

        read = concretisations()
        call_func, out_weak, consts = trace_function(call, a.types, a.weak, name,
                                                     sources=leaves if eager else None)
        if kept_at is not None:       # clean already: a cleanup keeps it the same object
            call_func = cleanup(call_func)
        out_tree, out_types = out_box
        diff = [k for k in range(len(leaves)) if a.float[k]]
        float_out = [is_float(t) for t in out_types]

        zero_outputs: dict[tuple[bool, ...], frozenset[int]] = {}

        def build(mask: tuple[bool, ...]) -> tuple[Callable[..., Any], list[TensorType],
                                                   list[bool]]:
            def record(zeros: frozenset[int]) -> None:
                zero_outputs[mask] = zeros
            return self._rule_fn(a, diff, mask, out_tree, out_types, float_out, name, record)

        jvp_rule = _Rule(self._rule_name(), build, zero_outputs)
        if diff:                    # See Note [custom rules run when the call is made]
            self._run_rule_now(jvp_rule, leaves, diff, eager)
        if (kept_at is not None and concretisations() == read
                and not any(isinstance(c, Tracer) for c in consts)):
            trace.kept[kept_at] = (call_func, out_weak, consts, out_tree, jvp_rule)
        return self._bind(leaves, call_func, out_weak, consts, out_tree, jvp_rule)

    def _run_rule_now(self, jvp_rule: _Rule, leaves: list[Any], diff: list[int],
                      eager: bool) -> None:
        """Trace the rule now, in the trace of a ``grad``/``jvp``/``linearize`` (and in
        eager autodiff), as JAX runs it here: with the tangents JAX would give it, its
        errors raised where the arguments are perturbed."""
        def perturbed() -> list[bool] | None:
            return perturbed_values([leaves[k] for k in diff])

        def sources(n: int) -> list[Any] | None:
            return [*leaves, *([None] * n)] if eager else None

        if self.symbolic_zeros:
            mask = perturbed()
            if mask is not None and any(mask):
                jvp_rule.get(tuple(mask), sources(sum(mask)))
            return
        if not eager:                # the rule is traced only where JAX would run it
            mask = perturbed()
            if mask is not None and any(mask):
                jvp_rule.get((True,) * len(diff))
            return
        try:                         # reverse mode's mask: all given
            jvp_rule.prepare((True,) * len(diff), sources(len(diff)), reraise=True)
        except Exception:
            mask = perturbed()
            if mask is not None and any(mask):
                raise
            # a rule JAX would not run here: its error is for the trace on first use

    def _kept_at(self, args: tuple[Any, ...], eager: bool) -> Any | None:
        """Where a trace of this call is kept in the outermost trace, or None where it may
        not be. See Note [a custom_jvp traced once per signature]."""
        if eager or self.nondiff_argnums:
            return None
        key = signature_key((), args, {})
        return None if key is None else ("custom_jvp", self, key)

    def _bind(self, leaves: list[Any], call_func: Func, out_weak: list[bool],
              consts: list[Any], out_tree: Any, jvp_rule: _Rule) -> Any:
        outs = bind(custom_jvp_call_p, *leaves, *consts, call=call_func,
                    jvp=jvp_rule, num_consts=len(consts),
                    symbolic_zeros=self.symbolic_zeros)
        for o, w in zip(outs, out_weak, strict=True):
            o.weak = w
        return tree_unflatten(out_tree, outs)

    def _rule_name(self) -> str:
        return _name(self.jvp) if _name(self.jvp) != "jvp" else _name(self.fun) + "_jvp"

    def _rule_fn(self, a: _Args, diff: list[int], mask: tuple[bool, ...], out_tree: Any,
                 out_types: list[TensorType], float_out: list[bool], name: str,
                 record: Callable[[frozenset[int]], None]) -> Any:
        given = [k for k, m in zip(diff, mask, strict=True) if m]
        n = len(a.types)

        def rule(tracers: list[Tracer]) -> list[Any]:
            primals, given_tangents = tracers[:n], dict(zip(given, tracers[n:], strict=True))
            tangents: list[Any] = []
            for k, t in enumerate(a.types):
                if k in given_tangents:
                    tangents.append(given_tangents[k])
                elif a.float[k]:
                    tangents.append(SymbolicZero(t.shape, t.dtype) if self.symbolic_zeros
                                    else _zeros_for([None], [t])[0])
                else:                     # an integer input: JAX's float0 zero
                    tangents.append(SymbolicZero(t.shape, float0) if self.symbolic_zeros
                                    else np.zeros(t.shape, float0))
            p_tree = tree_unflatten(a.tree, primals)
            t_tree = tree_unflatten(a.tree, tangents)
            res = self.jvp(*a.nondiff_values, tuple(p_tree), tuple(t_tree))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"the custom_jvp rule of {name} must return a pair "
                                f"(primal_out, tangent_out), got {type(res).__name__}{where()}")
            p_out = _check_like("the primal output of the custom_jvp rule", res[0], out_tree,
                                out_types, name)
            t_out = _check_like("the tangent output of the custom_jvp rule", res[1], out_tree,
                                out_types, name)
            p_out = _zeros_for(p_out, out_types)
            float_t_out = [t for t, f in zip(t_out, float_out, strict=True) if f]
            # See Note [symbolic zero tangents from a rule]
            record(frozenset(k for k, t in enumerate(float_t_out)
                             if t is None or isinstance(t, SymbolicZero)))
            return [*p_out, *_zeros_for(float_t_out, [t for t, f in
                                                      zip(out_types, float_out, strict=True)
                                                      if f])]

        types = [*a.types, *(a.types[k] for k in given)]
        weak = [*a.weak, *(a.weak[k] for k in given)]
        return rule, types, weak


def _tree_add(x: Any, y: Any) -> Any:
    xs, tree = tree_flatten(x)
    ys = tree_flatten(y)[0]
    return tree_unflatten(tree, [p + q for p, q in zip(xs, ys, strict=True)])


def _tree_zeros(x: Any) -> Any:
    xs, tree = tree_flatten(x)
    return tree_unflatten(tree, [full(shape_of(v), 0, dtype_of(v)) for v in xs])


# --- custom_vjp ------------------------------------------------------------------------------

class custom_vjp:  # noqa: N801  (JAX's name)
    """A function with a user-defined VJP: ``f = custom_vjp(f)`` then
    ``f.defvjp(fwd, bwd)`` with ``fwd(*args) -> (out, residuals)`` and
    ``bwd(*nondiff_args, residuals, ct) -> one cotangent per differentiable argument``."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()):
        if not callable(fun):
            raise TypeError(f"custom_vjp expects a callable, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any],
               symbolic_zeros: bool = False, optimize_remat: bool = False) -> None:
        """Define the rules. With ``symbolic_zeros=True`` (Note [custom_vjp symbolic
        zeros]) ``fwd`` receives a CustomVJPPrimal per argument leaf and ``bwd`` a
        SymbolicZero for each output cotangent that is zero."""
        if not callable(fwd) or not callable(bwd):
            raise TypeError("defvjp expects two callables, fwd and bwd")
        if optimize_remat:
            raise NotImplementedError("custom_vjp.defvjp: optimize_remat is not supported; "
                                      "leave it False")
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = bool(symbolic_zeros)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    @api_boundary  # See Note [library frames] (errors.py)
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using "
                                 "defvjp.")
        args = _positional(self.fun, args, kwargs, "custom_vjp")
        if current_trace() is None:
            return self.fun(*args)
        nondiff = _nondiff(self.nondiff_argnums, len(args), "custom_vjp")
        if nondiff and values_readable():
            args = _concrete_nondiff(args, nondiff)
        a, leaves = _Args(args, nondiff), _Args.leaves(args, nondiff)
        box: dict[str, Any] = {}

        def call(tracers: list[Tracer]) -> list[Any]:
            out = self.fun(*a.full(tree_unflatten(a.tree, tracers)))
            leaves, tree = tree_flatten(out)
            box["out"] = (tree, [type_of(v)[0] for v in leaves])
            return leaves

        eager = values_readable()          # See Note [concrete values while tracing]
        call_func, out_weak, consts = trace_function(call, a.types, a.weak, name,
                                                     sources=leaves if eager else None)
        out_tree, out_types = box["out"]

        symbolic = self.symbolic_zeros

        def make_fwd(perturbed: tuple[bool, ...] | None) -> Callable[..., Any]:
            def fwd(tracers: list[Tracer]) -> list[Any]:
                leaves: list[Any] = list(tracers)
                if symbolic:              # See Note [custom_vjp symbolic zeros]
                    leaves = [CustomVJPPrimal(v, p)
                              for v, p in zip(tracers, perturbed, strict=True)]
                res = self.fwd(*a.full(tree_unflatten(a.tree, leaves)))
                if not (isinstance(res, (tuple, list)) and len(res) == 2):
                    raise TypeError(f"the custom_vjp fwd rule of {name} must return a pair "
                                    f"(output, residuals), got {type(res).__name__}{where()}")
                out = _check_like("the output of the custom_vjp fwd rule", res[0], out_tree,
                                  out_types, name)
                r_leaves, r_tree = tree_flatten(res[1])
                if any(isinstance(v, CustomVJPPrimal) for v in r_leaves):
                    raise TypeError(f"the custom_vjp fwd rule of {name} returned a "
                                    "CustomVJPPrimal among its residuals; save its .value "
                                    f"instead{where()}")
                static = {k: v for k, v in enumerate(r_leaves) if _is_python_scalar(v)}
                traced = [v for k, v in enumerate(r_leaves) if k not in static]
                box["res", perturbed] = (r_tree, [type_of(v) for v in traced], static)
                return [*_zeros_for(out, out_types), *traced]
            return fwd

        fwd_rule = _Rule(_name(self.fwd), lambda key: (make_fwd(key), a.types, a.weak))
        if eager and not symbolic:         # (with symbolic zeros the key is not known yet)
            fwd_rule.prepare(None, leaves)

        def bwd_signature(key: Any) -> Any:
            perturbed, given = key if symbolic else (None, (True,) * len(out_types))
            fwd_rule.get(perturbed)            # the residuals' types come from fwd
            r_tree, r_sigs, static = box["res", perturbed]

            def bwd(tracers: list[Tracer]) -> list[Any]:
                traced = iter(tracers[:len(r_sigs)])     # See Note [static residuals]
                res = tree_unflatten(r_tree, [static[k] if k in static else next(traced)
                                              for k in range(len(r_sigs) + len(static))])
                it = iter(tracers[len(r_sigs):])
                ct = tree_unflatten(out_tree, [next(it) if g else SymbolicZero(t.shape, t.dtype)
                                               for g, t in zip(given, out_types, strict=True)])
                got = self.bwd(*a.nondiff_values, res, ct)
                if not isinstance(got, (tuple, list)):
                    raise TypeError(f"the custom_vjp bwd rule of {name} must return a tuple "
                                    f"with one cotangent per differentiable argument, got "
                                    f"{type(got).__name__}{where()}")
                if len(got) != a.n_diff:
                    raise TypeError(f"the custom_vjp bwd rule of {name} returned {len(got)} "
                                    f"cotangents for {a.n_diff} differentiable arguments"
                                    f"{where()}")
                leaves = _cotangent_leaves(tuple(got), a.tree, a.types, name)
                return [v for k, v in enumerate(leaves) if a.float[k]]

            return (bwd, [*(t for t, _ in r_sigs),
                          *(t for t, g in zip(out_types, given, strict=True) if g)],
                    [*(w for _, w in r_sigs), *(w for w, g in zip(out_weak, given, strict=True)
                                                if g)])

        outs = bind(custom_vjp_call_p, *leaves, *consts, call=call_func, fwd=fwd_rule,
                    bwd=_Rule(_name(self.bwd), bwd_signature), num_consts=len(consts),
                    symbolic_zeros=symbolic)
        for o, w in zip(outs, out_weak, strict=True):
            o.weak = w
        return tree_unflatten(out_tree, outs)


# Note [a custom_jvp traced once per signature]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A custom_jvp function called twice in one program with arguments of the same types
# (``vjp`` under ``jit`` runs its function once for the value and again for the pullback)
# would give two ``custom_jvp_call`` equations whose Funcs and rules are different
# objects, which CSE cannot tell apart from different calls; the program would compute
# the function twice where JAX computes it once (JAX's ``nn.relu`` is a jitted function,
# traced once per signature), and XLA's cost analysis, which Flax's ``tabulate`` reports,
# would count it twice. So while the outermost trace lasts (``Trace.kept``, shared by the
# traces under it) the call's Func, captured constants and rule are kept per function and
# signature (the one kept jit traces use: Note [inlined jit traces once per signature] in
# jit_inline.py), and an equal call binds the same objects; CSE keys a Func by identity.
# Not kept: calls with ``nondiff_argnums`` (their Python values reach the rules), eager
# traces whose values may be read, a trace that read a value or captured a traced one.
# As in a kept jit trace, a global the function reads is read once per outermost trace.

# Note [custom rules run when the call is made]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX's eager ``grad``/``linearize``/``jvp`` runs a custom_jvp rule when the call is made,
# if an argument is perturbed (its tangent is not a symbolic zero), so the rule's
# errors are raised from the call: a library's guard that refuses differentiation
# (Equinox's ``nondifferentiable``) raises where its caller can catch it, and is silent
# for a value JAX sees unperturbed. spmdc traces the rules when a transformation needs
# them, after the function's trace; in the trace of a ``grad``, ``vjp``, ``linearize``
# or ``jvp`` (which knows which inputs it differentiates: Note [tracer text] in
# core/tracer_text.py) a custom_jvp call therefore traces its rule at once:
# ``perturbed_values`` follows the trace's equations from the differentiated inputs as
# the forward pass would give them tangents
# (stop_gradient and nondifferentiable primitives give none, control flow per output,
# a custom_jvp rule's symbolic zero outputs none), and the rule is traced for the mask
# JAX's would see (symbolic zeros), or for reverse mode's full mask, as before. An error
# is raised where an argument is perturbed; elsewhere it is left to the trace on first
# use, as JAX never runs that rule. A ``grad`` under ``jit`` runs them so too (JAX's
# does); a ``jit`` under ``grad`` traces its function first and differentiates it later,
# in JAX as in spmdc. Not reproduced: the second equal call of a custom_jvp function
# under an abstract trace reuses the first call's trace (Note [a custom_jvp traced once
# per signature]) and does not check again.

# Note [symbolic zero tangents from a rule]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A custom_jvp rule may give ``SymbolicZero`` (or None) as an output tangent; JAX then
# holds that output's tangent as a symbolic ``Zero`` (whether or not the rule was defined
# with ``symbolic_zeros``), so what follows is not perturbed by it: a later custom_jvp
# rule is not called for it, and a ``custom_vjp`` with ``symbolic_zeros`` sees it
# unperturbed. Equinox's checkpointed ``while_loop`` stops the gradient of the carry
# entries it finds unperturbed that way, and ``nondifferentiable`` on them must not
# raise. The traced rule's Func still returns a zero array there (its outputs are
# arrays); the rule records, per key, which tangent outputs were symbolic zeros
# (``_Rule.symbolic_zero_outputs``), and the forward pass's rule for
# ``custom_jvp_call`` gives those outputs no tangent.

# Note [custom_vjp symbolic zeros]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# With ``defvjp(fwd, bwd, symbolic_zeros=True)``, as in JAX, the rules learn which inputs
# and outputs take part in differentiation: ``fwd`` gets a CustomVJPPrimal(value,
# perturbed) for each leaf of the differentiable arguments (perturbed: the grad pass's
# activity analysis says the leaf may depend on a differentiated input), and ``bwd`` gets
# a SymbolicZero in place of each output cotangent that is zero (an output the
# differentiated result does not use), and may return SymbolicZero or None for a zero
# input cotangent. The rules are traced once per key: fwd per perturbed mask, bwd per
# (perturbed mask, which output cotangents are given); the VJP rule of custom_vjp_call
# (compiler/primitives/custom_derivatives.py) forms the keys. Without the option the
# keys are None and every cotangent is materialised, as before.


# Note [static residuals]
# ~~~~~~~~~~~~~~~~~~~~~~~
# A fwd rule may return Python scalars among its residuals: Equinox's filter_custom_vjp
# saves which inputs were perturbed, as bools its bwd rule branches on (``if p``). JAX
# runs fwd in Python at differentiation time, so such a residual reaches bwd as the same
# Python value. spmdc traces the two rules separately, so it keeps these leaves out of
# the fwd Func's results and gives them to bwd as the values fwd returned (per fwd key);
# only arrays and traced values travel as residuals.

def _is_python_scalar(v: Any) -> bool:
    return type(v) in (bool, int, float, complex)


def _cotangent_leaves(got: tuple[Any, ...], tree: Any, types: Sequence[TensorType],
                      name: str) -> list[Any]:
    """The bwd rule's cotangents flattened like the arguments; None (for a whole argument,
    a subtree or a leaf) means zero, as JAX reads them: each argument's cotangent is
    matched against the argument with None as a leaf, so a None that stands where the
    argument itself has None is no cotangent at all."""
    per_arg = tree_unflatten(tree, list(range(len(types))))  # positions, per argument
    leaves: list[Any] = [None] * len(types)

    def place(ct: Any, positions: Any) -> None:
        where_ = tree_flatten(positions)[0]
        if ct is not None and len(where_) == 1:
            leaves[where_[0]] = ct
        elif ct is not None and where_:
            raise ValueError("a leaf stands for a subtree")

    for k, (g, positions) in enumerate(zip(got, per_arg, strict=True)):
        if g is None:
            continue
        try:
            tree_map(place, g, positions, is_leaf=lambda x: x is None)
        except (ValueError, TypeError):
            raise TypeError(f"the custom_vjp bwd rule of {name}: the cotangent of argument "
                            f"{k} has structure {tree_structure(g)}, expected "
                            f"{tree_structure(positions)}{where()}") from None
    return _zeros_for(leaves, types)


# --- closure_convert -------------------------------------------------------------------------

def closure_convert(fun: Callable[..., Any], *example_args: Any
                    ) -> tuple[Callable[..., Any], list[Any]]:
    """``(converted, consts)``: ``converted(*args, *consts)`` computes ``fun(*args)`` for
    arguments shaped like ``example_args``, with the traced floating point values ``fun``
    closes over (``consts``) as explicit arguments, as JAX's ``closure_convert``: a
    custom_vjp/custom_jvp function given ``converted`` and ``consts`` as arguments can then
    differentiate them. Concrete arrays and integer values stay closed over."""
    if not callable(fun):
        raise TypeError(f"closure_convert expects a callable, got {type(fun).__name__}")
    from ..core.pytree_tracing import trace_pytree
    from .jit import Jitted
    name = _name(fun)
    func, out_weak, captured, out_tree, _ = trace_pytree(fun, example_args, {}, name)
    in_tree = tree_structure(tuple(example_args))
    in_types = [type_of(v)[0] for v in tree_flatten(tuple(example_args))[0]]
    hoisted = [k for k, c in enumerate(captured) if isinstance(c, Tracer) and
               is_float(type_of(c)[0])]
    hoisted_set = set(hoisted)

    def apply(*args_and_consts: Any) -> Any:
        n = len(example_args)
        args, consts = args_and_consts[:n], args_and_consts[n:]
        if len(consts) != len(hoisted):
            raise TypeError(f"closure_convert: the converted {name} takes {n} arguments and "
                            f"{len(hoisted)} constants, got {len(args_and_consts)} values")
        leaves, tree = tree_flatten(tuple(args))
        if tree != in_tree or [type_of(v)[0] for v in leaves] != in_types:
            raise TypeError(f"closure_convert: the converted {name} was made for arguments "
                            f"{in_tree} of types {[str(t) for t in in_types]}; got {tree} of "
                            f"types {[str(type_of(v)[0]) for v in leaves]}")
        given = iter(consts)
        values = [next(given) if k in hoisted_set else c for k, c in enumerate(captured)]
        return tree_unflatten(out_tree, apply_func(func, [*leaves, *values], out_weak))

    jitted: list[Jitted] = []

    @functools.wraps(fun)
    def converted(*args_and_consts: Any) -> Any:
        if current_trace() is None:         # at top level: one compiled program
            if not jitted:
                jitted.append(Jitted(apply))
            return jitted[0](*args_and_consts)
        return apply(*args_and_consts)

    return converted, [captured[k] for k in hoisted]
