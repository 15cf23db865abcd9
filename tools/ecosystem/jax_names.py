"""``python jax_names.py PACKAGE ...``, run inside one of the test environments by
tools/ecosystem.py: every name of JAX's that the packages' own source files (tests left
out) refer to, and whether it resolves here. Prints one JSON object: name -> ``{"ok",
"failure", "uses", "where"}`` (up to three ``file:line``).

The names are read from the syntax trees, not by running the code, so one missing
name does not hide the next: ``import jax.a.b``, ``from jax.a import b``, and attribute
chains on a name bound to a JAX module or object (``jnp.linalg.norm`` after
``import jax.numpy as jnp``, ``lax.cond`` after ``from jax import lax``). A name
resolves when the longest importable module prefix imports and ``getattr`` finds the
rest. The same script under JAX says which names JAX 0.10.2 itself has (code guarded
for other JAX versions names some it has not)."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import sys
from pathlib import Path

from failure import first_line


def _is_test(path: Path) -> bool:
    return (path.name.endswith("_test.py") or path.name.startswith("test_")
            or "tests" in path.parts or path.name == "conftest.py")


def names_in(tree: ast.AST) -> list[tuple[str, int]]:
    """``(dotted JAX name, line)`` for every reference in one module."""
    bound: dict[str, str] = {}                      # local name -> the JAX name it holds
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "jax" or alias.name.startswith("jax."):
                    found.append((alias.name, node.lineno))
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["jax"] = "jax"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "jax" or node.module.startswith("jax.")):
            for alias in node.names:
                if alias.name == "*":
                    continue
                full = f"{node.module}.{alias.name}"
                found.append((full, node.lineno))
                bound[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(
                getattr(node, "parent", None), ast.Attribute):
            chain, inner = [], node
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in bound:
                found.append((".".join([bound[inner.id], *reversed(chain)]), node.lineno))
    return found


def _link_parents(tree: ast.AST) -> None:
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            child.parent = parent


def resolve(name: str) -> str:
    """The empty string when ``name`` resolves, else the first line of why not."""
    parts = name.split(".")
    module, depth = None, 0
    for depth in range(len(parts), 0, -1):
        prefix = ".".join(parts[:depth])
        try:
            if importlib.util.find_spec(prefix) is None:
                continue
        except (ImportError, ValueError, AttributeError):
            continue
        try:
            module = importlib.import_module(prefix)
        except BaseException as exc:            # noqa: BLE001 - the failure is the finding
            return first_line(exc)
        break
    if module is None:
        return f"ModuleNotFoundError: No module named {parts[0]!r}"
    target = module
    for depth_index, attr in enumerate(parts[depth:], depth):
        try:
            target = getattr(target, attr)
        except BaseException:                   # noqa: BLE001
            owner = ".".join(parts[:depth_index])
            return f"AttributeError: {owner} has no attribute {attr!r}"
    return ""


def main(packages: list[str]) -> None:
    uses: dict[str, list[str]] = {}
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in sorted(root.rglob("*.py")):
            if _is_test(path.relative_to(root.parent)):
                continue
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                continue
            _link_parents(tree)
            for name, line in names_in(tree):
                uses.setdefault(name, []).append(f"{path.relative_to(root.parent)}:{line}")
    report = {}
    for name in sorted(uses):
        failure = resolve(name)
        report[name] = {"ok": not failure, "failure": failure, "uses": len(uses[name]),
                        "where": uses[name][:3]}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
