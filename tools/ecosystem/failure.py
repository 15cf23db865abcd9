"""How tools/ecosystem.py names a failure: the first line of the exception at its root,
and the library line that ran into it. Shared by the import probe and the pytest plugin,
which run inside the two test environments (JAX's and spmdc's)."""
from __future__ import annotations

import os
import re
import sysconfig
import traceback

_STDLIB = sysconfig.get_paths()["stdlib"]
# Frames in these packages are the machinery, not the library that needed something:
# the deepest frame outside them is the line to report.
_MACHINERY = re.compile(r"[/\\](spmdc|jax|jaxlib|_pytest|pluggy|absl|beartype|jaxtyping|"
                        r"typeguard|importlib|_distutils_hack|tools[/\\]ecosystem)[/\\]")


def root_cause(exc: BaseException) -> BaseException:
    """The original exception behind ``raise ... from`` and pytest's collection wrapper
    (which keeps it as the context of a ``CollectError``)."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        inner = exc.__cause__
        if inner is None and type(exc).__name__ == "CollectError":
            inner = exc.__context__
        if inner is None:
            break
        exc = inner
    return exc


def first_line(exc: BaseException) -> str:
    """``Type: message``, first line only, at most 300 characters."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def library_frame(exc: BaseException) -> str:
    """``package/module.py:line`` of the deepest frame that is the library's (or its
    tests'), or the empty string when every frame is machinery."""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = frame.filename
        if path.startswith("<") or _MACHINERY.search(path):
            continue
        if path.startswith(_STDLIB) and "site-packages" not in path:
            continue
        where = f"{short_path(path)}:{frame.lineno}"
    return where


def short_path(path: str) -> str:
    """A library file from its package down; a test file from its source tree down."""
    for marker in ("site-packages/", "/src/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            return path.split("/", 1)[1] if marker == "/src/" else path
    return os.path.relpath(path)
