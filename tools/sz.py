"""Lines of code per package, the number of registered primitives and the coverage of
JAX's public modules (``make sz``).

Counts non-blank lines that are not comments (docstrings count: they are read as code is),
per package: every package under spmdc/ (the namespaces numpy, lax, random, nn ..., and
transforms, core, runtime, compiler with its passes and primitives broken out), the
top-level modules, plus tests and tools for scale. Coverage: for each of JAX's modules
recorded in tests/data/jax_names.json, how many of its public names spmdc provides, and how
many tests/jax_absent_names.py lists as absent, by reason ("todo": not yet implemented).
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
    print_coverage()
    return 0


def print_coverage() -> None:
    """Per JAX module: names provided, names listed as absent (by reason), the rest."""
    import importlib.util
    sys.path.insert(0, os.path.join(ROOT, "tests"))     # the table test_coverage imports
    spec = importlib.util.spec_from_file_location(
        "test_coverage", os.path.join(ROOT, "tests", "e2e", "test_coverage.py"))
    test_coverage = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(test_coverage)
    labels = test_coverage.LABELS
    width = max(map(len, test_coverage.jax_names()))
    print(f"\n{'JAX 0.10.2 module':{width}} {'names':>5} {'spmdc':>5} {'absent':>6} "
          f"{'other':>5}  absent by reason")
    totals = [0, 0, 0, 0]
    for namespace in test_coverage.jax_names():
        provided, listed, unaccounted = test_coverage.coverage(namespace)
        reasons: dict[str, int] = {}
        for name in listed:
            label = labels[test_coverage.excluded(namespace, name)]
            reasons[label] = reasons.get(label, 0) + 1
        row = [len(provided) + len(listed) + len(unaccounted), len(provided), len(listed),
               len(unaccounted)]
        totals = [t + n for t, n in zip(totals, row, strict=True)]
        by_reason = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda t: -t[1]))
        print(f"{namespace:{width}} {row[0]:5} {row[1]:5} {row[2]:6} {row[3]:5}  {by_reason}")
    print(f"{'all ' + str(len(test_coverage.jax_names())) + ' modules':{width}} "
          f"{totals[0]:5} {totals[1]:5} {totals[2]:6} {totals[3]:5}")


if __name__ == "__main__":
    sys.exit(main())
