"""A pytest plugin (``-p result_log``) that tools/ecosystem.py loads into a library's test
run: one JSON line per outcome, appended and flushed as it happens, so a run cut short
by the time cap still leaves every result so far (in ``$ECOSYSTEM_RESULT_LOG``).

Each line: ``{"nodeid", "when", "outcome", "failure", "where"}``. ``when`` is
``collect`` for a module that could not be collected, else ``setup``/``call``/
``teardown``; ``outcome`` is ``passed``, ``failed``, ``skipped`` or (collection)
``error``. A failure is named as tools/ecosystem/failure.py says."""
from __future__ import annotations

import json
import os

import pytest
from failure import first_line, library_frame, root_cause

_LOG = os.environ["ECOSYSTEM_RESULT_LOG"]
_failures: dict[str, tuple[str, str]] = {}


def _write(record: dict) -> None:
    with open(_LOG, "a") as out:
        out.write(json.dumps(record) + "\n")


def _crash_line(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message.splitlines()[0][:300]
    lines = [ln for ln in str(report.longrepr).splitlines() if ln.startswith("E ")]
    if lines:
        return lines[-1][1:].strip()[:300]
    return (str(report.longrepr).strip().splitlines() or ["(no message)"])[-1][:300]


def _remember(nodeid: str, call) -> None:
    if call.excinfo is not None:
        cause = root_cause(call.excinfo.value)
        _failures[nodeid] = (first_line(cause), library_frame(cause))


def pytest_runtest_makereport(item, call):
    """A test's exception, seen before its report is logged (returns None: pytest's own
    hook still makes the report)."""
    _remember(item.nodeid, call)


def pytest_exception_interact(node, call, report):
    """A module's collection error (its report is logged after this hook)."""
    if report.when == "collect":
        _remember(report.nodeid, call)


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report):
    if report.when != "call" and report.outcome == "passed":
        return
    failure, where = _failures.pop(report.nodeid, ("", ""))
    if report.outcome == "failed" and not failure:
        failure = _crash_line(report)
    _write({"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
            "failure": failure if report.outcome == "failed" else "", "where": where})


@pytest.hookimpl(trylast=True)
def pytest_collectreport(report):
    if report.outcome == "failed":
        failure, where = _failures.pop(report.nodeid, ("", ""))
        _write({"nodeid": report.nodeid, "when": "collect", "outcome": "error",
                "failure": failure or _crash_line(report), "where": where})
