"""The recording functions of tools/record.py, one module per family of case sets.

Each module holds, for its case sets, a function that runs the cases on JAX and writes
the data file (``record_*(cases, paths, mode)``) and one that names the cases without JAX
(``*_names(cases, mode)``, for ``tools/record.py --dry-run``). JAX is imported inside the
recording functions only, so that listing and dry runs work in spmdc's environment.
"""
from __future__ import annotations

import json
import pathlib
import sys
from collections.abc import Callable

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
TESTS = ROOT / "tests"
DATA = TESTS / "data"


def tests_on_path() -> None:
    """Make the case modules of tests/ (``fft_cases`` ...) importable."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))


def write_cases_json(path: pathlib.Path, jax_version: str, cases: dict) -> None:
    """The JSON layout most value recorders share: ``{"jax": version, "cases": {...}}``."""
    path.write_text(json.dumps({"jax": jax_version, "cases": cases}, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {path}")


def write_arrays(path: pathlib.Path, parts: list[Callable[[dict], None]]) -> None:
    """Run each part (it adds named arrays to one dict) and save them all as one .npz."""
    out: dict[str, np.ndarray] = {}
    for part in parts:
        part(out)
    np.savez_compressed(path, **out)
    print(f"wrote {len(out)} arrays to {path}")
