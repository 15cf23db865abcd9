"""Test configuration: verifier on, hypothesis profiles ('ci' is what `make test` uses),
and the markers that skip a test the platform cannot run (Note [Tests that need devices])."""
import os
import sys

os.environ.setdefault("SPMDC_CHECKS", "1")
sys.path.insert(0, os.path.dirname(__file__))      # tests/primcheck.py and friends

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from needs import needs_cpu_platform, needs_devices  # noqa: E402

settings.register_profile("ci", deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.register_profile("dev", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    counts = [mark.args[0] for mark in item.iter_markers("devices")]
    if counts:
        needs_devices(max(counts))
    if item.get_closest_marker("cpu_platform") is not None:
        needs_cpu_platform()
