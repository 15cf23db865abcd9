"""Where the cold first step of W11 goes, spmdc and JAX side by side (issue 18).

W11 (tools/bench.py) times one number: a fresh ``jit`` of the transformer block's SGD
step, called once (trace, lower, compile, run). This splits it with the staged API both
libraries share, ``jit(f).trace(...)``, ``.lower()``, ``.compile()``, then the first
call of the compiled step, alternating the libraries every repetition as bench.py does.
The compile is given as wall time and as this process's CPU time (XLA compiles on a
thread pool, so the CPU time is the steadier figure on a loaded machine). It then
compares the two programs: the StableHLO each library hands XLA (operations by kind) and
what XLA made of it (kernels of the optimized HLO: loop fusions, which XLA's fusion
emitter and LLVM compile one by one, library fusions, which it runs through YNNPACK,
and plain dots).

Usage: tools/cold_split.py [--reps N] [--no-jax]
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (sets the platform and device count before jaxlib loads)
import numpy as np  # noqa: E402

PHASES = ("trace", "lower", "compile", "compile_cpu", "first_run", "total")


def make_step(lib: Any) -> Any:
    loss = bench.make_transformer_loss(lib)        # a fresh function: nothing cached

    def update(p, x):
        value, grads = lib.value_and_grad(loss)(p, x)
        return lib.tree_util.tree_map(lambda a, g: a - 0.01 * g, p, grads), value
    return lib.jit(update)


def inputs(lib: Any) -> tuple[Any, Any]:
    x = np.random.default_rng(2).normal(
        size=(bench.PER_DEVICE, bench.SEQ, bench.D_MODEL)).astype(np.float32)
    return lib.device_put(bench.transformer_params()), lib.device_put(x)


def split_once(lib: Any, args: tuple[Any, Any]) -> dict[str, float]:
    """One cold step in stages, then one more fresh step called directly (W11's way)."""
    t0 = time.perf_counter()
    traced = make_step(lib).trace(*args)
    t1 = time.perf_counter()
    lowered = traced.lower()
    t2 = time.perf_counter()
    c0 = time.process_time()
    compiled = lowered.compile()
    c1 = time.process_time()
    t3 = time.perf_counter()
    lib.block_until_ready(compiled(*args))
    t4 = time.perf_counter()
    step = make_step(lib)
    t5 = time.perf_counter()
    lib.block_until_ready(step(*args))
    t6 = time.perf_counter()
    return {"trace": t1 - t0, "lower": t2 - t1, "compile": t3 - t2, "compile_cpu": c1 - c0,
            "first_run": t4 - t3, "total": t6 - t5}


def stablehlo_ops(text: str) -> collections.Counter[str]:
    return collections.Counter(re.findall(r"\b(?:stablehlo|chlo)\.([a-z_]+)", text))


def kernels(hlo: str) -> dict[str, int]:
    """The optimized entry computation's kernels by kind."""
    entry = hlo[hlo.index("\nENTRY"):]
    fusions = re.findall(r" fusion\([^)]*\), kind=(k\w+)", entry)
    return {"loop fusions": sum(k == "kLoop" for k in fusions),
            "library (YNNPACK) fusions": sum(k == "kCustom" for k in fusions),
            "other fusions": sum(k not in ("kLoop", "kCustom") for k in fusions),
            "plain dots": len(re.findall(r" dot\(", entry))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--no-jax", action="store_true", help="measure spmdc alone")
    args = parser.parse_args(argv)
    libs: dict[str, Any] = {"spmdc": bench.spmdc}
    jax = None if args.no_jax else bench.import_jax()
    if jax is not None:
        libs["jax"] = jax
    data = {name: inputs(lib) for name, lib in libs.items()}
    for name, lib in libs.items():            # warm-up: imports, clients, first traces
        split_once(lib, data[name])
    samples: dict[str, dict[str, list[float]]] = {n: {p: [] for p in PHASES} for n in libs}
    order = list(libs)
    for rep in range(args.reps):
        for name in (order if rep % 2 == 0 else order[::-1]):
            for phase, seconds in split_once(libs[name], data[name]).items():
                samples[name][phase].append(seconds)

    print(f"cold first step of the transformer block (W11), medians of {args.reps} "
          f"alternated repetitions, ms; {os.cpu_count()} CPUs")
    print(f"{'phase':12}" + "".join(f"{name:>10}" for name in libs)
          + ("     ratio" if jax is not None else ""))
    for phase in PHASES:
        medians = [statistics.median(samples[n][phase]) * 1e3 for n in libs]
        line = f"{phase:12}" + "".join(f"{m:10.1f}" for m in medians)
        if jax is not None and medians[1] > 0:
            line += f"{medians[0] / medians[1]:10.2f}"
        print(line)

    programs = {}
    for name, lib in libs.items():
        lowered = make_step(lib).lower(*data[name])
        programs[name] = (stablehlo_ops(lowered.as_text()), kernels(lowered.compile().as_text()))
    print("\nStableHLO operations handed to XLA")
    kinds = sorted(set().union(*(ops for ops, _ in programs.values())),
                   key=lambda k: -programs["spmdc"][0][k])
    for kind in ["(all)"] + kinds:
        counts = [sum(ops.values()) if kind == "(all)" else ops[kind]
                  for ops, _ in programs.values()]
        print(f"  {kind:22}" + "".join(f"{c:8}" for c in counts))
    print("kernels of the optimized HLO")
    for kind in programs["spmdc"][1]:
        print(f"  {kind:26}" + "".join(f"{k[kind]:8}" for _, k in programs.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
