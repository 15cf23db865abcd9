"""``jax.extend.backend``: the PJRT client spmdc computes with (``get_backend``,
``backends``), its default device, its XLA version, and dropping the programs compiled
in this process (``clear_in_memory_compilation_cache``). spmdc makes one client, for the
CPU or for CUDA (runtime/pjrt/backend.py); JAX's plugin factories
(``register_backend_factory``) and re-creating clients (``clear_backends``) are absent."""
from __future__ import annotations

from typing import Any

from ..core.devices import check_backend, default_device
from ..runtime import pjrt
from ..transforms.jit import clear_caches

__all__ = ["backends", "get_backend", "get_default_device", "backend_xla_version",
           "clear_in_memory_compilation_cache"]


def backends() -> dict[str, Any]:
    """The clients by platform name (``{'cpu': client}``, or ``{'cuda': client}``)."""
    client = pjrt.client()
    return {client.platform: client}


def get_backend(platform: Any = None) -> Any:
    """The client for ``platform`` (None: the default; a client is returned as it is);
    another platform's name is a RuntimeError, as in JAX."""
    if platform is None or not isinstance(platform, str):
        if platform is not None and platform is not pjrt.client():
            raise TypeError(f"get_backend: platform must be a platform name, a client or "
                            f"None, got {platform!r}")
        return pjrt.client()
    check_backend("get_backend", platform)
    return pjrt.client()


def get_default_device() -> Any:
    """The device computations run on when nothing says otherwise."""
    return default_device()


def backend_xla_version(platform: Any = None) -> int | None:
    """The XLA version a PJRT plugin declares (None for jaxlib's built-in clients)."""
    return getattr(get_backend(platform), "xla_version", None)


def clear_in_memory_compilation_cache() -> None:
    """Drop the programs compiled in this process: later calls compile again (the
    persistent cache on disk is kept)."""
    clear_caches()
