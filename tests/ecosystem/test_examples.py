"""The CI-sized subset of `make ecosystem` (marker ``ecosystem``): each docs example of
examples/ecosystem/ runs under spmdc, through ``sys.modules['jax'] = spmdc`` in a fresh
interpreter, and must print what JAX 0.10.2 printed (tests/ecosystem/jax_outputs/,
recorded by ``tools/ecosystem.py --examples``), numbers within the tolerance of
tools/ecosystem/printouts.py.

An example whose libraries this interpreter cannot find is skipped with the reason: the
project's own environment has none of them. ``make ecosystem`` builds
``.ecosystem/venv-spmdc``, which has them (and no JAX); there
``.ecosystem/venv-spmdc/bin/python -m pytest -m ecosystem tests/ecosystem`` runs these."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "ecosystem"))
from printouts import compare_printouts  # noqa: E402

JAX_OUTPUTS = Path(__file__).resolve().parent / "jax_outputs"
# Each example and the libraries it imports.
EXAMPLES = {
    "chex_assertions": ("chex",),
    "diffrax_neural_ode": ("diffrax", "equinox", "optax"),
    "distrax_basics": ("distrax",),
    "equinox_readme": ("equinox", "optax"),
    "flax_linen_quickstart": ("flax", "optax"),
    "flax_nnx_basics": ("flax", "optax"),
    "haiku_mnist": ("haiku", "optax"),
    "numpyro_eight_schools": ("numpyro",),
    "numpyro_svi_predictive": ("numpyro",),
    "optax_getting_started": ("optax",),
}
RUN_AS_JAX = ("import runpy, sys, spmdc\n"
              "sys.modules['jax'] = spmdc\n"
              "runpy.run_path(sys.argv[1], run_name='__main__')\n")


def test_every_example_is_listed_and_recorded():
    on_disk = {p.stem for p in (REPO / "examples" / "ecosystem").glob("*.py")}
    assert on_disk == set(EXAMPLES)
    recorded = {p.stem for p in JAX_OUTPUTS.glob("*.txt")}
    assert recorded == set(EXAMPLES), "run tools/ecosystem.py --examples to record them"


@pytest.mark.ecosystem
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_prints_what_jax_prints(name):
    missing = [m for m in EXAMPLES[name] if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed in {sys.prefix}; `make ecosystem` "
                    "installs them in .ecosystem/venv-spmdc")
    env = {**os.environ, "SPMDC_CPU_DEVICES": "1", "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", RUN_AS_JAX,
                          str(REPO / "examples" / "ecosystem" / f"{name}.py")],
                         capture_output=True, text=True, timeout=900, env=env, cwd=REPO)
    assert out.returncode == 0, out.stderr[-4000:]
    expected = (JAX_OUTPUTS / f"{name}.txt").read_text()
    assert compare_printouts(expected, out.stdout) == ""
