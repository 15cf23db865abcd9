"""The typed wrapper that binds cuDNN's fused-attention forward primitive, whose VJP rule
binds the backward one (JAX's ``jax._src.cudnn.fused_attention_stablehlo`` binds its own;
spmdc's ``nn`` binds through ``lax``). Not part of ``spmdc.lax``'s public names:
``nn.dot_product_attention`` is the user-facing function (Note [cuDNN fused attention] in
compiler/primitives/attention_cudnn.py)."""
from __future__ import annotations

from typing import Any

from ..compiler.primitives.attention_cudnn import cudnn_attention_fwd_p
from ..core.tracing import bind

__all__ = ["cudnn_attention_fwd"]


def cudnn_attention_fwd(query: Any, key: Any, value: Any, bias: Any | None,
                        lengths: tuple[Any, Any] | None, *, scale: float, mask_type: str,
                        sliding_window: int) -> tuple[Any, Any]:
    """(out, stats): the forward kernel on BTNH operands; the stats, (B, N, T) float32, are
    dropped from the program when unused (Note [one cuDNN forward when differentiated])."""
    operands = [query, key, value, *([bias] if bias is not None else []), *(lengths or ())]
    out, stats = bind(cudnn_attention_fwd_p, *operands, scale=float(scale),
                      mask_type=mask_type, sliding_window=int(sliding_window),
                      is_training=True, has_bias=bias is not None)
    return out, stats

