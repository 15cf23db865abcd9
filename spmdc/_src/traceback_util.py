"""``jax._src.traceback_util``: the traceback filtering that Flax and Equinox drive
(``register_exclusion(__file__)`` at import, ``api_boundary`` on their entry points,
``include_frame`` and ``_exclude_paths`` read directly). Every name is spmdc's own object
in spmdc/errors.py (the excluded paths; Note [library frames] there) or
spmdc/tracebacks.py (the boundaries), so a path a library registers here is left out of
spmdc's tracebacks and messages too."""
from __future__ import annotations

from ..errors import (
    UnfilteredStackTrace,
    _exclude_paths,
    include_filename,
    include_frame,
    register_exclusion,
)
from ..tracebacks import api_boundary

__all__ = ["register_exclusion", "api_boundary", "include_frame", "include_filename",
           "UnfilteredStackTrace", "_exclude_paths"]
