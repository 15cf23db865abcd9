"""Calling Python from transformed functions: ``pure_callback``, ``io_callback`` and the
machinery that ``spmdc.debug`` builds on.

Arguments are split as JAX splits them: every pytree leaf that is an array or a number is
passed to the program and reaches the callback as an ``spmdc.Array`` on the first CPU
device holding that call's values (as JAX passes a ``jax.Array``); any other leaf (a
string, None, an object) is kept aside and handed to the callback unchanged. Outside any
transformation the callback simply runs now. Inside one, a ``pure_callback`` /
``io_callback`` equation is staged (compiler/primitives/callbacks.py) and the compiled
program calls the function on the host (Note [host callbacks] in
compiler/stablehlo.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import errors
from .compiler.primitives.callbacks import (
    VMAP_METHODS,
    HostCallback,
    call_on_host,
    io_callback_p,
    pure_callback_p,
)
from .core import dtypes, tracing
from .core.devices import device_put
from .core.tracing import Tracer, type_of
from .core.tree import tree_flatten, tree_leaves, tree_unflatten
from .runtime.array import Array

__all__ = ["pure_callback", "io_callback", "stage_callback", "effects_barrier"]


def _is_dynamic(x: Any) -> bool:
    if isinstance(x, (Tracer, Array, np.ndarray, np.generic, bool, int, float, complex)):
        return True
    return hasattr(x, "__jax_array__")


def _describe(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _host_value(x: Any) -> np.ndarray:
    """A concrete leaf as the callback would see it inside a program."""
    t, _ = type_of(x)
    return np.asarray(x, t.dtype)


def _result_leaf(x: Any) -> np.ndarray:
    # As JAX: a Python or NumPy value the callback returns is canonicalised (float64 to
    # float32 without x64) before it is compared with its declared dtype.
    x = np.asarray(x)
    return x.astype(dtypes.canonicalize(x.dtype)) if x.dtype != object else x


def stage_callback(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                   result_shape_dtypes: Any, *, what: str, kind: str, ordered: bool,
                   vmap_method: Any = None) -> Any:
    """Call ``fn(*args, **kwargs)`` now (outside transformations) or stage it as a host
    callback; return its results as arrays with the structure of ``result_shape_dtypes``."""
    leaves, in_tree = tree_flatten((args, kwargs))
    dynamic = [_is_dynamic(x) for x in leaves]
    out_specs, out_tree = tree_flatten(result_shape_dtypes)
    shapes, out_dtypes = _declared(out_specs, what)

    def flat_fn(*values: Any) -> list[Any]:
        # As JAX, the callback sees arrays of the library on the (first) CPU device.
        it = iter([device_put(v) for v in values])
        full = [next(it) if d else x for x, d in zip(leaves, dynamic, strict=True)]
        call_args, call_kwargs = tree_unflatten(in_tree, full)
        out = fn(*call_args, **call_kwargs)
        return [_result_leaf(x) for x in tree_leaves(out)] if out_specs else []

    dyn = [x for x, d in zip(leaves, dynamic, strict=True) if d]
    callback = HostCallback(flat_fn, what)
    if tracing.current_trace() is None:
        for x in dyn:
            if isinstance(x, Tracer):
                tracing.bind(pure_callback_p, x)     # raises the escaped-tracer error
        host_args = [_host_value(x) for x in dyn]
        if kind == "debug":
            outs = call_on_host(*host_args, callback=callback, shapes=shapes, dtypes=out_dtypes)
        else:
            outs = _run_now(host_args, callback, shapes, out_dtypes)
        outs = [device_put(o) for o in outs]
    else:
        prim = pure_callback_p if kind == "pure" else io_callback_p
        params = ({"vmap_method": vmap_method} if kind == "pure"
                  else {"ordered": ordered, "kind": kind})
        outs = tracing.bind(prim, *dyn, callback=callback, shapes=shapes, dtypes=out_dtypes,
                            **params)
    return tree_unflatten(out_tree, list(outs))


def _run_now(args: list[Any], callback: HostCallback, shapes: tuple[Any, ...],
             out_dtypes: tuple[Any, ...]) -> list[Any]:
    """A pure or io callback run outside transformations. As in JAX, where even then it
    runs inside a compiled program, what the function raises (or a result that does not
    match its declaration) comes out as a ``JaxRuntimeError`` (a RuntimeError), the
    original exception its ``__cause__``; ``debug.callback``'s errors pass unchanged."""
    try:
        return list(call_on_host(*args, callback=callback, shapes=shapes, dtypes=out_dtypes))
    except Exception as e:
        raise errors.JaxRuntimeError(
            f"INTERNAL: CpuCallback error calling callback: {callback.what} raised "
            f"{type(e).__name__}: {e}") from e


def _declared(specs: list[Any], what: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    shapes, out_dtypes = [], []
    for s in specs:
        if not (hasattr(s, "shape") and hasattr(s, "dtype")):
            raise TypeError(f"{what}: result_shape_dtypes must be a pytree of objects with "
                            f".shape and .dtype (e.g. spmdc.ShapeDtypeStruct), got {s!r}")
        dt = np.dtype(s.dtype)
        if dtypes.canonicalize(dt) != dt:
            raise ValueError(f"{what}: result_shape_dtypes cannot specify 64-bit types "
                             f"({dt}) when x64 is disabled (SPMDC_ENABLE_X64 / "
                             "config.update('jax_enable_x64', True))")
        shapes.append(tuple(int(n) for n in s.shape))
        out_dtypes.append(dt)
    return tuple(shapes), tuple(out_dtypes)


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call a pure Python function from a transformed function (as ``jax.pure_callback``).

    ``callback(*args, **kwargs)`` gets NumPy arrays and must return a pytree of arrays
    matching ``result_shape_dtypes`` (ShapeDtypeStructs). Being pure, it may be called
    fewer or more times than it appears (dropped when unused). Under ``vmap`` it behaves
    as ``vmap_method`` says: ``'sequential'`` / ``'sequential_unrolled'`` call it once per
    batch element; ``'expand_dims'`` calls it once with the batch axis in front of batched
    arguments and a size-1 axis in front of the others; ``'broadcast_all'`` likewise but
    every argument broadcast to the batch size; ``'legacy_vectorized'`` with the batch axis
    in front of batched arguments only. Without a vmap_method, vmap is an error. It has
    no derivative: differentiate through it with custom_jvp / custom_vjp."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {list(VMAP_METHODS)}, "
                         f"got {vmap_method!r}")
    if not callable(callback):
        raise TypeError(f"pure_callback: callback must be callable, got {callback!r}")
    return stage_callback(callback, args, kwargs, result_shape_dtypes,
                          what=f"pure_callback({_describe(callback)})", kind="pure",
                          ordered=False, vmap_method=vmap_method)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                ordered: bool = False, **kwargs: Any) -> Any:
    """Call an impure Python function (as ``jax.experimental.io_callback``): never
    dropped or merged; with ``ordered=True`` its calls keep program order (and it cannot
    be vmapped). Results as for ``pure_callback``; it has no derivative."""
    if not callable(callback):
        raise TypeError(f"io_callback: callback must be callable, got {callback!r}")
    if not isinstance(ordered, bool):
        raise TypeError(f"io_callback: ordered must be a bool, got {ordered!r}")
    return stage_callback(callback, args, kwargs, result_shape_dtypes,
                          what=f"io_callback({_describe(callback)})", kind="io",
                          ordered=ordered)


def effects_barrier() -> None:
    """Wait until the effects (debug.print, debug.callback, io_callback) of every program
    launched so far have run, as ``jax.effects_barrier``. spmdc's launch of a program
    with effects already returns only after they ran (Note [host callbacks] in
    compiler/stablehlo.py), so when this is called nothing is left outstanding."""
    return None
