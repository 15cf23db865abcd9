"""The ``spmdc`` command: ``spmdc dump`` shows every stage of a program, ``spmdc check``
catches SPMD mistakes before compiling.

    spmdc dump  FILE.py:NAME (--arg TYPE ... | --example FUNC) [--static K=V ...]
                [--stage NAME | --stages | --diff | --stats] [--format text|json]
                [--dot FILE] [--color auto|always|never]
    spmdc check FILE.py:NAME (--arg TYPE ... | --example FUNC) [--static K=V ...]

``NAME`` is a function in the file, plain (dumped as ``jit`` would compile it) or already
transformed (a module-level ``step = spmdc.pmap(...)``); each ``--arg`` is a type such as
``f32[8,3]`` (zeros of that type are passed). The stages are the ones ``lower()`` records
(``Lowered.stages()``): ``traced``, the output of each pass that ran, ``stablehlo``,
``optimized_hlo``. Transposed collectives carry a comment naming the rule used (See Note
[collective transpose]).

Exit status: 0 when all went well, 1 when ``check`` found a mistake or the user's program
failed (``dump`` could not trace it, importing the file or ``--example`` raised), 2 for a
bad command line. Either way stderr gets one line saying what went wrong; when the
exception was raised by the user's own code, the user's frames of the traceback come
before it (spmdc's frames are left out), as Python would show them.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import json
import math
import os
import re
import sys
import sysconfig
import traceback
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

HLO_STAGES = ("stablehlo", "optimized_hlo")


class UsageError(Exception):
    """A bad command line: reported in one line, exit status 2."""


class UserCodeError(Exception):
    """The user's file could not be run: reported in one line (after the user's frames
    of the traceback of ``__cause__``, when the user's code raised it), exit status 1."""


# --- whose code raised ---------------------------------------------------------------------

_SPMDC_DIR = str(Path(__file__).resolve().parent)
_LIBRARY_DIRS = tuple({str(Path(p).resolve()) for key in ("stdlib", "platstdlib", "purelib",
                                                            "platlib")
                       if (p := sysconfig.get_paths().get(key))})


def _inside(filename: str, folder: str) -> bool:
    return filename == folder or filename.startswith(folder + os.sep)


def _is_user_file(filename: str) -> bool:
    """Whether a traceback frame's file is the user's (not spmdc, Python or a library)."""
    if filename.startswith("<"):                   # <frozen importlib._bootstrap> ...
        return False
    resolved = str(Path(filename).resolve())
    return not _inside(resolved, _SPMDC_DIR) and \
        not any(_inside(resolved, d) for d in _LIBRARY_DIRS)


def _user_traceback(e: BaseException) -> str:
    """The user's frames of ``e``'s traceback, formatted like Python's, when the user's
    code raised ``e`` (no spmdc frame after the last user frame); otherwise ""."""
    frames = traceback.extract_tb(e.__traceback__)
    kinds = [_is_user_file(f.filename) for f in frames]
    last_user = max((i for i, k in enumerate(kinds) if k), default=-1)
    last_spmdc = max((i for i, f in enumerate(frames)
                      if _inside(str(Path(f.filename).resolve()), _SPMDC_DIR)), default=-1)
    if last_user < 0 or last_spmdc > last_user:
        return ""
    user = [f for f, k in zip(frames, kinds, strict=True) if k]
    return ("Traceback (most recent call last; spmdc's own frames left out):\n"
            + "".join(traceback.format_list(user)))


# --- loading the user's program ------------------------------------------------------------

def _load(target: str) -> tuple[Any, Any]:
    """``FILE.py:NAME`` -> (the module, the object NAME)."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:NAME, got {target!r}")
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"_spmdc_user_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(file.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise UserCodeError(f"importing {path} failed: {type(e).__name__}: {e}") from e
    except SystemExit as e:
        raise UserCodeError(
            f"importing {path} ended the program: it called sys.exit({e.code!r}) at "
            f"{_exit_line(e, path)}. spmdc imports the file to find {name!r}; put what "
            "runs the program under `if __name__ == '__main__':`") from None
    if not hasattr(module, name):
        known = sorted(k for k, v in vars(module).items()
                       if callable(v) and not k.startswith("_") and
                       getattr(v, "__module__", module.__name__) == module.__name__)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"{path} has no function {name!r}{hint}")
    obj = getattr(module, name)
    if not callable(obj):
        raise UsageError(f"{path}:{name} is a {type(obj).__name__}, not a function")
    return module, obj


def _exit_line(e: SystemExit, path: str) -> str:
    """Where in the user's file ``path`` the program called sys.exit."""
    return _user_line(e, path) or path


def _exit_while_tracing(target: str, e: SystemExit) -> UserCodeError:
    return UserCodeError(f"tracing {target} ended the program: it called "
                         f"sys.exit({e.code!r}) at {_exit_line(e, target.rpartition(':')[0])}")


def _arguments(opts: argparse.Namespace, module: Any) -> tuple[list[Any], dict[str, Any]]:
    import numpy as np

    from .compiler.ir import parse_type
    from .errors import IRError
    statics: dict[str, Any] = {}
    for item in opts.static:
        key, sep, text = item.partition("=")
        if not sep or not key.isidentifier():
            raise UsageError(f"--static expects NAME=VALUE, got {item!r}")
        try:
            statics[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            statics[key] = text                       # a bare word is a string
    if opts.example:
        make = getattr(module, opts.example, None)
        if not callable(make):
            raise UsageError(f"{module.__file__} has no function {opts.example!r} "
                             "(--example)")
        try:
            args = make()
        except Exception as e:
            raise UserCodeError(f"--example {opts.example}() failed: "
                                f"{type(e).__name__}: {e}") from e
        except SystemExit as e:
            raise UserCodeError(
                f"--example {opts.example}() called sys.exit({e.code!r}) at "
                f"{_exit_line(e, module.__file__)}; it must return the example "
                "arguments") from None
        return list(args) if isinstance(args, (tuple, list)) else [args], statics
    args = []
    for text in opts.arg:
        try:
            t = parse_type(text)
        except (IRError, ValueError):
            raise UsageError(f"malformed type {text!r} for --arg (expected a dtype and a "
                             "shape, e.g. 'f32[8,3]' or 'i32[]')") from None
        if any(d < 0 for d in t.shape):
            raise UsageError(f"negative dimension in --arg {text!r}: dimensions are sizes "
                             ">= 0")
        try:          # no memory: dump and check read the shape and dtype alone
            args.append(np.broadcast_to(np.zeros((), t.dtype), t.shape))
        except ValueError:
            raise UsageError(f"--arg {text!r} is too large: its {math.prod(t.shape)} "
                             "elements are more than any array can hold") from None
    return args, statics


def _check_arity(target: str, obj: Any, args: list[Any], statics: dict[str, Any],
                 opts: argparse.Namespace) -> None:
    """A call that cannot bind (too few or too many --arg) is a bad command line."""
    import inspect
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*args, **statics)
    except TypeError as e:
        given = f"--example {opts.example}() gave {len(args)} argument(s)" if opts.example \
            else f"{len(opts.arg)} --arg given"
        raise UsageError(f"{target} cannot be called with these arguments ({e}; "
                         f"{given}); its signature is {signature}") from None


def _lower(obj: Any, args: list[Any], statics: dict[str, Any]) -> Any:
    import functools

    import spmdc
    if hasattr(obj, "lower"):                      # already jit or pmap
        return obj.lower(*args, **statics)
    fun = functools.partial(obj, **statics) if statics else obj
    if statics:
        functools.update_wrapper(fun, obj)
    return spmdc.jit(fun).lower(*args)


# --- presenting stages ---------------------------------------------------------------------

_TRANSPOSE_RULES = {
    "psum": "psum -> psum",
    "pmax": "pmax -> cotangent routed to the devices holding the max (psum of shares)",
    "pmin": "pmin -> cotangent routed to the devices holding the min (psum of shares)",
    "all_gather": "all_gather -> psum_scatter",
    "psum_scatter": "psum_scatter -> all_gather",
    "ppermute": "ppermute -> ppermute with the inverse permutation",
    "all_to_all": "all_to_all -> all_to_all with split and concat axes swapped",
}
_NOTE = re.compile(r"(, )?note='per-device transpose of (\w+), see Note "
                   r"\[collective transpose\]'")


def annotate(text: str) -> str:
    """Replace each transposed collective's ``note`` param with a comment naming the rule
    (See Note [collective transpose])."""
    out = []
    for line in text.splitlines():
        m = _NOTE.search(line)
        if m:
            line = _NOTE.sub("", line).replace(" {}", "").replace("{, ", "{")
            rule = _TRANSPOSE_RULES.get(m.group(2), m.group(2))
            line += (f"  # transpose of {rule}: per device, replicated inputs are not "
                     "summed over devices (Note [collective transpose])")
        out.append(line)
    return "\n".join(out)


class _Style:
    def __init__(self, on: bool):
        self.on = on

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.on else text

    def ir(self, text: str) -> str:
        if not self.on:
            return text
        return "\n".join(self(line, "2;36") if "  # transpose of" in line else line
                         for line in text.splitlines())

    def diff(self, text: str) -> str:
        if not self.on:
            return text
        codes = {"+": "32", "-": "31", "@": "36"}
        return "\n".join(self(line, codes[line[0]]) if line[:1] in codes else line
                         for line in text.splitlines())


def _mesh(lowered: Any) -> tuple[tuple[str, int], ...]:
    env = lowered.axis_env or {}
    return tuple((n, env[n]) for n in lowered.mesh_axes)


def _walk(func: Any):
    from .compiler.ir import Func
    for eqn in func.eqns:
        yield eqn
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, Func):
                    yield from _walk(sub)


def stats(func: Any, mesh: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    """Equation counts per primitive, and for each collective its axes, replica groups and
    the bytes it moves per step (operand element count x itemsize)."""
    from .compiler.passes.collectives import replica_groups, varying_rules
    counts = Counter(eqn.prim.name for eqn in _walk(func))
    collectives = []
    for eqn in _walk(func):
        if eqn.prim not in varying_rules:
            continue
        axes = tuple(eqn.params.get("axes", ()))
        try:
            groups = replica_groups(mesh, axes)
        except NameError:                     # not under pmap (or not bound)
            groups = None
        operand = eqn.inputs[0].type if eqn.inputs else None
        collectives.append({
            "primitive": eqn.prim.name, "axes": list(axes), "replica_groups": groups,
            "operand": str(operand) if operand else None,
            "bytes": operand.size * operand.dtype.itemsize if operand else 0,
            "transposed": "note" in eqn.params, "source": eqn.source})
    return {"equations": dict(sorted(counts.items())), "collectives": collectives}


_HLO_COLLECTIVE = re.compile(
    r"= (?P<type>\([^)]*\)|\S+) (?P<op>all-reduce|all-gather|reduce-scatter|"
    r"collective-permute|all-to-all)(?:-start)?\(")
_HLO_GROUPS = re.compile(r"(?:replica_groups|source_target_pairs)=(.*?)(?:, [a-z_]+=|$)")
_HLO_ARRAY = re.compile(r"(?P<dtype>[a-z]+\d*)\[(?P<dims>[\d,]*)\]")
_HLO_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4,
              "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}


def hlo_collectives(text: str) -> list[dict[str, Any]]:
    """The collectives in an optimized HLO module (those a partitioned program's
    partitioner inserted): kind, result type, bytes per device per step, groups."""
    out = []
    for line in text.splitlines():
        m = _HLO_COLLECTIVE.search(line)
        if m is None:
            continue
        size = 0
        for arr in _HLO_ARRAY.finditer(m.group("type")):
            dims = [int(d) for d in arr.group("dims").split(",") if d]
            size += math.prod(dims) * _HLO_BYTES.get(arr.group("dtype"), 0)
        groups = _HLO_GROUPS.search(line)
        out.append({"op": m.group("op"), "type": m.group("type"), "bytes": size,
                    "replica_groups": groups.group(1) if groups else None})
    return out


def compilation_cache_status(lowered: Any) -> dict[str, Any]:
    """Whether a persistent compilation cache is on and, if so, whether compiling
    ``lowered`` loaded it from there (Note [persistent compilation cache])."""
    from .runtime import cache, pjrt
    store = cache.cache()
    if store is None:
        return {"enabled": False, "directory": None, "hit": None}
    compiled = lowered.compile()
    entry = getattr(compiled, "_entry", None) or getattr(lowered, "_entry", None)
    exe = getattr(entry, "exe", None) or getattr(getattr(entry, "executable", None), "exe",
                                                 None)
    return {"enabled": True, "directory": store.directory,
            "hit": None if exe is None else pjrt.from_cache(exe)}


def _stats_text(name: str, st: dict[str, Any], style: _Style) -> str:
    lines = [style(f"== {name} ==", "1")]
    total = sum(st["equations"].values())
    lines.append(f"  {total} equations: " + ", ".join(
        f"{p} {n}" for p, n in sorted(st["equations"].items(), key=lambda kv: -kv[1])))
    for c in st["collectives"]:
        groups = c["replica_groups"]
        tag = "  (transposed)" if c["transposed"] else ""
        lines.append(f"  {c['primitive']} over {','.join(c['axes'])}: {c['operand']}, "
                     f"{c['bytes']} bytes per step, replica_groups={groups}{tag}")
    if st["collectives"]:
        lines.append(f"  total: {len(st['collectives'])} collectives, "
                     f"{sum(c['bytes'] for c in st['collectives'])} bytes per step")
    return "\n".join(lines)


def dot(func: Any, name: str) -> str:
    """The dataflow graph of ``func`` as Graphviz DOT: one node per input, equation and
    output, one edge per use."""
    from .compiler.ir import Lit
    lines = [f'digraph "{name}" {{', "  rankdir=TB;", '  node [fontname="monospace"];']
    node: dict[Any, str] = {}
    for k, v in enumerate(func.inputs):
        node[v] = f"in{k}"
        lines.append(f'  in{k} [shape=box, label="input {k}\\n{v.type}"];')
    for n, eqn in enumerate(func.eqns):
        types = ", ".join(str(v.type) for v in eqn.outputs)
        shape = ', style=filled, fillcolor="lightblue"' if "axes" in eqn.params else ""
        lines.append(f'  e{n} [label="{eqn.prim.name}\\n{types}"{shape}];')
        for a in eqn.inputs:
            if not isinstance(a, Lit):
                lines.append(f"  {node[a]} -> e{n};")
        for v in eqn.outputs:
            node[v] = f"e{n}"
    for k, a in enumerate(func.outputs):
        lines.append(f'  out{k} [shape=box, label="output {k}\\n{a.type}"];')
        if not isinstance(a, Lit):
            lines.append(f"  {node[a]} -> out{k};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _pick(lowered: Any, name: str) -> str:
    names = lowered.stage_names()
    if name in names or any(n.split(".")[0] == name for n in names):
        return name
    raise UsageError(f"unknown stage {name!r}; the stages are {', '.join(names)}")


def _ir_stage(lowered: Any, name: str) -> tuple[str, Any]:
    """The IR stage ``name`` (a bare name means its last occurrence) as (name, Func)."""
    for n, func in reversed(lowered.recorded):
        if n == name or n.split(".")[0] == name:
            return n, func
    raise UsageError(f"stage {name!r} is not an IR stage (--dot and --stats need one of "
                     f"{', '.join(n for n, _ in lowered.recorded)})")


# --- commands ------------------------------------------------------------------------------

def _dump(opts: argparse.Namespace, lowered: Any, style: _Style) -> int:
    as_json = opts.format == "json"
    if opts.stage:
        _pick(lowered, opts.stage)
    if opts.dot:
        name = opts.stage or lowered.recorded[-1][0]
        graph = dot(_ir_stage(lowered, name)[1], name)
        try:
            Path(opts.dot).write_text(graph)
        except OSError as e:
            raise UsageError(f"cannot write --dot {opts.dot}: {e.strerror or e}") from None
    if opts.stages:
        names = lowered.stage_names()
        print(json.dumps({"stages": names}) if as_json else "\n".join(names))
        return 0
    mesh = _mesh(lowered)
    if opts.stats:
        chosen = [_ir_stage(lowered, opts.stage)] if opts.stage else lowered.recorded
        result = [(n, stats(f, mesh)) for n, f in chosen]
        # A program XLA partitions: the collectives its partitioner inserted
        # (Note [jit over sharded arrays]).
        inserted = (hlo_collectives(lowered.optimized_hlo())
                    if getattr(lowered, "partitioned", False) else None)
        cached = compilation_cache_status(lowered)
        if as_json:
            print(json.dumps({"mesh": [list(m) for m in mesh],
                              "stages": [{"name": n, **s} for n, s in result],
                              "compilation_cache": cached,
                              **({"partitioner": inserted} if inserted is not None else {})},
                             indent=1))
        else:
            print("\n".join(_stats_text(n, s, style) for n, s in result))
            print("persistent compilation cache: " + (
                "off (set SPMDC_CACHE_DIR to keep compiled programs)" if not cached["enabled"]
                else f"{cached['directory']}: this program was "
                     + ("loaded from it" if cached["hit"] else "compiled (and stored)")))
            if inserted is not None:
                print(style("== optimized_hlo: collectives XLA's partitioner inserted ==", "1"))
                for c in inserted:
                    print(f"  {c['op']}: {c['type']}, {c['bytes']} bytes per device per step, "
                          f"replica_groups={c['replica_groups']}")
                print(f"  total: {len(inserted)} collectives, "
                      f"{sum(c['bytes'] for c in inserted)} bytes per device per step")
        return 0
    if opts.diff:
        texts = [(n, annotate(str(f))) for n, f in lowered.recorded]
        diffs = []
        for (a, ta), (b, tb) in zip(texts, texts[1:], strict=False):
            diff = "\n".join(difflib.unified_diff(ta.splitlines(), tb.splitlines(), a, b,
                                                  lineterm=""))
            diffs.append({"from": a, "to": b, "diff": diff})
        if as_json:
            print(json.dumps({"diffs": diffs}, indent=1))
        else:
            print("\n".join(style.diff(d["diff"]) if d["diff"] else
                            style(f"--- {d['from']}\n+++ {d['to']}\n(no change)", "2")
                            for d in diffs))
        return 0
    if opts.stage:
        names = [opts.stage]
    else:
        names = lowered.stage_names()
    stages = [(n, annotate(lowered.stage(n)) if n not in HLO_STAGES else lowered.stage(n))
              for n in names]
    if as_json:
        print(json.dumps({"stages": [{"name": n, "text": t} for n, t in stages]}, indent=1))
    elif opts.stage:
        print(style.ir(stages[0][1]))
    else:
        print("\n\n".join(f"{style(f'== {n} ==', '1')}\n{style.ir(t)}" for n, t in stages))
    return 0


def _check(opts: argparse.Namespace, obj: Any, args: list[Any],
           statics: dict[str, Any]) -> int:
    os.environ["SPMDC_CHECKS"] = "1"               # the verifier after every pass
    from .compiler.ir import check
    try:
        lowered = _lower(obj, args, statics)
        for _, func in lowered.recorded:            # the verifier, on every stage
            check(func)
    except Exception as e:                          # what the user must fix, with its line
        return _failed(opts.target, e, "")
    except SystemExit as e:
        raise _exit_while_tracing(opts.target, e) from None
    n = sum(1 for _ in _walk(lowered.func))
    print(f"{opts.target}: ok ({n} equations, stages {', '.join(lowered.stage_names(False))}"
          ")")
    return 0


def _failed(target: str, e: BaseException, prefix: str) -> int:
    """Report that tracing ``target`` raised ``e``: the user's frames when the user's code
    raised it, then one line naming the user's line; exit status 1."""
    message = str(e)
    source = _user_line(e, target.rpartition(":")[0])
    if source and source not in message:
        message += f" (at {source})"
    print(f"{_user_traceback(e)}{prefix}{target}: {type(e).__name__}: {message}",
          file=sys.stderr)
    return 1


def _user_line(e: BaseException, path: str) -> str | None:
    """``file:line`` of the deepest frame of the traceback that is in the user's file."""
    import traceback
    target = str(Path(path).resolve())
    found = None
    for frame in traceback.extract_tb(e.__traceback__):
        if str(Path(frame.filename).resolve()) == target:
            found = f"{frame.filename}:{frame.lineno}"
    return found


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:           # one line, not the whole usage
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="spmdc", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in [("dump", "show every stage of a program"),
                            ("check", "trace, verify and run the collectives pass; "
                                      "report SPMD mistakes without compiling")]:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("target", metavar="FILE.py:NAME")
        p.add_argument("--arg", action="append", default=[], metavar="TYPE",
                       help="an argument type, e.g. 'f32[8,3]' (repeat per argument)")
        p.add_argument("--example", metavar="FUNC",
                       help="a function in the file returning the example arguments")
        p.add_argument("--static", action="append", default=[], metavar="K=V",
                       help="a static keyword argument (a Python literal)")
        if name == "dump":
            p.add_argument("--stage", metavar="NAME", help="show one stage")
            p.add_argument("--stages", action="store_true", help="list the stage names")
            p.add_argument("--diff", action="store_true",
                           help="unified diff between consecutive IR stages")
            p.add_argument("--stats", action="store_true",
                           help="equations per primitive; bytes moved per collective")
            p.add_argument("--format", choices=("text", "json"), default="text")
            p.add_argument("--dot", metavar="FILE",
                           help="write a stage's dataflow graph (Graphviz DOT) to FILE")
            p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        opts = parser.parse_args(argv)
    except SystemExit as e:                          # argparse already printed one line
        return int(e.code or 0)
    try:
        if opts.example and opts.arg:
            raise UsageError("give either --arg or --example, not both")
        module, obj = _load(opts.target)
        args, statics = _arguments(opts, module)
        _check_arity(opts.target, obj, args, statics, opts)
        if opts.command == "check":
            return _check(opts, obj, args, statics)
        if opts.stage and opts.stage.split(".")[0] not in {
                "traced", "vmap", "grad", "jvp", "collectives", "cleanup", *HLO_STAGES}:
            raise UsageError(f"unknown stage {opts.stage!r}; stages are traced, vmap, grad, "
                             "jvp, collectives, cleanup, stablehlo, optimized_hlo")
        try:
            lowered = _lower(obj, args, statics)
        except Exception as e:
            return _failed(opts.target, e, "spmdc: ")
        except SystemExit as e:
            raise _exit_while_tracing(opts.target, e) from None
        color = opts.color == "always" or (opts.color == "auto" and sys.stdout.isatty()
                                           and not os.environ.get("NO_COLOR"))
        return _dump(opts, lowered, _Style(color))
    except UsageError as e:
        print(f"spmdc: error: {e}", file=sys.stderr)
        return 2
    except UserCodeError as e:
        cause = _user_traceback(e.__cause__) if e.__cause__ is not None else ""
        print(f"{cause}spmdc: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("spmdc: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
