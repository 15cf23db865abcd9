"""tools/record.py, the recorder of JAX's answers, without JAX: ``--list`` names every case
set, ``--dry-run`` walks each one's cases, and the files they would write are exactly the
recorded files under tests/data/ that the tests read, with the cases the files hold."""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
RECORDED = sorted(p.name for p in DATA.iterdir() if p.suffix in (".json", ".npz"))


def _record(*args: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "record.py"), *args],
                         capture_output=True, text=True, check=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return out.stdout


@pytest.fixture(scope="module")
def dry_run() -> dict[str, list[str]]:
    """The dry run's file -> case names."""
    runs, names = {}, None
    for line in _record("--dry-run").splitlines():
        header = re.fullmatch(r"(\S+)(?: \[\w+\])?: \S+ -> tests/data/(\S+) \(.*\)", line)
        if header:
            names = runs.setdefault(header.group(2), [])
        elif line.startswith("    "):
            names.append(line[4:])
    return runs


def test_list_names_every_recorded_file():
    listed = [name for line in _record("--list").splitlines()
              for name in re.findall(r"tests/data/(\S+?)(?:,|$)", line)]
    assert sorted(listed) == RECORDED


def test_dry_run_writes_the_files_the_tests_read(dry_run):
    assert sorted(dry_run) == RECORDED
    assert all(dry_run.values())


def _recorded_names(path: pathlib.Path) -> set[str]:
    if path.suffix == ".npz":
        return set(np.load(path).files)
    content = json.loads(path.read_text())
    (table,) = [content[k] for k in ("cases", "programs", "modules", "names") if k in content]
    return set(table)


@pytest.mark.parametrize("file", RECORDED)
def test_dry_run_cases_are_the_recorded_ones(dry_run, file):
    recorded = _recorded_names(DATA / file)
    if file.endswith(".json"):
        assert set(dry_run[file]) == recorded
    else:       # an npz holds entries "<case>|...", "<case>.<part>" or "<case>" per case
        for case in dry_run[file]:
            assert any(k == case or k.startswith((f"{case}|", f"{case}.", f"{case}/"))
                       for k in recorded), (file, case)


def test_unknown_case_set_is_an_error():
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "record.py"), "nonesuch"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and "unknown case sets ['nonesuch']" in out.stderr
