"""lax.ragged_dot: a grouped matrix product (mixture-of-experts layers), on einsum.

Rows ``[start_i, start_i + group_sizes[i])`` of ``lhs`` (groups taken in order, from row 0)
are multiplied by ``rhs[i]``; rows past the last group give zeros, as in JAX. spmdc builds
the row-to-group one-hot mask from ``group_sizes`` (a traced value is fine) and contracts
``lhs``, ``rhs`` and the mask in one einsum, so the value, vmap and both gradients are
einsum's (group_sizes, integers, gets none). The work is that of a dense product with every
group, ``g`` times a plain matmul: exact, not fast.

``ragged_dot_general`` (other ragged modes) is not provided.
"""
from __future__ import annotations

from typing import Any

__all__ = ["ragged_dot"]


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Any = None,
               out_sharding: Any = None) -> Any:
    """``(m, k) x (g, k, n) -> (m, n)``: each group of consecutive rows of ``lhs``
    (``group_sizes``, ``(g,)`` integers) times its own ``rhs[i]``."""
    from ..core.tracing import where
    from ..numpy.core import arange, asarray
    from ..numpy.einsum_impl import einsum
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
    from ..numpy.reductions import cumsum
    ends = cumsum(group_sizes)
    starts = ends - group_sizes
    rows = arange(lhs.shape[0], dtype=group_sizes.dtype)[:, None]
    member = (rows >= starts[None, :]) & (rows < ends[None, :])          # (m, g)
    return einsum("mk,gkn,mg->mn", lhs, rhs, member.astype(lhs.dtype), precision=precision,
                  preferred_element_type=preferred_element_type)
