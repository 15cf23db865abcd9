"""Record what JAX prints for the programs in tests/callback_programs.py into
tests/data/callbacks_reference.json (run with the JAX venv: /work/jaxenv/bin/python
tools/record_callbacks.py). Needs 8 CPU devices, like spmdc's tests."""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
sys.path.insert(0, str(ROOT / "tests"))

import jax  # noqa: E402
import jax.experimental  # noqa: E402,F401
from callback_programs import PROGRAMS  # noqa: E402


def run(program) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        program(jax)
        jax.effects_barrier()
    return out.getvalue().splitlines()


def main() -> None:
    reference = {"jax": jax.__version__, "programs": {p.__name__: run(p) for p in PROGRAMS}}
    path = ROOT / "tests" / "data" / "callbacks_reference.json"
    path.write_text(json.dumps(reference, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
