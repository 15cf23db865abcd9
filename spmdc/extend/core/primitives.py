"""``jax.extend.core.primitives``: JAX's primitive objects under JAX's names, for libraries
that read jaxprs (NumPyro's ``ops/provenance.py`` keys its rules by ``call_p``,
``closed_call_p`` and ``jit_p``) or rebind their equations.

Each name is spmdc's own primitive, the object a jaxpr's ``eqn.primitive`` is (``sin_p``
is the compiler's sin primitive; where JAX's name differs, the JaxPrimitive that stands
for spmdc's primitive under it, Note [jaxpr names and params]), so ``eqn.primitive is
primitives.sin_p`` holds. The three call primitives are defined here (Note [call
primitives]). JAX's primitives that spmdc has none for are absent, not stood in for;
docs/ecosystem.md lists them.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ...ad_checkpoint import name_p
from ...compiler.ir import Func
from ...core.tracing import current_trace
from ...custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from ...interpreters.dead_code import dce_jaxpr_call_rule, dce_jaxpr_closed_call_rule, dce_rules
from ...lax import (
    abs_p,
    acos_p,
    acosh_p,
    add_p,
    all_gather_p,
    all_to_all_p,
    and_p,
    argmax_p,
    argmin_p,
    asin_p,
    asinh_p,
    atan2_p,
    atan_p,
    atanh_p,
    axis_index_p,
    bessel_i0e_p,
    bessel_i1e_p,
    bitcast_convert_type_p,
    broadcast_in_dim_p,
    cbrt_p,
    ceil_p,
    clamp_p,
    clz_p,
    complex_p,
    concatenate_p,
    cond_p,
    conj_p,
    conv_general_dilated_p,
    convert_element_type_p,
    cos_p,
    cosh_p,
    cummax_p,
    cummin_p,
    cumprod_p,
    cumsum_p,
    digamma_p,
    div_p,
    dot_general_p,
    dynamic_slice_p,
    dynamic_update_slice_p,
    eq_p,
    erf_inv_p,
    erf_p,
    erfc_p,
    exp2_p,
    exp_p,
    expm1_p,
    fft_p,
    floor_p,
    gather_p,
    ge_p,
    gt_p,
    imag_p,
    integer_pow_p,
    iota_p,
    is_finite_p,
    le_p,
    lgamma_p,
    log1p_p,
    log_p,
    logistic_p,
    lt_p,
    max_p,
    min_p,
    mul_p,
    ne_p,
    neg_p,
    nextafter_p,
    not_p,
    or_p,
    pad_p,
    pmax_p,
    pmin_p,
    polygamma_p,
    population_count_p,
    pow_p,
    ppermute_p,
    psum_p,
    real_p,
    reduce_and_p,
    reduce_max_p,
    reduce_min_p,
    reduce_or_p,
    reduce_precision_p,
    reduce_prod_p,
    reduce_sum_p,
    reduce_window_max_p,
    reduce_window_min_p,
    reduce_window_p,
    reduce_window_sum_p,
    rem_p,
    reshape_p,
    rev_p,
    round_p,
    rsqrt_p,
    scan_p,
    scatter_p,
    select_and_gather_add_p,
    select_and_scatter_add_p,
    select_n_p,
    sharding_constraint_p,
    shift_left_p,
    shift_right_arithmetic_p,
    shift_right_logical_p,
    sign_p,
    sin_p,
    sinh_p,
    slice_p,
    sort_p,
    sqrt_p,
    square_p,
    squeeze_p,
    stop_gradient_p,
    sub_p,
    tan_p,
    tanh_p,
    transpose_p,
    while_p,
    xor_p,
    zeta_p,
)
from ...lax.linalg import (
    cholesky_p,
    eig_p,
    eigh_p,
    hessenberg_p,
    householder_product_p,
    lu_p,
    qr_p,
    schur_p,
    svd_p,
    triangular_solve_p,
    tridiagonal_p,
    tridiagonal_solve_p,
)
from ...transforms.jaxpr_params import remat_p
from ...transforms.jaxpr_view import ClosedJaxpr, Jaxpr, closed_jaxpr, eval_jaxpr
from ...transforms.jit import jit
from ..linear_util import WrappedFun, wrap_init

__all__ = [
    "CallPrimitive", "call_p", "closed_call_p", "jit_p",
    "abs_p", "acos_p", "acosh_p", "add_p", "all_gather_p", "all_to_all_p", "and_p",
    "argmax_p", "argmin_p", "asin_p", "asinh_p", "atan2_p", "atan_p", "atanh_p",
    "axis_index_p", "bessel_i0e_p", "bessel_i1e_p", "bitcast_convert_type_p",
    "broadcast_in_dim_p", "cbrt_p", "ceil_p", "cholesky_p", "clamp_p", "clz_p", "complex_p",
    "concatenate_p", "cond_p", "conj_p", "conv_general_dilated_p", "convert_element_type_p",
    "cos_p", "cosh_p", "cummax_p", "cummin_p", "cumprod_p", "cumsum_p", "custom_jvp_call_p",
    "custom_vjp_call_p", "digamma_p", "div_p", "dot_general_p", "dynamic_slice_p",
    "dynamic_update_slice_p", "eig_p", "eigh_p", "eq_p", "erf_inv_p", "erf_p", "erfc_p",
    "exp2_p", "exp_p", "expm1_p", "fft_p", "floor_p", "gather_p", "ge_p", "gt_p", "imag_p",
    "integer_pow_p", "iota_p", "is_finite_p", "le_p", "lgamma_p", "log1p_p", "log_p",
    "logistic_p", "lt_p", "lu_p", "max_p", "min_p", "mul_p", "name_p", "ne_p", "neg_p",
    "nextafter_p", "not_p", "or_p", "pad_p", "pmax_p", "pmin_p", "polygamma_p",
    "population_count_p", "pow_p", "ppermute_p", "psum_p", "qr_p", "real_p", "reduce_and_p",
    "reduce_max_p", "reduce_min_p", "reduce_or_p", "reduce_precision_p", "reduce_prod_p",
    "reduce_sum_p", "reduce_window_max_p", "reduce_window_min_p", "reduce_window_p",
    "reduce_window_sum_p", "rem_p", "remat_p", "reshape_p", "rev_p", "round_p", "rsqrt_p",
    "scan_p", "scatter_p", "select_and_gather_add_p", "select_and_scatter_add_p",
    "select_n_p", "sharding_constraint_p", "shift_left_p", "shift_right_arithmetic_p",
    "shift_right_logical_p", "sign_p", "sin_p", "sinh_p", "slice_p", "sort_p", "sqrt_p",
    "square_p", "squeeze_p", "stop_gradient_p", "sub_p", "svd_p", "tan_p", "tanh_p",
    "transpose_p", "triangular_solve_p", "while_p", "xor_p", "zeta_p",
    "hessenberg_p", "householder_product_p", "schur_p", "tridiagonal_p", "tridiagonal_solve_p"]

# Note [call primitives]
# JAX has three primitives whose equations call a sub-jaxpr: ``call`` (an open
# ``call_jaxpr``), ``closed_call`` (a ClosedJaxpr ``call_jaxpr``) and ``jit`` (a ClosedJaxpr
# ``jaxpr``, compiled as one program). spmdc's IR has no call equation: a nested jit, and
# any call, is inlined into the program that traces it, so spmdc's jaxprs never show one
# and a library's rule keyed by these objects simply never fires on them. The objects are
# still real: ``bind`` applies the sub-jaxpr to the operands, as JAX's does, which under a
# trace inlines its equations there (what spmdc does for every nested call) and outside
# one runs it (``jit_p`` compiled by spmdc.jit, the others equation by equation), and
# ``get_bind_params`` gives an equation's params as JAX's do, for custom interpreters
# that rebind ``eqn.primitive.bind(*args, **bind_params)`` (Note [bind params and
# subfuns] in bind_params.py). The sub-jaxpr may
# also come as the Func spmdc's eval_jaxpr turns a jaxpr param into (Note [running a
# jaxpr]). JAX's other params of ``jit`` describe how to compile (shardings, layouts,
# donation, mesh, compiler options): spmdc takes the values that mean "as spmdc.jit
# does" and refuses any other with a TypeError naming the param, as jaxpr_params.py does
# for params its primitives cannot express; ``name``, ``keep_unused`` and ``inline`` do
# not change the result and are taken as they are.
# A library makes its own call primitive with ``jax.extend.core.CallPrimitive(name)``:
# ``bind(fun, *args, **params)`` runs ``fun`` (a WrappedFun) on the operands, through the
# impl it defines (``def_impl(call_impl)``) outside any trace, and inlined into the
# trace under one, as spmdc inlines every call; its params parameterize the call for the
# library's own interpreters and do not change what ``fun`` computes (JAX's
# ``call_impl`` drops them too).

# jit's compile params, each with the test of the one meaning spmdc's jit has.
_JIT_NEUTRAL: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "in_shardings": ("None entries", lambda v: all(s is None for s in v)),
    "out_shardings": ("None entries", lambda v: all(s is None for s in v)),
    "in_layouts": ("None entries", lambda v: all(s is None for s in v)),
    "out_layouts": ("None entries", lambda v: all(s is None for s in v)),
    "donated_invars": ("all False", lambda v: not any(v)),
    "ctx_mesh": ("None", lambda v: v is None),
    "compiler_options_kvs": ("()", lambda v: not v),
}
_JIT_HINTS = frozenset({"name", "keep_unused", "inline"})


def _as_closed(j: Any, what: str) -> ClosedJaxpr:
    """A call's sub-jaxpr param (ClosedJaxpr, open Jaxpr or spmdc Func) as a ClosedJaxpr."""
    if isinstance(j, ClosedJaxpr):
        return j
    if isinstance(j, Jaxpr):
        return ClosedJaxpr(j, [])
    if isinstance(j, Func):
        return closed_jaxpr(j, [], len(j.inputs))
    raise TypeError(f"{what}: expected a jaxpr (jax.extend.core.Jaxpr or ClosedJaxpr), got "
                    f"{type(j).__name__}")


def call_impl(f: WrappedFun, *args: Any, **params: Any) -> Any:
    """A call primitive's evaluation: ``f`` on the operands (the params parameterize
    the primitive, not the function)."""
    del params
    return f.call_wrapped(*args)


class CallPrimitive:
    """JAX's call primitive ``name`` (Note [call primitives]): ``bind`` applies the
    sub-jaxpr held in the param ``jaxpr_param`` to the operands, or a function given
    first. ``CallPrimitive(name)`` is a library's own (``jax.extend.core``), evaluated
    by the impl it gives with ``def_impl``."""
    multiple_results = True
    call_primitive = True
    map_primitive = False

    def __init__(self, name: str, jaxpr_param: str = "call_jaxpr", compiled: bool = False,
                 *, builtin: bool = False):
        if not isinstance(name, str):
            raise TypeError(f"CallPrimitive: the name must be a str, got {name!r}")
        self.name, self.jaxpr_param, self.compiled = name, jaxpr_param, compiled
        self.builtin = builtin
        self.impl: Callable[..., Any] | None = call_impl if builtin else None

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """``impl(fun, *args, **params)``: what ``bind`` runs outside any trace."""
        self.impl = impl
        return impl

    def bind(self, /, *args: Any, **params: Any) -> list[Any]:
        """``bind(*args, <jaxpr_param>=jaxpr, ...)``; ``call``, ``closed_call`` and a
        library's call primitive also take JAX's form ``bind(fun, *args)``, ``fun`` a
        WrappedFun (or a callable)."""
        if "subfuns" in params:                 # what get_bind_params gave (JAX's form)
            rest = dict(params)
            subfuns = tuple(rest.pop("subfuns"))
            if len(subfuns) != 1:
                raise TypeError(f"{self.name}.bind: subfuns must hold the one function "
                                f"called, got {len(subfuns)}")
            return self.bind(*subfuns, *args, **rest)
        if self.jaxpr_param in params and not (self.builtin or self.compiled):
            rest = self.get_bind_params(params)      # an equation's params, as JAX's
            return self.bind(*args, **rest)         # eval_jaxpr rebinds them
        if self.jaxpr_param not in params:
            if self.compiled or not args or not (isinstance(args[0], WrappedFun)
                                                        or callable(args[0])):
                raise TypeError(f"{self.name}.bind: pass the sub-jaxpr as "
                                f"{self.jaxpr_param}=..." + ("" if self.compiled else
                                                            ", or a function first"))
            fun, *operands = args
            if self.builtin:
                self._check_params(params)
            fun = fun if isinstance(fun, WrappedFun) else wrap_init(fun)
            if current_trace() is not None:
                return list(fun.call_wrapped(*operands))    # inlined, as every call
            if self.impl is None:
                raise NotImplementedError(
                    f"Evaluation rule for '{self.name}' not implemented: give it one with "
                    f"{self.name}.def_impl(jax.extend.core.call_impl)")
            return list(self.impl(fun, *operands, **params))
        closed = _as_closed(params.pop(self.jaxpr_param), f"{self.name}.bind")
        self._check_params(params)
        run = partial(eval_jaxpr, closed.jaxpr, closed.consts)
        return list(jit(run)(*args) if self.compiled else run(*args))

    def get_bind_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """JAX's: the params as ``bind`` takes them; ``call`` and ``closed_call`` hand
        their jaxpr over as a WrappedFun in ``subfuns``, ``jit`` keeps it (Note [bind
        params and subfuns] in bind_params.py)."""
        if self.compiled:
            return dict(params)
        rest = dict(params)
        closed = _as_closed(rest.pop(self.jaxpr_param), f"{self.name}.get_bind_params")
        rest["subfuns"] = (wrap_init(partial(eval_jaxpr, closed.jaxpr, closed.consts)),)
        return rest

    def _check_params(self, params: dict[str, Any]) -> None:
        for k, v in params.items():
            if self.compiled and k in _JIT_HINTS:
                continue
            if self.compiled and k in _JIT_NEUTRAL:
                means, ok = _JIT_NEUTRAL[k]
                if ok(v):
                    continue
                raise TypeError(f"{self.name}.bind: spmdc compiles a call with {k} of "
                                f"{means}, got {v!r}; give the sharding or donation to "
                                "spmdc.jit on the function instead")
            raise TypeError(f"{self.name}.bind got an unexpected param {k!r}")

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


call_p = CallPrimitive("call", "call_jaxpr", compiled=False, builtin=True)
closed_call_p = CallPrimitive("closed_call", "call_jaxpr", compiled=False, builtin=True)
jit_p = CallPrimitive("jit", "jaxpr", compiled=True, builtin=True)
dce_rules[call_p] = dce_jaxpr_call_rule
dce_rules[closed_call_p] = dce_jaxpr_closed_call_rule
