"""``jax.interpreters.pxla``: ``create_compile_options``, the compile options JAX gives
the module of a partitioned program (one replica, a partition per device) before it
compiles it: ``jax.extend.backend.get_compile_options`` with the program's device
grid, XLA's options, tupled arguments, and which parameters and outputs the
partitioner may choose the sharding of. The rest of JAX's module (its pmap machinery
and deprecated aliases) has no public name in JAX 0.10.2."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..runtime import pjrt

__all__ = ["create_compile_options"]

# A module of more operations than this compiles with XLA's detailed logging (JAX's
# jax_compiler_detailed_logging_min_ops, at its default).
DETAILED_LOGGING_MIN_OPS = 10


def _more_operations_than(operation: Any, bound: int) -> bool:
    """Whether the MLIR ``operation`` holds more than ``bound`` operations, itself
    included (the walk stops once it knows)."""
    left = bound

    def walk(op: Any) -> bool:
        nonlocal left
        left -= 1
        return left < 0 or any(walk(child) for region in op.regions for block in region
                               for child in block)
    return walk(operation)


def create_compile_options(computation: Any, tuple_args: bool,
                           allow_prop_to_inputs: Sequence[bool],
                           allow_prop_to_outputs: Sequence[bool], backend: Any,
                           np_dev: Any, compiler_options: dict[str, Any]) -> Any:
    """The compile options of the MLIR module ``computation`` partitioned over the
    devices ``np_dev`` (an array of devices; one replica, a partition per device), as
``jax.extend.backend.get_compile_options`` makes them for ``backend`` (the client):
    XLA's ``compiler_options`` by name (an ``fdo_profile`` entry is taken out of the
    dict as JAX does and becomes the AutoFDO profile), detailed logging for a module of
    more than 10 operations, arguments passed as one tuple when ``tuple_args``, and the
    partitioner allowed to choose the sharding of the parameters and outputs flagged in
    ``allow_prop_to_inputs`` and ``allow_prop_to_outputs``."""
    if backend is not None and backend is not pjrt.client():
        raise TypeError(f"create_compile_options: backend must be the client "
                        f"(jax.extend.backend.get_backend()) or None, got {backend!r}")
    operation = getattr(computation, "operation", None)
    if operation is None:
        raise TypeError(f"create_compile_options: computation must be an MLIR module "
                        f"(ir.Module), got {type(computation).__name__}")
    grid = np.asarray(np_dev, dtype=object)
    fdo_profile = compiler_options.pop("fdo_profile", None)
    options = pjrt.compile_options(
        1, grid.size, grid.reshape((1, grid.size)), compiler_options, fdo_profile,
        _more_operations_than(operation, DETAILED_LOGGING_MIN_OPS))
    options.parameter_is_tupled_arguments = bool(tuple_args)
    build = options.executable_build_options
    build.allow_spmd_sharding_propagation_to_parameters = [bool(a) for a in allow_prop_to_inputs]
    build.allow_spmd_sharding_propagation_to_output = [bool(a) for a in allow_prop_to_outputs]
    return options
