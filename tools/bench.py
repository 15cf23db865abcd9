"""spmdc against JAX, side by side in one process (``make bench``; issue 7).

Every workload runs on spmdc and, when the optional ``bench`` extra is installed (jax at
jaxlib's version), on JAX, alternating the two every repetition (and which goes first),
so that noise from a shared machine lands on both. We print the median, min and max per
library and the ratio of medians spmdc/JAX, and write everything to a JSON file.

Workloads (issue 7):
  W1  jit dispatch latency: ``x * 2.0 + 1.0`` on a device-resident f32[8], the input
      from device_put, from another jitted call, or from a jitted call of a NumPy array.
  W2  trace + lower (``jit(f).lower(...).as_text()``, no compile) of a chain of K ops
      alternating ``tanh(x @ W)`` and ``+ b``, K = 100, 1000, 4000, forward and grad;
      a fresh Python function every repetition so no cache helps.
  W3  cold first call (trace, lower, compile, run) of ``jit(value_and_grad(loss))`` for
      an MLP 784-512-512-10, batch 128, fresh function every repetition.
  W4  steady-state data-parallel SGD step: pmap over 8 devices, 32 examples per device,
      pmean of the gradients, in_axes=(None, 0, 0), out_axes=(None, None), the new
      parameters fed back every step (MLP 64-128-128-10).
      Written two more ways over a one-axis mesh of the 8 devices ("batch"), as JAX's
      current docs teach it: grad of a loss whose forward pass is a shard_map (pmean of
      the per-device losses), and jit of the global step over a NamedSharding-ed batch
      (XLA's partitioner inserts the all-reduce); both under jit.
  W5  per-example gradients: ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))``, batch 128
      (MLP 64-128-128-10).
  W6  pmap dispatch latency: ``x * 2`` on 8 devices, device-resident input [8, 4].
  W7  a jitted update of a 100-leaf dict of f32[16] parameters (``p - 0.01 * g``), the
      new parameters fed back every call.
  W8  value_and_grad of a 200-step scan RNN (issues 14 and 18):
      ``jit(value_and_grad(loss))``, ``h = tanh(x W + h U + b)`` over T=200 steps, batch 32, input
      64, hidden 256; ``remat`` runs the body under ``checkpoint`` (recomputed in the
      backward pass instead of stored).
  W9  a pre-LN transformer block (one head, d=128, sequence 64, 4 sequences per device)
      trained by SGD: value_and_grad + pmean under pmap over the 8 devices (in_axes=(None,
      0), out_axes=(None, None)), and the same step under jit on one device.
  W10 a cold start with a warm persistent compilation cache (issue 18): W3's first call
      (trace, lower, load the compiled program, run) in a fresh process whose cache
      directory an earlier process filled, against JAX's first call in a fresh process
      without a cache, and with its persistent cache filled the same way
      (``jax_compilation_cache_dir``, ``jax_persistent_cache_min_compile_time_secs=0``).
      Every repetition of every variant is a new process (``--cold-start``); the imports
      and placing the data are not timed.
  W11 the cold first step of W9's jit variant (trace, lower, compile, run), a fresh
      function every repetition (tools/cold_split.py splits it into its phases).
  W12 batched linear algebra: ``jit`` of a Cholesky factorisation and solve of 64
      symmetric positive-definite f32[48, 48] matrices with 4 right-hand sides each
      (``cho_solve(cho_factor(a), b)``), then ``jnp.linalg.solve`` of the same batch
      (LU): the LAPACK kernels are the same, so any gap is spmdc's.
  W13 a tall Jacobian (issue 14): ``jit(jacfwd(f))`` and ``jit(jacrev(f))`` of
      f: R^10 -> R^1000, ``tanh(W x) * sin(V x)``, steady state. Forward mode pushes 10
      tangents, reverse mode pulls 1000 cotangents: the report gives jacrev / jacfwd.
  W14 random numbers under jit: ``random.normal(key, (4096, 4096))`` (threefry2x32).
  W15 a jitted step that splits its key and draws noise (``key, sub = split(key)``;
      ``w + normal(sub, w.shape)``, w f32[8]), the new key fed back every step: the key
      never leaves the device, so this costs what a jit dispatch costs.
  W16 a conv-net SGD step under jit on one device (issue 15): batch 32 of 28x28x1, conv
      3x3x16 SAME, relu, 2x2 max-pool, conv 3x3x32 SAME, relu, 2x2 max-pool, dense 10,
      softmax cross-entropy (lax.conv_general_dilated NHWC/HWIO, lax.reduce_window max),
      the new parameters fed back every step.
  W17 an Optax-docs-style training loop outside jit (issue 26): an MLP 64-128-10 whose
      parameters are a dict, ``value_and_grad(loss)(params, x, y)`` with a fresh wrapper
      every step, then plain SGD (``tree_util.tree_map(lambda p, g: p - lr * g, ...)``)
      eagerly; the same with the loss a lambda closing over a different batch every
      step (``value_and_grad(lambda p: loss(p, *batches[i]))(params)``); and with one
      wrapper made before the loop. Time per step.

  W18 eager library calls (no jit), steady state of one call: ``jnp.linalg.slogdet`` and
      ``jnp.linalg.solve`` of an f32[8, 8], ``scipy.special.dawsn`` of an f32[64],
      ``random.gamma(key, 2.0, (64,))``, and ``lax.scan`` of a module-level step over an
      f32[64] (JAX jits the first four and caches the scan's traced body).

Workloads W7-W11 are numbered as issue 18 names them; the earlier W7-W11 (Jacobian,
random numbers, key split, conv-net, scan RNN) became W13, W14, W15, W16 and W8, so
figures in docs/CHANGELOG.md recorded before 2026-11-24 use the old numbers.

Usage: tools/bench.py [--reps N] [--only W1,W6] [--quick] [--no-jax] [--json PATH]
"""
from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("SPMDC_CPU_DEVICES", "8")
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import spmdc  # noqa: E402

N_DEVICES = 8
TARGETS = {"W1": 1.2, "W2": 0.5, "W3": 1.0, "W4": 1.05, "W5": 1.05, "W6": 1.0, "W7": 1.0,
           "W8": 1.0, "W9": 1.0, "W11": 0.8, "W12": 1.1, "W13": 1.5, "W14": 1.1, "W15": 1.5,
           "W16": 1.1, "W17": 1.5, "W18": 1.5}
LINEARITY_TARGET = 1.3        # per-op trace+lower cost at K=4000 over that at K=1000


def import_jax() -> Any:
    try:
        import jax
    except ImportError:
        return None
    try:
        jax.config.update("jax_num_cpu_devices", N_DEVICES)
    except Exception:  # noqa: BLE001  (older/newer jax: XLA_FLAGS above does the same)
        pass
    # On a GPU both make a client of the same CUDA plugin: jax registers the plugin
    # itself only if it comes first, and spmdc then finds it loaded.
    jax.devices()
    return jax


# --- models ----------------------------------------------------------------------------------

def mlp_params(sizes: list[int], seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [((rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:], strict=True)]


def mlp_data(n: int, features: int, classes: int, seed: int = 1
             ) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, size=n)]
    return x, y


def make_loss(jnp: Any) -> Callable[..., Any]:
    """A fresh softmax cross-entropy loss of an MLP (a new function object every call)."""
    def loss(params, x, y):
        for w, b in params[:-1]:
            x = jnp.maximum(x @ w + b, 0.0)
        w, b = params[-1]
        logits = x @ w + b
        shifted = logits - jnp.max(logits, axis=-1, keepdims=True)
        log_probs = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))
        return -jnp.mean(jnp.sum(y * log_probs, axis=-1))
    return loss


def make_chain(jnp: Any, k: int) -> Callable[..., Any]:
    """A fresh function: K ops alternating ``tanh(x @ w)`` and ``x + b``."""
    def chain(x, w, b):
        for i in range(k):
            x = jnp.tanh(x @ w) if i % 2 == 0 else x + b
        return x
    return chain


# --- one measurement per library -----------------------------------------------------------

Runner = Callable[[], float]          # one repetition -> seconds (per call where inner > 1)


def per_call(call: Callable[[], Any], block: Callable[[Any], Any], inner: int) -> Runner:
    def run() -> float:
        t0 = time.perf_counter()
        out = None
        for _ in range(inner):
            out = call()
        block(out)
        return (time.perf_counter() - t0) / inner
    return run


def block_tree(lib: Any) -> Callable[[Any], Any]:
    return lambda out: lib.block_until_ready(out)


def w1(origin: str) -> Callable[[Any, bool], Runner]:
    def make(lib: Any, quick: bool) -> Runner:
        f = lib.jit(lambda x: x * 2.0 + 1.0)
        host = np.arange(8, dtype=np.float32)
        if origin == "device_put":
            x = lib.device_put(host)
        elif origin == "jit":            # the result of another jitted call
            x = lib.jit(lambda v: v + 0.0)(lib.device_put(host))
        else:                            # ... whose own input was a NumPy array
            x = lib.jit(lambda v: v + 0.0)(host)
        return per_call(lambda: f(x), block_tree(lib), 200 if quick else 1000)
    return make


def w7(lib: Any, quick: bool) -> Runner:
    params = {f"p{i}": lib.device_put(np.full(16, i, np.float32)) for i in range(100)}
    grads = {f"p{i}": lib.device_put(np.ones(16, np.float32)) for i in range(100)}
    update = lib.jit(lambda p, g: {k: p[k] - 0.01 * g[k] for k in p})
    state = {"p": update(params, grads)}

    def call() -> Any:
        state["p"] = update(state["p"], grads)
        return state["p"]
    return per_call(call, block_tree(lib), 50 if quick else 200)


def w2(k: int, grad: bool) -> Callable[[Any, bool], Runner]:
    def make(lib: Any, quick: bool) -> Runner:
        rng = np.random.default_rng(0)
        x = rng.normal(size=(16, 16)).astype(np.float32)
        w = rng.normal(size=(16, 16)).astype(np.float32) / 4
        b = rng.normal(size=(16, 16)).astype(np.float32)
        jnp = lib.numpy

        def run() -> float:
            chain = make_chain(jnp, k)          # fresh every repetition: no cache helps
            if grad:
                fresh = chain
                f = lib.grad(lambda x, w, b: jnp.sum(fresh(x, w, b)))
            else:
                f = chain
            t0 = time.perf_counter()
            text = lib.jit(f).lower(x, w, b).as_text()
            elapsed = time.perf_counter() - t0
            assert "tanh" in text
            return elapsed
        return run
    return make


def w3(lib: Any, quick: bool) -> Runner:
    params = lib.device_put(mlp_params([784, 512, 512, 10]))
    x, y = (lib.device_put(a) for a in mlp_data(128, 784, 10))

    def run() -> float:
        f = lib.jit(lib.value_and_grad(make_loss(lib.numpy)))
        t0 = time.perf_counter()
        out = f(params, x, y)
        lib.block_until_ready(out)
        return time.perf_counter() - t0
    return run


SMALL_MLP = [64, 128, 128, 10]


def training_steps(lib: Any, step: Callable[..., Any], params: Any, args: tuple[Any, ...],
                   quick: bool) -> Runner:
    """Time ``params, value = step(params, *args)`` over a few steps, the new parameters
    fed back, also from one repetition to the next (a training loop in steady state)."""
    state = {"params": params}
    inner = 3 if quick else 10

    def run() -> float:
        params = state["params"]
        t0 = time.perf_counter()
        value = None
        for _ in range(inner):
            params, value = step(params, *args)
        lib.block_until_ready((params, value))
        elapsed = (time.perf_counter() - t0) / inner
        state["params"] = params
        return elapsed
    return run


def w4(lib: Any, quick: bool) -> Runner:
    loss = make_loss(lib.numpy)
    lr = 0.01

    def step(params, x, y):
        value, grads = lib.value_and_grad(loss)(params, x, y)
        grads = lib.lax.pmean(grads, axis_name="batch")
        params = lib.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return params, lib.lax.pmean(value, axis_name="batch")

    pstep = lib.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, None))
    x, y = mlp_data(N_DEVICES * 32, SMALL_MLP[0], SMALL_MLP[-1])
    x = x.reshape(N_DEVICES, 32, -1)
    y = y.reshape(N_DEVICES, 32, -1)
    shard = lib.pmap(lambda a: a)             # device-resident, split over the devices
    x, y = shard(x), shard(y)
    return training_steps(lib, pstep, lib.device_put(mlp_params(SMALL_MLP)), (x, y), quick)


D_MODEL, SEQ, PER_DEVICE = 128, 64, 4


def transformer_params(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = D_MODEL

    def init(*shape: int) -> np.ndarray:
        return (rng.normal(size=shape) / np.sqrt(shape[0])).astype(np.float32)
    return {"ln1": np.ones(d, np.float32), "ln2": np.ones(d, np.float32),
            "wq": init(d, d), "wk": init(d, d), "wv": init(d, d), "wo": init(d, d),
            "w1": init(d, 4 * d), "b1": np.zeros(4 * d, np.float32), "w2": init(4 * d, d),
            "b2": np.zeros(d, np.float32)}


def make_transformer_loss(lib: Any) -> Callable[..., Any]:
    """A pre-LN transformer block (one attention head) and a squared-error loss."""
    jnp = lib.numpy

    def norm(x, scale):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) * lib.lax.rsqrt(var + 1e-5) * scale

    def block(p, x):
        h = norm(x, p["ln1"])
        q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
        scores = jnp.einsum("bqd,bkd->bqk", q, k) / np.sqrt(D_MODEL).astype(np.float32)
        scores = scores - jnp.max(scores, axis=-1, keepdims=True)
        weights = jnp.exp(scores)
        weights = weights / jnp.sum(weights, axis=-1, keepdims=True)
        x = x + jnp.einsum("bqk,bkd->bqd", weights, v) @ p["wo"]
        h = norm(x, p["ln2"])
        return x + jnp.maximum(h @ p["w1"] + p["b1"], 0.0) @ p["w2"] + p["b2"]

    def loss(p, x):
        return jnp.mean((block(p, x) - x) ** 2)
    return loss


def w9(form: str) -> Callable[[Any, bool], Runner]:
    def make(lib: Any, quick: bool) -> Runner:
        loss, lr = make_transformer_loss(lib), 0.01
        rng = np.random.default_rng(2)

        def update(p, x):
            value, grads = lib.value_and_grad(loss)(p, x)
            if form == "pmap":
                value, grads = lib.lax.pmean((value, grads), axis_name="batch")
            return lib.tree_util.tree_map(lambda a, g: a - lr * g, p, grads), value

        if form == "pmap":
            step = lib.pmap(update, axis_name="batch", in_axes=(None, 0),
                            out_axes=(None, None))
            x = rng.normal(size=(N_DEVICES, PER_DEVICE, SEQ, D_MODEL)).astype(np.float32)
            x = lib.pmap(lambda a: a)(x)
        else:
            step = lib.jit(update)
            x = lib.device_put(rng.normal(size=(PER_DEVICE, SEQ, D_MODEL)).astype(np.float32))
        return training_steps(lib, step, lib.device_put(transformer_params()), (x,), quick)
    return make


def cold_start(lib: Any, cache_dir: str | None) -> float:
    """W10 in this (fresh) process: the first call of W3's step, with ``cache_dir`` as the
    persistent compilation cache (None: none)."""
    if cache_dir is not None:
        lib.config.update("jax_compilation_cache_dir", cache_dir)
        if lib.__name__ == "jax":
            lib.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    params = lib.device_put(mlp_params([784, 512, 512, 10]))
    x, y = (lib.device_put(a) for a in mlp_data(128, 784, 10))
    f = lib.jit(lib.value_and_grad(make_loss(lib.numpy)))
    t0 = time.perf_counter()
    lib.block_until_ready(f(params, x, y))
    return time.perf_counter() - t0


def w10(jax_cache: bool) -> Callable[[Any, bool], Runner]:
    """spmdc with a warm cache against JAX with (``jax_cache``) or without one; each
    repetition runs ``cold_start`` in a new process (the warm-up repetition fills the
    caches)."""
    def make(lib: Any, quick: bool) -> Runner:
        cached = lib.__name__ == "spmdc" or jax_cache
        command = [sys.executable, os.path.abspath(__file__), "--cold-start", lib.__name__]
        if cached:
            cache_dir = tempfile.mkdtemp(prefix=f"bench-w10-{lib.__name__}-")
            atexit.register(shutil.rmtree, cache_dir, True)
            command += ["--cache-dir", cache_dir]
        env = {k: v for k, v in os.environ.items()
               if k not in ("SPMDC_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR")}

        def run() -> float:
            done = subprocess.run(command, env=env, capture_output=True, text=True,
                                  timeout=600)
            if done.returncode != 0:
                raise RuntimeError(f"W10 {' '.join(command[2:])} failed:\n{done.stderr}")
            return float(done.stdout.split()[-1])
        return run
    return make


def w11(lib: Any, quick: bool) -> Runner:
    params = lib.device_put(transformer_params())
    x = lib.device_put(np.random.default_rng(2).normal(
        size=(PER_DEVICE, SEQ, D_MODEL)).astype(np.float32))

    def run() -> float:
        loss = make_transformer_loss(lib)          # a fresh function: nothing cached

        def update(p, x):
            value, grads = lib.value_and_grad(loss)(p, x)
            return lib.tree_util.tree_map(lambda a, g: a - 0.01 * g, p, grads), value
        step = lib.jit(update)
        t0 = time.perf_counter()
        lib.block_until_ready(step(params, x))
        return time.perf_counter() - t0
    return run


def w4_mesh(form: str) -> Callable[[Any, bool], Runner]:
    def make(lib: Any, quick: bool) -> Runner:
        loss = make_loss(lib.numpy)
        lr = 0.01
        sharding = lib.sharding
        P = sharding.PartitionSpec
        mesh = sharding.Mesh(np.array(lib.devices()[:N_DEVICES]), ("batch",))
        if form == "shard_map":
            per_device = lib.shard_map(
                lambda p, xb, yb: lib.lax.pmean(loss(p, xb, yb), "batch"), mesh=mesh,
                in_specs=(P(), P("batch"), P("batch")), out_specs=P())
        else:
            per_device = loss

        @lib.jit
        def step(params, x, y):
            value, grads = lib.value_and_grad(per_device)(params, x, y)
            return lib.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), value

        x, y = mlp_data(N_DEVICES * 32, SMALL_MLP[0], SMALL_MLP[-1])
        batch = sharding.NamedSharding(mesh, P("batch"))
        x, y = lib.device_put(x, batch), lib.device_put(y, batch)
        params = lib.device_put(mlp_params(SMALL_MLP), sharding.NamedSharding(mesh, P()))
        return training_steps(lib, step, params, (x, y), quick)
    return make


def w5(lib: Any, quick: bool) -> Runner:
    f = lib.jit(lib.vmap(lib.grad(make_loss(lib.numpy)), in_axes=(None, 0, 0)))
    params = lib.device_put(mlp_params(SMALL_MLP))
    x, y = mlp_data(128, SMALL_MLP[0], SMALL_MLP[-1])
    x, y = lib.device_put(x[:, None, :]), lib.device_put(y[:, None, :])
    return per_call(lambda: f(params, x, y), block_tree(lib), 5 if quick else 20)


def w6(lib: Any, quick: bool) -> Runner:
    f = lib.pmap(lambda x: x * 2)
    x = lib.pmap(lambda x: x)(np.arange(N_DEVICES * 4, dtype=np.float32).reshape(8, 4))
    return per_call(lambda: f(x), block_tree(lib), 100 if quick else 500)


def w13(mode: str) -> Callable[[Any, bool], Runner]:
    def make(lib: Any, quick: bool) -> Runner:
        jnp = lib.numpy
        rng = np.random.default_rng(0)
        w, v = (lib.device_put(rng.normal(size=(1000, 10)).astype(np.float32) / 3)
                for _ in range(2))

        def f(x):
            return jnp.tanh(w @ x) * jnp.sin(v @ x)
        jac = lib.jit(lib.jacfwd(f) if mode == "jacfwd" else lib.jacrev(f))
        x = lib.device_put(rng.normal(size=10).astype(np.float32))
        return per_call(lambda: jac(x), block_tree(lib), 5 if quick else 20)
    return make


def w14(lib: Any, quick: bool) -> Runner:
    f = lib.jit(lambda key: lib.random.normal(key, (4096, 4096)))
    key = lib.random.PRNGKey(0)
    return per_call(lambda: f(key), block_tree(lib), 1 if quick else 3)


def w15(lib: Any, quick: bool) -> Runner:
    def step(key, w):
        key, sub = lib.random.split(key)
        return key, w + lib.random.normal(sub, w.shape)
    f = lib.jit(step)
    state = [lib.random.PRNGKey(0), lib.device_put(np.zeros(8, np.float32))]

    def call():
        state[0], state[1] = f(state[0], state[1])
        return state[1]
    return per_call(call, block_tree(lib), 100 if quick else 500)


def cnn_params(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)

    def init(*shape: int) -> np.ndarray:
        fan_in = int(np.prod(shape[:-1]))
        return (rng.normal(size=shape) / np.sqrt(fan_in)).astype(np.float32)
    return [init(3, 3, 1, 16), np.zeros(16, np.float32), init(3, 3, 16, 32),
            np.zeros(32, np.float32), init(7 * 7 * 32, 10), np.zeros(10, np.float32)]


def make_cnn_loss(lib: Any) -> Callable[..., Any]:
    jnp, lax = lib.numpy, lib.lax

    def block(x, w, b):
        x = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        x = jnp.maximum(x + b, 0.0)
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        x = block(block(x, w1, b1), w2, b2)
        logits = x.reshape(x.shape[0], -1) @ w3 + b3
        shifted = logits - jnp.max(logits, axis=-1, keepdims=True)
        log_probs = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))
        return -jnp.mean(jnp.sum(y * log_probs, axis=-1))
    return loss


def w16(lib: Any, quick: bool) -> Runner:
    loss = make_cnn_loss(lib)
    lr = 0.01

    @lib.jit
    def step(params, x, y):
        value, grads = lib.value_and_grad(loss)(params, x, y)
        return [p - lr * g for p, g in zip(params, grads, strict=True)], value

    rng = np.random.default_rng(1)
    x = lib.device_put(rng.normal(size=(32, 28, 28, 1)).astype(np.float32))
    y = lib.device_put(np.eye(10, dtype=np.float32)[rng.integers(0, 10, size=32)])
    return training_steps(lib, step, lib.device_put(cnn_params()), (x, y), quick)


def w8(remat: bool) -> Callable[[Any, bool], Runner]:
    def make(lib: Any, quick: bool) -> Runner:
        jnp = lib.numpy
        rng = np.random.default_rng(0)
        t, batch, n_in, hidden = 200, 32, 64, 256
        params = [lib.device_put(rng.normal(size=s).astype(np.float32) / np.sqrt(s[0]))
                  for s in ((n_in, hidden), (hidden, hidden))]
        params.append(lib.device_put(np.zeros(hidden, np.float32)))
        xs = lib.device_put(rng.normal(size=(t, batch, n_in)).astype(np.float32))

        def loss(params, xs):
            w, u, b = params

            def step(h, x):
                h = jnp.tanh(x @ w + h @ u + b)
                return h, jnp.sum(h * h)
            body = lib.checkpoint(step) if remat else step
            _, ys = lib.lax.scan(body, jnp.zeros((batch, hidden), jnp.float32), xs)
            return jnp.sum(ys)
        g = lib.jit(lib.value_and_grad(loss))
        return per_call(lambda: g(params, xs), block_tree(lib), 2 if quick else 10)
    return make
def w12(lib: Any, quick: bool) -> Runner:
    jsl = importlib.import_module(lib.__name__ + ".scipy.linalg")
    jnp = lib.numpy
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 48, 48)).astype(np.float32)
    a = lib.device_put(x @ np.swapaxes(x, -1, -2) + 48 * np.eye(48, dtype=np.float32))
    b = lib.device_put(rng.normal(size=(64, 48, 4)).astype(np.float32))
    f = lib.jit(lambda a, b: (jsl.cho_solve(jsl.cho_factor(a, lower=True), b),
                              jnp.linalg.solve(a, b)))
    return per_call(lambda: f(a, b), block_tree(lib), 5 if quick else 20)


EAGER_MLP = [64, 128, 10]


def w17(form: str) -> Callable[[Any, bool], Runner]:
    """An eager training loop as Optax's and Flax's docs write it: no jit anywhere."""
    def make(lib: Any, quick: bool) -> Runner:
        jnp = lib.numpy
        lr = 0.01

        def loss(params, x, y):
            h = jnp.maximum(x @ params["w1"] + params["b1"], 0.0)
            logits = h @ params["w2"] + params["b2"]
            shifted = logits - jnp.max(logits, axis=-1, keepdims=True)
            log_probs = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))
            return -jnp.mean(jnp.sum(y * log_probs, axis=-1))

        (w1, b1), (w2, b2) = mlp_params(EAGER_MLP)
        params = lib.device_put({"w1": w1, "b1": b1, "w2": w2, "b2": b2})
        batches = [tuple(lib.device_put(a) for a in mlp_data(32, EAGER_MLP[0], EAGER_MLP[-1],
                                                              seed=s)) for s in range(4)]
        state = {"params": params, "i": 0}
        made_once = lib.value_and_grad(loss)

        def step(params: Any) -> tuple[Any, Any]:
            x, y = batches[state["i"] % len(batches)]
            state["i"] += 1
            if form == "lambda":
                value, grads = lib.value_and_grad(lambda p: loss(p, x, y))(params)
            elif form == "fresh":
                value, grads = lib.value_and_grad(loss)(params, x, y)
            else:
                value, grads = made_once(params, x, y)
            return lib.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), value

        inner = 3 if quick else 10

        def run() -> float:
            params = state["params"]
            t0 = time.perf_counter()
            value = None
            for _ in range(inner):
                params, value = step(params)
            lib.block_until_ready((params, value))
            elapsed = (time.perf_counter() - t0) / inner
            state["params"] = params
            return elapsed
        return run
    return make


def _eager_scan_step(carry: Any, x: Any) -> tuple[Any, Any]:
    return carry * 0.5 + x, carry


def w18(what: str) -> Callable[[Any, bool], Runner]:
    """One eager call of a library function (or a scan), in the steady state."""
    def make(lib: Any, quick: bool) -> Runner:
        jnp = lib.numpy
        special = importlib.import_module(lib.__name__ + ".scipy.special")
        rng = np.random.default_rng(0)
        a = lib.device_put((rng.normal(size=(8, 8)) + 8 * np.eye(8)).astype(np.float32))
        b = lib.device_put(rng.normal(size=(8,)).astype(np.float32))
        x = lib.device_put(np.linspace(0.1, 4.0, 64).astype(np.float32))
        key = lib.random.PRNGKey(0)
        calls = {"slogdet": lambda: jnp.linalg.slogdet(a),
                 "solve": lambda: jnp.linalg.solve(a, b),
                 "dawsn": lambda: special.dawsn(x),
                 "gamma": lambda: lib.random.gamma(key, 2.0, (64,)),
                 "scan": lambda: lib.lax.scan(_eager_scan_step, x[0], x)}
        return per_call(calls[what], block_tree(lib), 10 if quick else 50)
    return make


@dataclass
class Case:
    workload: str
    name: str
    make: Callable[[Any, bool], Runner]
    reps: int                   # repetitions at full length (--reps scales them)
    warmup: int = 2
    extra: dict[str, Any] = field(default_factory=dict)
    target: float | None = None     # where it differs from TARGETS[workload]


def cases() -> list[Case]:
    out = [Case("W1", f"jit dispatch x*2+1 f32[8], input from {origin}", w1(origin), 30,
                extra={"origin": origin}) for origin in ("device_put", "jit", "jit(numpy)")]
    for grad in (False, True):
        for k in (100, 1000, 4000):
            out.append(Case("W2", f"trace+lower K={k} {'grad' if grad else 'fwd'}",
                            w2(k, grad), {100: 30, 1000: 10, 4000: 5}[k],
                            warmup=1, extra={"K": k, "grad": grad}))
    out += [Case("W3", "cold jit(value_and_grad) MLP 784-512-512-10 b128", w3, 5, warmup=1),
            Case("W4", "pmap SGD step 8x32 MLP 64-128-128-10", w4, 15),
            Case("W4", "jit(grad(shard_map loss)) SGD step 8x32", w4_mesh("shard_map"), 15,
                 extra={"form": "shard_map"}),
            Case("W4", "jit SGD step over NamedSharding batch 8x32", w4_mesh("jit"), 15,
                 extra={"form": "jit"}),
            Case("W5", "jit(vmap(grad)) per-example b128 MLP 64-128-128-10", w5, 15),
            Case("W6", "pmap dispatch x*2 [8,4]", w6, 30)]
    out += [Case("W13", f"jit({mode}) tall Jacobian R^10 -> R^1000", w13(mode), 15,
                 extra={"mode": mode}) for mode in ("jacfwd", "jacrev")]
    out += [Case("W14", "jit random.normal(key, (4096, 4096))", w14, 10),
            Case("W15", "jit step: split key + normal noise f32[8]", w15, 30),
            Case("W16", "jit conv-net SGD step b32 28x28 conv16-pool-conv32-pool-dense", w16,
                 15)]
    out += [Case("W7", "jit update of a 100-leaf dict of f32[16]", w7, 15)]
    out += [Case("W9", f"transformer block step ({form}) d=128 seq 64, 4 seqs/device",
                 w9(form), 10, extra={"form": form}) for form in ("pmap", "jit")]
    out += [Case("W10", "cold start, warm cache, vs JAX without a cache", w10(False), 5,
                 warmup=1, extra={"jax_cache": False}, target=0.3),
            Case("W10", "cold start, warm cache, vs JAX with its cache",
                 w10(True), 5, warmup=1, extra={"jax_cache": True}, target=1.0)]
    out += [Case("W11", "cold first step of the transformer block (jit, one device)", w11,
                 5, warmup=1)]
    out += [Case("W8", f"jit(value_and_grad) scan RNN T=200 b32 64->256{' remat' if remat else ''}",
                 w8(remat), 10, extra={"remat": remat}) for remat in (False, True)]
    out += [Case("W12", "jit cholesky+cho_solve and solve, 64 x f32[48,48]", w12, 15)]
    out += [Case("W17", f"eager value_and_grad SGD step MLP 64-128-10 b32, {what}",
                 w17(form), 15, extra={"form": form})
            for form, what in (("fresh", "fresh wrapper"), ("lambda", "lambda over the batch"),
                               ("once", "wrapper made once"))]
    out += [Case("W18", f"eager {what}", w18(what), 15, extra={"call": what})
            for what in ("slogdet", "solve", "dawsn", "gamma", "scan")]
    return out


# --- running and reporting -------------------------------------------------------------------

def timed(run: Runner) -> float:
    gc.collect()
    gc.disable()
    try:
        return run()
    finally:
        gc.enable()


def summary(samples: list[float]) -> dict[str, Any]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
            "n": len(samples), "samples": samples}


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f}us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f}ms"
    return f"{seconds:8.3f}s "


def run_case(case: Case, libs: dict[str, Any], reps: int, quick: bool) -> dict[str, Any]:
    runners = {name: case.make(lib, quick) for name, lib in libs.items()}
    for _ in range(case.warmup):
        for run in runners.values():
            timed(run)
    samples: dict[str, list[float]] = {name: [] for name in runners}
    order = list(runners)
    for rep in range(reps):
        for name in (order if rep % 2 == 0 else order[::-1]):
            samples[name].append(timed(runners[name]))
    result: dict[str, Any] = {"workload": case.workload, "case": case.name, **case.extra}
    for name, s in samples.items():
        result[name] = summary(s)
    if "jax" in samples:
        result["ratio"] = result["spmdc"]["median"] / result["jax"]["median"]
        result["target"] = case.target or TARGETS[case.workload]
        result["met"] = result["ratio"] <= result["target"]
    return result


def print_row(r: dict[str, Any]) -> None:
    s = r["spmdc"]
    line = (f"{r['workload']:3} {r['case']:52} spmdc {fmt(s['median'])} "
            f"[{fmt(s['min']).strip()}..{fmt(s['max']).strip()}]")
    if "jax" in r:
        j = r["jax"]
        line += (f"  jax {fmt(j['median'])} [{fmt(j['min']).strip()}..{fmt(j['max']).strip()}]"
                 f"  ratio {r['ratio']:5.2f} (target <= {r['target']}: "
                 f"{'met' if r['met'] else 'MISSED'})")
    print(line, flush=True)


def linearity(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for grad in (False, True):
        by_k = {r["K"]: r for r in results if r["workload"] == "W2" and r["grad"] == grad}
        if 1000 not in by_k or 4000 not in by_k:
            continue
        entry: dict[str, Any] = {"grad": grad}
        for lib in ("spmdc", "jax"):
            if lib in by_k[1000]:
                per1 = by_k[1000][lib]["median"] / 1000
                per4 = by_k[4000][lib]["median"] / 4000
                entry[lib] = {"per_op_K1000": per1, "per_op_K4000": per4,
                              "growth": per4 / per1}
        entry["target"] = LINEARITY_TARGET
        entry["met"] = entry["spmdc"]["growth"] <= LINEARITY_TARGET
        out.append(entry)
        line = f"W2  per-op trace+lower {'grad' if grad else 'fwd '}: spmdc " \
               f"{entry['spmdc']['per_op_K1000'] * 1e6:.1f}us (K=1000) -> " \
               f"{entry['spmdc']['per_op_K4000'] * 1e6:.1f}us (K=4000), growth " \
               f"{entry['spmdc']['growth']:.2f}"
        if "jax" in entry:
            line += f"; jax growth {entry['jax']['growth']:.2f}"
        line += f" (target <= {LINEARITY_TARGET}: {'met' if entry['met'] else 'MISSED'})"
        print(line)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=float, default=1.0,
                        help="scale every workload's repetitions by this factor")
    parser.add_argument("--only", default="",
                        help="comma-separated workloads (W1..W18) or case names substrings")
    parser.add_argument("--quick", action="store_true",
                        help="few repetitions and short inner loops (a smoke run)")
    parser.add_argument("--no-jax", action="store_true", help="measure spmdc alone")
    parser.add_argument("--json", default="bench-results.json", help="where to write results")
    parser.add_argument("--processes", type=int, default=1,
                        help="N > 1: the multi-process benchmarks instead "
                             "(tools/bench_multiprocess.py), N processes x 8/N devices")
    parser.add_argument("--cold-start", choices=("spmdc", "jax"), help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cold_start:                 # one W10 process: print the seconds
        print(cold_start(spmdc if args.cold_start == "spmdc" else import_jax(),
                         args.cache_dir))
        return 0
    if args.processes > 1:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_multiprocess
        return bench_multiprocess.main(["--processes", str(args.processes),
                                        "--reps", str(max(1, round(3 * args.reps)))]
                                       + (["--no-jax"] if args.no_jax else []))

    jax = None if args.no_jax else import_jax()
    libs: dict[str, Any] = {"spmdc": spmdc}
    if jax is not None:
        libs["jax"] = jax
    else:
        print("jax is not installed (make bench installs the 'bench' extra): "
              "measuring spmdc alone", file=sys.stderr)
    only = [w.strip() for w in args.only.split(",") if w.strip()]
    selected = [c for c in cases()
                if not only or c.workload in only or any(o in c.name for o in only)]

    print(f"spmdc vs {'jax ' + jax.__version__ if jax else 'nothing'}; "
          f"{os.cpu_count()} CPUs; {N_DEVICES} virtual CPU devices; medians of alternated "
          f"repetitions [min..max]")
    results = []
    for case in selected:
        reps = 3 if args.quick else max(3, round(case.reps * args.reps))
        result = run_case(case, libs, reps, args.quick)
        results.append(result)
        print_row(result)
    lin = linearity(results)
    tall = {r["mode"]: r["spmdc"]["median"] for r in results if r["workload"] == "W13"}
    if len(tall) == 2:
        print(f"W7  spmdc jacrev / jacfwd on the tall Jacobian: "
              f"{tall['jacrev'] / tall['jacfwd']:.1f}x")

    import jaxlib
    report = {
        "meta": {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "python": platform.python_version(), "machine": platform.machine(),
                 "cpus": os.cpu_count(), "jaxlib": jaxlib.__version__,
                 "jax": jax.__version__ if jax else None, "quick": args.quick,
                 "reps_scale": args.reps, "argv": sys.argv[1:]},
        "results": results, "linearity": lin,
        "tall_jacobian_jacrev_over_jacfwd": (tall["jacrev"] / tall["jacfwd"]
                                             if len(tall) == 2 else None)}
    with open(args.json, "w") as fh:
        json.dump(report, fh, indent=1)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
