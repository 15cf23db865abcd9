"""spmdc.vmap: trace the per-example function, run the batching pass, apply the result.

At top level a vmapped function is jitted (compiled once per signature); under another
transformation it is traced and the batched Func inlined. Values the function closes over
from an enclosing trace become unbatched inputs (see tracing.py).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..compiler.ir import TensorType
from ..compiler.passes import run_pass
from ..compiler.passes.vmap import BatchAxis, BatchingError, vmap_func
from .api import Jitted, _fun_name, trace_pytree
from .tracing import apply_func, current_trace, type_of, user_source
from .tree import broadcast_prefix, tree_flatten, tree_flatten_with_path, tree_unflatten

__all__ = ["vmap"]


def _where() -> str:
    source = user_source()
    return f" (at {source})" if source else ""


def _normalize_axes(in_axes: Any) -> Any:
    # JAX accepts a list where a tuple of per-argument axes is meant.
    return tuple(in_axes) if isinstance(in_axes, list) else in_axes


def _check_axis_spec(spec: Any, what: str) -> None:
    leaves, _ = tree_flatten(spec, is_leaf=lambda x: x is None)
    for leaf in leaves:
        if leaf is not None and not isinstance(leaf, int):
            raise TypeError(f"vmap {what} must be an int, None, or a (nested) tuple/list/dict "
                            f"of those; got an entry {leaf!r} of type {type(leaf).__name__}")


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_name: str | None = None, axis_size: int | None = None,
         spmd_axis_name: Any = None) -> Callable[..., Any]:
    """Vectorise ``fun`` over a new leading (or ``in_axes``) dimension, like jax.vmap."""
    if not callable(fun):
        raise TypeError(f"vmap expects a callable, got {type(fun).__name__}")
    in_axes, out_axes = _normalize_axes(in_axes), _normalize_axes(out_axes)
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")
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
                jitted.append(Jitted(batched))
            return jitted[0](*args, **kwargs)
        return _batched_call(fun, name, args, kwargs, in_axes, out_axes, axis_name, axis_size)

    return batched


def _in_dims(args: tuple[Any, ...], kwargs: dict[str, Any], in_axes: Any
             ) -> tuple[list[Any], list[int | None], list[str]]:
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError(f"vmap in_axes is a tuple of {len(in_axes)} entries but the function "
                         f"was called with {len(args)} positional arguments; in_axes must be "
                         "an int, None, or a tuple with one entry per positional argument"
                         f"{_where()}")
    path_leaves, _ = tree_flatten_with_path((args, kwargs))
    leaves = [leaf for _, leaf in path_leaves]
    paths = [_arg_path(p) for p, _ in path_leaves]
    prefix = (in_axes, {k: 0 for k in kwargs})
    dims = broadcast_prefix(prefix, (args, kwargs), is_leaf=lambda x: x is None,
                            what="vmap in_axes")
    out: list[int | None] = []
    for leaf, d, path in zip(leaves, dims, paths, strict=True):
        if d is None:
            out.append(None)
            continue
        ndim = type_of(leaf)[0].ndim
        if not -ndim <= d < ndim:
            raise ValueError(f"vmap in_axes={d} is out of range for argument {path} of rank "
                             f"{ndim} (shape {type_of(leaf)[0].shape}); valid axes are "
                             f"{-ndim}..{ndim - 1}{_where()}" if ndim else
                             f"vmap cannot map over axis {d} of argument {path}, which is a "
                             f"scalar (rank 0); use in_axes=None for it{_where()}")
        out.append(d % ndim)
    return leaves, out, paths


def _arg_path(path: Any) -> str:
    from .tree import keystr
    text = keystr(path)
    # the flattened tree is (args, kwargs): show args[i] / kwargs['k']
    if text.startswith("[0]"):
        return "args" + text[3:]
    if text.startswith("[1]"):
        return "kwargs" + text[3:]
    return text


def _batched_call(fun: Callable[..., Any], name: str, args: tuple[Any, ...],
                  kwargs: dict[str, Any], in_axes: Any, out_axes: Any,
                  axis_name: str | None, axis_size: int | None) -> Any:
    leaves, dims, paths = _in_dims(args, kwargs, in_axes)
    sizes = {path: type_of(leaf)[0].shape[d]
             for leaf, d, path in zip(leaves, dims, paths, strict=True) if d is not None}
    if len(set(sizes.values())) > 1 or (axis_size is not None and sizes
                                        and set(sizes.values()) != {axis_size}):
        detail = ", ".join(f"{p} has size {s}" for p, s in sizes.items())
        extra = f" and axis_size={axis_size}" if axis_size is not None else ""
        raise ValueError(f"vmap got inconsistent sizes for the mapped axis: {detail}{extra}"
                         f"{_where()}")
    if sizes:
        size = next(iter(sizes.values()))
    elif axis_size is not None:
        size = axis_size
    else:
        raise ValueError("vmap needs at least one argument with a mapped axis (in_axes not "
                         f"None), or axis_size to say how many to make{_where()}")
    in_types, in_weak = [], []
    for leaf, d in zip(leaves, dims, strict=True):
        t, weak = type_of(leaf)
        if d is not None:
            t = TensorType(t.shape[:d] + t.shape[d + 1:], t.dtype)
        in_types.append(t)
        in_weak.append(weak)
    axis_env = {axis_name: size} if axis_name is not None else None
    func, out_weak, captured, out_tree, _ = trace_pytree(
        fun, args, kwargs, name, in_types, in_weak, axis_env)
    out_dims = _out_dims(out_axes, out_tree, func)
    try:
        batched = run_pass("vmap", vmap_func, func, [*dims, *([None] * len(captured))],
                           BatchAxis(size, axis_name), out_dims)
    except BatchingError as error:
        if error.output is None:
            raise
        # The pass knows outputs by position; the user knows them by pytree path.
        path = _out_path(out_tree, error.output)
        raise BatchingError(f"vmap: out_axes is None for {path}, but that output depends on "
                            f"the mapped inputs; give it an integer out_axes{_where()}",
                            error.output) from None
    outs = apply_func(batched, [*leaves, *captured], out_weak)
    return tree_unflatten(out_tree, outs)


def _out_path(out_tree: Any, index: int) -> str:
    from .tree import keystr
    skeleton = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    path = keystr(tree_flatten_with_path(skeleton)[0][index][0])
    return f"output {path}" if path else "the output"


def _out_dims(out_axes: Any, out_tree: Any, func: Any) -> list[int | None]:
    skeleton = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    dims = broadcast_prefix(out_axes, skeleton, is_leaf=lambda x: x is None,
                            what="vmap out_axes")
    out: list[int | None] = []
    for d, t in zip(dims, func.out_types, strict=True):
        if d is None:
            out.append(None)
            continue
        ndim = t.ndim + 1
        if not -ndim <= d < ndim:
            raise ValueError(f"vmap out_axes={d} is out of range for an output of rank "
                             f"{t.ndim} (batched rank {ndim}){_where()}")
        out.append(d % ndim)
    return out
