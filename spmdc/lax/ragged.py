"""lax.ragged_dot: a grouped matrix product (mixture-of-experts layers), on dot_general.

Rows ``[start_i, start_i + group_sizes[i])`` of ``lhs`` (groups taken in order, from row 0)
are multiplied by ``rhs[i]``; rows past the last group give zeros, as in JAX. spmdc builds
the row-to-group one-hot mask from ``group_sizes`` (a traced value is fine) and contracts
``lhs`` with ``rhs``, then the result with the mask (two dot_generals, in the order einsum
takes), so the value, vmap and both gradients are the products' (group_sizes, integers,
gets none). The work is that of a dense product with every
group, ``g`` times a plain matmul: exact, not fast.

``ragged_dot_general`` (other ragged modes) is not provided.
"""
from __future__ import annotations

from typing import Any

from ..core.operands import asarray, iota
from ..core.tracing import where
from .dot import dot_general
from .reductions import cumsum

__all__ = ["ragged_dot"]


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Any = None,
               out_sharding: Any = None) -> Any:
    """``(m, k) x (g, k, n) -> (m, n)``: each group of consecutive rows of ``lhs``
    (``group_sizes``, ``(g,)`` integers) times its own ``rhs[i]``."""
    if group_offset is not None:
        raise NotImplementedError(f"lax.ragged_dot: group_offset is not supported (JAX "
                                  f"0.10.2 does not implement it either){where()}")
    if out_sharding is not None:
        raise ValueError(f"lax.ragged_dot: out_sharding is not supported by spmdc; leave it "
                         f"None{where()}")
    lhs, rhs, group_sizes = asarray(lhs), asarray(rhs), asarray(group_sizes)
    if lhs.ndim != 2 or rhs.ndim != 3 or group_sizes.ndim != 1:
        raise TypeError(f"lax.ragged_dot: expected lhs (m, k), rhs (g, k, n) and group_sizes "
                        f"(g,), got shapes {lhs.shape}, {rhs.shape} and {group_sizes.shape}"
                        f"{where()}")
    if lhs.shape[1] != rhs.shape[1] or group_sizes.shape[0] != rhs.shape[0]:
        raise TypeError(f"lax.ragged_dot: shapes {lhs.shape}, {rhs.shape} and "
                        f"{group_sizes.shape} do not fit (m, k), (g, k, n), (g,){where()}")
    if group_sizes.dtype.kind not in "iu":
        raise TypeError(f"lax.ragged_dot: group_sizes must be integers, got "
                        f"{group_sizes.dtype}{where()}")
    ends = cumsum(group_sizes)
    starts = ends - group_sizes
    rows = iota(group_sizes.dtype, (lhs.shape[0], 1), 0)
    member = (rows >= starts.reshape((1, -1))) & (rows < ends.reshape((1, -1)))   # (m, g)
    # sum over k of lhs (m, k) and rhs (g, k, n), then over g with the membership mask
    products = dot_general(lhs, rhs, (((1,), (1,)), ((), ())), precision,
                           preferred_element_type)                          # (m, g, n)
    return dot_general(products, member.astype(products.dtype), (((1,), (1,)), ((0,), (0,))),
                       precision, preferred_element_type)
