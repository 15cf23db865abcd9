"""Data-parallel training of the demo's MLP with jit over sharded arrays (no pmap).

The batch is one global array laid out over a mesh of every device, split along its
examples (``NamedSharding(mesh, P('batch'))``); the parameters are replicated. The step
is an ordinary jitted function of the global arrays: XLA's SPMD partitioner splits it,
and the gradient's sum over the examples becomes an all-reduce over the devices.

The same program runs in one process on 8 virtual CPU devices (``python
examples/train_sharded.py``) or unchanged over several processes (``python -m
spmdc.launch -n 2 --devices-per-process 4 examples/train_sharded.py``): each process then
builds the global batch from its own rows with ``make_array_from_process_local_data``,
and the loss and parameters, replicated over the mesh, read as usual in every process.
It reaches the same loss and accuracy as examples/train_data_parallel.py.
"""
from __future__ import annotations

import os

import numpy as np
from train_data_parallel import (
    LEARNING_RATE,
    PER_DEVICE_BATCH,
    init_params,
    logits_of,
    loss_fn,
    make_data,
    train,
)

import spmdc as jax
import spmdc.numpy as jnp
from spmdc.sharding import NamedSharding, PartitionSpec

# started by spmdc.launch, mpirun or srun (importing train_data_parallel may have joined)
if os.environ.get("SPMDC_NUM_PROCESSES") and not jax.distributed.is_initialized():
    jax.distributed.initialize()


@jax.jit
def step(params, x, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    return jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads), loss


@jax.jit
def accuracy(params, x, labels):
    return jnp.mean((jnp.argmax(logits_of(params, x), axis=-1) == labels).astype(jnp.float32))


def main() -> None:
    say = print if jax.process_index() == 0 else (lambda *args: None)
    mesh = jax.make_mesh((jax.device_count(),), ("batch",))
    rows = NamedSharding(mesh, PartitionSpec("batch"))
    replicated = NamedSharding(mesh, PartitionSpec())
    rng = np.random.default_rng(0)       # the same data in every process
    total = jax.device_count() * PER_DEVICE_BATCH
    x_all, y_all = make_data(rng, 32 * total)
    params = jax.device_put(init_params(rng), replicated)

    def global_batch(part: np.ndarray) -> jax.Array:
        mine = np.split(part, jax.process_count())[jax.process_index()]
        return jax.make_array_from_process_local_data(rows, mine)

    batches = [(global_batch(x_all[k:k + total]), global_batch(y_all[k:k + total]))
               for k in range(0, len(x_all), total)]
    processes = f" in {jax.process_count()} processes" if jax.process_count() > 1 else ""
    say(f"training with jit over a batch split on {jax.device_count()} devices{processes}")
    train(step, params, batches, accuracy, say, len(x_all))

if __name__ == "__main__":
    main()
