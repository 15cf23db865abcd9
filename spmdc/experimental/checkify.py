"""``spmdc.experimental.checkify`` (JAX's ``jax.experimental.checkify``): run-time checks
functionalized into an error value. The transformation is spmdc/transforms/checkify.py
(Note [checks as error values] in compiler/passes/checks.py).

Categories: ``user_checks``, ``nan_checks``, ``div_checks``, ``index_checks`` and their
unions ``float_checks``, ``automatic_checks`` and ``all_checks``."""
import numpy as np

from ..errors import CheckifyRuntimeError as JaxRuntimeError
from ..transforms.checkify import (
    DivisionByZeroError,
    Error,
    FailedCheckError,
    JaxException,
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

ErrorCategory = type

# JAX's initial (empty) error: no check failed (code -1, no sites, no payloads).
init_error = Error(np.int32(-1), [], ())

__all__ = ["JaxRuntimeError", "Error", "ErrorCategory", "JaxException", "FailedCheckError",
           "NaNError", "DivisionByZeroError", "OOBError", "check", "debug_check", "check_error",
           "checkify", "user_checks", "nan_checks", "div_checks", "index_checks", "float_checks",
           "automatic_checks", "all_checks", "init_error"]
