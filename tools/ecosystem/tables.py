"""The tables tools/ecosystem.py writes into docs/TESTING.md, between the markers
``<!-- ecosystem results -->`` and ``<!-- /ecosystem results -->`` (the text around them
is written by hand). Read from the result files of the cache's ``results/`` folder:
``smoke.json``, ``examples.json``, ``suites.json`` and one ``NAME.ENV.jsonl`` log per suite
run (tools/ecosystem/result_log.py)."""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

START, END = "<!-- ecosystem results -->", "<!-- /ecosystem results -->"
ENVIRONMENTS = {"jax": "JAX 0.10.2", "spmdc": "spmdc"}
_ADDRESS = re.compile(r"0x[0-9a-f]+")
_FILE_IN_PARENTHESES = re.compile(r" \((?:/[^()\s]+)+\.py\)")     # ImportError's (/path/x.py)


def tidy(message: str) -> str:
    """A failure line without what differs from machine to machine: addresses, and the
    absolute file an ImportError names."""
    return _FILE_IN_PARENTHESES.sub("", _ADDRESS.sub("0x...", message))
CLASSES_SHOWN = 25


def _cell(text: str) -> str:
    text = text.replace("|", "\\|").replace("`", "'")
    return f"`{text}`" if text else ""


def _load(path: Path, default):
    return json.loads(path.read_text()) if path.exists() else default


def counts(log: Path) -> dict:
    """Passed/failed/error/skipped of one suite run, and its failure classes: the first
    exception line -> (number of tests or modules, up to three library lines)."""
    tally = Counter()
    classes: dict[str, list] = defaultdict(lambda: [0, []])
    for line in log.read_text().splitlines() if log.exists() else []:
        record = json.loads(line)
        outcome, when = record["outcome"], record["when"]
        if when == "collect":
            tally["not collected"] += 1
            kind = "error"
        elif outcome == "failed":
            kind = "failed" if when == "call" else "error"
        else:
            kind = outcome
        tally[kind] += 1
        if kind in ("failed", "error"):
            entry = classes[tidy(record["failure"])]
            entry[0] += 1
            if record["where"] and record["where"] not in entry[1] and len(entry[1]) < 3:
                entry[1].append(record["where"])
    return {"tally": tally, "classes": dict(classes)}


def _imports(smoke: list) -> list[str]:
    by = defaultdict(list)
    for record in smoke:
        by[record["library"], record["env"]].append(record)
    libraries = list(dict.fromkeys(r["library"] for r in smoke))
    out = ["| library | " + " | ".join(ENVIRONMENTS.values()) + " |",
           "|---|" + "---|" * len(ENVIRONMENTS)]
    for name in libraries:
        cells = []
        for env in ENVIRONMENTS:
            records = by[name, env]
            failed = [r for r in records if not r["ok"]]
            if not records:
                cells.append("not run")
            elif not failed:
                cells.append(f"imports ({sum(r['seconds'] for r in records):.1f} s)")
            else:
                first = failed[0]
                where = f" at {_cell(first['where'])}" if first["where"] else ""
                cells.append(f"{_cell(first['module'])}: {_cell(tidy(first['failure']))}{where}")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def _suites(results: Path, summaries: list, tests_of: dict) -> list[str]:
    out = ["| library | tests | " + " | ".join(
        f"{label}: passed / failed / error / skipped (modules not collected)"
        for label in ENVIRONMENTS.values()) + " | time (JAX / spmdc) |",
        "|---|---|" + "---|" * (len(ENVIRONMENTS) + 1)]
    by = {(s["library"], s["env"]): s for s in summaries}
    for name in dict.fromkeys(s["library"] for s in summaries):
        cells, times = [], []
        for env in ENVIRONMENTS:
            summary = by.get((name, env))
            if summary is None:
                cells.append("not run")
                times.append("-")
                continue
            if summary.get("no_results"):
                reason = tidy(summary["no_results"].removeprefix("E ").strip())
                cells.append(f"pytest did not start: {_cell(reason)}")
                times.append(f"{summary['seconds']} s")
                continue
            t = counts(results / f"{name}.{env}.jsonl")["tally"]
            capped = f", stopped at the {summary['cap']:.0f} s cap" if summary["capped"] else ""
            cells.append(f"{t['passed']} / {t['failed']} / {t['error']} / {t['skipped']} "
                         f"({t['not collected']}{capped})")
            times.append(f"{summary['seconds']} s")
        tests = ", ".join(f"`{path}`" for path in tests_of.get(name, ()))
        out.append(f"| {name} | {tests} | " + " | ".join(cells) + f" | {' / '.join(times)} |")
    return out


def _classes(results: Path, summaries: list, env: str) -> list[str]:
    out = []
    for name in dict.fromkeys(s["library"] for s in summaries if s["env"] == env):
        classes = counts(results / f"{name}.{env}.jsonl")["classes"]
        if not classes:
            continue
        ranked = sorted(classes.items(), key=lambda item: -item[1][0])
        plural = "class" if len(classes) == 1 else "classes"
        out += ["", f"**{name} under {ENVIRONMENTS[env]}** ({len(classes)} {plural}"
                f"{f', the {CLASSES_SHOWN} largest shown' if len(ranked) > CLASSES_SHOWN else ''}"
                "):", "", "| tests or modules | first exception line | library lines |",
                "|---|---|---|"]
        for failure, (number, wheres) in ranked[:CLASSES_SHOWN]:
            out.append(f"| {number} | {_cell(failure)} | "
                       f"{', '.join(_cell(w) for w in wheres)} |")
    return out


def _examples(examples: list) -> list[str]:
    out = ["| example | JAX 0.10.2 | spmdc | numbers |", "|---|---|---|---|"]
    for record in examples:
        cells = []
        for env in ENVIRONMENTS:
            run = record[env]
            cells.append(f"runs ({run['seconds']} s)" if run["ok"]
                         else _cell(tidy(run["failure"])))
        numbers = ("the same" if record["same"] else _cell(record["difference"])
                   if record["difference"] else "")
        out.append(f"| `examples/ecosystem/{record['example']}.py` | "
                   + " | ".join(cells) + f" | {numbers} |")
    return out


def _names(names: list) -> list[str]:
    """One row per missing name; a name under a missing module or object (every
    ``jax.experimental.checkify.*`` when ``jax.experimental.checkify`` is missing) is
    folded into that one's row."""
    by = defaultdict(list)
    for record in names:
        by[record["name"]].append(record)

    def head(name: str) -> str:
        parts = name.split(".")
        return next(prefix for prefix in (".".join(parts[:i]) for i in
                                          range(1, len(parts) + 1)) if prefix in by)

    rows = defaultdict(list)
    for name in by:
        rows[head(name)].append(name)
    public = [n for n in rows if not any(part.startswith("_") for part in n.split("."))]
    out = [f"{len(by)} names, in {len(rows)} rows ({len(public)} public, "
           f"{len(rows) - len(public)} internal): each used by the libraries' own source "
           "(tests left out), resolving under JAX 0.10.2 and not under spmdc.", "",
           "| name | used by (uses) | under spmdc | first library lines |", "|---|---|---|---|"]
    for row in sorted(rows, key=lambda n: (n not in public, n)):
        records = [r for name in rows[row] for r in by[name]]
        uses = Counter()
        for r in records:
            uses[r["library"]] += r["uses"]
        users = ", ".join(f"{library} ({number})" for library, number in uses.items())
        wheres = list(dict.fromkeys(w for r in by[row] for w in r["where"]))[:3]
        under = len(rows[row]) - 1
        label = f"`{row}`" + (f" and {under} names under it" if under else "")
        out.append(f"| {label} | {users} | {_cell(tidy(by[row][0]['failure']))} | "
                   f"{', '.join(_cell(w) for w in wheres)} |")
    return out


def render(results: Path, tests_of: dict) -> str:
    """The tables; ``tests_of`` maps a library to the paths its suite runs."""
    smoke = _load(results / "smoke.json", [])
    summaries = _load(results / "suites.json", [])
    examples = _load(results / "examples.json", [])
    parts = [START, ""]
    names = _load(results / "names.json", None)
    if smoke:
        parts += ["### Imports", "", *_imports(smoke), ""]
    if names is not None:
        parts += ["### JAX names the libraries use that spmdc lacks", "", *_names(names), ""]
    if summaries:
        parts += ["### Test suites", "", *_suites(results, summaries, tests_of), ""]
        for env in ENVIRONMENTS:
            lines = _classes(results, summaries, env)
            if lines:
                parts += [f"### Failure classes under {ENVIRONMENTS[env]}", *lines, ""]
    if examples:
        parts += ["### Docs examples", "", *_examples(examples), ""]
    parts.append(END)
    return "\n".join(parts)


def write(results: Path, document: Path, tests_of: dict) -> None:
    """Replace the text between the markers of ``document`` with the tables."""
    text = document.read_text()
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{document} has no {START} ... {END} markers")
    document.write_text(text[:start] + render(results, tests_of) + text[end + len(END):])
