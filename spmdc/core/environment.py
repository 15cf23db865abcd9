"""What a program asks about the process it runs in: the arrays alive on the devices
(``live_arrays``), starting copies to the host (``copy_to_host_async``), and JAX's
deprecated ``host_*`` names of the process functions.

Note [live arrays]
~~~~~~~~~~~~~~~~~~
JAX's ``live_arrays()`` asks the PJRT client for its live arrays, which in JAX are the
user's Arrays themselves. spmdc's Arrays wrap jaxlib's buffers, so the client's answer
(the buffers) would be other objects than the user's. ``live_arrays`` instead looks the
spmdc Arrays up among Python's objects (one pass, when called: nothing is added to the
path that makes an Array) and keeps those holding a buffer the client still counts as
live, one Array per buffer (the first found; internal views of a value share its
buffers), on the platform asked for.
"""
from __future__ import annotations

import gc
import warnings
from typing import Any

from ..runtime import pjrt
from ..runtime.array import Array
from .tree import tree_leaves

__all__ = ["live_arrays", "copy_to_host_async", "host_id", "host_count", "host_ids"]


def live_arrays(platform: str | None = None) -> list[Array]:
    """The Arrays alive on the devices of ``platform`` (the default platform when None),
    as ``jax.live_arrays``. See Note [live arrays]."""
    wanted = pjrt.platform_name() if platform is None else platform
    if wanted not in ("cpu", "gpu", "cuda"):
        raise RuntimeError(f"Unknown backend {platform!r}; spmdc's is "
                           f"{pjrt.platform_name()!r}")
    if (wanted == "cpu") != (pjrt.platform_name() == "cpu"):
        raise RuntimeError(f"Backend '{platform}' failed to initialize: spmdc runs one "
                           f"client, {pjrt.platform_name()!r}")
    live = {id(b) for b in pjrt.client().live_arrays()}
    seen: set[int] = set()
    out = []
    for obj in gc.get_objects():
        if type(obj) is not Array or obj.is_deleted():
            continue
        ids = [id(b) for b in obj._buffers]
        if all(i in live and i not in seen for i in ids):
            seen.update(ids)
            out.append(obj)
    return out


def copy_to_host_async(x: Any) -> Any:
    """Start copying every Array leaf of ``x`` to the host; return ``x`` (JAX's
    ``jax.copy_to_host_async``). Leaves without the method are left alone."""
    for leaf in tree_leaves(x):
        copy = getattr(leaf, "copy_to_host_async", None)
        if copy is not None:
            copy()
    return x


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"jax.{old} has been renamed to jax.{new}. This alias will eventually be "
                  "removed; please update your code.", UserWarning, stacklevel=3)


def _check_backend(backend: Any) -> None:
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"backend must be a platform name or None, got {backend!r}")


def host_id(backend: str | None = None) -> int:
    """Deprecated alias of ``process_index`` (JAX 0.10.2 still exports it)."""
    _check_backend(backend)
    _renamed("host_id", "process_index")
    return pjrt.process_index()


def host_count(backend: str | None = None) -> int:
    """Deprecated alias of ``process_count`` (JAX 0.10.2 still exports it)."""
    _check_backend(backend)
    _renamed("host_count", "process_count")
    return pjrt.process_count()


def host_ids(backend: str | None = None) -> list[int]:
    """Deprecated alias of ``process_indices`` (JAX 0.10.2 still exports it)."""
    _check_backend(backend)
    _renamed("host_ids", "process_indices")
    return list(range(pjrt.process_count()))
