"""spmdc.image: JAX's ``jax.image``, resampling images (``resize``,
``scale_and_translate``, ``ResizeMethod``), in spmdc/image/scale.py."""
from __future__ import annotations

from .scale import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
