"""The SPMDC_* environment variables are parsed strictly (spmdc/env.py)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from spmdc import env
from spmdc.compiler.passes import checks_enabled


@pytest.mark.parametrize("raw", ["1", "true", "True", "YES", "yes", "on", " On ", "t", "y"])
def test_flag_true(monkeypatch, raw):
    monkeypatch.setenv("SPMDC_TEST_FLAG", raw)
    assert env.flag("SPMDC_TEST_FLAG") is True


@pytest.mark.parametrize("raw", ["0", "false", "FALSE", "no", "off", "OFF", "", "  ", "n"])
def test_flag_false(monkeypatch, raw):
    monkeypatch.setenv("SPMDC_TEST_FLAG", raw)
    assert env.flag("SPMDC_TEST_FLAG", default=True) is False


def test_flag_unset_is_the_default(monkeypatch):
    monkeypatch.delenv("SPMDC_TEST_FLAG", raising=False)
    assert env.flag("SPMDC_TEST_FLAG") is False
    assert env.flag("SPMDC_TEST_FLAG", default=True) is True


@pytest.mark.parametrize("raw", ["2", "maybe", "enable", "yes please", "-1", "onn"])
def test_flag_rejects_other_values(monkeypatch, raw):
    monkeypatch.setenv("SPMDC_TEST_FLAG", raw)
    with pytest.raises(env.EnvironmentVariableError,
                       match=r"SPMDC_TEST_FLAG=.* is not a boolean: use 1/true/yes/on"):
        env.flag("SPMDC_TEST_FLAG")


@pytest.mark.parametrize("raw,value", [("8", 8), (" 3 ", 3), ("1", 1), ("", 5)])
def test_positive_int(monkeypatch, raw, value):
    monkeypatch.setenv("SPMDC_TEST_INT", raw)
    assert env.positive_int("SPMDC_TEST_INT", 5) == value


@pytest.mark.parametrize("raw", ["0", "-2", "eight", "2.5", "1e3", "+"])
def test_positive_int_rejects(monkeypatch, raw):
    monkeypatch.setenv("SPMDC_TEST_INT", raw)
    with pytest.raises(env.EnvironmentVariableError,
                       match=r"SPMDC_TEST_INT=.* must be a positive integer"):
        env.positive_int("SPMDC_TEST_INT", 5)


def test_checks_switch_spellings(monkeypatch):
    # SPMDC_CHECKS=off used to mean *on* (anything but "" and "0" did)
    for raw, on in [("off", False), ("no", False), ("false", False), ("yes", True),
                    ("1", True)]:
        monkeypatch.setenv("SPMDC_CHECKS", raw)
        assert checks_enabled() is on, raw
    monkeypatch.setenv("SPMDC_CHECKS", "sometimes")
    with pytest.raises(env.EnvironmentVariableError, match="SPMDC_CHECKS"):
        checks_enabled()


def run(code: str, **variables: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **variables}, timeout=120)


@pytest.mark.cpu_platform
def test_bad_values_in_a_fresh_process():
    # SPMDC_ENABLE_X64=yes/on silently meant off; now they mean on, and nonsense is an
    # error naming the variable.
    # Both variables in one process where both are valid (five processes for six checks):
    # the x64 flag is read at the import, the device count at the devices' first use.
    code = ("import spmdc, spmdc.numpy as jnp; print(jnp.ones(2, 'float64').dtype)\n"
            "print(spmdc.device_count())\n")
    on = run(code, SPMDC_ENABLE_X64="on", SPMDC_CPU_DEVICES="3")
    assert on.stdout.split() == ["float64", "3"], on.stderr
    assert run(code, SPMDC_ENABLE_X64="Yes").stdout.split()[0] == "float64"
    assert run(code, SPMDC_ENABLE_X64="off").stdout.split()[0] == "float32"
    bad = run(code, SPMDC_ENABLE_X64="enabled")
    assert bad.returncode != 0
    assert "EnvironmentVariableError: environment variable SPMDC_ENABLE_X64='enabled' is " \
        "not a boolean" in bad.stderr
    bad = run("import spmdc; print(spmdc.device_count())", SPMDC_CPU_DEVICES="four")
    assert bad.returncode != 0
    assert "SPMDC_CPU_DEVICES='four' must be a positive integer" in bad.stderr
