"""``jax._src.dispatch``: the one name libraries read from JAX's private dispatch module.

Equinox (``equinox/_jit.py``) takes ``wait_for_tokens`` at import to swap JAX's
``atexit`` hook for one that swallows runtime errors. In JAX it waits for the runtime
tokens of ordered effects; spmdc's launch of a program with effects returns only after
they ran, so it is ``effects_barrier``: nothing is outstanding when it is called.
"""
from __future__ import annotations

from ..callbacks import effects_barrier as wait_for_tokens

__all__ = ["wait_for_tokens"]
