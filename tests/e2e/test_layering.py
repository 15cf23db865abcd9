"""The package layering, checked by parsing every import in spmdc (deferred ones included).

compiler/ stands alone (but for the leaves spmdc/env.py and spmdc/errors.py, which every
floor may use);
runtime/ builds on it; core/ (tracing, dtypes, pytrees, devices) builds on both and on no
user-facing namespace (numpy, lax, transforms, random, nn ...); the transforms build on
the core (their Jacobians alone on spmdc.numpy), lax on the transforms, and spmdc.numpy
on lax; jaxlib is reached only through runtime/pjrt.py
and compiler/stablehlo.py; and spmdc never imports jax.
"""
from __future__ import annotations

import ast
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2] / "spmdc"

# What each floor may import from spmdc (the libraries, random, nn, scipy ..., stand
# above these and may use any of them).
ALLOWED = {
    "compiler": {"compiler"},
    "runtime": {"runtime", "compiler"},
    "core": {"core", "runtime", "compiler"},
    "transforms": {"transforms", "core", "runtime", "compiler"},
    "lax": {"lax", "transforms", "core", "runtime", "compiler"},
    "numpy": {"numpy", "lax", "transforms", "core", "runtime", "compiler"},
}
# The one module of a floor allowed one floor above it: the Jacobians build their basis
# and blocks with spmdc.numpy, as JAX's api.py does.
EXCEPTIONS = {"transforms/jacobians.py": {"numpy"}}
JAXLIB_USERS = {"compiler/stablehlo.py", *(  # and every module of the runtime/pjrt package
    f"runtime/pjrt/{p.name}" for p in (ROOT / "runtime" / "pjrt").glob("*.py"))}
# Leaf modules that import nothing from spmdc but each other, so that every floor may use them.
LEAVES = {"env", "errors"}


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def _imports(path: Path) -> list[tuple[int, str]]:
    return _parse_imports(path.read_text(), path.relative_to(ROOT.parent))


def _parse_imports(source: str, rel: PurePosixPath | Path) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in ``source`` (the file ``rel``,
    e.g. spmdc/numpy/core.py), relative ones resolved; ``from . import x`` counts as
    importing ``package.x``."""
    package = list(rel.parts[:-1])
    out = []
    for node in ast.walk(ast.parse(source, str(rel))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            if node.module is None:
                out += [(node.lineno, f"{prefix}.{alias.name}") for alias in node.names]
            else:
                out.append((node.lineno, prefix))
    return out


def _where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _floor(module: str) -> str | None:
    """The spmdc subpackage (or top-level module) that ``module`` names, if any."""
    parts = module.split(".")
    return parts[1] if parts[0] == "spmdc" and len(parts) > 1 else None


def test_imports_resolve_to_real_modules() -> None:
    # The checker itself: every resolved spmdc import names a file or a name in one.
    for path in _modules():
        for line, module in _imports(path):
            if _floor(module) is None:
                continue
            parts = module.split(".")[1:]
            candidates = [ROOT.joinpath(*parts[:k]) for k in range(len(parts), 0, -1)]
            assert any(c.with_suffix(".py").exists() or (c / "__init__.py").exists()
                       for c in candidates), f"{_where(path)}:{line}: {module}"


@pytest.mark.parametrize("floor", sorted(ALLOWED))
def test_lower_floors_import_nothing_above_them(floor: str) -> None:
    bad = [f"{_where(p)}:{line} imports {module}"
           for p in (ROOT / floor).rglob("*.py")
           for line, module in _imports(p)
           if _floor(module) is not None and _floor(module) not in
           ALLOWED[floor] | LEAVES | EXCEPTIONS.get(_where(p), set())]
    assert not bad, f"{floor}/ may import only {sorted(ALLOWED[floor])} from spmdc:\n" \
        + "\n".join(bad)


@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_leaf_modules_import_nothing_from_spmdc(leaf: str) -> None:
    path = ROOT / f"{leaf}.py"
    bad = [f"{_where(path)}:{line} imports {module}"
           for line, module in _imports(path) if _floor(module) not in {None} | LEAVES]
    assert not bad, "\n".join(bad)


def test_jaxlib_only_in_pjrt_and_stablehlo() -> None:
    bad = [f"{_where(p)}:{line} imports {module}"
           for p in _modules() if _where(p) not in JAXLIB_USERS
           for line, module in _imports(p) if module.split(".")[0] == "jaxlib"]
    assert not bad, "jaxlib belongs to runtime/pjrt.py and compiler/stablehlo.py:\n" \
        + "\n".join(bad)


def test_spmdc_never_imports_jax() -> None:
    bad = [f"{_where(p)}:{line} imports {module}"
           for p in _modules() for line, module in _imports(p)
           if module.split(".")[0] == "jax"]
    assert not bad, "spmdc must run without jax:\n" + "\n".join(bad)


def test_checker_sees_deferred_and_relative_imports() -> None:
    source = ("from ..numpy import core as jnp\n"
              "from ..runtime.array import Array\n"
              "def f():\n    from . import tracing\n    import jax.numpy\n")
    found = [m for _, m in _parse_imports(source, PurePosixPath("spmdc/core/probe.py"))]
    assert sorted(found) == ["jax.numpy", "spmdc.core.tracing", "spmdc.numpy",
                             "spmdc.runtime.array"]
    assert _floor("spmdc.numpy.core") == "numpy" and _floor("numpy") is None
