"""float0 arrays at jit's boundary: as arguments, closed-over constants and results.

Note [float0 through jit]
~~~~~~~~~~~~~~~~~~~~~~~~~
A NumPy array of dtype float0 is JAX's tangent or cotangent of an integer input (jvp,
vjp and grad give them; Equinox builds them with np.zeros). It holds no data, and JAX's
jit takes one as an argument or returns one without ever giving the program a value
for it. spmdc's IR has no float0 type, so jit makes each float0 array structure: before
flattening its arguments, and its function's results, it replaces every float0 array by
a ``Float0Node``, a registered pytree node with no children whose aux data is the shape
and which unflattens to ``np.zeros(shape, float0)``. The function therefore receives
the float0 array itself (a constant, as JAX's tracer of it can only be passed on), the
shape is part of the jit key through the treedef, and a float0 result comes back as a
float0 array. A call that had one is never granted the C++ launch, whose key does not
see NumPy dtypes. Eager transformations (grad, jvp, vmap outside jit) take float0
tangents as leaves, as before.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tree import register_pytree_node, tree_flatten, tree_unflatten

float0 = np.dtype([("float0", np.void, 0)])     # spmdc.dtypes.float0 (forward.py's)

__all__ = ["Float0Node", "float0_as_structure"]


class Float0Node:
    """A float0 array's place in a tree: no children, its shape as aux data."""
    __slots__ = ("shape",)

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape


register_pytree_node(Float0Node, lambda node: ((), node.shape),
                     lambda shape, _: np.zeros(shape, float0))


def _is_float0(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == float0


def float0_as_structure(tree: Any) -> tuple[Any, bool]:
    """``tree`` with its float0 arrays as ``Float0Node``s, and whether it had one. See
    Note [float0 through jit]."""
    leaves, treedef = tree_flatten(tree)
    if not any(_is_float0(x) for x in leaves):
        return tree, False
    return tree_unflatten(treedef, [Float0Node(tuple(x.shape)) if _is_float0(x) else x
                                    for x in leaves]), True
