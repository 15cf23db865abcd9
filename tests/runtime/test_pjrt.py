"""Choosing the platform (Note [CUDA client] in runtime/pjrt/backend.py): the CPU by default;
SPMDC_PLATFORM=cuda or config 'jax_platforms' asks for the CUDA PJRT plugin, and where
there is none (no plugin package, or no GPU) that is a clear error, not a crash. Each
case runs in a fresh interpreter, since the client is made once per process."""
from __future__ import annotations

import os
import subprocess
import sys

from spmdc.runtime import pjrt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SPMDC_")}
    environ["PYTHONPATH"] = os.pathsep.join([ROOT, environ.get("PYTHONPATH", "")])
    environ.update(env)
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120)


def test_cuda_without_the_plugin_or_a_gpu_is_a_clear_error() -> None:
    if pjrt.backend._cuda_plugin_path() is not None:
        import pytest
        pytest.skip("a CUDA plugin is installed here: the GPU checks run on a GPU host")
    # One process for the three ways of asking: a refused request makes no client, so the
    # next request in the same process is a first one again.
    code = ("import os, spmdc, spmdc.numpy as jnp\n"
            "def attempt():\n"
            "    try:\n"
            "        jnp.ones(3) + 1\n"
            "    except RuntimeError as e:\n"
            "        print('refused:', str(e).replace(chr(10), ' '))\n"
            "    else:\n"
            "        print('ran')\n"
            "for raw in ('cuda', ' CUDA '):\n"
            "    os.environ['SPMDC_PLATFORM'] = raw\n"
            "    attempt()\n"
            "del os.environ['SPMDC_PLATFORM']\n"
            "spmdc.config.update('jax_platforms', 'cuda,cpu')\n"
            "attempt()\n")
    run = _run(code)
    assert run.returncode == 0, run.stderr
    answers = run.stdout.splitlines()
    assert len(answers) == 3, run.stdout
    for answer in answers:
        assert answer.startswith("refused: spmdc was asked for the CUDA platform"), answer
    for answer in answers[:2]:                   # the two asked by SPMDC_PLATFORM
        assert "pip install 'spmdc[cuda13]'" in answer, answer


def test_an_unknown_platform_names_the_variable() -> None:
    run = _run("import spmdc, spmdc.numpy as jnp\njnp.ones(3) + 1\n", SPMDC_PLATFORM="tpu")
    assert run.returncode == 1
    assert "SPMDC_PLATFORM='tpu': spmdc runs on cpu or cuda" in run.stderr


def test_the_cpu_by_default_and_by_name() -> None:
    code = ("import spmdc, spmdc.numpy as jnp\n"
            "print(spmdc.default_backend(), spmdc.config.jax_platforms, "
            "(jnp.ones(2) * 2).tolist())\n")
    for how in ({}, {"SPMDC_PLATFORM": "cpu"}):
        run = _run(code, **how)
        assert run.stdout.split() == ["cpu", "cpu", "[2.0,", "2.0]"], run.stderr


def test_too_few_devices_on_another_platform_does_not_suggest_cpu_devices(monkeypatch):
    # a one-GPU host cannot make more devices with SPMDC_CPU_DEVICES
    import numpy as np
    import pytest

    import spmdc
    n = spmdc.device_count() + 1               # (the CPU client exists before the patch)
    monkeypatch.setattr(pjrt, "platform_wanted", lambda: "cuda")
    with pytest.raises(ValueError, match="run on a host with more devices") as e:
        spmdc.pmap(lambda v: v)(np.zeros(n))
    assert "SPMDC_CPU_DEVICES" not in str(e.value)
    with pytest.raises(ValueError, match="run on a host with more devices or make a smaller"):
        spmdc.make_mesh((n,), ("x",))
