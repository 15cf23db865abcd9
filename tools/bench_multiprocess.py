"""The multi-process benchmarks (``tools/bench.py --processes N``): spmdc and JAX 0.10.2,
each as N processes started by ``python -m spmdc.launch``, on Gloo's CPU collectives.

    python tools/bench_multiprocess.py --processes 2 --devices-per-process 4 [--reps 3]

runs, alternately for spmdc and for JAX (``jax.distributed.initialize`` with
``jax_cpu_collectives_implementation='gloo'``), one launch per library and repetition;
inside each launch every process times the same calls (the same counts everywhere, as
collectives need) and process 0 reports its medians:

- W4: the data-parallel SGD step of tools/bench.py (MLP 784-512-512-10, 32 examples per
  device, pmean'd gradients, parameters replicated), arguments resident;
- all-reduce of a float32 vector of 1 MB and of 64 MB per device (psum under pmap),
  input resident, waiting for the result.

The ratio is the median over repetitions of spmdc's median over JAX's.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = {"all-reduce 1 MB": (262_144, 40), "all-reduce 64 MB": (16_777_216, 3)}
W4_STEPS = 30


def _library(name: str) -> Any:
    local = int(os.environ["SPMDC_CPU_DEVICES"])
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={local}"
    if name == "spmdc":
        sys.path.insert(0, ROOT)
        import spmdc
        spmdc.distributed.initialize()
        return spmdc
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.config.update("jax_num_cpu_devices", local)
    jax.distributed.initialize(os.environ["SPMDC_COORDINATOR_ADDRESS"],
                               int(os.environ["SPMDC_NUM_PROCESSES"]),
                               int(os.environ["SPMDC_PROCESS_ID"]))
    return jax


def _timed(call: Any, block: Any, count: int) -> list[float]:
    block(call())                      # compile, and connect Gloo's pairs
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        block(call())
        times.append(time.perf_counter() - t0)
    return times


def worker(name: str, out: str) -> None:
    lib = _library(name)
    n = lib.local_device_count()
    block = lib.block_until_ready
    results: dict[str, float] = {}
    sys.path.insert(0, HERE)
    import bench  # its model and data
    loss = bench.make_loss(lib.numpy)

    def step(params: Any, x: Any, y: Any) -> Any:
        value, grads = lib.value_and_grad(loss)(params, x, y)
        grads = lib.lax.pmean(grads, axis_name="batch")
        params = lib.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
        return params, lib.lax.pmean(value, axis_name="batch")

    pstep = lib.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, None))
    x, y = bench.mlp_data(n * 32, bench.SMALL_MLP[0], bench.SMALL_MLP[-1],
                          seed=1 + lib.process_index())
    shard = lib.pmap(lambda a: a)
    x, y = shard(x.reshape(n, 32, -1)), shard(y.reshape(n, 32, -1))
    state = [lib.device_put(bench.mlp_params(bench.SMALL_MLP))]

    def one_step() -> Any:
        state[0], value = pstep(state[0], x, y)
        return value
    results["W4 pmap SGD step"] = statistics.median(_timed(one_step, block, W4_STEPS))
    psum = lib.pmap(lambda v: lib.lax.psum(v, "i"), "i")
    for label, (size, count) in SIZES.items():
        v = shard(np.ones((n, size), np.float32))
        results[label] = statistics.median(_timed(lambda v=v: psum(v), block, count))
    if lib.process_index() == 0:
        with open(out, "w") as f:
            json.dump(results, f)


def _launch(name: str, processes: int, devices: int, out: str, python: str) -> dict:
    cmd = [python, "-m", "spmdc.launch", "-n", str(processes), "--devices-per-process",
           str(devices), "--timeout", "600", __file__, "--worker", name, "--out", out]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH",
                                                                            "")]))
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the {name} launch failed:\n{done.stdout}\n{done.stderr}")
    with open(out) as f:
        return json.load(f)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--devices-per-process", type=int, default=None)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-jax", action="store_true", help="measure spmdc alone")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.out)
        return 0
    devices = args.devices_per_process or 8 // args.processes
    libs = ["spmdc"] if args.no_jax else ["spmdc", "jax"]
    runs: dict[str, list[dict]] = {lib: [] for lib in libs}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            for lib in libs:               # alternated, one launch per library and rep
                runs[lib].append(_launch(lib, args.processes, devices,
                                         os.path.join(tmp, f"{lib}{rep}.json"),
                                         sys.executable))
    print(f"{args.processes} processes x {devices} devices, Gloo; medians over "
          f"{args.reps} launches of each launch's median")
    for label in runs["spmdc"][0]:
        mine = statistics.median(r[label] for r in runs["spmdc"])
        line = f"{label:<24} spmdc {mine * 1e3:9.2f} ms"
        if "jax" in runs:
            theirs = statistics.median(r[label] for r in runs["jax"])
            line += f"   jax {theirs * 1e3:9.2f} ms   ratio {mine / theirs:5.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
