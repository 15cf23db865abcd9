"""spmdc.tree: the short pytree names (``jax.tree.map``, ``jax.tree.leaves`` ...), the
same functions as spmdc.tree_util under JAX's newer names."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import tree_util as _tu

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "structure", "transpose", "unflatten"]

all = _tu.tree_all                          # noqa: A001
broadcast = _tu.tree_broadcast
flatten = _tu.tree_flatten
flatten_with_path = _tu.tree_flatten_with_path
leaves = _tu.tree_leaves
leaves_with_path = _tu.tree_leaves_with_path
map = _tu.tree_map                          # noqa: A001
reduce = _tu.tree_reduce
structure = _tu.tree_structure
transpose = _tu.tree_transpose
unflatten = _tu.tree_unflatten


def map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                  is_leaf: Callable[..., bool] | None = None) -> Any:
    return _tu.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf)
