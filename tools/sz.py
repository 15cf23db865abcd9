"""Lines of code per package and the number of registered primitives (``make sz``).

Counts non-blank lines that are not comments (docstrings count: they are read as code is),
per package: spmdc/frontend, spmdc/compiler (with its passes and primitives broken out),
spmdc/runtime and the CLI, plus tests and tools for scale.
"""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

PACKAGES = [
    ("spmdc/frontend", "spmdc/frontend"),
    ("spmdc/compiler", "spmdc/compiler"),
    ("  of which passes", "spmdc/compiler/passes"),
    ("  of which primitives", "spmdc/compiler/primitives"),
    ("spmdc/runtime", "spmdc/runtime"),
    ("spmdc/cli", "spmdc/cli.py"),
    ("spmdc/__init__", "spmdc/__init__.py"),
    ("tests", "tests"),
    ("tools", "tools"),
]


def python_files(path: str) -> list[str]:
    full = os.path.join(ROOT, path)
    if os.path.isfile(full):
        return [full]
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
    for label, path in PACKAGES:
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
