"""Lines of code per package and the number of registered primitives (``make sz``).

Counts non-blank lines that are not comments (docstrings count: they are read as code is),
per package: every package under spmdc/ (the namespaces numpy, lax, random, nn ..., and
transforms, core, runtime, compiler with its passes and primitives broken out), the
top-level modules, plus tests and tools for scale.
"""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def packages() -> list[tuple[str, str]]:
    """(label, path): each package under spmdc/ (compiler's passes and primitives broken
    out), then spmdc's top-level modules together, then tests and tools."""
    spmdc = os.path.join(ROOT, "spmdc")
    names = sorted(n for n in os.listdir(spmdc)
                   if os.path.isfile(os.path.join(spmdc, n, "__init__.py")))
    out = []
    for name in names:
        out.append((f"spmdc/{name}", f"spmdc/{name}"))
        if name == "compiler":
            out += [("  of which passes", "spmdc/compiler/passes"),
                    ("  of which primitives", "spmdc/compiler/primitives")]
    out.append(("spmdc/*.py", "spmdc/*.py"))
    return out + [("tests", "tests"), ("tools", "tools")]


def python_files(path: str) -> list[str]:
    full = os.path.join(ROOT, path)
    if path.endswith("/*.py"):                      # the modules directly in a folder
        folder = os.path.dirname(full)
        return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".py"))
    out = []
    for folder, _, names in os.walk(full):
        out += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    return sorted(out)


def count(files: list[str]) -> tuple[int, int]:
    """(lines of code, all lines)."""
    code = total = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                total += 1
                stripped = line.strip()
                if stripped and not stripped.startswith("#"):
                    code += 1
    return code, total


def main() -> int:
    print(f"{'package':24} {'files':>5} {'code':>7} {'lines':>7}")
    library = 0
    for label, path in packages():
        files = python_files(path)
        code, total = count(files)
        if path.startswith("spmdc") and not label.startswith(" "):
            library += code
        print(f"{label:24} {len(files):5} {code:7} {total:7}")
    print(f"{'spmdc total':24} {'':5} {library:7}")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import spmdc.compiler  # noqa: F401  (registers every primitive)
    from spmdc.compiler.primitives.core import registry
    print(f"registered primitives: {len(registry)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
