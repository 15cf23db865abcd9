"""``jax.extend.xla``: custom passes over XLA's HLO module, run by XLA during every
compile (``register_hlo_module_transformation``, ``clear_hlo_module_transformation``),
through jaxlib's registry (runtime/pjrt/compilation.py): in this process for the CPU, on
the plugin's client for CUDA."""
from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

from ..runtime import pjrt

__all__ = ["PipelineStage", "register_hlo_module_transformation",
           "clear_hlo_module_transformation"]


class PipelineStage(enum.Enum):
    """Where in XLA's pipeline a transformation runs."""
    PRE_SCHEDULER = 0
    POST_SCHEDULER = 1


def _platforms(platforms: Sequence[str] | str | None, what: str) -> list[str]:
    running = pjrt.platform_wanted()
    if platforms is None:
        return list(dict.fromkeys(["cpu", running]))
    names = [platforms] if isinstance(platforms, str) else list(dict.fromkeys(platforms))
    for p in names:
        if p not in ("cpu", running):
            raise ValueError(f"{what}: spmdc compiles for cpu and for the platform it runs "
                             f"on ({running}); platforms={platforms!r} names {p!r}")
    return names


def _stage(stage: PipelineStage, what: str) -> int:
    if not isinstance(stage, PipelineStage):
        raise TypeError(f"stage must be a PipelineStage enum, got {type(stage)} ({what})")
    return stage.value


def register_hlo_module_transformation(
        callback: Callable[[bytes], bytes | None], *, name: str,
        stage: PipelineStage = PipelineStage.PRE_SCHEDULER,
        platforms: Sequence[str] | str | None = None) -> None:
    """Run ``callback`` on the serialized HloModuleProto of every program compiled from
    now on, at ``stage``: it returns the changed module's bytes, or None to keep it.
    ``platforms``: 'cpu' and/or the platform spmdc runs on (default: both)."""
    what = "register_hlo_module_transformation"
    stage_number = _stage(stage, what)
    for platform in _platforms(platforms, what):
        pjrt.register_hlo_transform(name, stage_number, callback, platform)


def clear_hlo_module_transformation(
        name: str, stage: PipelineStage = PipelineStage.PRE_SCHEDULER,
        platforms: Sequence[str] | str | None = None) -> bool:
    """Remove the transformation registered as ``name`` at ``stage``; whether one was."""
    what = "clear_hlo_module_transformation"
    stage_number = _stage(stage, what)
    found = False
    for platform in _platforms(platforms, what):
        found |= pjrt.clear_hlo_transform(name, stage_number, platform)
    return found
