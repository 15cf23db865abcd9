"""``jax._src.checkify``: the module Flax's ``nnx.checkify`` imports (``checkify``,
``Error``, ``JaxException``, ``user_checks`` and the type variable ``Out`` of its
annotations). Every name is spmdc.experimental.checkify's own object (the transformation
is spmdc/transforms/checkify.py)."""
from __future__ import annotations

from typing import TypeVar

from ..experimental.checkify import (
    DivisionByZeroError,
    Error,
    ErrorCategory,
    FailedCheckError,
    JaxException,
    JaxRuntimeError,
    NaNError,
    OOBError,
    all_checks,
    automatic_checks,
    check,
    check_error,
    checkify,
    debug_check,
    div_checks,
    float_checks,
    index_checks,
    nan_checks,
    user_checks,
)

Out = TypeVar("Out")

__all__ = ["Out", "Error", "ErrorCategory", "JaxException", "JaxRuntimeError",
           "FailedCheckError", "NaNError", "DivisionByZeroError", "OOBError", "check",
           "debug_check", "check_error", "checkify", "user_checks", "nan_checks",
           "div_checks", "index_checks", "float_checks", "automatic_checks", "all_checks"]
