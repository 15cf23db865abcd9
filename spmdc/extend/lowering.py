"""``jax.extend.lowering``: ``LoweringRuleContext``, the context a lowering rule registered
with ``jax.interpreters.mlir.register_lowering`` receives (spmdc/interpreters/mlir.py)."""
from __future__ import annotations

from ..interpreters.mlir import LoweringRuleContext

__all__ = ["LoweringRuleContext"]
