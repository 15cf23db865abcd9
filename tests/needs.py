"""What a test needs of the platform, said as a skip rather than a failure.

Note [Tests that need devices]: the suite runs on 8 virtual CPU devices (spmdc's default;
SPMDC_CPU_DEVICES sets the count). On a host with fewer devices, e.g. one GPU, a test that
maps over 8 devices or builds a 2 x 4 mesh cannot run; ``@pytest.mark.devices(n)`` (or
``needs_devices(n)`` in a fixture) skips it with the reason, so those skips do not drown
the real failures. ``@pytest.mark.cpu_platform`` does the same for tests about the CPU
client itself. ``SPMDC_CPU_DEVICES=1 make test`` shows what a one-GPU host skips; tests
that start a child process pass the variable on, so the child has the same devices."""
from __future__ import annotations

import pytest

import spmdc


def needs_devices(n: int) -> None:
    have = spmdc.device_count()
    if have < n:
        pytest.skip(f"needs {n} devices; this platform has {have}")


def needs_cpu_platform() -> None:
    here = spmdc.default_backend()
    if here != "cpu":
        pytest.skip(f"needs the CPU platform; this is {here}")
