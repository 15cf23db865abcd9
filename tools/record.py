"""Record JAX's answers for spmdc's tests: one command over a table of case sets.

Each case set names the module that holds its cases (in tests/, shared with the test
that replays them on spmdc, or in tools/recorders/ when only the recorder needs them),
the function that runs them on JAX and writes the data file, and that file under
tests/data/. The tests read the files through tests/oracle.py and never import jax.

    python tools/record.py --list                 # the case sets and their files
    python tools/record.py --dry-run [NAME ...]   # what would be recorded; needs no jax
    /path/to/jax/python tools/record.py NAME ...  # record (--all: every case set)

Recording needs a Python with JAX 0.10.2 (the ``bench`` extra; the CUDA lowerings want
JAX's CUDA plugin, no GPU). A case set with modes (x32, x64) runs each mode in a fresh
process, since JAX reads JAX_ENABLE_X64 at import; so does every case set when several
are named. Add a case to its module, re-record its set and commit the data file with it.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from recorders import DATA, ROOT, tests_on_path  # noqa: E402


@dataclasses.dataclass(frozen=True)
class CaseSet:
    cases: str                  # the module holding the cases (tests/ or tools/recorders/)
    record: str                 # "module.function" in tools/recorders: runs them on JAX
    names: str                  # "module.function": the cases' names, without JAX
    output: str                 # the file under tests/data; "{mode}" stands for each mode
    modes: tuple[str, ...] = ()  # one fresh process per mode (JAX_ENABLE_X64 at import)


X64_MODES = ("x32", "x64")

CASE_SETS: dict[str, CaseSet] = {
    "jnp_misc": CaseSet("jnp_misc_cases", "values.record_tuple_leaves", "values.thunk_names",
                        "jnp_misc_reference.json"),
    "jnp_more": CaseSet("jnp_more_cases", "values.record_tuple_leaves", "values.thunk_names",
                        "jnp_more_reference.json"),
    "lax_gather": CaseSet("lax_gather_cases", "values.record_tuple_leaves",
                          "values.thunk_names", "lax_gather_reference.json"),
    "fft": CaseSet("fft_cases", "values.record_one_leaf", "values.thunk_names",
                   "fft_reference.json"),
    "complex_grad": CaseSet("complex_cases", "values.record_tree_leaves", "values.thunk_names",
                            "complex_grad_reference.json"),
    "grad": CaseSet("grad_cases", "values.record_gradients", "values.gradient_names",
                    "grad_reference.json"),
    "ode": CaseSet("ode_cases", "values.record_odeint", "values.odeint_names",
                   "ode_reference.json"),
    "expressions": CaseSet("recorders.expressions", "expressions.record_expressions",
                           "expressions.expression_names", "reference_cases.json"),
    "conv": CaseSet("recorders.conv", "conv.record_conv", "conv.conv_names",
                    "conv_reference.npz"),
    "libs": CaseSet("libs_cases", "libs.record_libs", "libs.libs_names",
                    "libs_reference.npz"),
    "random": CaseSet("random_cases", "draws.record_random", "draws.random_names",
                      "random_{mode}.npz", X64_MODES),
    "random_sort": CaseSet("random_cases", "draws.record_random_sort",
                           "draws.random_sort_names", "random_sort_{mode}.npz", X64_MODES),
    "random_derived": CaseSet("random_derived_cases", "draws.record_random",
                              "draws.random_names", "random_derived_{mode}.npz", X64_MODES),
    "linalg": CaseSet("linalg_cases", "draws.record_linalg", "draws.linalg_names",
                      "linalg_{mode}.npz", X64_MODES),
    "callbacks": CaseSet("callback_programs", "programs.record_callbacks",
                         "programs.callback_names", "callbacks_reference.json"),
    "cuda_lowerings": CaseSet("cuda_lowering_cases", "programs.record_cuda_lowerings",
                              "programs.cuda_lowering_names", "cuda_lowerings.json"),
    "stats_more": CaseSet("stats_more_cases", "values.record_tuple_leaves", "values.thunk_names",
                          "stats_more_reference.json"),
    "linalg_more": CaseSet("linalg_more_cases", "values.record_tuple_leaves",
                           "values.thunk_names", "linalg_more_reference.json"),
    "linalg_complex": CaseSet("linalg_complex_cases", "values.record_tree_leaves",
                              "values.thunk_names", "linalg_complex_reference.json"),
    "signal": CaseSet("signal_cases", "values.record_tuple_leaves", "values.thunk_names",
                      "signal_reference.json"),
    "ndimage": CaseSet("ndimage_cases", "values.record_tuple_leaves", "values.thunk_names",
                       "ndimage_reference.json"),
    "scipy_small": CaseSet("scipy_small_cases", "values.record_tuple_leaves",
                           "values.thunk_names", "scipy_small_reference.json"),
    "names": CaseSet("recorders.names", "names.record_names", "names.namespace_names",
                     "jax_names.json"),
    "dot_algorithms": CaseSet("recorders.programs", "programs.record_dot_algorithms",
                              "programs.dot_algorithm_names", "dot_algorithms.npz"),
    "special_functions": CaseSet("special_function_cases",
                                 "special_functions.record_special_functions",
                                 "special_functions.special_function_names",
                                 "special_functions_{mode}.npz", X64_MODES),
    "special_more": CaseSet("special_more_cases", "special_functions.record_special_functions",
                            "special_functions.special_function_names",
                            "special_more_{mode}.npz", X64_MODES),
    "jaxprs": CaseSet("jaxpr_cases", "jaxprs.record_jaxprs", "jaxprs.jaxpr_names",
                      "jaxprs_reference.json"),
    "exports": CaseSet("export_cases", "exports.record_exports", "exports.export_names",
                       "exports_reference.json"),
    "sparse": CaseSet("sparse_cases", "sparse.record_sparse", "sparse.sparse_names",
                      "sparse_reference.json"),
    "ops": CaseSet("ops_cases", "tables.record_values_or_errors", "values.thunk_names",
                   "ops_reference.json"),
    "rotation": CaseSet("rotation_cases", "tables.record_values_or_errors",
                        "values.thunk_names", "rotation_reference.json"),
    "image": CaseSet("image_cases", "tables.record_values_or_errors", "values.thunk_names",
                     "image_reference.json"),
    "lax_scaled_dot": CaseSet("lax_scaled_dot_cases", "tables.record_values_or_errors",
                              "values.thunk_names", "lax_scaled_dot_reference.json"),
    "jet": CaseSet("jet_cases", "tables.record_values_or_errors", "values.thunk_names",
                   "jet_reference.json"),
    "linalg_lapack": CaseSet("linalg_lapack_cases", "tables.record_arrays",
                             "values.thunk_names", "linalg_lapack_reference.npz"),
}


def _function(spec: str):
    module, name = spec.rsplit(".", 1)
    return getattr(importlib.import_module(f"recorders.{module}"), name)


def _cases_module(case_set: CaseSet):
    tests_on_path()
    return importlib.import_module(case_set.cases)


def _modes(case_set: CaseSet) -> tuple[str | None, ...]:
    return case_set.modes or (None,)


def _output(case_set: CaseSet, mode: str | None) -> pathlib.Path:
    return DATA / case_set.output.format(mode=mode)


def _relative(path: str | pathlib.Path) -> str:
    return str(pathlib.Path(path).resolve().relative_to(ROOT))


def list_case_sets() -> None:
    for name, case_set in CASE_SETS.items():
        outputs = ", ".join(_relative(_output(case_set, m)) for m in _modes(case_set))
        print(f"{name:15} {outputs}")


def dry_run(names: list[str]) -> None:
    """Print, per case set and mode, where its cases are, what runs them and the file it
    would write, then the cases' names; nothing imports jax."""
    for name in names:
        case_set = CASE_SETS[name]
        cases = _cases_module(case_set)
        assert callable(_function(case_set.record)), case_set.record
        for mode in _modes(case_set):
            case_names = _function(case_set.names)(cases, mode)
            label = f"{name} [{mode}]" if mode else name
            print(f"{label}: {_relative(cases.__file__)} -> {_relative(_output(case_set, mode))}"
                  f" (recorders/{case_set.record.replace('.', '.py:')})")
            print(f"  {len(case_names)} cases:")
            for case in case_names:
                print(f"    {case}")
    assert "jax" not in sys.modules, "a dry run must not import jax"


def record(name: str, mode: str | None) -> None:
    case_set = CASE_SETS[name]
    _function(case_set.record)(_cases_module(case_set), [_output(case_set, mode)], mode)


def record_in_fresh_processes(names: list[str]) -> None:
    for name in names:
        for mode in _modes(CASE_SETS[name]):
            env = dict(os.environ)
            command = [sys.executable, __file__, name]
            if mode:
                env.update(JAX_ENABLE_X64="1" if mode == "x64" else "0", JAX_PLATFORMS="cpu")
                command += ["--mode", mode]
            subprocess.run(command, check=True, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="case sets to record")
    parser.add_argument("--list", action="store_true", help="list the case sets and files")
    parser.add_argument("--dry-run", action="store_true",
                        help="say what would be recorded (every case set if none is named)")
    parser.add_argument("--all", action="store_true", help="record every case set")
    parser.add_argument("--mode", choices=X64_MODES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(CASE_SETS))
    if unknown:
        parser.error(f"unknown case sets {unknown}; see --list")
    names = list(CASE_SETS) if args.all or (args.dry_run and not args.names) else args.names
    if args.list:
        list_case_sets()
    elif args.dry_run:
        dry_run(names)
    elif args.mode or (len(names) == 1 and not CASE_SETS[names[0]].modes):
        record(names[0], args.mode)
    elif names:
        record_in_fresh_processes(names)
    else:
        parser.error("name a case set (see --list), or --all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
