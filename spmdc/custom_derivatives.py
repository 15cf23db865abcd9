"""spmdc.custom_derivatives: JAX's ``jax.custom_derivatives`` names."""
from .transforms.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    closure_convert,
    custom_jvp,
    custom_vjp,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_jvp", "custom_vjp",
           "custom_vjp_primal_tree_values", "zero_from_primal"]
