"""``jax.extend.mlir``: StableHLO portable artifacts (versioned bytecode, what
``jax.export`` stores: ``serialize_portable_artifact``, ``deserialize_portable_artifact``),
XLA's HLO to StableHLO (``hlo_to_stablehlo``) and the shape refinement of a module
(``refine_polymorphic_shapes``), on jaxlib's MLIR bindings (through compiler/stablehlo.py)
and its serializer and converters (through runtime/pjrt/). The serializer writes CHLO
ops (``chlo.erf`` ...) as composites with their StableHLO decompositions.
``lower_with_sharding_in_types`` is what a lowering rule calls on the op giving a
result, to constrain it to the sharding the result's type carries."""
from __future__ import annotations

from typing import Any

from ..compiler.stablehlo import hlo, ir, lowering_lock, mlir_context
from ..runtime import pjrt
from ..runtime.pjrt import hlo_to_stablehlo, refine_polymorphic_shapes

__all__ = ["serialize_portable_artifact", "deserialize_portable_artifact",
           "hlo_to_stablehlo", "refine_polymorphic_shapes", "lower_with_sharding_in_types"]


def lower_with_sharding_in_types(ctx: Any, op: Any, aval: Any) -> Any:
    """``op`` (a lowering rule's result for a value of abstract value ``aval``),
    constrained to the sharding ``aval``'s type carries over explicit mesh axes. As in
    JAX, a type whose mesh is empty or has only automatic or manual axes needs none, and
    ``op`` is returned as it is (See Note [the sharding of an abstract value] in
    spmdc/core/abstract.py); one over explicit axes is refused."""
    sharding = getattr(aval, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    if mesh is None:
        raise TypeError(f"lower_with_sharding_in_types: expected an abstract value with a "
                        f"sharding (a jax.core.ShapedArray), got {aval!r}")
    if mesh.empty or mesh.are_all_axes_manual or mesh.are_all_axes_auto:
        return op
    raise ValueError(f"lower_with_sharding_in_types: {aval} carries a sharding over explicit "
                     "mesh axes, which spmdc's types do not; lower the value without it")


def serialize_portable_artifact(mlir_module: Any, target: str) -> bytes:
    """The portable artifact of a StableHLO module (an ``ir.Module``, or its text or
    bytecode) for the StableHLO version ``target`` (e.g. ``'1.0.0'``)."""
    if not isinstance(target, str):
        raise TypeError(f"serialize_portable_artifact: target must be a StableHLO version "
                        f"string such as '1.0.0', got {target!r}")
    with lowering_lock, mlir_context():
        if isinstance(mlir_module, (str, bytes, bytearray)):
            module = ir.Module.parse(mlir_module)
        elif isinstance(mlir_module, ir.Module):
            module = mlir_module
        else:
            raise TypeError(f"serialize_portable_artifact: expected an MLIR module, its "
                            f"text or its bytecode, got {type(mlir_module).__name__}")
        text = str(module)
    return pjrt.serialize_portable_artifact(text, target)


def deserialize_portable_artifact(mlir_module: bytes, context: Any = None) -> Any:
    """The StableHLO module of a portable artifact, in ``context`` (default: the current
    MLIR context, else spmdc's)."""
    if not isinstance(mlir_module, (bytes, bytearray)):
        raise TypeError(f"deserialize_portable_artifact: expected the artifact's bytes, got "
                        f"{type(mlir_module).__name__}")
    if context is None:
        context = ir.Context.current or mlir_context()
    with lowering_lock:
        return hlo.deserialize_portable_artifact(context, bytes(mlir_module))
