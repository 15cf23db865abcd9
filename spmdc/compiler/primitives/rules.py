"""Rule builders shared by several primitive families (batching of elementwise ops)."""
from __future__ import annotations

from typing import Any

from ..passes.vmap import BatchRule, broadcast_batch, move_axis

__all__ = ["elementwise_batch_rule"]


def elementwise_batch_rule(prim: Any) -> BatchRule:
    """Batch dim to the front of batched operands; unbatched operands of full rank get a
    broadcast batch dim; rank-0 unbatched operands stay scalars."""
    def rule(b, axis, args, dims, **params):
        logical = [a.type.shape if d is None else a.type.shape[:d] + a.type.shape[d + 1:]
                   for a, d in zip(args, dims, strict=True)]
        out_shape = next((s for s in logical if s), ())
        new = []
        for a, d in zip(args, dims, strict=True):
            if d is None:
                new.append(a if a.type.ndim == 0 else broadcast_batch(b, a, axis.size, 0))
                continue
            a = move_axis(b, a, d, 0)
            if a.type.ndim == 1 and out_shape:                 # a batched scalar
                a = b.broadcast_in_dim(a, shape=(axis.size, *out_shape),
                                       broadcast_dimensions=(0,))
            new.append(a)
        out = b.bind(prim, *new, **params)
        outs = out if prim.multiple_results else [out]
        return list(outs), [0] * len(outs)
    return rule
