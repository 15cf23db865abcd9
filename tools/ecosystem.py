"""``make ecosystem``: JAX's libraries (Optax, chex, Equinox, Flax, ...) run under JAX 0.10.2
and under spmdc, side by side: their imports, their own test suites, and the docs
examples of examples/ecosystem/. The results go to docs/TESTING.md.

Two virtual environments under the cache folder (``.ecosystem/`` by default), built from
the package index:

- ``venv-jax``: JAX 0.10.2 and the libraries at the versions of ``LIBRARIES``, with the
  tools their tests use (``TEST_TOOLS``), as pip resolves them.
- ``venv-spmdc``: exactly the distributions pip chose for ``venv-jax`` (``pip freeze``),
  less ``jax`` itself, installed with ``--no-deps``; spmdc from this checkout
  (editable); and a ``.pth`` file that runs tools/ecosystem/spmdc_as_jax.py
  (``sys.modules['jax'] = spmdc``) when the interpreter starts. The setup checks that
  without that line ``import jax`` would fail there.

Each library's tests come from its sdist or, when the sdist has none (Equinox), from the
archive of its git tag; ``--source NAME=PATH`` gives a local copy instead (a folder, an
archive, or a git directory holding the tag). Each suite runs under both environments
with the same flags and environment, a cap on the whole run and one on each test; the
pytest plugin tools/ecosystem/result_log.py logs each outcome as it happens, so a capped
run still counts. tools/ecosystem/tables.py turns the logs into the tables.

``python tools/ecosystem.py --help`` lists the options; with none it does everything.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HELPERS = REPO / "tools" / "ecosystem"
EXAMPLES = REPO / "examples" / "ecosystem"
JAX_OUTPUTS = REPO / "tests" / "ecosystem" / "jax_outputs"
JAX_VERSION = "0.10.2"
ENVIRONMENTS = ("jax", "spmdc")


@dataclass(frozen=True)
class Library:
    """One library: its distribution at the version pip picks for JAX 0.10.2, what to
    import to smoke-test it, and where its test suite is."""
    dist: str                       # the name on the package index
    version: str
    modules: tuple[str, ...]        # imported by the smoke test, in this order
    tests: tuple[str, ...] = ()     # paths (or globs) in the source tree that pytest runs
    tag_archive: str = ""           # the git tag's archive, where the sdist has no tests
    devices: int = 1                # CPU devices the suite runs with (as its CI does)
    deselect: tuple[str, ...] = ()  # test files that need what is not installed


LIBRARIES = {
    "optax": Library("optax", "0.2.8", ("optax",), tests=("optax",)),
    "chex": Library("chex", "0.1.92", ("chex",), tests=("chex",)),
    "equinox": Library(
        "equinox", "0.13.8", ("equinox",), tests=("tests",),
        tag_archive="https://github.com/patrick-kidger/equinox/archive/refs/tags/"
                    "v0.13.8.tar.gz"),
    "flax": Library(
        "flax", "0.12.8", ("flax", "flax.linen", "flax.nnx"),
        tests=("tests/linen", "tests/nnx", "tests/core"), devices=4),
    # The unit tests beside each module; not integration/ (every module under every
    # transformation) nor nets/ and flax/.
    "dm-haiku": Library("dm-haiku", "0.0.17", ("haiku",), tests=("haiku/_src/*_test.py",)),
    "numpyro": Library("numpyro", "0.22.0", ("numpyro", "numpyro.infer")),
    "diffrax": Library("diffrax", "0.7.2", ("diffrax",)),
    "optimistix": Library("optimistix", "0.1.0", ("optimistix",)),
    "lineax": Library("lineax", "0.1.1", ("lineax",)),
    "distrax": Library("distrax", "0.1.9", ("distrax",)),
    "jaxopt": Library("jaxopt", "0.8.5", ("jaxopt",)),
}
# What the suites need beyond the libraries (their `test` extras, without TensorFlow and
# PyTorch: the few test files that import those fail alike under both).
TEST_TOOLS = ("pytest", "pytest-timeout", "absl-py", "cloudpickle", "dm-tree",
              "scikit-learn", "einops", "beartype",
              "hypothesis", "pytest-xdist")     # and spmdc's own (tests/ecosystem/)


def python_of(cache: Path, env: str) -> Path:
    return cache / f"venv-{env}" / "bin" / "python"


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


# --- the two environments ----------------------------------------------------------------

def _stale_venv(base_python: str, path: Path, wanted: str) -> bool:
    """Whether ``path`` needs installing: its stamp is not ``wanted``. Makes the virtual
    environment when there is none (an existing one is installed into again, which pip
    brings to the wanted versions; ``rm -rf`` the cache for a clean one)."""
    stamp = path / ".ecosystem-stamp"
    if stamp.exists() and stamp.read_text() == wanted:
        return False
    if not (path / "bin" / "python").exists():
        run([base_python, "-m", "venv", path])
    return True


def setup(base_python: str, cache: Path) -> None:
    """Build (or keep, when up to date) both environments."""
    cache.mkdir(parents=True, exist_ok=True)
    jax_env = cache / "venv-jax"
    requirements = [f"jax=={JAX_VERSION}", f"jaxlib=={JAX_VERSION}",
                    *(f"{lib.dist}=={lib.version}" for lib in LIBRARIES.values()),
                    *TEST_TOOLS]
    if _stale_venv(base_python, jax_env, "\n".join(requirements)):
        run([python_of(cache, "jax"), "-m", "pip", "install", "--quiet", *requirements])
        (jax_env / ".ecosystem-stamp").write_text("\n".join(requirements))
    frozen = subprocess.run([python_of(cache, "jax"), "-m", "pip", "freeze",
                             "--exclude-editable"], check=True, capture_output=True,
                            text=True).stdout.split()
    without_jax = [line for line in frozen if _dist_name(line) != "jax"]
    spmdc_env = cache / "venv-spmdc"
    if _stale_venv(base_python, spmdc_env, "\n".join([str(REPO), *without_jax])):
        listing = cache / "spmdc-requirements.txt"
        listing.write_text("\n".join(without_jax) + "\n")
        spmdc_python = python_of(cache, "spmdc")
        run([spmdc_python, "-m", "pip", "install", "--quiet", "--no-deps", "-r", listing])
        run([spmdc_python, "-m", "pip", "install", "--quiet", "--no-deps", "-e", REPO])
        _install_alias(spmdc_python)
        (spmdc_env / ".ecosystem-stamp").write_text("\n".join([str(REPO), *without_jax]))
    check_no_jax(cache)


def _dist_name(requirement: str) -> str:
    name = requirement.split("==")[0].split(" @ ")[0].strip()
    return name.lower().replace("_", "-")


def _install_alias(spmdc_python: Path) -> None:
    site = subprocess.run([spmdc_python, "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    shutil.copy(HELPERS / "spmdc_as_jax.py", Path(site) / "spmdc_as_jax.py")
    (Path(site) / "spmdc_as_jax.pth").write_text("import spmdc_as_jax\n")


NO_JAX_CHECK = """
import importlib.metadata, sys
import spmdc
assert sys.modules['jax'] is spmdc, 'the alias did not run at start-up'
del sys.modules['jax']
try:
    import jax
except ModuleNotFoundError:
    pass
else:
    raise SystemExit(f'jax is importable without the alias: {jax.__file__}')
try:
    importlib.metadata.version('jax')
except importlib.metadata.PackageNotFoundError:
    print('ok')
else:
    raise SystemExit('a jax distribution is installed')
"""


def check_no_jax(cache: Path) -> None:
    """spmdc's environment has no JAX: only the alias makes ``import jax`` work."""
    out = subprocess.run([python_of(cache, "spmdc"), "-c", NO_JAX_CHECK],
                         capture_output=True, text=True)
    if out.stdout.strip() != "ok":
        raise SystemExit(f"venv-spmdc is not JAX-free: {out.stdout}{out.stderr}")


def environment(cache: Path, devices: int) -> dict:
    """The variables both environments run with: the same CPU device count."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "SPMDC_", "XLA_", "JAX_", "VIRTUAL_ENV"))}
    env.update(JAX_PLATFORMS="cpu", SPMDC_CPU_DEVICES=str(devices),
               XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
               PYTHONPATH=str(HELPERS), PYTHONDONTWRITEBYTECODE="1")
    return env


def bounded(cmd: list, cap: float, **kw) -> tuple[subprocess.CompletedProcess | None, bool]:
    """Run ``cmd`` in its own process group, killed (all of it) after ``cap`` seconds.
    Returns the finished process (None when killed) and whether the cap hit."""
    proc = subprocess.Popen([str(c) for c in cmd], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    try:
        out, err = proc.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, True
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), False


def merge(path: Path, records: list[dict], key: tuple[str, ...],
          replaced: set | None = None) -> None:
    """Write ``records`` to the JSON list at ``path``, dropping the earlier records whose
    ``key`` is in ``replaced`` (by default the keys of ``records``): a run of some
    libraries keeps the others' results."""
    fresh = replaced if replaced is not None else {tuple(r[k] for k in key) for r in records}
    kept = [r for r in (json.loads(path.read_text()) if path.exists() else [])
            if tuple(r[k] for k in key) not in fresh]
    path.write_text(json.dumps(kept + records, indent=1))


# --- the import smoke test ---------------------------------------------------------------

def smoke(cache: Path, libraries: list[str], results: Path) -> None:
    """Import each library's modules in each environment, one fresh interpreter per
    library; record ``ok`` or the first failure and the library line behind it."""
    records = []
    for env_name in ENVIRONMENTS:
        for name in libraries:
            lib = LIBRARIES[name]
            done, capped = bounded([python_of(cache, env_name), HELPERS / "import_probe.py",
                                    *lib.modules], 600, env=environment(cache, 1))
            lines = [] if done is None else [ln for ln in done.stdout.splitlines()
                                             if ln.startswith("{")]
            for line in lines:
                records.append({"env": env_name, "library": name, **json.loads(line)})
            if capped or done.returncode != 0 or len(lines) != len(lib.modules):
                tail = "time cap" if capped else _last_exception(done.stderr)
                records.append({"env": env_name, "library": name, "module": "?",
                                "ok": False, "failure": f"the probe died: {tail}",
                                "where": ""})
            print(f"smoke {env_name:5} {name:10} "
                  f"{'ok' if all(json.loads(ln)['ok'] for ln in lines) else 'FAILS'}")
    merge(results / "smoke.json", records, ("env", "library"))
    scan_names(cache, libraries, results)


def scan_names(cache: Path, libraries: list[str], results: Path) -> None:
    """The JAX names each library's source refers to (tools/ecosystem/jax_names.py), read
    in both environments: those JAX resolves and spmdc does not are spmdc's to-do."""
    records = []
    for name in libraries:
        packages = [m for m in LIBRARIES[name].modules if "." not in m]
        found = {}
        for env_name in ENVIRONMENTS:
            done, capped = bounded([python_of(cache, env_name), HELPERS / "jax_names.py",
                                    *packages], 900, env=environment(cache, 1))
            if capped or done.returncode != 0:
                raise SystemExit(f"jax_names.py failed for {name} under {env_name}: "
                                 f"{'time cap' if capped else done.stderr[-2000:]}")
            found[env_name] = json.loads(done.stdout.strip().splitlines()[-1])
        for jax_name, seen in found["jax"].items():
            ours = found["spmdc"].get(jax_name, {"ok": False, "failure": "not scanned"})
            if seen["ok"] and not ours["ok"]:
                records.append({"library": name, "name": jax_name, "uses": seen["uses"],
                                "where": seen["where"], "failure": ours["failure"]})
        print(f"names {name:10} {sum(r['library'] == name for r in records)} that JAX has "
              f"and spmdc lacks, of {sum(v['ok'] for v in found['jax'].values())}", flush=True)
    merge(results / "names.json", records, ("library",), {(name,) for name in libraries})


# --- the test suites ---------------------------------------------------------------------

def source_tree(cache: Path, name: str, sources: dict[str, str]) -> Path:
    """The library's source tree with its tests, unpacked under ``cache/src``."""
    lib = LIBRARIES[name]
    target = cache / "src" / f"{name}-{lib.version}"
    if (target / ".unpacked").exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    downloads = cache / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    local = sources.get(name)
    if local and (Path(local) / "HEAD").exists():               # a git directory
        archive = downloads / f"{name}-{lib.version}.tar"
        _archive_from_git(Path(local), f"v{lib.version}", name, lib.tests, archive)
    elif local and Path(local).is_dir():
        shutil.copytree(local, target)
        _own_pytest_root(target)
        (target / ".unpacked").touch()
        return target
    elif local:
        archive = Path(local)
    elif lib.tag_archive:
        archive = downloads / f"{name}-{lib.version}-tag.tar.gz"
        if not archive.exists():
            import urllib.request
            urllib.request.urlretrieve(lib.tag_archive, archive)
    else:
        names = {f"{stem}-{lib.version}.tar.gz" for stem in (lib.dist, lib.dist.replace("-", "_"))}
        if not any((downloads / n).exists() for n in names):
            run([python_of(cache, "jax"), "-m", "pip", "download", "--quiet", "--no-deps",
                 "--no-binary", ":all:", f"{lib.dist}=={lib.version}", "-d", downloads])
        archive = next(downloads / n for n in sorted(names) if (downloads / n).exists())
    unpack = cache / "src" / f".{name}-unpack"
    shutil.rmtree(unpack, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(unpack, filter="data")
    (top,) = list(unpack.iterdir())
    top.rename(target)
    unpack.rmdir()
    _own_pytest_root(target)
    (target / ".unpacked").touch()
    return target


def _archive_from_git(git_dir: Path, tag: str, name: str, tests: tuple[str, ...],
                      archive: Path) -> None:
    """The tag's tests and configuration files, as a tar archive with one top folder. File
    by file: a mirror may lack the large files elsewhere in the tree (``git archive``
    reads them all)."""
    wanted = sorted({path.split("/")[0] for path in tests} | {
        "pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py"})
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", tag, "--",
                              *wanted], check=True, capture_output=True, text=True).stdout
    with tarfile.open(archive, "w") as tar:
        for entry in filter(None, listing.split("\0")):
            meta, path = entry.split("\t", 1)
            mode, kind, blob = meta.split()
            if kind != "blob":
                continue
            data = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "blob", blob],
                                  check=True, capture_output=True).stdout
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size, info.mode = len(data), int(mode[-3:], 8)
            tar.addfile(info, io.BytesIO(data))


def _own_pytest_root(tree: Path) -> None:
    """Make ``tree`` pytest's root: without a configuration of its own (chex has none)
    pytest would look further up, find this repository's (the cache lies inside it) and
    run the library's tests with spmdc's options. An empty ``pytest.ini`` stops that."""
    configured = (tree / "pytest.ini").exists() or any(
        (tree / name).exists() and marker in (tree / name).read_text()
        for name, marker in (("pyproject.toml", "[tool.pytest.ini_options]"),
                             ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]")))
    if not configured:
        (tree / "pytest.ini").write_text("[pytest]\n")


def suite_paths(tree: Path, tests: tuple[str, ...]) -> list[str]:
    """The paths pytest runs: each of ``tests`` relative to ``tree``, a glob expanded
    (sorted), a path that matches nothing left for pytest to name."""
    return [str(p.relative_to(tree)) for pattern in tests
            for p in sorted(tree.glob(pattern)) or [tree / pattern]]


def run_suite(cache: Path, name: str, env_name: str, tree: Path, cap: float,
              per_test: float, results: Path) -> dict:
    lib = LIBRARIES[name]
    log = results / f"{name}.{env_name}.jsonl"
    log.unlink(missing_ok=True)
    env = {**environment(cache, lib.devices), "ECOSYSTEM_RESULT_LOG": str(log)}
    cmd = [python_of(cache, env_name), "-m", "pytest", *suite_paths(tree, lib.tests), "-q",
           "-p", "no:cacheprovider", "-p", "result_log", "--continue-on-collection-errors",
           f"--timeout={per_test:.0f}",
           *(f"--deselect={path}" for path in lib.deselect)]
    start = time.perf_counter()
    done, capped = bounded(cmd, cap, cwd=tree, env=env)
    seconds = time.perf_counter() - start
    (results / f"{name}.{env_name}.out").write_text(
        "" if done is None else done.stdout + done.stderr)
    summary = {"library": name, "env": env_name, "seconds": round(seconds),
               "capped": capped, "cap": cap,
               "exit": None if done is None else done.returncode, "no_results": ""}
    if not log.exists() and done is not None:       # pytest itself did not start
        summary["no_results"] = _last_exception(done.stderr or done.stdout)
    print(f"suite {env_name:5} {name:10} {seconds:6.0f} s"
          f"{' (stopped at the cap)' if capped else ''}", flush=True)
    return summary


# --- the docs examples -------------------------------------------------------------------

def run_examples(cache: Path, names: list[str], results: Path, cap: float) -> None:
    """Run each example under both environments; JAX's printout becomes the recorded
    value that tests/ecosystem/ compares spmdc with."""
    from printouts import compare_printouts
    JAX_OUTPUTS.mkdir(parents=True, exist_ok=True)
    records = []
    for path in sorted(EXAMPLES.glob("*.py")):
        if names and path.stem not in names:
            continue
        outs = {}
        for env_name in ENVIRONMENTS:
            start = time.perf_counter()
            done, capped = bounded([python_of(cache, env_name), path], cap,
                                   env=environment(cache, 1), cwd=REPO)
            ok = done is not None and done.returncode == 0
            text = "" if done is None else done.stdout
            failure = ("time cap" if capped else "" if ok
                       else _last_exception(done.stderr or done.stdout))
            outs[env_name] = {"ok": ok, "stdout": text, "failure": failure,
                              "seconds": round(time.perf_counter() - start, 1)}
        if outs["jax"]["ok"]:
            (JAX_OUTPUTS / f"{path.stem}.txt").write_text(outs["jax"]["stdout"])
        both_ran = outs["jax"]["ok"] and outs["spmdc"]["ok"]
        difference = (compare_printouts(outs["jax"]["stdout"], outs["spmdc"]["stdout"])
                      if both_ran else "")
        same = both_ran and not difference
        records.append({"example": path.stem, "same": same, "difference": difference, **{
            env_name: {k: v for k, v in out.items() if k != "stdout"}
            for env_name, out in outs.items()}})
        print(f"example {path.stem:28} jax {'ok' if outs['jax']['ok'] else 'FAILS'}  "
              f"spmdc {'same' if same else 'ok, differs' if outs['spmdc']['ok'] else 'FAILS'}",
              flush=True)
    merge(results / "examples.json", records, ("example",))


def _last_exception(printout: str) -> str:
    """The exception line that ends a traceback in ``printout``."""
    lines = [ln for ln in printout.strip().splitlines() if ln and not ln.startswith(" ")]
    return lines[-1][:300] if lines else "(no output)"


# --- the command line --------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=REPO / ".ecosystem",
                        help="where the environments, sources and logs go")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter both environments are made from")
    parser.add_argument("--libs", default="",
                        help=f"comma-separated, of: {', '.join(LIBRARIES)} (default: all; "
                             "the suites run for those with tests)")
    parser.add_argument("--smoke", action="store_true", help="only the import smoke test")
    parser.add_argument("--suites", action="store_true", help="only the test suites")
    parser.add_argument("--examples", nargs="?", const="", default=None,
                        help="only the examples (comma-separated names, default all)")
    parser.add_argument("--report", action="store_true",
                        help="only rewrite docs/TESTING.md from the logs")
    parser.add_argument("--cap", type=float, default=1800,
                        help="seconds for one library's suite in one environment")
    parser.add_argument("--per-test", type=float, default=300, help="seconds for one test")
    parser.add_argument("--source", action="append", default=[], metavar="NAME=PATH",
                        help="a local copy of a library's source (folder, archive, git dir)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HELPERS))
    import tables

    chosen = [n for n in args.libs.split(",") if n] or list(LIBRARIES)
    unknown = sorted(set(chosen) - set(LIBRARIES))
    if unknown:
        parser.error(f"--libs: unknown {unknown}; known: {', '.join(LIBRARIES)}")
    malformed = [item for item in args.source if "=" not in item]
    if malformed:
        parser.error(f"--source takes NAME=PATH, got {malformed}")
    sources = dict(item.split("=", 1) for item in args.source)
    results = args.cache / "results"
    results.mkdir(parents=True, exist_ok=True)
    everything = not (args.smoke or args.suites or args.report or args.examples is not None)
    if not args.report:
        setup(args.python, args.cache)
    if everything or args.smoke:
        smoke(args.cache, chosen, results)
    if everything or args.examples is not None:
        run_examples(args.cache, [n for n in (args.examples or "").split(",") if n],
                     results, cap=900)
    if everything or args.suites:
        for name in chosen:
            if not LIBRARIES[name].tests:
                continue
            tree = source_tree(args.cache, name, sources)
            for env_name in ENVIRONMENTS:
                summary = run_suite(args.cache, name, env_name, tree, args.cap,
                                    args.per_test, results)
                merge(results / "suites.json", [summary], ("library", "env"))
    tables.write(results, REPO / "docs" / "TESTING.md",
                 {name: lib.tests for name, lib in LIBRARIES.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
