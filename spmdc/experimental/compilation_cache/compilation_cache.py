"""``jax.experimental.compilation_cache.compilation_cache``: the persistent compilation
cache's directory (``set_cache_dir``) and a reset (``reset_cache``), on spmdc's cache
(spmdc/runtime/cache.py, Note [persistent compilation cache])."""
from __future__ import annotations

import os
from typing import Any

from ...core.config import config
from ...runtime import cache

__all__ = ["set_cache_dir", "reset_cache"]


def set_cache_dir(path: Any) -> None:
    """Keep compiled programs in the directory ``path`` (created if needed, with mode
    0700), so that a later process loads them instead of compiling them again. The
    directory is trusted: it must be this user's and writable by no one else."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"set_cache_dir: path must be a directory path, got {path!r}")
    config.update("jax_compilation_cache_dir", path)


def reset_cache() -> None:
    """Back to the state before the first compile: the cache is opened afresh (from the
    directory set, or SPMDC_CACHE_DIR) the next time a program is compiled."""
    cache.reset()
