"""What vmap and pmap share: reading ``in_axes``/``out_axes`` against the arguments and
results of a call, and the size and per-slice types of the mapped axis.

Both map a function over one axis of some argument leaves; they differ only in what they
do with the traced per-slice program (batch it, or run it once per device). Every error
names the transformation (``op``), the argument's pytree path and the user's source line.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from ..compiler.ir import TensorType
from ..core.tracing import type_of, where
from ..core.tree import (
    broadcast_prefix,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)
from .arguments import check_array_arguments

__all__ = ["axis_spec", "mapped_leaves", "mapped_size", "slice_types", "out_dims",
           "out_paths", "shard_map_body", "in_shard_map_body", "refuse_in_shard_map_body"]


def axis_spec(spec: Any, op: str, what: str) -> Any:
    """``spec`` (an in_axes or out_axes) checked and with a top-level list as a tuple, as
    JAX accepts a list where a tuple of per-argument axes is meant."""
    spec = tuple(spec) if isinstance(spec, list) else spec
    leaves, _ = tree_flatten(spec, is_leaf=lambda x: x is None)
    for leaf in leaves:
        if leaf is not None and (not isinstance(leaf, int) or isinstance(leaf, bool)):
            raise TypeError(f"{op} {what} must be an int, None, or a (nested) tuple/list/dict "
                            f"of those; got an entry {leaf!r} of type {type(leaf).__name__}")
    return spec


def _arg_path(path: Any) -> str:
    text = keystr(path)
    # the flattened tree is (args, kwargs): show args[i] / kwargs['k']
    if text.startswith("[0]"):
        return "args" + text[3:]
    if text.startswith("[1]"):
        return "kwargs" + text[3:]
    return text


def mapped_leaves(op: str, args: tuple[Any, ...], kwargs: dict[str, Any], in_axes: Any,
                  fun_name: str = "f") -> tuple[list[Any], list[int | None], list[str]]:
    """The argument leaves, the axis each is mapped over (None: not mapped), and their
    paths. Keyword arguments are mapped over axis 0, as in JAX. A mapped leaf (for pmap,
    any leaf) that is not an array is a TypeError naming ``op``, ``fun_name`` and its path
    (Note [arguments that are not arrays] in transforms/arguments.py)."""
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError(f"{op} in_axes is a tuple of {len(in_axes)} entries but the function "
                         f"was called with {len(args)} positional arguments; in_axes must be "
                         f"an int, None, or a tuple with one entry per positional argument"
                         f"{where()}")
    path_leaves, _ = tree_flatten_with_path((args, kwargs))
    leaves = [leaf for _, leaf in path_leaves]
    paths = [_arg_path(p) for p, _ in path_leaves]
    dims = broadcast_prefix((in_axes, {k: 0 for k in kwargs}), (args, kwargs),
                            is_leaf=lambda x: x is None, what=f"{op} in_axes")
    out: list[int | None] = []
    for leaf, d, path in zip(leaves, dims, paths, strict=True):
        if d is None:
            if op != "vmap":              # vmap passes it as given (Note [unmapped arguments])
                check_array_arguments(op, fun_name, [(path, leaf)])
            out.append(None)
            continue
        try:
            t = type_of(leaf)[0]
        except TypeError:
            check_array_arguments(op, fun_name, [(path, leaf)])
            raise
        if not -t.ndim <= d < t.ndim:
            raise ValueError(
                f"{op} in_axes={d} is out of range for argument {path} of rank {t.ndim} "
                f"(shape {t.shape}); valid axes are {-t.ndim}..{t.ndim - 1}{where()}"
                if t.ndim else
                f"{op} cannot map over axis {d} of argument {path}, which is a scalar "
                f"(rank 0); use in_axes=None for it{where()}")
        out.append(d % t.ndim)
    return leaves, out, paths


def mapped_size(op: str, leaves: Sequence[Any], dims: Sequence[int | None],
                paths: Sequence[str], axis_size: int | None) -> int:
    """The size of the mapped axis, which every mapped leaf (and axis_size) must agree on."""
    sizes = {path: type_of(leaf)[0].shape[d]
             for leaf, d, path in zip(leaves, dims, paths, strict=True) if d is not None}
    if len(set(sizes.values())) > 1 or (axis_size is not None and sizes
                                        and set(sizes.values()) != {axis_size}):
        detail = ", ".join(f"{p} has size {s}" for p, s in sizes.items())
        extra = f" and axis_size={axis_size}" if axis_size is not None else ""
        raise ValueError(f"{op} got inconsistent sizes for array axes to be mapped: "
                         f"{detail}{extra}; "
                         f"every mapped argument must have the same size along its in_axes"
                         f"{where()}")
    if sizes:
        return next(iter(sizes.values()))
    if axis_size is not None:
        return axis_size
    raise ValueError(f"{op} needs at least one argument with a mapped axis (in_axes not None), "
                     f"or axis_size to give the size of the mapped axis{where()}")


def slice_types(leaves: Sequence[Any], dims: Sequence[int | None]
                ) -> tuple[list[TensorType], list[bool]]:
    """The types (and weak flags) of one slice of each leaf: the program being mapped sees
    these."""
    types, weak = [], []
    for leaf, d in zip(leaves, dims, strict=True):
        t, w = type_of(leaf)
        if d is not None:
            t = TensorType(t.shape[:d] + t.shape[d + 1:], t.dtype)
        types.append(t)
        weak.append(w)
    return types, weak


# What stands for each output leaf in the skeleton of the output pytree, which is
# flattened again to match out_axes against it: a bare ``object()``, as in JAX. A node
# class may decide which of its fields are leaves by their type when it flattens (distrax's
# Jittable keeps Python numbers as metadata and takes ``type(x) is object`` as a leaf),
# so a number here would lose leaves.
_LEAF = object()


def out_dims(op: str, out_axes: Any, out_tree: Any, out_types: Sequence[TensorType]
             ) -> list[int | None]:
    """Where each output's mapped axis goes (None: not mapped), ``out_axes`` broadcast
    over the outputs' pytree and checked against each output's rank."""
    skeleton = tree_unflatten(out_tree, [_LEAF] * out_tree.num_leaves)
    dims = broadcast_prefix(out_axes, skeleton, is_leaf=lambda x: x is None,
                            what=f"{op} out_axes")
    out: list[int | None] = []
    for d, t in zip(dims, out_types, strict=True):
        if d is not None:
            if not -(t.ndim + 1) <= d <= t.ndim:
                raise ValueError(f"{op} out_axes={d} is out of range for an output of rank "
                                 f"{t.ndim} (mapped rank {t.ndim + 1}){where()}")
            d %= t.ndim + 1
        out.append(d)
    return out


def out_paths(out_tree: Any) -> list[str]:
    """A name for each output in messages: ``output['loss']``, or ``the output``."""
    skeleton = tree_unflatten(out_tree, [_LEAF] * out_tree.num_leaves)
    paths = [keystr(p) for p, _ in tree_flatten_with_path(skeleton)[0]]
    return [f"output{p}" if p else "the output" for p in paths]


# --- reverse mode inside a shard_map body (Note [shard_map] in shard_map.py) ---------------

class _Bodies(threading.local):
    depth = 0       # how many shard_map bodies this thread is tracing


_bodies = _Bodies()


@contextlib.contextmanager
def shard_map_body() -> Iterator[None]:
    _bodies.depth += 1
    try:
        yield
    finally:
        _bodies.depth -= 1


def in_shard_map_body() -> bool:
    """Whether this thread is tracing a shard_map body (per-device or emulated)."""
    return _bodies.depth > 0


def refuse_in_shard_map_body(what: str) -> None:
    """Reverse mode inside a shard_map body would transpose collectives by pmap's
    per-device convention, not by shard_map's (Note [shard_map]): refuse it."""
    if _bodies.depth:
        raise NotImplementedError(
            f"{what} inside a shard_map body is not supported: spmdc would transpose "
            "collectives and replicated values by pmap's per-device convention (Note "
            "[collective transpose]), which gives different numbers than JAX's shard_map. "
            "Differentiate the whole shard_map instead, e.g. grad(lambda p: "
            f"shard_map(f, ...)(p, x).sum()), which is JAX's semantics{where()}")
