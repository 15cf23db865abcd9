"""``spmdc dump`` and ``spmdc check`` on the small programs in tests/data/.

Most checks call ``spmdc.cli.main(argv)`` in-process (a subprocess costs a second or two
of start-up each); a few run the real console entry point to check exit statuses,
stderr and that piped output has no colour."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import spmdc
from spmdc.cli import main

DATA = Path(__file__).parents[1] / "data"
PROGRAMS = f"{DATA / 'cli_programs.py'}"
BROKEN = f"{DATA / 'cli_broken.py'}"
STEP = [f"{PROGRAMS}:step", "--example", "example"]     # pmap(grad) with a psum
FOUR = pytest.mark.devices(4)                  # the pmaps of tests/data/cli_*.py map over 4


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def spmdc_process(*argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)      # the child has the devices this process has
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "spmdc.cli", *argv], capture_output=True,
                          text=True, env=env, timeout=120)


# --- stages ----------------------------------------------------------------------------------

def test_stage_names_and_order_under_jit_vmap(capsys):
    status, out, _ = run(capsys, "dump", f"{PROGRAMS}:batched", "--arg", "f32[8,3]",
                         "--stages")
    assert status == 0
    assert out.split() == ["traced", "vmap", "cleanup", "stablehlo", "optimized_hlo"]


@pytest.mark.devices(4)
def test_stage_names_and_order_under_pmap_grad(capsys):
    status, out, _ = run(capsys, "dump", *STEP, "--stages")
    assert status == 0
    names = out.split()
    assert names[:3] == ["traced", "grad", "cleanup"]
    # pmap traces its body (which inlines the gradient), then runs its own passes
    assert names[-4:] == ["collectives", "cleanup.2", "stablehlo", "optimized_hlo"]


@pytest.mark.devices(4)
def test_lowered_stages_api():
    w, x = np.ones(3, np.float32), np.ones((4, 5, 3), np.float32)
    lowered = spmdc.pmap(spmdc.grad(lambda w, x: spmdc.lax.psum(x * w, "i").sum()),
                         axis_name="i", in_axes=(None, 0)).lower(w, x)
    names = [n for n, _ in lowered.stages(hlo=False)]
    assert "collectives" in names and names.index("grad") < names.index("collectives")
    assert "psum" in lowered.stage("collectives")
    assert "all_reduce" in lowered.stage("stablehlo")
    assert lowered.stage_names()[-2:] == ["stablehlo", "optimized_hlo"]
    with pytest.raises(KeyError, match="no stage 'vmap'"):
        lowered.stage("vmap")


@pytest.mark.devices(4)
def test_one_stage_and_transposed_collective_annotated(capsys):
    status, out, _ = run(capsys, "dump", *STEP, "--stage", "collectives")
    assert status == 0
    assert out.startswith("func @")
    transposed = [line for line in out.splitlines() if "psum(" in line]
    assert len(transposed) == 1        # the forward psum is dead in grad: only its transpose
    assert "# transpose of psum -> psum" in transposed[0]
    assert "Note [collective transpose]" in transposed[0]
    assert "note=" not in transposed[0]


def test_diff_shows_the_batching_dimension_appearing(capsys):
    status, out, _ = run(capsys, "dump", f"{PROGRAMS}:batched", "--arg", "f32[8,3]", "--diff")
    assert status == 0
    assert "--- traced\n+++ vmap" in out
    assert "-  %1: f32[3] = sin(%0)" in out
    assert "+  %1: f32[8,3] = sin(%0)" in out
    assert "-func @scale(%0: f32[3]) -> (f32[3]) {" in out


@pytest.mark.devices(4)
def test_stats_count_equations_and_bytes_of_a_psum(capsys):
    status, out, _ = run(capsys, "dump", *STEP, "--stats", "--format", "json")
    assert status == 0
    report = json.loads(out)
    assert report["mesh"] == [["i", 4]]
    traced = report["stages"][0]
    assert traced["name"] == "traced"
    assert traced["equations"]["psum"] == 1 and traced["equations"]["mul"] == 1
    (psum,) = traced["collectives"]
    # per device x is f32[5,3]: 15 elements x 4 bytes
    assert psum["operand"] == "f32[5,3]" and psum["bytes"] == 15 * 4
    assert psum["axes"] == ["i"] and psum["replica_groups"] == [[0, 1, 2, 3]]
    assert psum["source"].endswith("cli_programs.py:25") and not psum["transposed"]
    final = report["stages"][-1]
    assert [c["transposed"] for c in final["collectives"]] == [True]
    status, text, _ = run(capsys, "dump", *STEP, "--stats", "--stage", "traced")
    # a bare name means the stage's last occurrence: pmap's trace, after grad
    assert text.startswith("== traced.2 ==") and text.count("==") == 2
    assert "psum over i: f32[5,3], 60 bytes per step, replica_groups=[[0, 1, 2, 3]]  " \
        "(transposed)" in text
    assert "total: 1 collectives, 60 bytes per step" in text


def test_json_parses(capsys):
    status, out, _ = run(capsys, "dump", f"{PROGRAMS}:loss", "--arg", "f32[3]", "--arg",
                         "f32[8,3]", "--format", "json")
    assert status == 0
    stages = json.loads(out)["stages"]
    assert [s["name"] for s in stages] == ["traced", "cleanup", "stablehlo", "optimized_hlo"]
    assert "tanh(" in stages[0]["text"] and "stablehlo.tanh" in stages[2]["text"]
    assert "HloModule" in stages[3]["text"]
    status, out, _ = run(capsys, "dump", f"{PROGRAMS}:batched", "--arg", "f32[8,3]",
                         "--diff", "--format", "json")
    diffs = json.loads(out)["diffs"]
    assert [(d["from"], d["to"]) for d in diffs] == [("traced", "vmap"), ("vmap", "cleanup")]


def test_static_argument_and_dot(capsys, tmp_path):
    graph = tmp_path / "g.dot"
    status, out, _ = run(capsys, "dump", f"{PROGRAMS}:power", "--arg", "f32[3]",
                         "--static", "k=3", "--stage", "cleanup", "--dot", str(graph))
    assert status == 0 and "integer_pow(%0) {y=3}" in out
    text = graph.read_text()
    assert text.startswith('digraph "cleanup"') and "in0 -> e0;" in text
    assert "e0 -> out0;" in text and 'label="integer_pow\\nf32[3]"' in text


def test_colour_only_when_asked(capsys):
    _, plain, _ = run(capsys, "dump", f"{PROGRAMS}:batched", "--arg", "f32[8,3]", "--diff")
    _, coloured, _ = run(capsys, "dump", f"{PROGRAMS}:batched", "--arg", "f32[8,3]", "--diff",
                         "--color", "always")
    assert "\x1b[" not in plain
    assert "\x1b[32m+  %1: f32[8,3] = sin(%0)\x1b[0m" in coloured


# --- check -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, args, kind, line", [
    pytest.param("unbound_axis", ["f32[4,3]"], "unbound axis name 'j'", 8, marks=FOUR),
    pytest.param("bad_permutation", ["f32[4,3]"], "uses destination 1 more than once", 15,
                 marks=FOUR),
    pytest.param("varying_out", ["f32[4,3]"], "out_axes=None", 22, marks=FOUR),
    ("shape_error", ["f32[3]", "f32[4]"], "contracting dimension mismatch", 29),
])
def test_check_reports_each_mistake_with_its_line(capsys, name, args, kind, line):
    argv = ["check", f"{BROKEN}:{name}"]
    for a in args:
        argv += ["--arg", a]
    status, out, err = run(capsys, *argv)
    assert status == 1
    assert kind in err
    assert f"cli_broken.py:{line}" in err


@pytest.mark.devices(4)
def test_check_passes_a_correct_program(capsys):
    status, out, err = run(capsys, "check", f"{BROKEN}:correct", "--arg", "f32[4,3]")
    assert status == 0 and err == ""
    assert "ok" in out and "collectives" in out


# --- bad command lines -----------------------------------------------------------------------

@pytest.mark.parametrize("argv, fragment", [
    (["dump", "no/such/file.py:f", "--arg", "f32[3]"], "no such file: no/such/file.py"),
    (["dump", f"{PROGRAMS}:los", "--arg", "f32[3]"], "has no function 'los'; did you mean"),
    (["dump", f"{PROGRAMS}:loss", "--arg", "f32[8,"], "malformed type 'f32[8,'"),
    (["dump", f"{PROGRAMS}:loss", "--arg", "f32[3]", "--arg", "f32[8,3]", "--stage", "bogus"],
     "unknown stage 'bogus'"),
    (["dump", f"{PROGRAMS}:loss", "--arg", "f32[3]", "--arg", "f32[8,3]", "--stage", "vmap"],
     "unknown stage 'vmap'; the stages are traced, cleanup"),
    (["check", f"{PROGRAMS}", "--arg", "f32[3]"], "expected FILE.py:NAME"),
    (["dump", f"{PROGRAMS}:loss", "--frobnicate"], "unrecognized arguments"),
])
def test_bad_command_lines_exit_2_with_one_line(capsys, argv, fragment):
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert fragment in err
    assert err.count("\n") == 1 and out == ""


# --- the real command ------------------------------------------------------------------------

def test_subprocess_dump_is_plain_when_piped():
    done = spmdc_process("dump", f"{PROGRAMS}:batched", "--arg", "f32[8,3]", "--stage", "vmap")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("func @scale(%0: f32[8,3]) -> (f32[8,3])")
    assert "\x1b[" not in done.stdout


@pytest.mark.devices(4)
def test_subprocess_exit_statuses():
    broken = spmdc_process("check", f"{BROKEN}:unbound_axis", "--arg", "f32[4,3]")
    assert broken.returncode == 1 and "unbound axis name 'j'" in broken.stderr
    bad = spmdc_process("dump", f"{PROGRAMS}:loss", "--arg", "f32[8,")
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("spmdc: error: malformed type")


@pytest.mark.parametrize("no_color", [False, True])
def test_subprocess_colour_on_a_terminal_unless_no_color(no_color):
    import pty
    leader, follower = pty.openpty()
    env = dict(os.environ)      # the child has the devices this process has
    env.pop("NO_COLOR", None)
    if no_color:
        env["NO_COLOR"] = "1"
    argv = [sys.executable, "-m", "spmdc.cli", "dump", f"{PROGRAMS}:batched", "--arg",
            "f32[8,3]", "--diff"]
    done = subprocess.run(argv, stdout=follower, stderr=subprocess.PIPE, env=env, timeout=120)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert done.returncode == 0, done.stderr
    assert b"f32[8,3] = sin(%0)" in out
    assert (b"\x1b[32m+" in out) != no_color


# --- the user's mistakes: one line each, the user's traceback only for the user's raise -----

USER = f"{DATA / 'cli_user_errors.py'}"


def _user_file(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("argv, fragment", [
    (["dump", f"{USER}:NOT_A_FUNCTION", "--arg", "f32[3]"], "is a int, not a function"),
    (["check", f"{USER}:nothing", "--arg", "f32[3]"], "has no function 'nothing'"),
    (["dump", f"{USER}:two_arguments", "--arg", "f32[3]"],
     "cannot be called with these arguments (missing a required argument: 'y'; 1 --arg "
     "given); its signature is (x, y)"),
    (["check", f"{USER}:raises", "--example", "example_of_two"],
     "too many positional arguments; --example example_of_two() gave 2 argument(s)"),
    (["dump", f"{USER}:raises", "--arg", "f32[-1]"], "negative dimension in --arg 'f32[-1]'"),
    (["dump", f"{USER}:raises", "--arg", "q9[3]"], "malformed type 'q9[3]'"),
    (["dump", f"{USER}:two_arguments", "--arg", "f32[3]", "--arg", "f32[3]", "--dot",
      "/no/such/folder/g.dot"], "cannot write --dot /no/such/folder/g.dot"),
])
def test_usage_mistakes_exit_2_with_one_line(capsys, argv, fragment):
    status, out, err = run(capsys, *argv)
    assert status == 2, err
    assert fragment in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("command", ["dump", "check"])
def test_the_users_raise_shows_only_the_users_frames(capsys, command):
    status, out, err = run(capsys, command, f"{USER}:raises", "--arg", "f32[3]")
    assert status == 1
    lines = err.splitlines()
    assert lines[0].startswith("Traceback (most recent call last; spmdc's own frames left")
    assert lines[-1].endswith("ValueError: the user's own error (at "
                              f"{USER}:13)")
    frames = [line for line in lines if line.startswith('  File "')]
    assert frames == [f'  File "{USER}", line 9, in raises',
                      f'  File "{USER}", line 13, in _helper']


def test_example_that_raises(capsys):
    status, out, err = run(capsys, "dump", f"{USER}:raises", "--example", "example_raises")
    assert status == 1
    frames = [line for line in err.splitlines() if line.startswith('  File "')]
    assert frames == [f'  File "{USER}", line 17, in example_raises']
    assert err.splitlines()[-1] == ("spmdc: --example example_raises() failed: RuntimeError: "
                                    "no example today")


def test_spmdc_errors_caused_by_the_user_stay_one_line(capsys):
    # spmdc raised (a shape error in the user's op): no traceback, the user's line named
    status, out, err = run(capsys, "check", f"{BROKEN}:shape_error", "--arg", "f32[3]",
                           "--arg", "f32[4]")
    assert status == 1 and err.count("\n") == 1 and "Traceback" not in err


def test_files_that_do_not_import(capsys, tmp_path):
    syntax = _user_file(tmp_path, "syntax.py", "def f(x:\n    return x\n")
    status, out, err = run(capsys, "dump", f"{syntax}:f", "--arg", "f32[3]")
    assert status == 1 and err.count("\n") == 1
    assert "importing" in err and "SyntaxError: '(' was never closed" in err
    boom = _user_file(tmp_path, "boom.py", "import os\n\nraise KeyError('at import')\n")
    status, out, err = run(capsys, "check", f"{boom}:f", "--arg", "f32[3]")
    assert status == 1
    assert [line for line in err.splitlines() if line.startswith('  File "')] == \
        [f'  File "{boom}", line 3, in <module>']
    assert err.splitlines()[-1].endswith("failed: KeyError: 'at import'")
    missing = _user_file(tmp_path, "missing_import.py", "import no_such_module_spmdc\n")
    status, out, err = run(capsys, "dump", f"{missing}:f", "--arg", "f32[3]")
    assert status == 1
    assert "ModuleNotFoundError: No module named 'no_such_module_spmdc'" in err


def test_subprocess_user_errors_have_no_spmdc_traceback(tmp_path):
    done = spmdc_process("dump", f"{USER}:raises", "--arg", "f32[3]")
    assert done.returncode == 1
    assert "spmdc/" not in done.stderr.replace(USER, "")     # no frame of spmdc itself
    done = spmdc_process("check", str(tmp_path / "absent.py") + ":f", "--arg", "f32[3]")
    assert done.returncode == 2
    assert done.stderr == f"spmdc: error: no such file: {tmp_path / 'absent.py'}\n"


@pytest.mark.devices(8)
def test_stats_of_a_partitioned_program_list_the_collectives_xla_inserted(capsys):
    # The contraction is split over 'y': the partitioner adds an all-reduce of each
    # device's f32[4,3] partial product (Note [jit over sharded arrays]).
    status, out, _ = run(capsys, "dump", f"{PROGRAMS}:sharded_matmul", "--arg", "f32[8,4]",
                         "--arg", "f32[4,3]", "--stats", "--format", "json")
    assert status == 0
    (reduce,) = json.loads(out)["partitioner"]
    assert reduce["op"] == "all-reduce" and reduce["bytes"] == 4 * 3 * 4
    status, text, _ = run(capsys, "dump", f"{PROGRAMS}:sharded_matmul", "--arg", "f32[8,4]",
                          "--arg", "f32[4,3]", "--stage", "stablehlo")
    assert "mhlo.num_partitions = 8" in text and "sdy.sharding_constraint" in text


# --- issue 30: a huge --arg, and files that call sys.exit ------------------------------------

def test_a_huge_arg_is_dumped_without_its_memory(capsys, tmp_path):
    # The arguments stand for their types alone: f32[100000000000] (373 GiB) needs no
    # allocation (it was a NumPy allocation traceback).
    program = _user_file(tmp_path, "scale.py", "import spmdc\n"
                         "f = spmdc.jit(lambda x: x * 2 + 1)\n")
    status, out, err = run(capsys, "dump", f"{program}:f", "--arg", "f32[100000000000]",
                           "--stage", "stablehlo")
    assert status == 0, err
    assert "tensor<100000000000xf32>" in out
    status, out, err = run(capsys, "dump", f"{program}:f", "--arg",
                           "f32[1099511627776,1099511627776]")
    assert status == 2 and err.count("\n") == 1
    assert ("--arg 'f32[1099511627776,1099511627776]' is too large: its "
            "1208925819614629174706176 elements are more than any array can hold") in err


def test_a_file_that_calls_sys_exit(capsys, tmp_path):
    exits = _user_file(tmp_path, "exits.py", "import sys\n\nsys.exit(3)\n")
    status, out, err = run(capsys, "dump", f"{exits}:f", "--arg", "f32[3]")
    assert status == 1 and err.count("\n") == 1
    assert (f"spmdc: importing {exits} ended the program: it called sys.exit(3) at "
            f"{exits}:3. spmdc imports the file to find 'f'; put what runs the program "
            "under `if __name__ == '__main__':`") in err
    inside = _user_file(tmp_path, "inside.py", "import sys\n\ndef f(x):\n"
                        "    sys.exit('stop')\n\ndef example():\n    sys.exit(4)\n")
    for command in ("dump", "check"):
        status, out, err = run(capsys, command, f"{inside}:f", "--arg", "f32[3]")
        assert status == 1, command
        assert (f"tracing {inside}:f ended the program: it called sys.exit('stop') at "
                f"{inside}:4") in err, command
    status, out, err = run(capsys, "dump", f"{inside}:f", "--example", "example")
    assert status == 1
    assert f"--example example() called sys.exit(4) at {inside}:7" in err
    done = spmdc_process("dump", f"{exits}:f", "--arg", "f32[3]")   # the real command
    assert done.returncode == 1 and "called sys.exit(3)" in done.stderr
