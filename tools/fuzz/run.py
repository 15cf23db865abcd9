"""Running programs on each backend, comparing, and minimising what disagrees.

A backend runs a program's script and returns a ``Result``: the outputs (values,
shapes, dtypes) or the exception it raised. spmdc runs in this process (tests) or in a
worker process (long runs: a crash or a hang then costs one case, not the run); JAX
always runs in a worker, started with ``--jax-python``'s interpreter, so that spmdc never
imports jax. The worker protocol is one JSON line per case each way.
"""
from __future__ import annotations

import base64
import io
import json
import os
import select
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .program import Op, Program, Wrapper, is_float, to_source

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class Result:
    status: str                                   # ok, error, crash, timeout, skipped
    outs: list[np.ndarray] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    error: str = ""
    classes: list[str] = field(default_factory=list)  # the exception's class and its bases

    def describe(self) -> str:
        if self.status == "ok":
            return ", ".join(f"{d}{list(o.shape)}"
                             for o, d in zip(self.outs, self.dtypes, strict=True))
        return f"{self.status}: {self.error}"


def _classes(e: BaseException) -> list[str]:
    """The names of ``e``'s class and its bases, nearest first."""
    return [c.__name__ for c in type(e).__mro__ if c not in (BaseException, object)]


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def result_of(outs: Any) -> Result:
    arrays = [np.asarray(o) for o in outs]
    for k, a in enumerate(arrays):
        if a.dtype == object:
            return Result("error", error=f"ReadBack: output {k} ({type(outs[k]).__name__}, dtype "
                                         f"{outs[k].dtype}) reads back as a NumPy object array")
    return Result("ok", arrays, [a.dtype.name for a in arrays])


def execute(source: str) -> Result:
    """Run a program's script here; ``out`` is its result."""
    namespace: dict[str, Any] = {"__name__": "fuzz_case"}
    try:
        exec(compile(source, "<fuzz program>", "exec"), namespace)
        return result_of(namespace["out"])
    except Exception as e:  # noqa: BLE001  (any exception is the program's outcome)
        return Result("error", error=_first_line(e), classes=_classes(e))


# --- workers --------------------------------------------------------------------------------

def encode(r: Result) -> str:
    outs = []
    for o, d in zip(r.outs, r.dtypes, strict=True):
        buf = io.BytesIO()
        np.save(buf, o.astype(np.float32) if d == "bfloat16" else o, allow_pickle=False)
        outs.append([d, base64.b64encode(buf.getvalue()).decode()])
    return json.dumps({"status": r.status, "outs": outs, "error": r.error,
                       "classes": r.classes})


def decode(line: str) -> Result:
    d = json.loads(line)
    outs, dtypes = [], []
    for dtype, data in d["outs"]:
        outs.append(np.load(io.BytesIO(base64.b64decode(data)), allow_pickle=False))
        dtypes.append(dtype)
    return Result(d["status"], outs, dtypes, d["error"], d.get("classes", []))


def worker_main() -> None:
    """Read one JSON line per case from stdin, answer one line per case."""
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                                 # whatever the programs print goes to stderr
    sys.stdout = sys.stderr
    for line in sys.stdin:
        source = json.loads(line)["source"]
        channel.write(encode(execute(source)) + "\n")
        channel.flush()


class Worker:
    """A backend in a child process, restarted after a crash or a timeout."""

    def __init__(self, python: str, timeout: float = 120.0):
        self.python, self.timeout = python, timeout
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        env = dict(os.environ)
        env.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
        env.setdefault("JAX_PLATFORMS", "cpu")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(HERE)),
                                                        env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen([self.python, HERE, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     env=env)

    def run(self, source: str) -> Result:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc and self.proc.stdin and self.proc.stdout
        try:
            self.proc.stdin.write(json.dumps({"source": source}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._lost("crash", "the worker exited")
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        if not ready:
            return self._lost("timeout", f"no answer in {self.timeout:.0f} s")
        line = self.proc.stdout.readline()
        if not line:
            return self._lost("crash", f"the process died (exit status {self.proc.wait()})")
        return decode(line)

    def _lost(self, status: str, why: str) -> Result:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        return Result(status, error=why)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


class InProcess:
    def run(self, source: str) -> Result:
        return execute(source)

    def close(self) -> None:
        pass


# --- the reference ----------------------------------------------------------------------------

def program_args(p: Program) -> list[np.ndarray]:
    """The arguments the script draws, drawn the same way."""
    source = to_source(p)
    lines = source[source.index("rng = np.random"):source.index("out = f(")]
    import ml_dtypes
    host = type("host", (), {"asarray": staticmethod(lambda x: x)})    # stays in NumPy
    namespace: dict[str, Any] = {"np": np, "ml_dtypes": ml_dtypes, "jnp": host}
    exec(lines, namespace)
    return [namespace[f"a{k}"] for k in range(len(p.inputs))]


def run_reference(p: Program, step: float = 1e-3, budget: int = 4000,
                  kinks: bool = False) -> Result:
    """The reference's outputs; ``kinks`` leaves derivatives at a kink unjudged (NaN)."""
    from .reference import Reference, TooCostly
    try:
        with np.errstate(all="ignore"):
            outs = Reference(p, step, budget, kinks)(program_args(p))
        return result_of(outs)
    except TooCostly as e:
        return Result("skipped", error=str(e))
    except Exception as e:  # noqa: BLE001
        return Result("error", error=_first_line(e))


# --- comparing ----------------------------------------------------------------------------------

def reverse_over_while(p: Program) -> bool:
    """Reverse mode applied around a while loop (wrappers are listed inside out)."""
    kinds = [w.kind for w in p.wrappers]
    return "while" in kinds and any(k in ("grad", "value_and_grad", "jacrev")
                                    for k in kinds[kinds.index("while"):])


def differentiated(p: Program) -> bool:
    return any(w.kind in ("grad", "value_and_grad", "jacrev", "jacfwd", "jvp") for w in p.wrappers)


def tolerance(p: Program, oracle: str) -> tuple[float, float]:
    """(rtol, atol relative to the output's largest magnitude)."""
    low = any(i.dtype == "bfloat16" for i in p.inputs) or any(
        "bfloat16" in op.template or op.out[1] == "bfloat16" for op in p.ops)
    rtol, atol = (4e-2, 2e-2) if low else (2e-3, 2e-4)
    if oracle == "reference" and differentiated(p):
        rtol, atol = (0.1, 0.05) if low else (2e-2, 2e-3)
    return rtol, atol


def compare(p: Program, got: Result, want: Result, oracle: str) -> tuple[str, str] | None:
    """None when ``got`` (spmdc) agrees with ``want``; else (category, description)."""
    if want.status in ("skipped",):
        return None
    if got.status in ("crash", "timeout"):
        return got.status, got.error
    if got.status == "error" and want.status == "ok" and reverse_over_while(p) and \
            "Reverse-mode differentiation does not work" in got.error:
        return None     # JAX refuses this too when the loop's result depends on the input
    if (got.status == "error") != (want.status == "error"):
        return "raises", f"spmdc: {got.describe()}\n{oracle}: {want.describe()}"
    if got.status == "error":
        if oracle == "jax" and not same_class(got, want):
            return "raises-type", f"spmdc: {got.describe()}\n{oracle}: {want.describe()}"
        return None
    if len(got.outs) != len(want.outs):
        return "count", f"spmdc: {got.describe()}\n{oracle}: {want.describe()}"
    rtol, atol = tolerance(p, oracle)
    pairs = zip(got.outs, want.outs, got.dtypes, want.dtypes, strict=True)
    for k, (a, b, da, db) in enumerate(pairs):
        if a.shape != b.shape:
            return "shape", f"output {k}: spmdc {da}{list(a.shape)}, {oracle} {db}{list(b.shape)}"
        if da != db:
            return "dtype", f"output {k}: spmdc {da}{list(a.shape)}, {oracle} {db}{list(b.shape)}"
        if oracle == "reference" and differentiated(p) and is_float(da):
            # A derivative at a singular point (sqrt at 0) is NaN, in JAX too, where finite
            # differences see a finite slope; an output that is NaN whatever the input
            # (take's fill) has derivative 0 where finite differences give NaN: those
            # elements are not judged here (the JAX oracle compares them); the rest are.
            singular = np.isnan(a.astype(np.float64)) != np.isnan(b.astype(np.float64))
            a, b = np.where(singular, 0, a), np.where(singular, 0, b)
        why = values_differ(a, b, da, rtol, atol)
        if why:
            return "value", f"output {k} ({da}{list(a.shape)}): {why}"
    return None


def same_class(got: Result, want: Result) -> bool:
    """Whether spmdc raised JAX's exception class: a program JAX rejects must raise what a
    user's ``except`` names there, JAX's class or a subclass of it (spmdc's
    WhileLoopVJPError is a ValueError), so the JAX oracle compares classes by name; the
    reference's own exceptions are not JAX's."""
    jax_class = want.error.split(":", 1)[0].strip()
    return jax_class in (got.classes or [got.error.split(":", 1)[0].strip()])


def values_differ(a: np.ndarray, b: np.ndarray, dtype: str, rtol: float, atol: float) -> str | None:
    if not (is_float(dtype) or dtype in ("float64", "float16")):
        if np.array_equal(a, b):
            return None
        bad = np.argwhere(a != b)[0]
        return f"at {tuple(bad)}: spmdc {a[tuple(bad)]}, expected {b[tuple(bad)]}"
    a, b = a.astype(np.float64), b.astype(np.float64)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return "NaN in different places"
    finite = np.isfinite(b)
    if not np.array_equal(a[~finite & ~np.isnan(b)], b[~finite & ~np.isnan(b)]):
        return "infinities differ"
    scale = float(np.max(np.abs(b[finite]), initial=1.0))
    ok = np.isclose(a, b, rtol=rtol, atol=atol * scale, equal_nan=True)
    if ok.all():
        return None
    bad = tuple(np.argwhere(~ok)[0])
    return (f"at {bad}: spmdc {a[bad]:.6g}, expected {b[bad]:.6g} "
            f"({int((~ok).sum())} of {ok.size} differ)")


# --- deliberate differences from JAX --------------------------------------------------------

def _pmaps(p: Program) -> list[Wrapper]:
    return [w for w in p.wrappers if w.kind == "pmap"]


KNOWN_DIFFERENCES: list[tuple[str, Callable[[Program], bool], str]] = [
    ("nested pmap", lambda p: len(_pmaps(p)) > 1,
     "JAX 0.10.2 cannot run a pmap inside a pmap; spmdc flattens nested pmaps onto one device "
     "mesh (Note [nested pmap]). Checked against the reference only."),
    ("pmap negative in_axes", lambda p: any(a is not None and a < 0 for w in _pmaps(p)
                                            for a in w.get("in_axes")),
     "pmap(in_axes=-1) maps the last axis in spmdc (the sensible meaning); JAX raises."),
    ("partial ppermute under vmap", lambda p: any(
        "lax.ppermute(" in op.template for op in p.ops) and any(
            w.kind == "vmap" for w in p.wrappers),
     "JAX's vmap of ppermute asserts that the permutation covers the whole axis; spmdc (like "
     "ppermute under pmap) gives zeros to the positions nobody sends to."),
    ("all_gather over a tuple of axis names that includes a vmap axis", lambda p: any(
        "lax.all_gather({0}, (" in op.template for op in p.ops) and any(
            w.kind == "vmap" and w.get("axis_name") for w in p.wrappers),
     "JAX's batching rule for all_gather over several axis names asserts (a vmap axis inside "
     "a pmap) or raises NotImplementedError (two vmap axes); spmdc gathers over all of them "
     "(checked against the reference)."),
    ("all_to_all of a value vmap does not batch", lambda p: any(
        "lax.all_to_all(" in op.template for op in p.ops) and any(
            w.kind == "vmap" for w in p.wrappers),
     "JAX's batching rule for all_to_all fails (a reshape error) on an operand that is not "
     "batched along the named axis; spmdc exchanges the replicated value as pmap does."),
    ("grad of pmax/pmin", lambda p: differentiated(p) and any(
        "lax.pmax(" in op.template or "lax.pmin(" in op.template for op in p.ops),
     "JAX has no differentiation rule for pmax/pmin; spmdc routes the cotangent to the device "
     "holding the extreme (Note [collective transpose]). Checked against the reference only."),
    ("grad of .at[].mul with array indices", lambda p: differentiated(p) and any(
        ".at[" in op.template and "].mul(" in op.template for op in p.ops),
     "JAX differentiates a scatter-multiply only with unique_indices=True (static ints and "
     "slices) and raises NotImplementedError for array indices; spmdc's rule is exact for "
     "repeated indices too (Note [duplicate indices]). Checked against the reference."),
    ("psum_scatter over a tuple of axis names that includes a vmap axis", lambda p: any(
        "lax.psum_scatter({0}, (" in op.template for op in p.ops) and any(
            w.kind == "vmap" and w.get("axis_name") for w in p.wrappers),
     "JAX's batching rule for psum_scatter over several axis names asserts (axis size doesn't "
     "match: a vmap axis with a pmap axis) or raises NotImplementedError (Please open a feature "
     "request: two vmap axes); spmdc reduces and scatters over all of them (checked against "
     "the reference)."),
    ("psum_scatter under nested vmap", lambda p: any(
        "lax.psum_scatter(" in op.template for op in p.ops) and any(
            w.kind == "vmap" for w in p.wrappers) and sum(
            w.kind in ("vmap", "pmap") for w in p.wrappers) >= 2,
     "JAX's batching rule for psum_scatter fails (IndexError: tuple index out of range) when "
     "a vmap inside another vmap or a pmap batches the operand along a dimension other than "
     "0; spmdc scatters as without the inner vmap (checked against the reference)."),
    ("grad of an untiled all_to_all", lambda p: differentiated(p) and any(
        "lax.all_to_all(" in op.template and "tiled=False" in op.template for op in p.ops),
     "JAX 0.10.2's transpose of an untiled all_to_all whose split and concat axes differ "
     "builds a cotangent of the wrong shape (ValueError: Expected cotangent type "
     "float32[1,1,3,2] but got float32[1,3,1,2]); spmdc's VJP is all_to_all's adjoint "
     "(tests/compiler/primitives/test_collectives.py checks <A x, y> = <x, A^T y>; "
     "checked against the reference)."),
    ("jacrev of a function with no float output", lambda p: any(
        w.kind == "jacrev" for w in p.wrappers),
     "JAX's jacrev of a function returning an empty tuple fails inside its dtype computation "
     "(ValueError: at least one array or dtype is required); spmdc returns the empty tuple, "
     "as jacfwd does in both."),
]

# The first line of JAX's error that a deliberate difference explains, where a program
# could make JAX raise for some other reason too.
KNOWN_ERRORS: dict[str, str | tuple[str, ...]] = {
    "psum_scatter over a tuple of axis names that includes a vmap axis": (
        "axis size doesn't match", "Please open a feature request"),
    "psum_scatter under nested vmap": "IndexError: tuple index out of range",
    "grad of .at[].mul with array indices": "scatter_mul gradients are only implemented",
    "jacrev of a function with no float output": "at least one array or dtype is required",
    "grad of an untiled all_to_all": "Expected cotangent type",
}


# Results JAX 0.10.2 gets wrong: a mismatch one of these explains is a known difference
# only when JAX's result differs in the way JAX_WRONG_CHECKS names (spmdc's values are
# still checked against the reference, which is how they are known to be right).
JAX_WRONG: list[tuple[str, Callable[[Program], bool], str]] = [
    ("derivative of .at[].min/max with mode='clip'", lambda p: differentiated(p) and any(
        ".at[" in op.template and ("].min(" in op.template or "].max(" in op.template)
        and "mode='clip'" in op.template for op in p.ops),
     "JAX 0.10.2's derivative of a clipping scatter-min/max is wrong where an index is out of "
     "range: NaN or inf (jacrev of x.at[jnp.array([9, 9])].min(u, mode='clip') on 4 "
     "elements), or the whole cotangent to the operand element an update replaced; spmdc's "
     "is the piecewise-linear function's, as the reference's finite differences give it."),
    ("all_to_all of a value vmap does not batch (shapes)", lambda p: any(
        "lax.all_to_all(" in op.template for op in p.ops) and any(
            w.kind == "vmap" for w in p.wrappers),
     "JAX's batching rule for all_to_all of an operand not batched along the named axis (a "
     "jacfwd/jvp tangent of an unmapped input) gives each member an extra axis "
     "(vmap(lambda: all_to_all(zeros(2), 'a', 0, 0)) over 2: (2, 2) where all_to_all "
     "returns (2,)); spmdc's shape is all_to_all's."),
    ("all_to_all of a value vmap does not batch (summed)", lambda p: differentiated(p)
     and _unbatched_all_to_all(p),
     "The same batching rule under a loss that sums the outputs: the extra axes show as a "
     "sum that many times too large (vmap over 1 of a tiled all_to_all of an f32[4, 2] "
     "input with in_axes None: JAX gives f32[1, 4, 2, 4, 2], so 8 times the sum; seed "
     "43120); spmdc's value is the sum of all_to_all's result."),
]


def _unbatched_all_to_all(p: Program) -> bool:
    """An all_to_all whose operand depends only on inputs the innermost vmap leaves
    unmapped (in_axes None)."""
    vmaps = [w for w in p.wrappers if w.kind == "vmap" and w.get("in_axes") is not None]
    if not vmaps:
        return False
    in_axes = tuple(vmaps[0].get("in_axes"))
    if len(in_axes) != len(p.inputs):
        return False
    batched = [ax is not None for ax in in_axes]
    for op in p.ops:
        from_batched = any(batched[a] for a in op.args)
        if "lax.all_to_all(" in op.template and not from_batched:
            return True
        batched.append(from_batched)
    return False


def _only_shapes_differ(got: Result, want: Result) -> bool:
    return got.status == "ok" and want.status == "ok" and len(got.outs) == len(want.outs) \
        and any(a.shape != b.shape for a, b in zip(got.outs, want.outs, strict=True))


def _same_types(got: Result, want: Result) -> bool:
    """Only the values differ (the reference oracle judges spmdc's)."""
    return got.status == "ok" and want.status == "ok" and len(got.outs) == len(want.outs) \
        and all(a.shape == b.shape for a, b in zip(got.outs, want.outs, strict=True)) \
        and got.dtypes == want.dtypes


JAX_WRONG_CHECKS = {
    "derivative of .at[].min/max with mode='clip'": _same_types,
    "all_to_all of a value vmap does not batch (shapes)": _only_shapes_differ,
    "all_to_all of a value vmap does not batch (summed)": _same_types,
}


def known_difference(p: Program, jax_result: Result, got: Result | None = None) -> str | None:
    """The deliberate difference that explains JAX raising on ``p`` (or, given spmdc's
    result ``got``, a value JAX is known to get wrong), if any."""
    if jax_result.status == "ok" and got is not None:
        for name, applies, _ in JAX_WRONG:
            if applies(p) and JAX_WRONG_CHECKS[name](got, jax_result):
                return name
        return None
    if jax_result.status != "error":
        return None
    for name, applies, _ in KNOWN_DIFFERENCES:
        fragments = KNOWN_ERRORS.get(name, "")
        fragments = fragments if isinstance(fragments, tuple) else (fragments,)
        if applies(p) and any(f in jax_result.error for f in fragments):
            return name
    return None


# --- minimising ----------------------------------------------------------------------------------

def drop_input(p: Program, i: int) -> Program | None:
    """``p`` without body input ``i`` (unused), its wrappers' parameters adjusted."""
    if len(p.inputs) == 1 or any(i in op.args for op in p.ops) or i in p.outputs:
        return None
    shift = lambda k: k - (k > i)          # noqa: E731
    ops = tuple(Op(op.template, tuple(map(shift, op.args)), op.out, op.collective, op.smooth)
                for op in p.ops)
    wrappers = []
    for w in p.wrappers:
        params = dict(w.params)
        if "in_axes" in params:
            params["in_axes"] = params["in_axes"][:i] + params["in_axes"][i + 1:]
        if "argnums" in params:
            nums = params["argnums"]
            as_tuple = nums if isinstance(nums, tuple) else (nums,)
            if i in as_tuple:
                return None
            new = tuple(map(shift, as_tuple))
            params["argnums"] = new if isinstance(nums, tuple) else new[0]
        if w.kind == "scan" and i == 0:
            return None
        wrappers.append(Wrapper(w.kind, tuple(params.items())))
    return p.replace(inputs=p.inputs[:i] + p.inputs[i + 1:], ops=ops,
                     outputs=tuple(map(shift, p.outputs)), wrappers=tuple(wrappers))


def dead_code(p: Program) -> Program:
    n_in = len(p.inputs)
    alias = {}                                      # identity ops left by bypassing
    for k, op in enumerate(p.ops):
        if op.template == "{0}":
            alias[n_in + k] = alias.get(op.args[0], op.args[0])
    if alias:
        ops = tuple(Op(op.template, tuple(alias.get(a, a) for a in op.args), op.out, op.collective,
                       op.smooth) for op in p.ops)
        p = p.replace(ops=ops, outputs=tuple(alias.get(k, k) for k in p.outputs))
    live = set(p.outputs)
    for k in range(len(p.ops) - 1, -1, -1):
        if n_in + k in live:
            live.update(p.ops[k].args)
    keep = [k for k in range(len(p.ops)) if n_in + k in live]
    new = {**{i: i for i in range(n_in)}, **{n_in + k: n_in + j for j, k in enumerate(keep)}}
    ops = tuple(Op(p.ops[k].template, tuple(new[a] for a in p.ops[k].args), p.ops[k].out,
                   p.ops[k].collective, p.ops[k].smooth) for k in keep)
    p = p.replace(ops=ops, outputs=tuple(new[k] for k in p.outputs))
    for i in range(len(p.inputs) - 1, -1, -1):
        q = drop_input(p, i)
        if q is not None:
            p = q
    return p


def candidates(p: Program) -> list[Program]:
    out = []
    for i in range(len(p.wrappers)):                            # drop a wrapper
        out.append(p.replace(wrappers=p.wrappers[:i] + p.wrappers[i + 1:]))
    if len(p.outputs) > 1:                                        # keep one output
        for k in p.outputs:
            out.append(_one_output(p, k))
    types = p.value_types()
    n_in = len(p.inputs)
    for k in range(len(p.ops) - 1, -1, -1):                       # bypass an op
        for a in dict.fromkeys(p.ops[k].args):
            if types[a][1] != p.ops[k].out[1]:          # keep the program well typed
                continue
            op = Op("{0}", (a,), types[a])
            out.append(p.replace(ops=p.ops[:k] + (op,) + p.ops[k + 1:]))
        if n_in + k not in p.outputs:                             # return an earlier value
            out.append(_one_output(p, n_in + k))
    return [dead_code(q) for q in out]


def _one_output(p: Program, k: int) -> Program:
    wrappers = []
    for w in p.wrappers:
        params = dict(w.params)
        if "out_axes" in params:
            params["out_axes"] = params["out_axes"][:1]
        wrappers.append(Wrapper(w.kind, tuple(params.items())))
    return p.replace(outputs=(k,), wrappers=tuple(wrappers))


def weight(p: Program) -> tuple[int, int]:
    return p.size(), sum(len(op.template) for op in p.ops)


def minimise(p: Program, fails: Callable[[Program], bool], budget_s: float = 120.0) -> Program:
    """Greedy delta debugging: take any smaller variant that still fails the same way."""
    deadline = time.monotonic() + budget_s
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for q in candidates(p):
            if time.monotonic() > deadline:
                break
            if weight(q) < weight(p) and _fails(fails, q):
                p, improved = q, True
                break
    return p


def _fails(fails: Callable[[Program], bool], q: Program) -> bool:
    try:
        return fails(q)
    except Exception:  # noqa: BLE001  (a candidate that cannot even be printed)
        return False


def traceback_text() -> str:
    return traceback.format_exc()
