"""tools/ecosystem.py's own parts, without any library: the comparison of printouts, the
pytest plugin that logs outcomes and names failures, and the tables it writes."""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parents[2] / "tools" / "ecosystem"
sys.path.insert(0, str(HELPERS))
import tables  # noqa: E402
from failure import first_line, library_frame, root_cause  # noqa: E402
from printouts import compare_printouts  # noqa: E402


def test_printouts_equal_within_tolerance():
    assert compare_printouts("loss: 1.000000 acc 0.5\nnan", "loss: 1.000900 acc 0.5\nnan") == ""


@pytest.mark.parametrize("actual, fragment", [
    ("loss: 1.1 acc 0.5\nnan", "1.1 where JAX prints 1.0"),
    ("cost: 1.0 acc 0.5\nnan", "'cost: 1.0 acc 0.5' where JAX prints 'loss: 1.0 acc 0.5'"),
    ("loss: 1.0 acc 0.5", "1 lines where JAX prints 2"),
    ("loss: 1.0 acc 0.5 0.1\nnan", "line 1"),
    ("loss: 1.0 acc 0.5\n0.0", "line 2"),
])
def test_printouts_differ(actual, fragment):
    assert fragment in compare_printouts("loss: 1.0 acc 0.5\nnan", actual)


def test_root_cause_and_library_line(tmp_path):
    module = tmp_path / "somelib.py"
    module.write_text("def load():\n    import nowhere_at_all\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import somelib
        try:
            try:
                somelib.load()
            except ImportError as inner:
                raise RuntimeError("wrapped") from inner
        except RuntimeError as outer:
            cause = root_cause(outer)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("somelib", None)
    assert first_line(cause) == "ModuleNotFoundError: No module named 'nowhere_at_all'"
    assert library_frame(cause).endswith("somelib.py:2")


SUITE = {
    "helper.py": "def needs_a_name():\n    from os import no_such_name\n",
    "test_mixed.py": """
        import pytest
        import helper

        def test_passes():
            assert 1 + 1 == 2

        def test_fails_in_the_library():
            helper.needs_a_name()

        def test_skipped():
            pytest.skip("not here")

        @pytest.fixture
        def broken():
            raise KeyError("setup")

        def test_setup_error(broken):
            pass
        """,
    "test_uncollectable.py": "import nowhere_at_all\n",
}


def test_result_log_records_every_outcome(tmp_path):
    for name, text in SUITE.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    log = tmp_path / "log.jsonl"
    env = {**os.environ, "PYTHONPATH": str(HELPERS), "ECOSYSTEM_RESULT_LOG": str(log)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "result_log", "--continue-on-collection-errors", "."],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    records = {r["nodeid"]: r for r in map(json.loads, log.read_text().splitlines())}
    assert "test_mixed.py::test_passes" in records, run.stdout + run.stderr
    assert records["test_mixed.py::test_passes"]["outcome"] == "passed"
    failed = records["test_mixed.py::test_fails_in_the_library"]
    assert failed["failure"] == "ImportError: cannot import name 'no_such_name' from 'os' " \
        f"({os.__file__})"
    assert failed["where"] == "helper.py:2"
    assert records["test_mixed.py::test_skipped"]["outcome"] == "skipped"
    assert records["test_mixed.py::test_setup_error"]["when"] == "setup"
    assert records["test_mixed.py::test_setup_error"]["failure"] == "KeyError: 'setup'"
    uncollectable = records["test_uncollectable.py"]
    assert (uncollectable["when"], uncollectable["outcome"]) == ("collect", "error")
    assert uncollectable["failure"] == "ModuleNotFoundError: No module named 'nowhere_at_all'"
    assert uncollectable["where"] == "test_uncollectable.py:1"

    tally = tables.counts(log)
    assert dict(tally["tally"]) == {"passed": 1, "failed": 1, "error": 2, "skipped": 1,
                                    "not collected": 1}
    assert tally["classes"]["KeyError: 'setup'"][0] == 1


def test_tables_replace_the_marked_section(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "optax.spmdc.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"nodeid": "a_test.py", "when": "collect", "outcome": "error",
         "failure": "AttributeError: module 'jax' has no attribute 'typing'",
         "where": "optax/_src/base.py:20"},
        {"nodeid": "b_test.py::t", "when": "call", "outcome": "passed", "failure": "",
         "where": ""}]))
    (results / "suites.json").write_text(json.dumps([
        {"library": "optax", "env": "spmdc", "seconds": 3, "capped": False, "cap": 60,
         "exit": 1}]))
    (results / "smoke.json").write_text(json.dumps([
        {"env": "jax", "library": "optax", "module": "optax", "ok": True, "seconds": 1.5},
        {"env": "spmdc", "library": "optax", "module": "optax", "ok": False,
         "failure": "AttributeError: no attribute 'typing'", "where": "optax/_src/base.py:20",
         "seconds": 0.5}]))
    document = tmp_path / "TESTING.md"
    document.write_text(f"before\n{tables.START}\nold\n{tables.END}\nafter\n")
    tables.write(results, document, {"optax": ("optax",)})
    text = document.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "old" not in text
    assert "| optax | imports (1.5 s) | `optax`: `AttributeError: no attribute 'typing'` " \
        "at `optax/_src/base.py:20` |" in text
    assert "| optax | `optax` | not run | 1 / 0 / 1 / 0 (1) | - / 3 s |" in text
    assert "| 1 | `AttributeError: module 'jax' has no attribute 'typing'` | " \
        "`optax/_src/base.py:20` |" in text
    document.write_text("no markers")
    with pytest.raises(SystemExit, match="no <!-- ecosystem results --> ... "):
        tables.write(results, document, {})


def test_jax_names_read_from_the_source():
    from jax_names import _link_parents, names_in, resolve
    tree = ast.parse(textwrap.dedent("""
        import jax
        import jax.numpy as jnp
        from jax import lax, Array
        from jax.extend import core as jex
        import numpy as np
        y = jnp.linalg.norm(x) + lax.cond(p, f, g) + np.sin(x) + jax.tree_util.tree_map(f, x)
        z = jex.Primitive("p").bind
        """))
    _link_parents(tree)
    assert sorted(set(names_in(tree))) == sorted({
        ("jax", 2), ("jax.numpy", 3), ("jax.lax", 4), ("jax.Array", 4),
        ("jax.extend.core", 5), ("jax.numpy.linalg.norm", 7), ("jax.lax.cond", 7),
        ("jax.tree_util.tree_map", 7), ("jax.extend.core.Primitive", 8)})
    assert resolve("os.path.join") == ""
    assert resolve("os.path.no_such_name") == \
        "AttributeError: os.path has no attribute 'no_such_name'"
    assert resolve("no_such_module.x").startswith("ModuleNotFoundError")


def _tool():
    spec = importlib.util.spec_from_file_location(
        "ecosystem_tool", HELPERS.parent / "ecosystem.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module                 # its dataclasses look themselves up
    spec.loader.exec_module(module)
    return module


def test_merge_keeps_other_libraries_results(tmp_path):
    tool = _tool()
    path = tmp_path / "names.json"
    tool.merge(path, [{"library": "optax", "name": "jax.typing"},
                      {"library": "chex", "name": "jax.Device"}], ("library",))
    tool.merge(path, [], ("library",), {("optax",)})       # optax now lacks nothing
    assert json.loads(path.read_text()) == [{"library": "chex", "name": "jax.Device"}]
    tool.merge(path, [{"library": "chex", "name": "jax.core.Tracer"}], ("library",))
    assert json.loads(path.read_text()) == [{"library": "chex", "name": "jax.core.Tracer"}]


def test_source_tree_from_a_local_archive(tmp_path):
    tool = _tool()
    folder = tmp_path / "chex-0.1.92" / "chex"
    folder.mkdir(parents=True)
    (folder / "a_test.py").write_text("def test_a():\n    pass\n")
    archive = tmp_path / "chex.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "chex-0.1.92", arcname="chex-0.1.92")
    tree = tool.source_tree(tmp_path / "cache", "chex", {"chex": str(archive)})
    assert tree == tmp_path / "cache" / "src" / "chex-0.1.92"
    assert (tree / "chex" / "a_test.py").read_text().startswith("def test_a")
    assert (tree / "pytest.ini").read_text() == "[pytest]\n"     # its own pytest root
    assert tool._dist_name("Flax_Lib==1.0") == "flax-lib"


def test_suite_paths_expand_globs(tmp_path):
    # Haiku's unit tests lie beside its modules (haiku/_src/*_test.py), its integration
    # tests in a folder below that the suite leaves out
    tool = _tool()
    for name in ("b_test.py", "a_test.py", "a.py", "integration/c_test.py"):
        (tmp_path / "haiku" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "haiku" / name).write_text("")
    assert tool.suite_paths(tmp_path, ("haiku/*_test.py", "haiku/integration", "gone")) == [
        "haiku/a_test.py", "haiku/b_test.py", "haiku/integration", "gone"]


def test_archive_from_a_git_tag_holds_the_tests_and_configuration(tmp_path):
    tool = _tool()
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "tests" / "a_test.py").write_text("def test_a():\n    pass\n")
    (repo / "pyproject.toml").write_text("[project]\nname = 'lib'\n")
    (repo / "docs" / "large.bin").write_text("not wanted")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    for step in (["init", "-q"], ["add", "."], ["commit", "-qm", "lib"], ["tag", "v1.0"]):
        subprocess.run(git + step, check=True, capture_output=True)
    archive = tmp_path / "lib.tar"
    tool._archive_from_git(repo / ".git", "v1.0", "lib", ("tests",), archive)
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == ["lib/pyproject.toml", "lib/tests/a_test.py"]
        assert tar.extractfile("lib/tests/a_test.py").read() == b"def test_a():\n    pass\n"


def test_failure_lines_lose_what_differs_between_machines():
    assert tables.tidy("ImportError: cannot import name 'x' from 'spmdc.extend' "
                       "(/work/a b/spmdc/extend/__init__.py)") == \
        "ImportError: cannot import name 'x' from 'spmdc.extend' (/work/a b/spmdc/extend/" \
        "__init__.py)"
    assert tables.tidy("ImportError: cannot import name 'x' from 'spmdc.extend' "
                       "(/work/wt/spmdc/extend/__init__.py)") == \
        "ImportError: cannot import name 'x' from 'spmdc.extend'"
    assert tables.tidy("TypeError: <object at 0x7f3a> is not a pytree") == \
        "TypeError: <object at 0x...> is not a pytree"
