"""Test configuration: verifier on, compiled modules kept (Note [bytecode for test
processes]), hypothesis profiles ('ci' is what `make test` uses), and the markers that skip a
test the platform cannot run (Note [Tests that need devices])."""
import os
import sys
import tempfile

os.environ.setdefault("SPMDC_CHECKS", "1")

# Note [bytecode for test processes]: with PYTHONDONTWRITEBYTECODE set (as on the CI host),
# Python compiles every module of spmdc from source in every process: about 1.5 s of CPU per
# ``import spmdc`` instead of 0.6, paid by each pytest-xdist worker and by each of the ~100
# child processes the suite starts (launch, cache, multiprocess, config tests). The variable
# asks that no __pycache__ be written beside the sources; the suite honours that and keeps
# the compiled modules in a directory of its own under the temporary folder instead
# (PYTHONPYCACHEPREFIX, which mirrors each source's absolute path, so checkouts never share
# an entry and a changed source is recompiled as usual). The directory must be this user's
# and writable by no one else (a module compiled there is run); otherwise, or where it cannot
# be made, nothing changes.
# Set here, before spmdc is imported, the environment passes to the workers and to the
# children, which copy os.environ.
def _keep_bytecode_outside_the_sources() -> None:
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or os.path.join(
        tempfile.gettempdir(), f"spmdc-tests-pycache-{os.getuid()}")
    try:
        os.makedirs(prefix, mode=0o700, exist_ok=True)
        status = os.stat(prefix)
    except OSError:
        return
    if status.st_uid != os.getuid() or status.st_mode & 0o022:
        return
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


_keep_bytecode_outside_the_sources()
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
