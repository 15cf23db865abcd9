"""Programs that tests/e2e/test_multiprocess.py runs over several processes and compares with
one process (imported by both; not a test module itself).

``run(part)`` runs every program; ``part(x)`` is the piece of a global mapped input that
this process passes (all of it in one process). A program returns its outputs, each
marked as mapped (each process holds its piece of the leading axis) or not (the whole
value, on every process).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import spmdc as jax
import spmdc.numpy as jnp
from spmdc import lax


def _collectives(part: Callable[[np.ndarray], np.ndarray], n: int) -> dict[str, Any]:
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3) ** 1.5
    perm = [(k, (k + 3) % n) for k in range(n)]

    def body(v: Any) -> Any:
        return (lax.psum(v, "i"), lax.pmean(v, "i"), lax.pmax(v, "i"),
                lax.all_gather(v, "i"), lax.ppermute(v, "i", perm),
                lax.axis_index("i"), lax.psum(v, "i") * 2)
    outs = jax.pmap(body, "i", out_axes=(0, 0, 0, 0, 0, 0, None))(part(x))
    return {"collectives": [(True, o) for o in outs[:-1]] + [(False, outs[-1])]}


def _all_to_all(part: Callable[[np.ndarray], np.ndarray], n: int) -> dict[str, Any]:
    y = np.arange(n * n * 2, dtype=np.float32).reshape(n, n, 2)
    out = jax.pmap(lambda v: lax.all_to_all(v, "i", 0, 0), "i")(part(y))
    return {"all_to_all": [(True, out)]}


def _nested(part: Callable[[np.ndarray], np.ndarray], n: int) -> dict[str, Any]:
    z = np.arange(n * 3, dtype=np.float32).reshape(n // 2, 2, 3)

    def body(v: Any) -> Any:
        return lax.psum(v, "j"), lax.psum(v, ("i", "j")), lax.psum(v, "i"), \
            lax.all_gather(v, "i")
    outs = jax.pmap(jax.pmap(body, "j"), "i")(part(z))
    return {"nested": [(True, o) for o in outs]}


def _sgd(part: Callable[[np.ndarray], np.ndarray], n: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    w = {"a": rng.normal(size=(3, 4)).astype(np.float32),
         "b": np.zeros(4, np.float32)}
    xs = rng.normal(size=(n, 5, 3)).astype(np.float32)
    ys = rng.normal(size=(n, 5, 4)).astype(np.float32)

    def loss(w: Any, x: Any, y: Any) -> Any:
        return jnp.mean((jnp.tanh(x @ w["a"] + w["b"]) - y) ** 2)

    def step(w: Any, x: Any, y: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(w, x, y)
        grads = lax.pmean(grads, "batch")
        return jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, w, grads), \
            lax.pmean(value, "batch")
    update = jax.pmap(step, "batch", in_axes=(None, 0, 0), out_axes=(None, None))
    losses = []
    for _ in range(5):
        w, value = update(w, part(xs), part(ys))
        losses.append(value)
    return {"sgd": [(False, w["a"]), (False, w["b"]), (False, jnp.stack(losses))]}


def _local_rows(x: Any) -> np.ndarray:
    """This process's blocks of an Array laid out over a global mesh's leading axis, in
    device order: the process's rows (all of them in one process)."""
    return np.concatenate([np.asarray(s.data) for s in x.addressable_shards])


def _sharded_jit(part: Callable[[np.ndarray], np.ndarray], n: int) -> dict[str, Any]:
    """jit over arrays laid out on a mesh of every process's devices (Note [arrays over
    processes]): a data-parallel SGD step, a sharded result, and a 2-d mesh whose
    'model' axis splits a weight inside each process."""
    mesh = jax.make_mesh((n,), ("data",))
    rows = jax.NamedSharding(mesh, jax.P("data"))
    rng = np.random.default_rng(1)
    x = rng.normal(size=(n * 4, 3)).astype(np.float32)
    y = rng.normal(size=(n * 4, 2)).astype(np.float32)
    xs = jax.make_array_from_process_local_data(rows, part(x))
    ys = jax.make_array_from_process_local_data(rows, part(y))
    w = {"a": rng.normal(size=(3, 2)).astype(np.float32), "b": np.zeros(2, np.float32)}

    def loss(w: Any, x: Any, y: Any) -> Any:
        return jnp.mean((jnp.tanh(x @ w["a"] + w["b"]) - y) ** 2)

    @jax.jit
    def step(w: Any, x: Any, y: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(w, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, w, grads), value
    losses = []
    for _ in range(4):
        w, value = step(w, xs, ys)
        losses.append(float(value))
    doubled = jax.jit(lambda v: v * 2.0 + 1.0)(xs)
    from spmdc.experimental import multihost_utils
    # the whole value on every process (stacked as one process's rows in one process)
    gathered = multihost_utils.process_allgather(doubled).reshape(x.shape)
    grid = jax.make_mesh((n // 2, 2), ("data", "model"))
    z = jax.device_put(x[:n // 2 * 2], jax.NamedSharding(grid, jax.P("data")))
    wide = jax.device_put(np.ones((3, 4), np.float32) / 3,
                          jax.NamedSharding(grid, jax.P(None, "model")))
    product = jax.jit(lambda a, b: jnp.sum(a @ b, axis=0))(z, wide)
    eager = jnp.sum(xs * 2.0, axis=0)          # operations outside jit, on the mesh too
    whole = jax.device_put(xs, jax.NamedSharding(mesh, jax.P()))    # gathered everywhere
    return {"sharded_jit": [(False, w["a"]), (False, w["b"]), (False, np.array(losses)),
                            (True, _local_rows(doubled)), (False, gathered),
                            (False, product), (False, eager), (False, whole)]}


def _shard_map(part: Callable[[np.ndarray], np.ndarray], n: int) -> dict[str, Any]:
    mesh = jax.make_mesh((n,), ("d",))
    x = np.arange(n * 2 * 3, dtype=np.float32).reshape(n * 2, 3) ** 1.5
    xs = jax.make_array_from_process_local_data(jax.NamedSharding(mesh, jax.P("d")), part(x))

    def body(v: Any) -> Any:
        return (lax.psum(v, "d"), v * lax.axis_index("d"),
                lax.all_gather(v, "d", tiled=True), lax.ppermute(v, "d", [(k, (k + 1) % n)
                                                                          for k in range(n)]))
    f = jax.shard_map(body, mesh=mesh, in_specs=jax.P("d"),
                      out_specs=(jax.P(), jax.P("d"), jax.P(), jax.P("d")))
    summed, scaled, gathered, shifted = f(xs)
    inside = jax.jit(f)(xs)[0]
    return {"shard_map": [(False, summed), (True, _local_rows(scaled)), (False, gathered),
                          (True, _local_rows(shifted)), (False, inside)]}


PROGRAMS = [_collectives, _all_to_all, _nested, _sgd, _sharded_jit, _shard_map]


def run(part: Callable[[np.ndarray], np.ndarray], n: int) -> dict[str, list[Any]]:
    """Every program over ``n`` devices in all; outputs as (mapped, NumPy array)."""
    results: dict[str, list[Any]] = {}
    for program in PROGRAMS:
        for name, outs in program(part, n).items():
            results[name] = [(mapped, np.asarray(o)) for mapped, o in outs]
    return results
