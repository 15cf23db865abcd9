"""The names and params JAX gives spmdc's primitives: the table behind the jaxpr views.

``jax_form(prim)`` says how an equation of spmdc's ``prim`` reads as JAX's equation of the
same operation: JAX's primitive name (and, where the names differ, the ``JaxPrimitive``
that stands for it, so ``eqn.primitive is lax.convert_element_type_p`` holds), JAX's
params made from spmdc's and back, and JAX's operand order. ``bind_jax(p, args, params)``
applies an equation given in JAX's form, which is how ``eval_jaxpr`` runs one. See Note
[jaxpr names and params].
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..compiler.passes.collectives import UnboundAxisError, unbound_axis_message
from ..compiler.primitives.callbacks import pure_callback_p
from ..compiler.primitives.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
)
from ..compiler.primitives.control_flow import while_p
from ..compiler.primitives.core import Primitive, bind_params_rules, set_binder
from ..compiler.primitives.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from ..compiler.primitives.elementwise import (
    add_p,
    atan2_p,
    bitcast_convert_p,
    cbrt_p,
    convert_p,
    cos_p,
    div_p,
    exp2_p,
    exp_p,
    expm1_p,
    integer_pow_p,
    log1p_p,
    log_p,
    logistic_p,
    max_p,
    min_p,
    mul_p,
    nextafter_p,
    pow_p,
    rem_p,
    rsqrt_p,
    sin_p,
    sqrt_p,
    sub_p,
    tan_p,
    tanh_p,
)
from ..compiler.primitives.fft import FFT_TYPES, fft_p
from ..compiler.primitives.logic import (
    and_p,
    eq_p,
    ge_p,
    gt_p,
    le_p,
    lt_p,
    ne_p,
    or_p,
    select_p,
    shift_left_p,
    shift_right_arithmetic_p,
    shift_right_logical_p,
    xor_p,
)
from ..compiler.primitives.reductions import argmax_p, argmin_p, dot_general_p, reduce_sum_p
from ..compiler.primitives.remat import checkpoint_p
from ..compiler.primitives.scan import scan_p
from ..compiler.primitives.structural import broadcast_in_dim_p, iota_p, reshape_p
from ..core.abstract import ShapedArray
from ..core.operands import stretch_size_one
from ..core.tracing import bind, current_trace, user_source

__all__ = ["JaxForm", "JaxPrimitive", "jax_form", "jax_primitive", "bind_jax", "subfun_binders",
           "SIZE_ONE_STRETCHING",
           "bind_params_rules",
           "convert_element_type_p", "bitcast_convert_type_p", "select_n_p", "remat_p",
           "square_p"]

# Note [jaxpr names and params]
# make_jaxpr's result is a view of spmdc's IR (transforms/jaxpr_view.py), not a second
# IR: one JaxprEqn per spmdc Eqn, one jaxpr Var per IR Var. What differs from JAX is the
# spelling, which this table maps, per primitive:
# - the name: where spmdc's primitive is JAX's under another name (convert is
#   convert_element_type, bitcast_convert is bitcast_convert_type, select is select_n,
#   checkpoint is remat2, psum_scatter is reduce_scatter), the equation's ``primitive``
#   is a JaxPrimitive: JAX's name over spmdc's primitive, the object spmdc.lax exports as
#   ``convert_element_type_p``. Elsewhere it is spmdc's Primitive itself (``lax.sin_p``
#   is the compiler's ``sin_p``).
# - the params: renamed (scan's ``body`` is ``jaxpr``, psum's ``groups`` is
#   ``axis_index_groups``, a collective's ``axes`` its ``axis_name``), regrouped
#   (dot_general's ``contract``/``batch`` are ``dimension_numbers``, pure_callback's
#   ``shapes``/``dtypes`` are ``result_avals``), and JAX's params that spmdc's IR does
#   not carry added with the value they have in the program spmdc traced
#   (``sharding=None``, ``out_sharding=None``, ``weak_type=False``, ``unroll=1``,
#   dot_general's ``preferred_element_type`` = its result's dtype). Sub-Funcs become
#   ClosedJaxprs (jaxpr_view.py does that for every param; remat2 keeps an open Jaxpr,
#   as JAX's). So transcendental functions carry ``accuracy=None`` and mul
#   ``out_dtype=None``, as JAX's do (its printer hides both).
# - the operand order (select_n takes the false case first).
# Going back (``from_jax``), an added param must hold the value that spmdc's program
# means; any other value is refused with a TypeError naming the param, since spmdc's
# primitive cannot express it. Two are not refused: scan's ``unroll`` (a scheduling
# hint, which spmdc's lax.scan takes and compiles as one loop either way) is dropped,
# and convert_element_type's ``weak_type`` becomes the weak type of the result. A
# collective's axis sizes, which JAX's params do not hold, are the current trace's.
# Primitives not in the table (most elementwise ones, and primitives defined through
# jax.extend) keep their name and params as they are.
# Differences that remain are spmdc's program, shown honestly: spmdc inlines nested
# jit calls (no ``jit`` equation), spells gather/scatter dimension numbers as flat params,
# has one ``scatter`` with a ``combine`` param, and keeps dot precision as strings.

Params = dict[str, Any]


@dataclass(frozen=True)
class JaxForm:
    """How one spmdc primitive's equations read in JAX's form."""
    name: str
    to_jax: Callable[[Params, Any], Params]          # (spmdc params, spmdc Eqn) -> JAX's
    from_jax: Callable[[Params, Sequence[Any]], Params]   # (JAX params, operands) -> spmdc's
    order: tuple[int, ...] | None = None             # JAX operand i is spmdc operand order[i]
    open_params: tuple[str, ...] = field(default=())  # sub-Funcs JAX keeps as open Jaxprs


class JaxPrimitive:
    """JAX's primitive ``name``, standing for spmdc's ``primitive`` (Note [jaxpr names and
    params]): its equations print under ``name`` and ``bind`` takes JAX's params."""
    __slots__ = ("name", "primitive", "fixed")
    call_primitive = False      # as spmdc's Primitive (compiler/primitives/core.py)
    map_primitive = False

    def __init__(self, name: str, primitive: Primitive, fixed: Params | None = None):
        self.name, self.primitive, self.fixed = name, primitive, dict(fixed or {})

    @property
    def multiple_results(self) -> bool:
        return self.primitive.multiple_results

    def bind(self, *args: Any, **params: Any) -> Any:
        return bind_jax(self, args, params)

    def get_bind_params(self, params: Params) -> Params:
        """JAX's: the equation's params as ``bind`` takes them (as they are)."""
        return dict(params)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


def _refuse(prim_name: str, param: str, value: Any, means: str) -> TypeError:
    return TypeError(f"{prim_name}: spmdc's primitive takes {param}={means}, got {value!r}; "
                     f"an equation in JAX's form with another value cannot run on spmdc")


def _added(name: str, **defaults: Any) -> JaxForm:
    """Same params, and JAX's extra ones with the only value spmdc's program has."""
    def to_jax(p: Params, eqn: Any) -> Params:
        return {**p, **defaults}

    def from_jax(p: Params, args: Sequence[Any]) -> Params:
        out = dict(p)
        for k, v in defaults.items():
            if k in out:
                value = out.pop(k)
                if value != v:
                    raise _refuse(name, k, value, repr(v))
        return out
    return JaxForm(name, to_jax, from_jax)


def _renamed(name: str, **renames: str) -> JaxForm:
    """Params renamed spmdc -> JAX (``body='jaxpr'``)."""
    back = {v: k for k, v in renames.items()}
    return JaxForm(name,
                   lambda p, eqn: {renames.get(k, k): v for k, v in p.items()},
                   lambda p, args: {back.get(k, k): v for k, v in p.items()})


def _convert_to_jax(p: Params, eqn: Any) -> Params:
    return {"new_dtype": np.dtype(p["new_dtype"]), "weak_type": False, "sharding": None}


def _convert_from_jax(p: Params, args: Sequence[Any]) -> Params:
    if p.get("sharding") is not None:
        raise _refuse("convert_element_type", "sharding", p["sharding"], "None")
    # weak_type is the result's weak type, which bind takes as its own keyword
    return {"new_dtype": np.dtype(p["new_dtype"]), "weak": bool(p.get("weak_type", False))}


def _dot_to_jax(p: Params, eqn: Any) -> Params:
    out = {"dimension_numbers": (p["contract"], p["batch"]),
           "precision": p.get("precision"),
           "preferred_element_type": eqn.outputs[0].type.dtype, "out_sharding": None}
    if "algorithm" in p:
        out["algorithm"] = p["algorithm"]
    return out


def _dot_from_jax(p: Params, args: Sequence[Any]) -> Params:
    (xc, yc), (xb, yb) = p["dimension_numbers"]
    out: Params = {"contract": (tuple(xc), tuple(yc)), "batch": (tuple(xb), tuple(yb))}
    preferred = p.get("preferred_element_type")
    operand = np.result_type(*[np.asarray(a).dtype if not hasattr(a, "dtype") else a.dtype
                               for a in args])
    if preferred is not None and np.dtype(preferred) != operand:
        raise _refuse("dot_general", "preferred_element_type", preferred,
                      f"None or the operands' dtype {operand}")
    if p.get("out_sharding") is not None:
        raise _refuse("dot_general", "out_sharding", p["out_sharding"], "None")
    if p.get("precision") is not None:
        out["precision"] = p["precision"]
    if "algorithm" in p:
        out["algorithm"] = p["algorithm"]
    return out


def _argext_form(name: str) -> JaxForm:
    def from_jax(p: Params, args: Sequence[Any]) -> Params:
        axes = tuple(p["axes"])
        if len(axes) != 1:
            raise _refuse(name, "axes", axes, "one axis")
        return {"axis": axes[0], "index_dtype": np.dtype(p["index_dtype"])}
    return JaxForm(name, lambda p, eqn: {"axes": (p["axis"],), "index_dtype": p["index_dtype"]},
                   from_jax)


def _scan_from_jax(p: Params, args: Sequence[Any]) -> Params:
    out = {("body" if k == "jaxpr" else k): v for k, v in p.items() if k != "unroll"}
    # unroll is a scheduling hint of JAX's; spmdc's scan compiles one loop either way, as
    # lax.scan(unroll=) does here
    return out


def _remat_from_jax(p: Params, args: Sequence[Any]) -> Params:
    if p.get("differentiated", False):
        raise _refuse("remat2", "differentiated", p["differentiated"], "False")
    return {("call" if k == "jaxpr" else k): v for k, v in p.items() if k != "differentiated"}


def _collective_form(name: str) -> JaxForm:
    """psum/pmax/pmin: spmdc's ``groups`` is JAX's ``axis_index_groups``."""
    def to_jax(p: Params, eqn: Any) -> Params:
        out = {k: v for k, v in p.items() if k != "groups"}
        return {**out, "axis_index_groups": p.get("groups")}

    def from_jax(p: Params, args: Sequence[Any]) -> Params:
        out = {k: v for k, v in p.items() if k != "axis_index_groups"}
        if p.get("axis_index_groups") is not None:
            out["groups"] = p["axis_index_groups"]
        return out
    return JaxForm(name, to_jax, from_jax)


def _fft_from_jax(p: Params, args: Sequence[Any]) -> Params:
    kind = p["fft_type"]
    if isinstance(kind, str):               # a name, as lax.fft takes it
        return dict(p)
    if not 0 <= int(kind) < len(FFT_TYPES):
        raise _refuse("fft", "fft_type", kind, f"one of 0..{len(FFT_TYPES) - 1} (FftType)")
    return {**p, "fft_type": FFT_TYPES[int(kind)]}


def _callback_to_jax(p: Params, eqn: Any) -> Params:
    out = {k: v for k, v in p.items() if k not in ("shapes", "dtypes")}
    return {**out, "result_avals": tuple(ShapedArray(s, d) for s, d in
                                         zip(p["shapes"], p["dtypes"], strict=True)),
            "sharding": None}


def _callback_from_jax(p: Params, args: Sequence[Any]) -> Params:
    if p.get("sharding") is not None:
        raise _refuse("pure_callback", "sharding", p["sharding"], "None")
    out = {k: v for k, v in p.items() if k not in ("result_avals", "sharding")}
    avals = p["result_avals"]
    return {**out, "shapes": tuple(tuple(a.shape) for a in avals),
            "dtypes": tuple(np.dtype(a.dtype) for a in avals)}


def _axis_form(name: str, tuple_names: bool, size: bool, **renames: str) -> JaxForm:
    """A collective over named axes: spmdc's ``axes``/``axis_sizes`` are JAX's
    ``axis_name`` (a tuple, or the one name as given where JAX keeps it so) and
    ``axis_size`` (their product); going back, the sizes are the current trace's."""
    back = {v: k for k, v in renames.items()}

    def to_jax(p: Params, eqn: Any) -> Params:
        out = {renames.get(k, k): v for k, v in p.items()
               if k not in ("axes", "axis_sizes", "groups")}
        axes = p["axes"]
        out["axis_name"] = axes if tuple_names or len(axes) != 1 else axes[0]
        if size:
            out["axis_size"] = math.prod(p["axis_sizes"])
        if name != "ppermute" and name != "axis_index":
            out["axis_index_groups"] = None
        return out

    def from_jax(p: Params, args: Sequence[Any]) -> Params:
        if p.get("axis_index_groups") is not None:
            raise _refuse(name, "axis_index_groups", p["axis_index_groups"], "None")
        names = p["axis_name"]
        axes = tuple(names) if isinstance(names, (tuple, list)) else (names,)
        trace = current_trace()
        bound = trace.axis_env if trace is not None else {}
        for axis in axes:
            if axis not in bound:
                raise UnboundAxisError(unbound_axis_message(name, axis, map(str, bound),
                                                            user_source()))
        sizes = tuple(int(bound[a]) for a in axes)
        if size and p.get("axis_size", math.prod(sizes)) != math.prod(sizes):
            raise _refuse(name, "axis_size", p["axis_size"], f"{math.prod(sizes)}, the size "
                          f"of {axes} here")
        out = {back.get(k, k): v for k, v in p.items()
               if k not in ("axis_name", "axis_size", "axis_index_groups")}
        return {**out, "axes": axes, "axis_sizes": sizes}
    return JaxForm(name, to_jax, from_jax)


_SELECT_ORDER = (0, 2, 1)      # select_n(pred, on_false, on_true) = select(pred, t, f)


def _select_from_jax(p: Params, args: Sequence[Any]) -> Params:
    if len(args) != 3:
        raise TypeError(f"select_n: spmdc's select chooses between two cases, got "
                        f"{len(args) - 1}; write a chain of two-way selects")
    return dict(p)


_FORMS: dict[Primitive, JaxForm] = {
    convert_p: JaxForm("convert_element_type", _convert_to_jax, _convert_from_jax),
    bitcast_convert_p: _renamed("bitcast_convert_type"),
    select_p: JaxForm("select_n", lambda p, eqn: dict(p), _select_from_jax, _SELECT_ORDER),
    reduce_sum_p: _added("reduce_sum", out_sharding=None),
    broadcast_in_dim_p: _added("broadcast_in_dim", sharding=None),
    reshape_p: _added("reshape", dimensions=None, sharding=None),
    iota_p: _added("iota", sharding=None),
    argmax_p: _argext_form("argmax"),
    argmin_p: _argext_form("argmin"),
    dot_general_p: JaxForm("dot_general", _dot_to_jax, _dot_from_jax),
    # JAX's FftType is an IntEnum (FFT=0, IFFT=1, RFFT=2, IRFFT=3), spmdc's param its name
    fft_p: JaxForm("fft", lambda p, eqn: {**p, "fft_type": FFT_TYPES.index(p["fft_type"])},
                   _fft_from_jax),
    pure_callback_p: JaxForm("pure_callback", _callback_to_jax, _callback_from_jax),
    all_gather_p: _axis_form("all_gather", True, True, dimension="all_gather_dimension"),
    psum_scatter_p: _axis_form("reduce_scatter", True, True),
    ppermute_p: _axis_form("ppermute", True, False),
    all_to_all_p: _axis_form("all_to_all", False, False),
    axis_index_p: _axis_form("axis_index", False, False),
    psum_p: _collective_form("psum"),
    pmax_p: _collective_form("pmax"),
    pmin_p: _collective_form("pmin"),
    while_p: _renamed("while", cond_func="cond_jaxpr", body_func="body_jaxpr"),
    scan_p: JaxForm("scan", lambda p, eqn: {**{("jaxpr" if k == "body" else k): v
                                               for k, v in p.items()}, "unroll": 1},
                    _scan_from_jax),
    custom_jvp_call_p: _renamed("custom_jvp_call", call="call_jaxpr", jvp="jvp_jaxpr_fun"),
    custom_vjp_call_p: _renamed("custom_vjp_call", call="call_jaxpr", fwd="fwd_jaxpr_thunk"),
    checkpoint_p: JaxForm("remat2", lambda p, eqn: {**{("jaxpr" if k == "call" else k): v
                                                       for k, v in p.items()},
                                                    "differentiated": False},
                          _remat_from_jax, open_params=("jaxpr",)),
}

# JAX's transcendental functions take an accuracy (StableHLO's result_accuracy), which
# spmdc's lowering does not honour: None is the one value.
_FORMS.update({prim: _added(prim.name, accuracy=None) for prim in (
    exp_p, exp2_p, log_p, expm1_p, log1p_p, tanh_p, logistic_p, sin_p, cos_p, tan_p, sqrt_p,
    rsqrt_p, cbrt_p)})
_FORMS[mul_p] = _added("mul", out_dtype=None)

# Where JAX's name differs, a JaxPrimitive stands for spmdc's primitive under it.
_JAX_PRIMITIVES: dict[Primitive, JaxPrimitive] = {
    prim: JaxPrimitive(form.name, prim) for prim, form in _FORMS.items()
    if form.name != prim.name}
convert_element_type_p = _JAX_PRIMITIVES[convert_p]
bitcast_convert_type_p = _JAX_PRIMITIVES[bitcast_convert_p]
select_n_p = _JAX_PRIMITIVES[select_p]
remat_p = _JAX_PRIMITIVES[checkpoint_p]         # JAX's jax.checkpoint primitive, "remat2"
# JAX's square is x * x as one primitive; spmdc traces jnp.square as integer_pow[y=2],
# so square_p binds that (its equations print as integer_pow, spmdc's program).
square_p = JaxPrimitive("square", integer_pow_p, {"y": 2})


def jax_form(prim: Any) -> JaxForm | None:
    """How ``prim``'s equations read in JAX's form; None where they read as they are."""
    return _FORMS.get(prim)


def jax_primitive(prim: Any) -> Any:
    """What a JaxprEqn of spmdc's ``prim`` shows as its ``primitive``."""
    return _JAX_PRIMITIVES.get(prim, prim)


subfun_binders: dict[Any, Callable[[tuple[Any, ...], Sequence[Any], Params], Any]] = {}
"""``binder(subfuns, args, params)`` of the primitives that take ``subfuns`` from their
``get_bind_params`` (Note [bind params and subfuns] in spmdc/extend/core/bind_params.py)."""


SIZE_ONE_STRETCHING = frozenset({
    add_p, sub_p, mul_p, div_p, max_p, min_p, atan2_p, rem_p, pow_p, nextafter_p, and_p, or_p,
    xor_p, shift_left_p, shift_right_arithmetic_p, shift_right_logical_p, eq_p, ne_p, lt_p,
    le_p, gt_p, ge_p})
"""The binary primitives whose operands JAX stretches where a dimension is 1 (Note
[size-1 dimensions of lax operations] in core/operands.py)."""


def bind_jax(primitive: Any, args: Sequence[Any], params: Params) -> Any:
    """Apply ``primitive`` (spmdc's, a JaxPrimitive, or any object with ``bind``) to
    ``args`` with params in JAX's form; sub-jaxprs in ``params`` may be Funcs or jaxprs
    (an interpreter rebinding an equation with its params: Note [running a jaxpr])."""
    from .jaxpr_view import spmdc_params  # jaxpr_view imports this module
    if "subfuns" in params and primitive in subfun_binders:
        rest = dict(params)
        return subfun_binders[primitive](tuple(rest.pop("subfuns")), args, rest)
    if isinstance(primitive, JaxPrimitive):
        prim = primitive.primitive
        params = {**spmdc_params(params), **primitive.fixed}
    elif isinstance(primitive, Primitive):
        prim = primitive
        params = spmdc_params(params)
    else:
        return primitive.bind(*args, **params)
    if prim in SIZE_ONE_STRETCHING:     # See Note [size-1 dimensions of lax operations]
        args = stretch_size_one(args)
    form = _FORMS.get(prim)
    weak = False
    if form is not None:
        params = form.from_jax(dict(params), args)
        weak = params.pop("weak", False)
        if form.order is not None:
            args = [args[i] for i in form.order]
    return bind(prim, *args, weak=weak, **params)


def _bind_in_jax_form(prim: Primitive, /, *args: Any, **params: Any) -> Any:
    return bind_jax(prim, args, params)


set_binder(_bind_in_jax_form)   # See Note [Primitive.bind] in compiler/primitives/core.py
