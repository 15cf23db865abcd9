"""Rank promotion: whether jnp's elementwise functions may combine operands of different
ranks, JAX's option ``jax_numpy_rank_promotion`` (``'allow'``, ``'warn'`` or
``'raise'``), set with ``config.update`` or the ``numpy_rank_promotion`` context manager
(spmdc/core/config.py). See Note [rank promotion]."""
from __future__ import annotations

import warnings
from collections.abc import Sequence

__all__ = ["MODES", "mode", "set_mode", "check"]

# Note [rank promotion]
# ~~~~~~~~~~~~~~~~~~~~~
# NumPy broadcasting lets an elementwise function combine operands of different ranks,
# the lower-rank ones taking leading axes of size 1. Code that means to combine arrays
# of one rank can ask, as with JAX, to be told when that happens: under 'warn' a
# UserWarning, under 'raise' a ValueError, both with JAX's wording, naming the function
# and the shapes. As in JAX, scalars (rank 0) are never counted: only operands of two or
# more different nonzero ranks are rank promotion. The check runs where jnp broadcasts
# the operands of an elementwise function (as in JAX, not ``where``'s, which broadcasts
# its three operands as ``broadcast_arrays`` does), that is while tracing; so the
# mode is part of jit's and pmap's cache keys, and while it is not 'allow' every call
# takes the Python path (Note [config on the hot path] in core/config.py), so a program
# traced under 'allow' is not reused. It is process-wide, as the promotion mode is.

MODES = ("allow", "warn", "raise")
_mode = ["allow"]


def mode() -> str:
    """'allow', 'warn' or 'raise' (See Note [rank promotion])."""
    return _mode[0]


def set_mode(value: object) -> str:
    """Set the rank promotion mode; returns the previous one."""
    if value not in MODES:
        raise ValueError(f"jax_numpy_rank_promotion takes 'allow', 'warn' or 'raise', got "
                         f"{value!r}")
    previous, _mode[0] = _mode[0], str(value)
    return previous


def check(op: str, shapes: Sequence[tuple[int, ...]]) -> None:
    """Warn or raise, as the mode says, when ``op`` broadcasts ``shapes`` of two or
    more different nonzero ranks (See Note [rank promotion])."""
    if _mode[0] == "allow" or len({len(s) for s in shapes if s}) < 2:
        return
    listed = " ".join(str(tuple(s)) for s in shapes)
    if _mode[0] == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {op} on shapes "
                      f"{listed}. Set the jax_numpy_rank_promotion config option to "
                      "'allow' to disable this warning.", stacklevel=3)
    else:
        raise ValueError(f"Operands could not be broadcast together for {op} on shapes "
                         f"{listed} and with the config option "
                         "jax_numpy_rank_promotion='raise'. Combine arrays of one rank "
                         "(add the leading axes with x[None] or jnp.expand_dims) or "
                         "set the option to 'allow'.")
