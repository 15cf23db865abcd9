"""``jax._src.tree_util``: the names libraries read from JAX's private pytree module.
Flax's nnx graph code asks ``type(x) in _registry`` to tell pytree nodes from leaves, so
``_registry`` is spmdc's own table of node types (spmdc/core/tree.py's ``_node_types``,
builtin containers and registered classes; named tuples join it once seen); the public
names are spmdc.tree_util's."""
from __future__ import annotations

from ..core.tree import _node_types as _registry
from ..tree_util import *  # noqa: F401,F403
from ..tree_util import __all__ as _public

__all__ = [*_public, "_registry"]
