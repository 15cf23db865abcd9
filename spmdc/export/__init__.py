"""``jax.export``: exporting a jit program as a serializable ``Exported`` (StableHLO
bytecode with its calling convention) and calling one, made by spmdc or by JAX 0.10.2
(Note [spmdc's exports] in spmdc/export/exported.py, Note [calling an export] in
spmdc/export/calling.py). Symbolic shapes (``symbolic_shape``, ``symbolic_args_specs``,
``SymbolicScope``) are absent: spmdc's shapes are static, so no dimension is symbolic
(``is_symbolic_dim`` says so of every dimension)."""
from __future__ import annotations

from typing import Any

from . import calling as _calling  # noqa: F401  (defines call_exported_p and its rules)
from .exported import (
    DisabledSafetyCheck,
    Exported,
    default_export_platform,
    export,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from .serialization import (
    deserialize,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)

__all__ = ["export", "Exported", "DisabledSafetyCheck", "deserialize", "default_export_platform",
           "minimum_supported_calling_convention_version",
           "maximum_supported_calling_convention_version",
           "register_pytree_node_serialization", "register_namedtuple_serialization",
           "is_symbolic_dim"]


def is_symbolic_dim(p: Any) -> bool:
    """Whether ``p`` is a symbolic dimension: never in spmdc, whose shapes are static."""
    return False
