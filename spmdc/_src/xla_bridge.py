"""``jax._src.xla_bridge`` under the alias: ``_backends``, the backends made so far
(platform name -> PJRT client; empty before the first one), which chex's
``set_n_cpu_devices`` reads to tell whether it is too late to set the CPU device count.
It is read when asked (a module ``__getattr__``), so it is the runtime's state now."""
from __future__ import annotations

from typing import Any

from ..runtime import pjrt

__all__ = ["backends_made"]


def backends_made() -> dict[str, Any]:
    """The PJRT clients made so far, by platform name (empty before the first)."""
    return {pjrt.platform_name(): pjrt.client()} if pjrt.client_exists() else {}


def __getattr__(name: str) -> Any:
    if name == "_backends":
        return backends_made()
    raise AttributeError(f"module 'jax._src.xla_bridge' has no attribute {name!r}")
