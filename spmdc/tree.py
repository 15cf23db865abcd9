"""spmdc.tree: the short pytree names (``jax.tree.map``, ``jax.tree.leaves`` ...), the
same functions as spmdc.tree_util under JAX's newer names."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from . import tree_util as _tu

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]

all = _tu.tree_all                          # noqa: A001
broadcast = _tu.tree_broadcast
flatten = _tu.tree_flatten
flatten_with_path = _tu.tree_flatten_with_path
leaves = _tu.tree_leaves
leaves_with_path = _tu.tree_leaves_with_path
map = _tu.tree_map                          # noqa: A001
reduce = _tu.tree_reduce
reduce_associative = _tu.tree_reduce_associative
structure = _tu.tree_structure
transpose = _tu.tree_transpose
unflatten = _tu.tree_unflatten


def map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                  is_leaf: Callable[..., bool] | None = None,
                  is_leaf_takes_path: bool = False) -> Any:
    return _tu.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf,
                                  is_leaf_takes_path=is_leaf_takes_path)


def static(**kwargs: Any) -> Any:
    """A dataclass field marked static (``metadata={'static': True}``, plus any metadata
    given), as ``register_dataclass`` reads it; the arguments are ``dataclasses.field``'s."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
