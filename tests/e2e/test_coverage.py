"""Coverage of JAX's public API: every public name of JAX 0.10.2's public modules
(jax, jax.numpy, jax.lax, jax.random, jax.nn, every jax.scipy module, jax.tree_util ...
jax.experimental.*, jax.extend.*, jax.example_libraries.*, jax.interpreters.*; the list
and what a public name is: tools/recorders/names.py, recorded once into
tests/data/jax_names.json by `tools/record.py names`) is either provided by the module
``import jax.X`` gives under the alias (spmdc/aliases.py: ``spmdc.X``, ``jax.core`` is
``spmdc._src.core``; a submodule counts when it imports) or listed in
tests/jax_absent_names.py with the reason spmdc does not provide it.

The test fails both ways: a name JAX has that spmdc lacks and that is not listed, and a
listed name that spmdc has (the list must shrink as names land). ``make sz`` prints the
figures per module (tools/sz.py reads the same table). ``jax.lax``'s ``*_p`` names
are JAX's primitive objects: spmdc.lax exports its own primitive where it is the same
operation (or a JaxPrimitive standing for it under JAX's name); the rest are listed with
reasons. README.md's "Deliberately absent" section summarises the reasons that are not
"not yet implemented".
"""
from __future__ import annotations

import importlib
import json
import os

import pytest
from jax_absent_names import EXCLUDED, LABELS

from spmdc.aliases import _PRIVATE, _RENAMED

NAMES_FILE = os.path.join(os.path.dirname(__file__), os.pardir, "data", "jax_names.json")


def jax_names() -> dict[str, list[str]]:
    with open(NAMES_FILE, encoding="utf-8") as fh:
        return json.load(fh)["names"]


def spmdc_module(namespace: str):
    """The module ``import NAMESPACE`` gives under the alias (``jax`` bound to spmdc, see
    spmdc/aliases.py), or None if spmdc has none yet."""
    rest = namespace[len("jax."):] if namespace != "jax" else ""
    rest = _RENAMED.get(rest, rest)
    if rest.split(".")[0] in _PRIVATE:
        return None
    try:
        return importlib.import_module("spmdc." + rest if rest else "spmdc")
    except ModuleNotFoundError:
        return None


def provides(module, name: str) -> bool:
    """Whether ``module`` has ``name``: an attribute, or a submodule that imports (whether
    the package has bound it as an attribute yet depends on what was imported before)."""
    if module is None:
        return False
    if hasattr(module, name):
        return True
    if not hasattr(module, "__path__"):
        return False
    try:
        importlib.import_module(f"{module.__name__}.{name}")
    except ModuleNotFoundError:
        return False
    return True


def excluded(namespace: str, name: str) -> str | None:
    return EXCLUDED.get(namespace, {}).get(name)


def coverage(namespace: str) -> tuple[list[str], list[str], list[str]]:
    """(provided, listed, unaccounted): JAX's names of ``namespace`` that spmdc provides,
    that tests/jax_absent_names.py accounts for, and neither."""
    module = spmdc_module(namespace)
    provided, listed, unaccounted = [], [], []
    for name in jax_names()[namespace]:
        if provides(module, name):
            provided.append(name)
        elif excluded(namespace, name) is not None:
            listed.append(name)
        else:
            unaccounted.append(name)
    return provided, listed, unaccounted


@pytest.mark.parametrize("namespace", sorted(jax_names()))
def test_every_jax_name_is_provided_or_listed(namespace):
    _, _, unaccounted = coverage(namespace)
    assert not unaccounted, (
        f"spmdc lacks these names of {namespace} and tests/jax_absent_names.py does not list "
        f"them with a reason: {' '.join(unaccounted)}")


@pytest.mark.parametrize("namespace", sorted(EXCLUDED))
def test_listed_names_are_absent(namespace):
    module = spmdc_module(namespace)
    present = [n for n in EXCLUDED[namespace] if provides(module, n)]
    assert not present, (f"{namespace}: spmdc now provides {' '.join(present)}; remove them "
                         f"from the list in tests/jax_absent_names.py")


@pytest.mark.parametrize("namespace", sorted(EXCLUDED))
def test_listed_names_are_jax_names(namespace):
    unknown = sorted(set(EXCLUDED[namespace]) - set(jax_names()[namespace]))
    assert not unknown, f"{namespace}: listed names JAX 0.10.2 does not have: {unknown}"


def test_listed_namespaces_are_recorded():
    assert set(EXCLUDED) <= set(jax_names()), sorted(set(EXCLUDED) - set(jax_names()))


def test_every_reason_has_a_label():
    """``make sz`` counts the absent names by these labels."""
    unlabelled = {r for names in EXCLUDED.values() for r in names.values()} - set(LABELS)
    assert not unlabelled, unlabelled
