"""``jax._src.compiler`` under the alias: ``backend_compile_and_load``, the one call
every compilation goes through, which chex's ``restrict_backends`` replaces to refuse
compiling for a platform (Note [the compile hook] in spmdc/runtime/executable.py)."""
from __future__ import annotations

import sys

from ..runtime import executable
from ..runtime.executable import backend_compile_and_load

__all__ = ["backend_compile_and_load"]

executable.set_compile_hooks(sys.modules[__name__])
