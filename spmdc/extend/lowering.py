"""``jax.extend.lowering``: ``LoweringRuleContext``, the context a lowering rule registered
with ``jax.interpreters.mlir.register_lowering`` receives (spmdc/interpreters/mlir.py),
``JaxIrContext``, the class of the MLIR context spmdc builds its modules in, and
``upstream_dialects``, the registry of jaxlib's dialects that context loads
(compiler/stablehlo.py)."""
from __future__ import annotations

from ..compiler.stablehlo import JaxIrContext, upstream_dialects
from ..interpreters.mlir import LoweringRuleContext

__all__ = ["LoweringRuleContext", "JaxIrContext", "upstream_dialects"]
