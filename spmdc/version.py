"""spmdc.version (``jax.version``): the version of JAX's API that spmdc implements, which
programs and libraries compare, and spmdc's own release.

Note [version]
~~~~~~~~~~~~~~
Programs and libraries read ``jax.__version__``, ``jax.__version_info__`` and
``jax.version.__version_info__`` to choose between JAX's APIs (``jax.__version_info__
>= (0, 4, 36)``; Flax's ``jax.version.__version_info__ > (0, 4, 25)``), and under the
alias those are spmdc's. So spmdc answers with the version of JAX's API it implements
and is tested against (spmdc/__init__.py re-exports both), and keeps its own release
number in ``__spmdc_version__`` (docs/differences_from_jax.md).
"""
from __future__ import annotations

__all__ = ["__version__", "__version_info__", "__spmdc_version__"]

_version = "0.10.2"
__version__ = _version
__version_info__ = tuple(int(part) for part in _version.split("."))
__spmdc_version__ = "0.1.0"
