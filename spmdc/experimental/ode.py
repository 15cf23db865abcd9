"""spmdc.experimental.ode.odeint: adaptive Dormand-Prince integration with the adjoint VJP.

Note [odeint]
~~~~~~~~~~~~~
As JAX's ``jax.experimental.ode.odeint``: the state (a pytree) is raveled into one vector;
``lax.scan`` walks the output times and, inside, a ``lax.while_loop`` takes adaptive
Dormand-Prince 5(4) steps (an embedded error estimate, step-size control with safety
0.9, growth at most 10x and shrinkage at most 5x per step, at most ``mxstep`` steps per
output time and no step above ``hmax``); the value at an output time comes from the
4th-order polynomial that interpolates the step crossing it (dense output). The initial
step size is Hairer, Norsett & Wanner's (Solving ODEs I, II.4).

The derivative is the adjoint method (Chen et al. 2018, appendix C) through
``custom_vjp``: the backward pass integrates the augmented system (state, state
cotangent, time cotangent, parameter cotangents) backwards in time between consecutive
output times, adding each output's cotangent as it passes, so memory does not grow with
the number of solver steps. Arrays and traced values ``func`` closes over are hoisted
into explicit arguments first (``_closure_convert``), so a neural ODE that closes over
its parameters gets their gradients too, and the rules (traced later) close over no
arrays. Only floating point arguments are differentiated; integer ones ride along.
Complex states are not supported (a clear error).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..compiler.passes.autodiff import is_float
from ..core import dtypes
from ..core.pytree_tracing import fun_name, trace_pytree
from ..core.tracing import Tracer, apply_func, type_of
from ..core.tree import tree_flatten, tree_map, tree_structure, tree_unflatten
from ..runtime.array import Array
from ..transforms.custom_derivatives import custom_vjp
from ..transforms.grad import vjp
from ..transforms.jit import jit

__all__ = ["odeint"]


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = jnp.inf, hmax: float = jnp.inf) -> Any:
    """Integrate ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0``; the solution at each
    of the (strictly increasing) times ``t``, with a new leading axis of length ``len(t)``.

    ``rtol``/``atol``: relative and absolute local error tolerances; ``mxstep``: the most
    steps per output time; ``hmax``: the largest step. Differentiable (adjoint method)
    with respect to ``y0``, ``t``, ``args`` and arrays ``func`` closes over."""
    if not callable(func):
        raise TypeError(f"odeint: func must be callable, got {type(func).__name__}")
    for arg in tree_flatten(args)[0]:
        if not isinstance(arg, (Tracer, Array, np.ndarray, np.generic, bool, int, float,
                                complex)):
            raise TypeError("The contents of odeint *args must be arrays or scalars, but got "
                            f"{arg!r}.")
    t_type = type_of(t)[0]
    if t_type.dtype.kind != "f" or t_type.ndim != 1:
        raise TypeError(f"odeint: t must be a 1-d array of floats, but got {t_type}")
    for leaf in tree_flatten(y0)[0]:
        kind = type_of(leaf)[0].dtype.kind
        if kind == "c":
            raise TypeError("odeint: complex states are not supported; integrate the real "
                            "and imaginary parts as two real arrays")
        if kind != "f" and type_of(leaf)[0].dtype.name != "bfloat16":
            raise TypeError(f"odeint: y0 must hold floating point arrays, got "
                            f"{type_of(leaf)[0].dtype.name}")
    for name, value in (("rtol", rtol), ("atol", atol), ("mxstep", mxstep), ("hmax", hmax)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
            raise ValueError(f"odeint: {name} must be a positive Python number, got {value!r}")
    return _odeint_wrapper(func, float(rtol), float(atol), float(mxstep), float(hmax),
                           y0, t, *args)


@functools.partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_wrapper(func: Callable[..., Any], rtol: float, atol: float, mxstep: float,
                    hmax: float, y0: Any, ts: Any, *args: Any) -> Any:
    converted, consts = _closure_convert(func, y0, ts[0], *args)
    y_flat, unravel = _ravel(y0)

    def flat_func(y: Any, t: Any, *rest: Any) -> Any:
        return _ravel(converted(unravel(y), t, *rest))[0]

    ys = _odeint(flat_func, rtol, atol, mxstep, hmax, y_flat, ts, *args, *consts)
    return _unravel_rows(y0, ys)


# --- the solver ------------------------------------------------------------------------------

_ALPHA = np.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0.0])
_BETA = np.array([
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]])
_C_SOL = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_C_ERR = _C_SOL - np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200,
                            187 / 2100, 1 / 40])
# Dense output: the solution at the middle of a step, as weights of the 7 stages.
_C_MID = np.array([6025192743 / 30085553152, 0, 51252292925 / 65400821598,
                   -2691868925 / 45128329728, 187940372067 / 1594534317056,
                   -1776094331 / 19743644256, 11237099 / 235043384]) / 2


def _norm(x: Any) -> Any:
    return jnp.sqrt(jnp.sum(x * x))


def _initial_step(fun: Callable[..., Any], t0: Any, y0: Any, order: int, rtol: float,
                  atol: float, f0: Any) -> Any:
    scale = atol + jnp.abs(y0) * rtol
    d0, d1 = _norm(y0 / scale), _norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = _norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return jnp.minimum(100.0 * h0, h1)


def _rk_step(fun: Callable[..., Any], y0: Any, f0: Any, t0: Any, dt: Any
             ) -> tuple[Any, Any, Any, Any]:
    """One Dormand-Prince step: (y1, f1, error estimate, the 7 stage derivatives)."""
    dtype = f0.dtype
    alpha = jnp.asarray(_ALPHA.astype(dt.dtype))
    beta = jnp.asarray(_BETA.astype(dtype))
    h = dt.astype(dtype)

    def stage(i: Any, k: Any) -> Any:
        ti = t0 + dt * alpha[i - 1]
        yi = y0 + h * jnp.dot(beta[i - 1, :], k)
        return k.at[i, :].set(fun(yi, ti))

    k = jnp.zeros((7, f0.shape[0]), dtype).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, stage, k)
    y1 = h * jnp.dot(jnp.asarray(_C_SOL.astype(dtype)), k) + y0
    error = h * jnp.dot(jnp.asarray(_C_ERR.astype(dtype)), k)
    return y1, k[-1], error, k


def _interpolation(y0: Any, y1: Any, k: Any, dt: Any) -> Any:
    """The coefficients (highest power first) of the quartic through the step."""
    h = dt.astype(y0.dtype)
    y_mid = y0 + h * jnp.dot(jnp.asarray(_C_MID.astype(y0.dtype)), k)
    dy0, dy1 = k[0], k[-1]
    a = -2.0 * h * dy0 + 2.0 * h * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * h * dy0 - 3.0 * h * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * h * dy0 + h * dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return jnp.stack([a, b, c, h * dy0, y0])


def _error_ratio(error: Any, rtol: float, atol: float, y0: Any, y1: Any) -> Any:
    tolerance = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean((error / tolerance) ** 2))


def _next_step(last: Any, ratio: Any, safety: float = 0.9, grow: float = 10.0,
               shrink: float = 0.2, order: float = 5.0) -> Any:
    shrink = jnp.where(ratio < 1, 1.0, shrink)
    factor = jnp.minimum(grow, jnp.maximum(ratio ** (-1.0 / order) * safety, shrink))
    return jnp.where(ratio == 0, last * grow, last * factor)


def _horner(coefficients: Any, x: Any) -> Any:
    out = coefficients[0]
    for k in range(1, coefficients.shape[0]):
        out = out * x + coefficients[k]
    return out


def _solve(func: Callable[..., Any], rtol: float, atol: float, mxstep: float, hmax: float,
           y0: Any, ts: Any, *args: Any) -> Any:
    def fun(y: Any, t: Any) -> Any:
        return func(y, t, *args)

    def to_output_time(carry: list[Any], target: Any) -> tuple[list[Any], Any]:
        def keep_going(state: list[Any]) -> Any:
            i, _, _, t, dt, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def step(state: list[Any]) -> list[Any]:
            i, y, f, t, dt, last_t, coefficients = state
            y1, f1, error, k = _rk_step(fun, y, f, t, dt)
            next_t = t + dt
            ratio = _error_ratio(error, rtol, atol, y, y1)
            new_coefficients = _interpolation(y, y1, k, dt)
            dt = jnp.clip(_next_step(dt, ratio), 0.0, hmax)
            accepted = ratio <= 1.0
            new = [y1, f1, next_t, dt, t, new_coefficients]
            old = [y, f, t, dt, last_t, coefficients]
            return [i + 1, *(jnp.where(accepted, a, b) for a, b in zip(new, old, strict=True))]

        _, *carry = lax.while_loop(keep_going, step, [0, *carry])
        _, _, t, _, last_t, coefficients = carry
        fraction = (target - last_t) / (t - last_t)
        return carry, _horner(coefficients, fraction.astype(coefficients.dtype))

    f0 = fun(y0, ts[0])
    dt = jnp.clip(_initial_step(fun, ts[0], y0, 4, rtol, atol, f0), 0.0, hmax)
    init = [y0, f0, ts[0], dt, ts[0], jnp.stack([y0] * 5)]
    _, ys = lax.scan(to_output_time, init, ts[1:])
    return jnp.concatenate([y0[None], ys])


_odeint = custom_vjp(_solve, nondiff_argnums=(0, 1, 2, 3, 4))


def _solve_fwd(func: Callable[..., Any], rtol: float, atol: float, mxstep: float, hmax: float,
               y0: Any, ts: Any, *args: Any) -> tuple[Any, Any]:
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _solve_bwd(func: Callable[..., Any], rtol: float, atol: float, mxstep: float,
               hmax: float, residuals: Any, g: Any) -> tuple[Any, ...]:
    ys, ts, args = residuals
    # Only the floating point leaves of args are differentiated; the others (integers,
    # bools) ride along and get no cotangent.
    arg_leaves, arg_tree = tree_flatten(args)
    floating = [is_float(type_of(v)[0]) for v in arg_leaves]
    float_args = [v for v, f in zip(arg_leaves, floating, strict=True) if f]
    other_args = [v for v, f in zip(arg_leaves, floating, strict=True) if not f]
    n_float = len(float_args)

    def merged(floats: Sequence[Any], others: Sequence[Any]) -> Any:
        fs, os_ = iter(floats), iter(others)
        return tree_unflatten(arg_tree, [next(fs) if f else next(os_) for f in floating])

    def augmented(state: tuple[Any, ...], minus_t: Any, *all_args: Any) -> tuple[Any, ...]:
        # the original system, with the cotangents of the state, the time and the float
        # arguments; integrated in negated time, so that the times increase
        floats, others = all_args[:n_float], all_args[n_float:]
        y, y_bar = state[0], state[1]

        def dynamics(y: Any, t: Any, *floats_: Any) -> Any:
            return func(y, t, *merged(floats_, others))
        y_dot, pull = vjp(dynamics, y, -minus_t, *floats)
        return (-y_dot, *pull(y_bar))

    def back_one_interval(carry: tuple[Any, ...], i: Any) -> tuple[tuple[Any, ...], Any]:
        y_bar, t0_bar, floats_bar = carry
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i])     # moving the output time i
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, floats_bar = odeint(
            augmented, (ys[i], y_bar, t0_bar, floats_bar), jnp.stack([-ts[i], -ts[i - 1]]),
            *float_args, *other_args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, floats_bar = tree_map(lambda x: x[1], (y_bar, t0_bar, floats_bar))
        return (y_bar + g[i - 1], t0_bar, floats_bar), t_bar

    init = (g[-1], jnp.zeros((), ts.dtype), [jnp.zeros_like(v) for v in float_args])
    (y_bar, t0_bar, floats_bar), ts_bar_rev = lax.scan(
        back_one_interval, init, jnp.arange(ts.shape[0] - 1, 0, -1))
    ts_bar = jnp.concatenate([t0_bar[None], ts_bar_rev[::-1]])
    return (y_bar, ts_bar, *merged(floats_bar, [None] * len(other_args)))


_odeint.defvjp(_solve_fwd, _solve_bwd)


# --- pytrees and closures --------------------------------------------------------------------

def _ravel(tree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``tree``'s leaves as one vector, and the function that splits a vector back."""
    leaves, treedef = tree_flatten(tree)
    types = [type_of(v)[0] for v in leaves]
    dtype = dtypes.result_type(*[(t.dtype, False) for t in types])[0] if types else np.float32
    flat = jnp.concatenate([jnp.ravel(jnp.asarray(v)).astype(dtype) for v in leaves]) \
        if leaves else jnp.zeros((0,), dtype)
    sizes = [t.size for t in types]
    offsets = np.cumsum([0, *sizes])

    def unravel(vector: Any) -> Any:
        parts = [jnp.reshape(vector[offsets[k]:offsets[k + 1]], t.shape).astype(t.dtype)
                 for k, t in enumerate(types)]
        return tree_unflatten(treedef, parts)
    return flat, unravel


def _unravel_rows(example: Any, rows: Any) -> Any:
    """``rows`` (T, n) as ``example``'s pytree with a leading axis of length T."""
    leaves, treedef = tree_flatten(example)
    types = [type_of(v)[0] for v in leaves]
    offsets = np.cumsum([0, *[t.size for t in types]])
    parts = [jnp.reshape(rows[:, offsets[k]:offsets[k + 1]], (rows.shape[0], *t.shape))
             .astype(t.dtype) for k, t in enumerate(types)]
    return tree_unflatten(treedef, parts)


def _closure_convert(fun: Callable[..., Any], *example_args: Any
                     ) -> tuple[Callable[..., Any], list[Any]]:
    """``fun`` as a function of ``(*args, *consts)`` where ``consts`` are the arrays and
    traced values it closes over: odeint passes them as arguments of the custom_vjp,
    which differentiates the floating point ones (and whose rules may not close over
    arrays)."""
    func, out_weak, captured, out_tree, _ = trace_pytree(fun, example_args, {}, fun_name(fun))
    in_tree = tree_structure(example_args)

    def converted(*args_and_consts: Any) -> Any:
        n = len(example_args)
        args, consts = args_and_consts[:n], args_and_consts[n:]
        leaves, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(f"odeint: func was called with arguments of structure {tree}, "
                            f"but traced with {in_tree}")
        return tree_unflatten(out_tree, apply_func(func, [*leaves, *consts], out_weak))

    return converted, list(captured)
