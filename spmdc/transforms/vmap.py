"""spmdc.vmap: trace the per-example function, run the batching pass, apply the result.

At top level a vmapped function is jitted (compiled once per signature); under another
transformation it is traced and the batched Func inlined. Values the function closes over
from an enclosing trace become unbatched inputs (see tracing.py).
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from ..compiler.passes import run_pass
from ..compiler.passes.vmap import BatchAxis, BatchingError, vmap_func
from ..core.pytree_tracing import fun_name as _fun_name
from ..core.pytree_tracing import trace_pytree
from ..core.tracing import apply_func, current_trace, where
from ..core.tree import tree_unflatten
from ..tracebacks import api_boundary
from .jit import Jitted, eager_jit
from .mapping import axis_spec, mapped_leaves, mapped_size, out_dims, out_paths, slice_types

__all__ = ["vmap", "batching"]


class _Batching(threading.local):
    depth = 0           # how many vmaps this thread is tracing a function for


_batching = _Batching()


def batching() -> bool:
    """Whether this thread is tracing a function that vmap will batch (a program's
    shapes are then larger than the ones being traced)."""
    return _batching.depth > 0


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_name: str | None = None, axis_size: int | None = None,
         spmd_axis_name: Any = None) -> Callable[..., Any]:
    """Vectorise ``fun`` over a new leading (or ``in_axes``) dimension, like jax.vmap.

    ``spmd_axis_name`` only tells JAX's partitioner how to shard the batch dimension; it
    does not change any value, and spmdc does not partition vmapped code, so it is checked
    (a name or a tuple of names) and has no other effect."""
    if spmd_axis_name is not None and not (
            isinstance(spmd_axis_name, str) or (isinstance(spmd_axis_name, tuple) and all(
                isinstance(n, str) for n in spmd_axis_name))):
        raise TypeError(f"vmap: spmd_axis_name must be an axis name or a tuple of names, got "
                        f"{spmd_axis_name!r}")
    if not callable(fun):
        raise TypeError(f"vmap expects a callable, got {type(fun).__name__}")
    in_axes = axis_spec(in_axes, "vmap", "in_axes")
    out_axes = axis_spec(out_axes, "vmap", "out_axes")
    if not (in_axes is None or isinstance(in_axes, int | tuple)):
        # Like JAX: a top-level container other than a tuple is almost always meant as the
        # axes of a single container argument, which needs wrapping in a tuple.
        raise TypeError("vmap in_axes must be an int, None, or a tuple with one entry per "
                        f"positional argument; got a {type(in_axes).__name__}. For the axes "
                        "of a single container argument, wrap it: in_axes=(spec,)")
    name = _fun_name(fun)
    jitted: list[Jitted] = []

    @functools.wraps(fun)
    def batched(*args: Any, **kwargs: Any) -> Any:
        if current_trace() is None:            # top level: compile the whole batched program
            if not jitted:
                jitted.append(eager_jit(batched))
            return jitted[0](*args, **kwargs)
        return _batched_call(fun, name, args, kwargs, in_axes, out_axes, axis_name, axis_size)

    return api_boundary(batched)       # See Note [library frames] (errors.py)


def _batched_call(fun: Callable[..., Any], name: str, args: tuple[Any, ...],
                  kwargs: dict[str, Any], in_axes: Any, out_axes: Any,
                  axis_name: str | None, axis_size: int | None) -> Any:
    leaves, dims, paths = mapped_leaves("vmap", args, kwargs, in_axes)
    size = mapped_size("vmap", leaves, dims, paths, axis_size)
    in_types, in_weak = slice_types(leaves, dims)
    axis_env = {axis_name: size} if axis_name is not None else None
    # an unmapped input's value is known where the enclosing trace knows it; a mapped
    # one's is not (Note [concrete values while tracing] in core/concrete.py)
    sources = [leaf if d is None else None for leaf, d in zip(leaves, dims, strict=True)]
    _batching.depth += 1
    try:
        func, out_weak, captured, out_tree, _ = trace_pytree(
            fun, args, kwargs, name, in_types, in_weak, axis_env, concrete=True,
            sources=sources)
    finally:
        _batching.depth -= 1
    dims_out = out_dims("vmap", out_axes, out_tree, func.out_types)
    try:
        batched = run_pass("vmap", vmap_func, func, [*dims, *([None] * len(captured))],
                           BatchAxis(size, axis_name), dims_out)
    except BatchingError as error:
        if error.output is None:
            raise
        # The pass knows outputs by position; the user knows them by pytree path.
        path = out_paths(out_tree)[error.output]
        raise BatchingError(f"vmap: out_axes is None for {path}, but that output depends on "
                            f"the mapped inputs; give it an integer out_axes{where()}",
                            error.output) from None
    outs = apply_func(batched, [*leaves, *captured], out_weak)
    return tree_unflatten(out_tree, outs)
