"""The typed wrappers that bind cuDNN's fused-attention primitives (JAX's
``jax._src.cudnn.fused_attention_stablehlo`` binds its own; spmdc's ``nn`` binds through
``lax``). Not part of ``spmdc.lax``'s public names: ``nn.dot_product_attention`` is the
user-facing function (Note [cuDNN fused attention] in
compiler/primitives/attention_cudnn.py)."""
from __future__ import annotations

from typing import Any

from ..compiler.primitives.attention_cudnn import cudnn_attention_bwd_p, cudnn_attention_fwd_p
from ..core.tracing import bind

__all__ = ["cudnn_attention_fwd", "cudnn_attention_bwd"]


def cudnn_attention_fwd(query: Any, key: Any, value: Any, bias: Any | None,
                        lengths: tuple[Any, Any] | None, *, scale: float, mask_type: str,
                        sliding_window: int, is_training: bool) -> tuple[Any, ...]:
    """(out,) or, when training, (out, stats): the forward kernel on BTNH operands."""
    operands = [query, key, value, *([bias] if bias is not None else []), *(lengths or ())]
    return tuple(bind(cudnn_attention_fwd_p, *operands, scale=float(scale),
                      mask_type=mask_type, sliding_window=int(sliding_window),
                      is_training=bool(is_training), has_bias=bias is not None))


def cudnn_attention_bwd(query: Any, key: Any, value: Any, bias: Any | None,
                        lengths: tuple[Any, Any] | None, stats: Any, out: Any, d_out: Any, *,
                        scale: float, mask_type: str, sliding_window: int) -> tuple[Any, ...]:
    """(d_query, d_key, d_value) and d_bias when there is a bias: the backward kernel."""
    operands = [query, key, value, stats, d_out, *([bias] if bias is not None else []), out,
                *(lengths or ())]
    return tuple(bind(cudnn_attention_bwd_p, *operands, scale=float(scale),
                      mask_type=mask_type, sliding_window=int(sliding_window),
                      has_bias=bias is not None))
