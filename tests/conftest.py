"""Test configuration: verifier on, hypothesis profiles ('ci' is what `make test` uses)."""
import os
import sys

os.environ.setdefault("SPMDC_CHECKS", "1")
sys.path.insert(0, os.path.dirname(__file__))      # tests/primcheck.py and friends

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.register_profile("dev", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
