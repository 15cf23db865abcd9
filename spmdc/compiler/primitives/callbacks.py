"""Host callbacks: Python functions that a compiled program calls on the host.

Two primitives carry them (the frontend is spmdc/debug.py and spmdc/callbacks.py):

- ``pure_callback(*xs, callback, shapes, dtypes, vmap_method)``: a pure function of its
  operands; it may be dropped when unused, merged with an identical call, or called once
  per batch element; it has no derivative (as in JAX: the error names custom_jvp).
- ``io_callback(*xs, callback, shapes, dtypes, ordered, kind)``: an effect
  (Note [effects] in passes/cleanup.py), never dropped nor merged. ``kind='debug'``
  (debug.print, debug.callback: no results) runs once per batch element under vmap and
  with the primal values under differentiation; ``kind='io'`` (io_callback) has results,
  runs sequentially under vmap (not at all when ``ordered``) and has no derivative.
  The effects of one program run in program order, ``ordered`` or not (a token chain,
  Note [host callbacks] in stablehlo.py); ``ordered=True`` is what promises it, as in
  JAX, and forbids vmap.

``callback`` is a ``HostCallback``: it takes one NumPy array per operand and returns one
per result (shapes and dtypes are checked here: the CUDA handler does not check them).
Both lower to the platform's host-callback custom call (jaxlib's on the CPU, the CUDA
plugin's on GPUs); under pmap each device calls it with its own values.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import CallbackError
from ..builder import Builder
from ..ir import Atom, TensorType
from ..passes.autodiff import activity_rules, vjp_rules
from ..passes.cleanup import effectful
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules, broadcast_batch, move_axis
from ..stablehlo import host_callback_op, lower_rules
from .core import declare

__all__ = ["HostCallback", "pure_callback_p", "io_callback_p", "VMAP_METHODS", "call_on_host"]

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


class HostCallback:
    """A Python function that a program calls: ``fn(*arrays) -> sequence of arrays``.
    Compared by identity; prints as its description (``what``)."""
    __slots__ = ("fn", "what")

    def __init__(self, fn: Callable[..., Any], what: str):
        self.fn = fn
        self.what = what

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def ir_text(self) -> str:
        return repr(self.what)

    def __repr__(self) -> str:
        return f"HostCallback({self.what})"


def _result_types(shapes: tuple[Any, ...], dtypes: tuple[Any, ...]) -> tuple[TensorType, ...]:
    return tuple(TensorType(tuple(s), np.dtype(d)) for s, d in zip(shapes, dtypes, strict=True))


def _on_host(callback: HostCallback, results: tuple[TensorType, ...],
             cast: bool = False) -> Callable[..., Any]:
    """What the compiled program calls: copies the operands (the program's views are only
    valid during the call) and checks the results against their declared types (with
    ``cast``, results of another dtype are converted instead: the NumPy reference, which
    may run in float64, uses it)."""
    def run(*args: Any) -> tuple[Any, ...]:
        outs = callback(*[np.array(a) for a in args])
        outs = list(outs) if outs is not None else []
        if len(outs) != len(results):
            raise CallbackError(f"host callback {callback.what}: returned {len(outs)} "
                                f"values, but {len(results)} were declared")
        checked = []
        for k, (o, t) in enumerate(zip(outs, results, strict=True)):
            o = np.asarray(o)
            if cast and o.dtype != t.dtype:
                o = o.astype(t.dtype)
            if o.shape != t.shape or o.dtype != t.dtype:
                raise CallbackError(
                    f"host callback {callback.what}: result {k} has shape {o.shape} and "
                    f"dtype {o.dtype}, but {t.shape} and {t.dtype} were declared")
            checked.append(o if o.flags.c_contiguous else o.copy(order="C"))
        return tuple(checked)
    return run


def _shape_rule(*xs: TensorType, callback: HostCallback, shapes: tuple[Any, ...],
                dtypes: tuple[Any, ...], **params: Any) -> tuple[TensorType, ...]:
    return _result_types(shapes, dtypes)


def call_on_host(*xs: Any, callback: HostCallback, shapes: Any, dtypes: Any,
                 **params: Any) -> Any:
    """Run ``callback`` now on host arrays, checking its results as a program would."""
    return _on_host(callback, _result_types(shapes, dtypes))(*xs)


def _impl(*xs: Any, callback: HostCallback, shapes: Any, dtypes: Any, **params: Any) -> Any:
    return _on_host(callback, _result_types(shapes, dtypes), cast=True)(*xs)


# --- batching -----------------------------------------------------------------------------

def _element(b: Builder, x: Atom, d: int | None, i: int) -> Atom:
    """Batch element ``i`` of ``x`` (batched along ``d``; unbatched ``x`` as it is)."""
    if d is None:
        return x
    shape = x.type.shape
    start = tuple(i if k == d else 0 for k in range(len(shape)))
    limit = tuple(i + 1 if k == d else n for k, n in enumerate(shape))
    one = b.slice(x, start_indices=start, limit_indices=limit, strides=None)
    return b.squeeze(one, dimensions=(d,))


def _per_element(b: Builder, prim: Any, size: int, args: list[Atom], dims: list[Any],
                 params: dict[str, Any]) -> tuple[list[Atom], list[int]]:
    """One call per batch element, in order, the results stacked along a new axis 0 (what
    JAX does for debug callbacks and for vmap_method='sequential')."""
    per_call = [b.bind(prim, *[_element(b, x, d, i) for x, d in zip(args, dims, strict=True)],
                       **params) for i in range(size)]
    outs = []
    for k in range(len(params["shapes"])):
        parts = [b.expand_dims(call[k], dimensions=(0,)) for call in per_call]
        outs.append(parts[0] if size == 1 else b.concatenate(*parts, dimension=0))
    return outs, [0] * len(outs)


def _looped(b: Builder, prim: Any, size: int, args: list[Atom], dims: list[Any],
            params: dict[str, Any]) -> tuple[list[Atom], list[int]]:
    """One call per batch element inside a scan over the batch (JAX's lax.map): the
    program stays one call long whatever the batch size. Results stack along axis 0."""
    if not params["shapes"]:         # nothing to stack: a scan would have no outputs
        return _per_element(b, prim, size, args, dims, params)
    consts = [x for x, d in zip(args, dims, strict=True) if d is None]
    xs = [move_axis(b, x, d, 0) for x, d in zip(args, dims, strict=True) if d is not None]
    step = Builder(f"{prim.name}_step")
    const_ins = iter([step.input(x.type) for x in consts])
    x_ins = iter([step.input(TensorType(x.type.shape[1:], x.type.dtype)) for x in xs])
    operands = [next(const_ins) if d is None else next(x_ins) for d in dims]
    body = step.build(list(step.bind(prim, *operands, **params)))
    outs = b.scan(*consts, *xs, body=body, length=size, reverse=False,
                  num_consts=len(consts), num_carry=0)
    return list(outs), [0] * len(outs)


def _batched_params(params: dict[str, Any], size: int) -> dict[str, Any]:
    return {**params, "shapes": tuple((size, *s) for s in params["shapes"])}


def _pure_batch(b: Builder, axis: Any, args: list[Atom], dims: list[Any], **params: Any):
    method = params["vmap_method"]
    if method is None:
        raise NotImplementedError(
            "vmap of a pure_callback needs its vmap_method: pass vmap_method= one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all' or "
            "'legacy_vectorized' to spmdc.pure_callback (see its docstring)")
    if method == "sequential":
        return _looped(b, pure_callback_p, axis.size, args, dims, params)
    if method == "sequential_unrolled":
        return _per_element(b, pure_callback_p, axis.size, args, dims, params)
    front = [x if d is None else move_axis(b, x, d, 0) for x, d in zip(args, dims, strict=True)]
    if method != "legacy_vectorized":      # expand_dims / broadcast_all
        size = axis.size if method == "broadcast_all" else 1
        front = [broadcast_batch(b, x, size, 0) if d is None else x
                 for x, d in zip(front, dims, strict=True)]
    outs = b.bind(pure_callback_p, *front, **_batched_params(params, axis.size))
    return list(outs), [0] * len(outs)


def _io_batch(b: Builder, axis: Any, args: list[Atom], dims: list[Any], **params: Any):
    if params["kind"] == "io" and params["ordered"]:
        raise ValueError("Cannot vmap an ordered io_callback: its calls would have no "
                         "order among the batch elements; use ordered=False")
    if params["kind"] == "io":
        return _looped(b, io_callback_p, axis.size, args, dims, params)
    return _per_element(b, io_callback_p, axis.size, args, dims, params)   # as JAX: unrolled


# --- differentiation ----------------------------------------------------------------------

def _no_derivative(message: str) -> Callable[..., Any]:
    def rule(*args: Any, **params: Any) -> Any:
        raise ValueError(message)
    return rule


_PURE_NO_JVP = ("Pure callbacks do not support JVP. Please use `spmdc.custom_jvp` (or "
                "custom_vjp) to use callbacks while taking gradients.")
_IO_NO_JVP = "IO callbacks do not support JVP (differentiating through an io_callback)."


def _io_activity(active: list[bool], **params: Any) -> list[bool]:
    if params["kind"] != "debug":
        raise ValueError(_IO_NO_JVP)
    return []


def _io_jvp(b: Builder, primals: list[Atom], tangents: list[Any], **params: Any):
    if params["kind"] != "debug":
        raise ValueError(_IO_NO_JVP)
    b.bind(io_callback_p, *primals, **params)     # debug callbacks see the primal values
    return [], []


def _io_vjp(b: Builder, ct: Any, *xs: Atom, **params: Any) -> Any:
    # Only reached for results that carry a cotangent; debug callbacks have none.
    raise ValueError(_IO_NO_JVP)


# --- lowering -----------------------------------------------------------------------------

def _pure_lowering(ctx: Any, eqn: Any, *operands: Any) -> Any:
    p = eqn.params
    results = _result_types(p["shapes"], p["dtypes"])
    return host_callback_op(ctx, _on_host(p["callback"], results), operands, results,
                            has_side_effect=False, ordered=False)


def _io_lowering(ctx: Any, eqn: Any, *operands: Any) -> Any:
    # Every effect of a program is chained, ordered or not: XLA would otherwise run
    # independent callbacks in any order (it did: a vmap's prints came out shuffled).
    # Program order is one of the orders JAX allows for unordered effects, and makes
    # prints deterministic. See Note [host callbacks] in stablehlo.py.
    p = eqn.params
    results = _result_types(p["shapes"], p["dtypes"])
    return host_callback_op(ctx, _on_host(p["callback"], results), operands, results,
                            has_side_effect=True, ordered=True)


pure_callback_p = declare("pure_callback", _shape_rule, _impl, multiple_results=True)
batch_rules[pure_callback_p] = _pure_batch
# As JAX, differentiating through a callback is an error as soon as a differentiated
# value reaches it, used or not (the activity rule runs for every such equation).
activity_rules[pure_callback_p] = _no_derivative(_PURE_NO_JVP)
jvp_rules[pure_callback_p] = _no_derivative(_PURE_NO_JVP)
vjp_rules[pure_callback_p] = _no_derivative(_PURE_NO_JVP)
lower_rules[pure_callback_p] = _pure_lowering

io_callback_p = declare("io_callback", _shape_rule, _impl, multiple_results=True)
effectful.add(io_callback_p)                              # See Note [effects]
batch_rules[io_callback_p] = _io_batch
activity_rules[io_callback_p] = _io_activity
jvp_rules[io_callback_p] = _io_jvp
vjp_rules[io_callback_p] = _io_vjp
lower_rules[io_callback_p] = _io_lowering
