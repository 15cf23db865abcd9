"""``jax.experimental.layout``: ``Layout`` and ``Format`` (defined in
spmdc/runtime/layouts.py, where the transformations that take a Format read it: Note
[formats])."""
from __future__ import annotations

from ..runtime.layouts import Format, Layout

__all__ = ["Layout", "Format"]
