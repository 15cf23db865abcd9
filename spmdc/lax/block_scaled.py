"""The typed wrapper that binds the block-scaled matmul primitive (Note [block-scaled
matmul] in compiler/primitives/scaled_matmul.py); spmdc's ``nn`` binds through ``lax``.
Not part of ``spmdc.lax``'s public names: ``nn.scaled_matmul`` is the user-facing
function."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiler.primitives.scaled_matmul import scaled_matmul_p
from ..core.tracing import bind

__all__ = ["block_scaled_matmul"]


def block_scaled_matmul(lhs: Any, rhs: Any, lhs_scales: Any, rhs_scales: Any,
                        preferred_element_type: np.dtype) -> Any:
    """(B, M, N): ``lhs`` (B, M, K) by ``rhs`` (B, N, K), each element times its block's
    scale, contracting K in float32."""
    return bind(scaled_matmul_p, lhs, rhs, lhs_scales, rhs_scales,
                preferred_element_type=np.dtype(preferred_element_type))
