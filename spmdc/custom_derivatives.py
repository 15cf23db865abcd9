"""spmdc.custom_derivatives: JAX's ``jax.custom_derivatives`` names, with the primitives
of custom_jvp/custom_vjp calls that jaxpr rewriters key their tables on (Equinox's
``internal/_finalise_jaxpr.py``), and ``linear_call`` (a linear function with its own
transpose)."""
from .compiler.primitives.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from .transforms.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    closure_convert,
    custom_jvp,
    custom_vjp,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from .transforms.custom_gradient import custom_gradient
from .transforms.linear_call import linear_call

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient",
           "custom_jvp", "custom_vjp",
           "custom_vjp_primal_tree_values", "zero_from_primal", "custom_jvp_call_p",
           "custom_vjp_call_p", "linear_call"]
