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


def pytest_addoption(parser):
    parser.addoption("--compiles", type=int, default=0, metavar="N",
                     help="count XLA compiles per test and list the N test files that "
                          "compile longest (tests/compile_counts.py)")


def pytest_configure(config):
    if config.getoption("compiles"):
        from compile_counts import CompileCounts
        config.pluginmanager.register(CompileCounts(config.getoption("compiles")),
                                      "compile_counts")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    counts = [mark.args[0] for mark in item.iter_markers("devices")]
    if counts:
        needs_devices(max(counts))
    if item.get_closest_marker("cpu_platform") is not None:
        needs_cpu_platform()
