"""``pytest --compiles=N``: XLA compiles per test, and the N test files that spend the most
time compiling (docs/TESTING.md, "Suite time"). Registered by conftest.py only when the
option is given, so ``make test`` runs without it.

Each test's compiles (fixtures' included) are heard as JAX's backend-compile duration
event (runtime/monitoring.py), counted from its setup to its teardown, and stored on its
report as ``user_properties`` (``xla_compiles``, ``xla_compile_s``): they travel from
pytest-xdist's workers to the controller, which sums them per file, and ``--junitxml``
writes them beside each test's time."""
from __future__ import annotations

import collections
import os

import pytest

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class CompileCounts:
    """The plugin: one per pytest process (the controller and each worker)."""

    def __init__(self, top: int):
        self.top = top
        self.compiles = 0
        self.seconds = 0.0
        self.per_file: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])

    def _heard(self, event: str, duration: float, **_: object) -> None:
        if event == COMPILE_EVENT:
            self.compiles += 1
            self.seconds += duration

    def _listen(self) -> None:
        # re-registered per test: tests/test_monitoring.py clears the listeners
        from spmdc.runtime import monitoring
        if self._heard not in monitoring.get_event_duration_listeners():
            monitoring.register_event_duration_secs_listener(self._heard)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self._listen()
        self.compiles, self.seconds = 0, 0.0

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        if call.when == "teardown":
            item.user_properties.append(("xla_compiles", self.compiles))
            item.user_properties.append(("xla_compile_s", round(self.seconds, 3)))
        yield

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.per_file[report.nodeid.split("::")[0]]
        entry[2] += report.duration
        if report.when == "teardown":
            found = dict(report.user_properties)
            entry[0] += found.get("xla_compiles", 0)
            entry[1] += found.get("xla_compile_s", 0.0)

    def pytest_terminal_summary(self, terminalreporter: object) -> None:
        if os.environ.get("PYTEST_XDIST_WORKER"):
            return
        rows = sorted(self.per_file.items(), key=lambda kv: -kv[1][1])[:self.top]
        write = terminalreporter.write_line
        terminalreporter.section(f"XLA compiles: the {len(rows)} files compiling longest")
        write(f"{'compiles':>8} {'compile s':>10} {'test s':>8}  file")
        total = [sum(v[i] for v in self.per_file.values()) for i in range(3)]
        for name, (n, secs, spent) in rows:
            write(f"{int(n):>8} {secs:>10.1f} {spent:>8.1f}  {name}")
        write(f"{int(total[0]):>8} {total[1]:>10.1f} {total[2]:>8.1f}  (all files)")
