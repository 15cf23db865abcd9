"""``jax.extend.backend``: the PJRT client spmdc computes with (``get_backend``,
``backends``), its default device, its XLA version, the compile options JAX compiles
with (``get_compile_options``), and dropping the programs compiled in this process
(``clear_in_memory_compilation_cache``), with a library's own caches registered to be
dropped with them (``register_backend_cache``). spmdc makes one client, for the
CPU or for CUDA (runtime/pjrt/backend.py); JAX's plugin factories
(``register_backend_factory``) and re-creating clients (``clear_backends``) are absent."""
from __future__ import annotations

from typing import Any

from ..core.devices import check_backend, default_device
from ..runtime import pjrt
from ..transforms.jit import clear_caches
from ..transforms.jit import register_cache as register_backend_cache

__all__ = ["backends", "get_backend", "get_default_device", "backend_xla_version",
           "clear_in_memory_compilation_cache", "get_compile_options",
           "register_backend_cache"]


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


def get_compile_options(num_replicas: int, num_partitions: int, device_assignment: Any = None,
                        env_options_overrides: dict[str, Any] | None = None,
                        fdo_profile: bytes | None = None, detailed_logging: bool = True,
                        backend: Any = None) -> Any:
    """jaxlib's ``CompileOptions`` for ``num_replicas`` x ``num_partitions`` devices, as
    JAX makes them: SPMD partitioning (Shardy), ``device_assignment`` (devices or ids;
    1-D when there is one partition) checked against the counts, XLA's options by name,
    an AutoFDO ``fdo_profile``, XLA's detailed logging. ``backend`` is the client the
    options are for, asked for its latest AutoFDO profile version; jaxlib's clients
    (spmdc's) have none, so the options say not to look for one, as JAX's do."""
    if backend is not None and backend is not pjrt.client():
        raise TypeError(f"get_compile_options: backend must be the client "
                        f"(jax.extend.backend.get_backend()) or None, got {backend!r}")
    for name, n in (("num_replicas", num_replicas), ("num_partitions", num_partitions)):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise TypeError(f"get_compile_options: {name} must be a positive int, got {n!r}")
    return pjrt.compile_options(num_replicas, num_partitions, device_assignment,
                                env_options_overrides, fdo_profile, detailed_logging)
