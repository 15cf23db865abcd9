"""``jax.extend.source_info_util``: ``register_exclusion(path)``, which Flax calls for its
files so that the line a message names is the user's and not Flax's. spmdc's
``user_source()`` skips the registered paths (Note [library frames] in spmdc/errors.py)."""
from __future__ import annotations

from ..errors import register_source_exclusion as register_exclusion

__all__ = ["register_exclusion"]
