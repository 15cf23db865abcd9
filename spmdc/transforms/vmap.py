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
from ..core.explicit_sharding import Sliced
from ..core.pytree_tracing import fun_name as _fun_name
from ..core.pytree_tracing import trace_pytree
from ..core.tracer_text import TracerView
from ..core.tracing import apply_func, current_trace, where
from ..core.tree import tree_leaves, tree_structure, tree_unflatten
from ..tracebacks import api_boundary
from .arguments import checking_results, wraps_leniently
from .jit import Jitted, _display_name, eager_jit
from .mapping import axis_spec, mapped_leaves, mapped_size, out_dims, out_paths, slice_types
from .refs import _RefsFound, has_refs, refs_scoped, vmap_with_refs

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
    plain = _plain_vmap(refs_scoped(fun), name, in_axes, out_axes, axis_name, axis_size)

    @wraps_leniently(fun)
    def batched(*args: Any, **kwargs: Any) -> Any:
        # Refs passed in or written are threaded: Note [refs as threaded state]
        def remap(pure: Callable[..., Any], ref_axes: list[Any]) -> Callable[..., Any]:
            return _plain_vmap(pure, name, in_axes, (out_axes, ref_axes), axis_name,
                               axis_size)
        if has_refs((args, kwargs)):
            return vmap_with_refs(fun, name, args, kwargs, in_axes, remap)
        try:
            return plain(*args, **kwargs)
        except _RefsFound:
            return vmap_with_refs(fun, name, args, kwargs, in_axes, remap)

    return api_boundary(batched)       # See Note [library frames] (errors.py)


def _plain_vmap(fun: Callable[..., Any], name: str, in_axes: Any, out_axes: Any,
                axis_name: str | None, axis_size: int | None) -> Callable[..., Any]:
    """``fun`` vectorised (its arguments holding no refs)."""
    jitted: list[Jitted] = []
    unmapping = any(d is None for d in tree_leaves(in_axes, is_leaf=lambda d: d is None))
    shown = _display_name(fun)       # See Note [arguments that are not arrays]
    checked = checking_results("vmap", fun, shown)

    @wraps_leniently(fun)
    def plain(*args: Any, **kwargs: Any) -> Any:
        if current_trace() is None:            # top level: compile the whole batched program
            if unmapping:                      # See Note [unmapped arguments]
                leaves, dims, _ = mapped_leaves("vmap", args, kwargs, in_axes, shown)
                if None in dims:
                    return _top_level_with_unmapped(plain, args, kwargs, leaves, dims)
            if not jitted:
                jitted.append(eager_jit(plain))
            try:
                return jitted[0](*args, **kwargs)
            except TypeError:                  # an argument that is not an array?
                mapped_leaves("vmap", args, kwargs, in_axes, shown)
                raise
        return _batched_call(checked, name, args, kwargs, in_axes, out_axes, axis_name,
                             axis_size, unmapped_as_given=True)
    return plain


# Note [unmapped arguments]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# An argument leaf that ``in_axes`` does not map (None) reaches the function as it was
# given, as in JAX: a Python int stays an int, so the function may use it as a shape or a
# loop bound, even when vmap runs inside ``jit(..., static_argnums=...)``; a Tracer of an
# enclosing trace stays that Tracer. Only the mapped leaves are the traced function's
# inputs; an unmapped value the function computes with is captured as any closed-over
# value is (core/tracing.py), which the batching pass treats as not batched. At top level
# vmap runs as a jit of the call (Note [eager transformations trace every call] in
# eager.py), whose arguments would be traced: a call with unmapped leaves is a jit of a
# function of its mapped leaves alone, closing over the others. pmap under a trace,
# which has vmap's semantics, keeps its arguments traced, as JAX's pmap does.

def _top_level_with_unmapped(batched: Callable[..., Any], args: tuple[Any, ...],
                             kwargs: dict[str, Any], leaves: list[Any],
                             dims: list[int | None]) -> Any:
    """``batched(*args, **kwargs)`` at top level, with only the mapped leaves traced (Note
    [unmapped arguments])."""
    treedef = tree_structure((args, kwargs))

    def of_mapped(*mapped: Any) -> Any:
        a, k = tree_unflatten(treedef, _with_mapped(leaves, dims, mapped))
        return batched(*a, **k)

    functools.update_wrapper(of_mapped, batched)
    return eager_jit(of_mapped)(*[leaf for leaf, d in zip(leaves, dims, strict=True)
                                  if d is not None])


def _with_mapped(leaves: list[Any], dims: list[int | None], mapped: Any) -> list[Any]:
    """``leaves`` with the mapped ones (``dims`` not None) replaced by ``mapped``, in order."""
    replacements = iter(mapped)
    full = [next(replacements) if d is not None else leaf
            for leaf, d in zip(leaves, dims, strict=True)]
    assert next(replacements, None) is None
    return full


def _batched_call(fun: Callable[..., Any], name: str, args: tuple[Any, ...],
                  kwargs: dict[str, Any], in_axes: Any, out_axes: Any,
                  axis_name: str | None, axis_size: int | None,
                  unmapped_as_given: bool = False) -> Any:
    """``fun`` batched under the current trace; ``unmapped_as_given``: unmapped leaves
    reach ``fun`` as given (vmap, Note [unmapped arguments]), else as traced inputs."""
    leaves, dims, paths = mapped_leaves("vmap", args, kwargs, in_axes, _display_name(fun))
    size = mapped_size("vmap", leaves, dims, paths, axis_size)
    axis_env = {axis_name: size} if axis_name is not None else None
    if unmapped_as_given:
        treedef = tree_structure((args, kwargs))
        traced_dims = [d for d in dims if d is not None]
        traced_leaves = [leaf for leaf, d in zip(leaves, dims, strict=True) if d is not None]

        def traced_fun(*mapped: Any) -> Any:
            a, k = tree_unflatten(treedef, _with_mapped(leaves, dims, mapped))
            return fun(*a, **k)

        traced_args: tuple[Any, ...] = tuple(traced_leaves)
        traced_kwargs: dict[str, Any] = {}
    else:
        traced_fun, traced_args, traced_kwargs = fun, args, kwargs
        traced_leaves, traced_dims = leaves, dims
    in_types, in_weak = slice_types(traced_leaves, traced_dims)
    # an unmapped input's value is known where the enclosing trace knows it; a mapped
    # one's is not (Note [concrete values while tracing] in core/concrete.py)
    sources = [leaf if d is None else None
               for leaf, d in zip(traced_leaves, traced_dims, strict=True)]
    _batching.depth += 1
    try:
        func, out_weak, captured, out_tree, _ = trace_pytree(
            traced_fun, traced_args, traced_kwargs, name, in_types, in_weak, axis_env,
            concrete=True, sources=sources, view=TracerView("vmap", tuple(traced_dims), size),
            typed_by=[leaf if d is None else Sliced(leaf, d)   # See Note [shardings in types]
                      for leaf, d in zip(traced_leaves, traced_dims, strict=True)],
            constrain=False)
    finally:
        _batching.depth -= 1
    leaves, dims = traced_leaves, traced_dims
    dims_out = out_dims("vmap", out_axes, out_tree, func.out_types)
    try:
        batched = run_pass("vmap", vmap_func, func, [*dims, *([None] * len(captured))],
                           BatchAxis(size, axis_name), dims_out)
    except BatchingError as error:
        if error.output is None:
            raise
        # The pass knows outputs by position; the user knows them by pytree path.
        # JAX's words first, which programs match; its path is the out_axes' key path.
        path = out_paths(out_tree)[error.output]
        keys = path[len("output"):] if path.startswith("output") else ""
        raise BatchingError(f"vmap: at vmap out_axes{keys}, got axis spec None but output "
                            f"was batched on axis {error.batched_axis} ({path} depends on "
                            f"the mapped inputs; give it an integer out_axes){where()}",
                            error.output, error.batched_axis) from None
    outs = apply_func(batched, [*leaves, *captured], out_weak)
    return tree_unflatten(out_tree, outs)
