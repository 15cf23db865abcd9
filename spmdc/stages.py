"""spmdc.stages: the classes of ahead-of-time compilation under JAX's names
(``jax.stages``), for the annotations and instance tests of Equinox and Flax:
``jit(f).trace(x)`` is a ``Traced``, ``.lower()`` a ``Lowered``, ``.compile()`` a
``Compiled`` (spmdc/transforms/stages.py's own classes; a Traced's ``args_info`` is a
pytree of ``ArgInfo``), and anything with
``__call__``, ``trace`` and ``lower`` (what ``jit`` returns) is a ``Wrapped``."""
from __future__ import annotations

import typing
from typing import Any, Protocol, Union

from .transforms.stages import ArgInfo, Compiled, Lowered, Traced

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

CompilerOptions = dict[str, Union[str, bool]]        # noqa: UP007  (JAX's alias)
"""The annotation of XLA compiler options (a name to a string or bool)."""


@typing.runtime_checkable
class Wrapped(Protocol):
    """A function prepared for ahead-of-time compilation, as ``jit`` returns it."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def trace(self, *args: Any, **kwargs: Any) -> Traced: ...

    def lower(self, *args: Any, **kwargs: Any) -> Lowered: ...
