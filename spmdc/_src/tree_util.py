"""``jax._src.tree_util``: the names libraries read from JAX's private pytree module.
Flax's nnx graph code asks ``type(x) in _registry`` to tell pytree nodes from leaves, so
``_registry`` is spmdc's own table of node types (spmdc/core/tree.py's ``_node_types``,
builtin containers and registered classes; named tuples join it once seen) as users see
it: typed key arrays are leaves there (Note [array nodes] in spmdc/core/tree.py); the
public names are spmdc.tree_util's."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..core.tree import _array_nodes, _node_types
from ..tree_util import *  # noqa: F401,F403
from ..tree_util import __all__ as _public


class _UserRegistry(Mapping[type, Any]):
    """A live read-only view of ``_node_types`` without the array nodes."""

    def __getitem__(self, kind: type) -> Any:
        if kind in _array_nodes:
            raise KeyError(kind)
        return _node_types[kind]

    def __contains__(self, kind: object) -> bool:
        return kind in _node_types and kind not in _array_nodes

    def __iter__(self) -> Iterator[type]:
        return (k for k in list(_node_types) if k not in _array_nodes)

    def __len__(self) -> int:
        return sum(1 for _ in self)


_registry = _UserRegistry()

__all__ = [*_public, "_registry"]
