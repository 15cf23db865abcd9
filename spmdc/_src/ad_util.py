"""``jax._src.ad_util``: the names libraries read from JAX's private autodiff utilities,
each spmdc's own object. Lineax (``lineax/_solve.py``) registers a transpose rule for
``stop_gradient_p`` (Note [linearize and transpose] in spmdc/interpreters/ad.py says
where spmdc uses it); ``SymbolicZero`` and ``zero_from_primal`` are those of
``jax.custom_derivatives``."""
from __future__ import annotations

from ..lax import stop_gradient_p
from ..transforms.custom_derivatives import SymbolicZero, zero_from_primal

__all__ = ["stop_gradient_p", "SymbolicZero", "zero_from_primal"]
