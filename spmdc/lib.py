"""spmdc.lib (``jax.lib``): the version of the jaxlib spmdc runs on.

JAX 0.10.2's public ``jax.lib`` holds one name, ``__version__``: the installed jaxlib's
version string, which programs and test suites compare to skip what an old jaxlib lacks
(Equinox's ``jax.lib.__version__ == "0.4.16"``). spmdc runs on the same jaxlib, so the
string is jaxlib's own, read through the runtime's one door to it.
"""
from __future__ import annotations

from .runtime import pjrt

__all__ = ["__version__"]

__version__: str = pjrt.jaxlib_version()
