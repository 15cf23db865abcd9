"""Data-parallel training of a small MLP with pmap + pmean (``make demo``).

Every device holds a copy of the parameters and one shard of each batch; each computes
the gradient of its shard's loss, ``lax.pmean`` averages the gradients over the devices,
and every device applies the same update, so the copies stay identical. The parameters
and the sharded batches stay on the devices between steps: a pmap result passed to the
next pmap call is used in place.

Runs on the 8 virtual CPU devices spmdc creates by default (SPMDC_CPU_DEVICES), or, the
same program unchanged, over several processes (``make demo-multiprocess``: ``python -m
spmdc.launch -n 2 --devices-per-process 4 examples/train_data_parallel.py``): every
process then holds its own devices, feeds them its part of each batch, and pmean
averages over every device of every process.
"""
from __future__ import annotations

import os
import time

import numpy as np

import spmdc as jax
import spmdc.numpy as jnp
from spmdc import lax

if os.environ.get("SPMDC_NUM_PROCESSES"):       # started by spmdc.launch, mpirun or srun
    jax.distributed.initialize()

N_DEVICES = jax.device_count()          # over every process
LOCAL_DEVICES = jax.local_device_count()
CLASSES, FEATURES, HIDDEN = 4, 16, 64
PER_DEVICE_BATCH = 128
STEPS, LEARNING_RATE = 300, 0.1


def make_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian blobs: one centre per class, labels as integers."""
    centres = rng.normal(size=(CLASSES, FEATURES)) * 0.7
    labels = rng.integers(0, CLASSES, size=n)
    points = centres[labels] + rng.normal(size=(n, FEATURES))
    return points.astype(np.float32), labels.astype(np.int32)


def init_params(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    sizes = [FEATURES, HIDDEN, HIDDEN, CLASSES]
    return [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:], strict=True)]


def logits_of(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, labels):
    logits = logits_of(params, x)
    shifted = logits - jnp.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))
    one_hot = (labels[:, None] == jnp.arange(CLASSES)[None, :]).astype(jnp.float32)
    return -jnp.mean(jnp.sum(one_hot * log_probs, axis=-1))


def train_step(params, x, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    grads = lax.pmean(grads, axis_name="batch")          # the same average on every device
    params = jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return params, lax.pmean(loss, axis_name="batch")


step = jax.pmap(train_step, axis_name="batch")


def example_args():
    """One step's arguments: ``spmdc dump examples/train_data_parallel.py:step
    --example example_args`` shows every stage of its compilation."""
    rng = np.random.default_rng(0)
    x, labels = make_data(rng, N_DEVICES * PER_DEVICE_BATCH)
    params = [(np.broadcast_to(w, (N_DEVICES, *w.shape)), np.broadcast_to(b, (N_DEVICES, *b.shape)))
              for w, b in init_params(rng)]
    return (params, x.reshape(N_DEVICES, PER_DEVICE_BATCH, FEATURES),
            labels.reshape(N_DEVICES, PER_DEVICE_BATCH))


def accuracy(params, x, labels):
    predicted = jnp.argmax(logits_of(params, x), axis=-1)
    return lax.pmean(jnp.mean((predicted == labels).astype(jnp.float32)), axis_name="batch")


def main() -> None:
    say = print if jax.process_index() == 0 else (lambda *args: None)
    rng = np.random.default_rng(0)       # the same data in every process
    devices = jax.local_devices()
    total = N_DEVICES * PER_DEVICE_BATCH
    x_all, y_all = make_data(rng, 32 * total)
    # One copy of the parameters per device, as arrays split over the devices.
    params = jax.tree_util.tree_map(
        lambda p: jax.device_put(np.broadcast_to(p, (LOCAL_DEVICES, *p.shape)), devices),
        init_params(rng))
    evaluate = jax.pmap(accuracy, axis_name="batch")

    def shard(batch: np.ndarray) -> jax.Array:
        """This process's part of a batch, one slice per local device."""
        mine = np.split(batch, jax.process_count())[jax.process_index()]
        return jax.device_put(mine.reshape(LOCAL_DEVICES, -1, *mine.shape[1:]), devices)

    batches = [(shard(x_all[k:k + total]), shard(y_all[k:k + total]))
               for k in range(0, len(x_all), total)]
    processes = f" in {jax.process_count()} processes" if jax.process_count() > 1 else ""
    say(f"training an MLP {FEATURES}-{HIDDEN}-{HIDDEN}-{CLASSES} on {N_DEVICES} devices"
          f"{processes}, {PER_DEVICE_BATCH} examples per device per step")
    train(step, params, batches, evaluate, say, len(x_all))


def train(step, params, batches, evaluate, say, examples: int) -> None:
    """STEPS steps of ``params, loss = step(params, x, y)`` over ``batches``, printing the
    loss, the final accuracy (``evaluate(params, x, y)``, over ``examples`` examples) and
    the time per step. A loss or
    accuracy may come back once per device (pmap) or once (jit): the first is read."""
    def first(v) -> float:
        return float(np.ravel(np.asarray(v))[0])
    start = None
    for k in range(STEPS):
        x, y = batches[k % len(batches)]
        params, loss = step(params, x, y)
        if k == 0:
            loss.block_until_ready()
            start = time.perf_counter()          # time the steps after compilation
        if k % 30 == 0 or k == STEPS - 1:
            say(f"step {k:4d}  loss {first(loss):.4f}")
    jax.block_until_ready(params)
    per_step = (time.perf_counter() - start) / (STEPS - 1)
    accuracies = [first(evaluate(params, x, y)) for x, y in batches]
    say(f"final accuracy {np.mean(accuracies):.3f} over {examples} examples")
    say(f"time per step {per_step * 1e3:.2f} ms (after compilation)")

if __name__ == "__main__":
    main()
