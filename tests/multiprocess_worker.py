"""One process of tests/e2e/test_multiprocess.py: ``python multiprocess_worker.py MODE OUT``,
started by ``python -m spmdc.launch`` (or by the test, with the SPMDC_* variables).

- ``programs``: joins the computation, runs multiprocess_programs.run on this process's
  piece of every input, and saves the results to OUT.<process index>.npz;
- ``die``: runs psums; process 1 kills itself (SIGKILL) at step 20, the others go on
  until a collective fails;
- ``exit``: as ``die``, but process 1 raises a Python exception (``exit0``: process 0);
- ``early P``: process P returns after 3 launches, the others launch 6;
- ``idle``: process 1 dies while process 0 runs Python code, which catches PeerLost
  (and again at its next launch);
- ``other`` / ``extra``: process 1 launches another program, or one more
  (SPMDC_CHECK_LAUNCHES names the difference);
- ``run``: every process runs psums until stopped (60 s at most), saying "running" once
  it has run a few (the test then kills or terminates one); ``run catch``: after a few
  psums each process runs Python code, catches PeerLost, says so and goes on (30 s).
"""
from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import spmdc as jax  # noqa: E402
from spmdc import lax  # noqa: E402


def programs(out: str) -> None:
    import multiprocess_programs
    p, count = jax.process_index(), jax.process_count()
    results = multiprocess_programs.run(lambda x: np.split(x, count)[p], jax.device_count())
    flat = {f"{name}.{k}.{int(mapped)}": value for name, outs in results.items()
            for k, (mapped, value) in enumerate(outs)}
    flat.update(_multihost(p))
    np.savez(f"{out}.{p}.npz", **flat)
    print(f"process {p} of {count}: {len(flat)} results", flush=True)


def _multihost(p: int) -> dict[str, np.ndarray]:
    from spmdc.experimental import multihost_utils as mh
    out = {"mh.gather": mh.process_allgather({"v": np.array([p, 10 * p])})["v"],
           "mh.tiled": mh.process_allgather(np.array([p, 10 * p]), tiled=True),
           "mh.broadcast": mh.broadcast_one_to_all(np.array([p + 5.0], np.float32)),
           "mh.from_last": mh.broadcast_one_to_all(
               np.float32(p), is_source=p == jax.process_count() - 1)}
    mh.sync_global_devices("programs done")
    # A process's piece into a global Array over every device, and back (JAX's
    # host_local_array_to_global_array: rows p*k.. of the whole from process p).
    whole_mesh = jax.make_mesh((jax.device_count(),), ("x",))
    piece = (100 * p + np.arange(jax.local_device_count() * 3)).reshape(-1, 3)
    glob = mh.host_local_array_to_global_array(piece, whole_mesh, jax.P("x"))
    out["mh.global_shape"] = np.array(glob.shape)
    out["mh.global_whole"] = mh.process_allgather(glob)
    back = mh.global_array_to_host_local_array(glob, whole_mesh, jax.P("x"))
    out["mh.local_back"] = np.asarray(back)
    with mh.live_devices(jax.devices()) as alive:
        out["mh.live"] = np.array([d.id for d in alive])
    out["mh.all_ids"] = np.array(sorted(d.id for d in jax.devices()))
    mesh = jax.make_mesh((jax.device_count(),), ("x",))
    ones = jax.make_array_from_callback((jax.device_count(),),
                                        jax.NamedSharding(mesh, jax.P("x")),
                                        lambda index: np.ones(jax.device_count())[index])
    out["global.addressable"] = np.array(ones.is_fully_addressable)
    out["global.shards"] = np.array([len(ones.addressable_shards), len(ones.global_shards)])
    try:
        np.asarray(ones)
    except RuntimeError as e:
        out["global.read_refused"] = np.array(str(e))
    other = jax.devices()[(p + 1) % jax.process_count() * jax.local_device_count()]
    try:
        jax.device_put(np.zeros(3), other)
    except ValueError as e:
        out["remote_put_refused"] = np.array(str(e))
    try:
        mh.assert_equal(np.int32(p), "differs on purpose")
    except AssertionError as e:
        out["mh.assert_message"] = np.array(str(e))
    return out


def failing(how: str) -> None:
    p = jax.process_index()
    step = jax.pmap(lambda v: lax.psum(v, "i") / jax.device_count(), "i")
    x = np.ones(jax.local_device_count(), np.float32)
    for k in range(2000):
        if p == (0 if how == "exit0" else 1) and k == 20:
            if how == "die":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError(f"process {p} fails on purpose")
        x = step(x)
        np.asarray(x)
    print("the loop finished: the failure went unnoticed", flush=True)


def early(leaver: int) -> None:
    """Process ``leaver`` returns normally after 3 launches; the others launch 6."""
    step = jax.pmap(lambda v: lax.psum(v, "i") + 1, "i")
    x = np.ones(jax.local_device_count(), np.float32)
    for _ in range(3 if jax.process_index() == leaver else 6):
        x = step(x)
        np.asarray(x)
    print("all launches done", flush=True)


def idle() -> None:
    """Process 1 dies after one collective; process 0, busy in Python, catches PeerLost,
    and again when it tries one more launch."""
    step = jax.pmap(lambda v: lax.psum(v, "i"), "i")
    np.asarray(step(np.ones(jax.local_device_count(), np.float32)))
    if jax.process_index() == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        for _ in range(600):
            sum(range(10_000))              # Python work, no collective
            time.sleep(0.05)
    except jax.distributed.PeerLost as e:
        print(f"caught PeerLost: {e}", flush=True)
    try:
        step(np.ones(jax.local_device_count(), np.float32))
    except jax.distributed.PeerLost as e:
        print(f"and again at the next launch: {e}", flush=True)
        sys.exit(3)
    print("the loss of a peer went unnoticed", flush=True)


def mismatched(how: str) -> None:
    """Process 1 launches another program at the third launch ("other"), or one launch
    more than process 0 ("extra"); SPMDC_CHECK_LAUNCHES names the difference."""
    p = jax.process_index()
    double = jax.pmap(lambda v: lax.psum(v, "i") * 2, "i")
    triple = jax.pmap(lambda v: lax.psum(v, "i") * 3, "i")
    x = np.ones(jax.local_device_count(), np.float32)
    for k in range(4 if how == "extra" and p == 1 else 3):
        x = (triple if how == "other" and p == 1 and k == 2 else double)(x)
    np.asarray(x)
    print("no difference noticed", flush=True)


def run(catch: bool) -> None:
    """psums until stopped from outside; ``catch``: PeerLost is caught, and the process
    goes on."""
    step = jax.pmap(lambda v: lax.psum(v, "i") / jax.device_count(), "i")
    x = np.ones(jax.local_device_count(), np.float32)
    deadline = time.monotonic() + 60
    try:
        for k in range(10**9):
            if k == 5:
                print("running", flush=True)
            if time.monotonic() > deadline:
                break
            if catch and k >= 5:
                time.sleep(0.05)        # Python work, where PeerLost can reach it
                continue
            x = step(x)
            np.asarray(x)
    except jax.distributed.PeerLost:
        if not catch:
            raise
        print("caught PeerLost; going on", flush=True)
        time.sleep(30)
    print("the loop finished: nothing stopped it", flush=True)


if __name__ == "__main__":
    jax.distributed.initialize(initialization_timeout=int(os.environ.get("MP_TIMEOUT", "60")))
    mode = sys.argv[1]
    if mode == "programs":
        programs(sys.argv[2])
    elif mode in ("other", "extra"):
        mismatched(mode)
    elif mode == "idle":
        idle()
    elif mode == "early":
        early(int(sys.argv[2]))
    elif mode == "run":
        run(sys.argv[2:] == ["catch"])
    else:
        failing(mode)
