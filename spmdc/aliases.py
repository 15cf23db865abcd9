"""Importing spmdc's namespaces under another name.

Programs written for JAX run on spmdc after ``sys.modules['jax'] = spmdc`` (or with any
other name bound to the spmdc module). Python then resolves ``import jax.random`` by
looking for a module named ``jax.random``; without help it would find spmdc's files
through the package path and load a *second copy* of them under the new name, with its
own primitive tables and trace state, and nothing would work. The finder below answers
instead: for ``NAME.rest`` where ``sys.modules[NAME]`` is the spmdc module, it hands back
``spmdc.rest`` itself. spmdc's implementation packages (core, compiler, runtime,
transforms, ...) are not namespaces of JAX's and are not found under the alias; where
JAX has a public module of the same name, ``_RENAMED`` maps it to spmdc's module for it:
``jax.core`` is ``spmdc._src.core`` (JAX's names, on spmdc's objects), never spmdc's
private ``spmdc.core``, and so is the package's ``core`` attribute (spmdc/__init__.py
binds it, so ``from jax import core`` agrees with ``import jax.core``); spmdc's own
modules import ``spmdc.core`` by name, never through that attribute. jaxlib's C++
imports ``jax.core`` for its ShapedArray, the abstract value it gives arrays it makes:
under the alias it gets spmdc's, which has the fields it reads.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

__all__ = ["install"]

_PRIVATE = frozenset({"core", "compiler", "runtime", "transforms", "cli", "env", "aliases"})
# JAX's public modules whose spmdc module has another name (see the module docstring).
_RENAMED = {"core": "_src.core"}


class _Loader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target
        self.own_spec: Any = None

    def create_module(self, spec: Any) -> ModuleType:
        module = importlib.import_module(self.target)
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # Already imported under its own name. The import system has just set its
        # ``__spec__`` to the alias's; put its own back, or a relative import inside
        # one of its functions would see ``__package__ != __spec__.parent`` (an
        # ImportWarning, an error under ``-W error``).
        module.__spec__ = self.own_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def __init__(self, package: ModuleType):
        self.package = package

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        head, _, rest = fullname.partition(".")
        if not rest or sys.modules.get(head) is not self.package or \
                head == self.package.__name__:
            return None
        rest = _RENAMED.get(rest, rest)
        if rest.split(".")[0] in _PRIVATE:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        real = f"{self.package.__name__}.{rest}"
        if importlib.util.find_spec(real) is None:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _Loader(real))


def install(package: ModuleType) -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder(package))
