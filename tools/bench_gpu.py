"""spmdc against JAX on one GPU at model scale (issue 29): training steps that keep the
card busy, each run under spmdc and under JAX in separate processes, one after the other,
on the same GPU. The child process imports either ``jax`` or ``spmdc as jax`` and runs the
same program text below. Workloads (bfloat16 compute, float32 master weights, hand-written
Adam or SGD, steps under ``jit`` with the parameters donated):

  gpt_small_{naive,xla,cudnn}   GPT-style decoder, 12 layers, d=768, 12 heads, sequence
                                1024, batch 8, vocabulary 32768 (tied embedding, 111M
                                parameters), Adam; causal attention written with einsum
                                and softmax (naive), or nn.dot_product_attention with
                                implementation='xla' or 'cudnn' (cuDNN's flash attention)
  gpt_medium_{naive,cudnn}      the same, 24 layers, d=1024, 16 heads (337M)
  conv                          ResNet-style conv net, 9 conv layers (64-512 channels), NHWC
                                32x32, batch 256, SGD
  lstm                          LSTM, hidden 512, 128 steps through lax.scan, batch 64,
                                value_and_grad, SGD
  matmul                        bfloat16 8192^3 matmul under jit (the roofline)

For each: milliseconds per step (the median of the timed steps, each waited for),
tokens/s (GPT), model TFLOP/s (the model's FLOPs per step, 3x the forward's for training;
attention counted as dense) and MFU against the card's peak bfloat16 tensor throughput
(``PEAK_TFLOPS`` by device kind), the first and the last loss, and the peak GPU memory
(``memory_stats()['peak_bytes_in_use']``, with XLA_PYTHON_CLIENT_PREALLOCATE=false), then
spmdc/JAX ratios. Each child has a time limit and the whole run a budget (about 5
minutes): workloads past the budget are reported as skipped.

    python tools/bench_gpu.py [--only gpt_small_cudnn,conv] [--libs spmdc,jax] [--json F]
    python tools/bench_gpu.py --tiny      # every workload at toy sizes, on the CPU too

``--tiny`` makes every size small enough for a CPU (on a CPU the cuDNN workloads are
skipped: cuDNN exists on CUDA GPUs only). docs/PERFORMANCE.md ("GPU") has the figures.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from typing import Any

# Dense bfloat16 tensor-core peaks in TFLOP/s, by a fragment of ``device_kind``.
PEAK_TFLOPS = {"H200": 989.4, "H100 PCIe": 756.0, "H100": 989.4, "GH200": 989.4,
               "B200": 2250.0, "A100": 312.0, "L40S": 362.1, "L4": 121.0, "A10G": 70.0,
               "V100": 125.0}

# In the order they run: the budget cuts the last ones first.
WORKLOADS = ("gpt_small_cudnn", "gpt_small_xla", "gpt_small_naive", "conv", "lstm", "matmul",
             "gpt_medium_cudnn", "gpt_medium_naive")

jax: Any = None     # the library under test, set by the child process (``use``)
jnp: Any = None
lax: Any = None


def use(library: str) -> None:
    """Import ``jax`` or ``spmdc`` as ``jax`` (with its numpy and lax) for the programs."""
    global jax, jnp, lax
    if library == "spmdc":
        import spmdc as jax_module
        import spmdc.numpy as jnp_module
        from spmdc import lax as lax_module
    else:
        import jax as jax_module
        import jax.numpy as jnp_module
        from jax import lax as lax_module
    jax, jnp, lax = jax_module, jnp_module, lax_module


def peak_tflops(kind: str) -> float | None:
    for fragment, peak in PEAK_TFLOPS.items():      # the longer fragments come first
        if fragment in kind:
            return peak
    return None


# --- the programs (the same text under both libraries) -------------------------------------

def _adam(params, grads, state, lr=3e-4, b1=0.9, b2=0.95, eps=1e-8):
    m, v, count = state
    count = count + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    c1, c2 = 1 - b1 ** count, 1 - b2 ** count
    params = jax.tree_util.tree_map(
        lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps), params, m, v)
    return params, (m, v, count)


def _sgd(params, grads, lr=1e-2):
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


def gpt_config(size: str, tiny: bool) -> dict[str, int]:
    if tiny:
        return dict(layers=2, d=64, heads=4, seq=32, batch=2, vocab=128)
    layers, d, heads = (12, 768, 12) if size == "small" else (24, 1024, 16)
    return dict(layers=layers, d=d, heads=heads, seq=1024, batch=8, vocab=32768)


def gpt_params(cfg: dict[str, int], key) -> dict[str, Any]:
    d, f32 = cfg["d"], jnp.float32
    keys = jax.random.split(key, 4 * cfg["layers"] + 2)

    def normal(k, shape, scale=0.02):
        return scale * jax.random.normal(k, shape, f32)
    layers = [{"ln1": (jnp.ones(d, f32), jnp.zeros(d, f32)),
               "ln2": (jnp.ones(d, f32), jnp.zeros(d, f32)),
               "wqkv": normal(keys[4 * i], (d, 3 * d)), "wo": normal(keys[4 * i + 1], (d, d)),
               "w1": normal(keys[4 * i + 2], (d, 4 * d)),
               "w2": normal(keys[4 * i + 3], (4 * d, d))} for i in range(cfg["layers"])]
    return {"embed": normal(keys[-2], (cfg["vocab"], d)),
            "pos": normal(keys[-1], (cfg["seq"], d)),
            "final": (jnp.ones(d, f32), jnp.zeros(d, f32)), "layers": layers}


def _layer_norm(x, scale_and_shift):
    scale, shift = scale_and_shift
    x32 = x.astype(jnp.float32)
    mean = x32.mean(-1, keepdims=True)
    var = ((x32 - mean) ** 2).mean(-1, keepdims=True)
    return ((x32 - mean) * lax.rsqrt(var + 1e-5) * scale + shift).astype(jnp.bfloat16)


def _attention(x, layer, heads, mode):
    B, T, D = x.shape
    q, k, v = jnp.split(x @ layer["wqkv"], 3, axis=-1)
    q, k, v = (t.reshape(B, T, heads, D // heads) for t in (q, k, v))
    if mode == "naive":
        logits = jnp.einsum("bthd,bshd->bhts", q, k).astype(jnp.float32) / math.sqrt(D // heads)
        logits = jnp.where(jnp.tril(jnp.ones((T, T), bool)), logits, -1e9)
        probs = jax.nn.softmax(logits, axis=-1).astype(jnp.bfloat16)
        out = jnp.einsum("bhts,bshd->bthd", probs, v)
    else:
        out = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=mode)
    return out.reshape(B, T, D) @ layer["wo"]


def gpt_loss(params, tokens, heads, mode):
    p = jax.tree_util.tree_map(lambda w: w.astype(jnp.bfloat16), params)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    x = p["embed"][inputs] + p["pos"][: inputs.shape[1]]
    for layer in p["layers"]:
        x = x + _attention(_layer_norm(x, layer["ln1"]), layer, heads, mode)
        h = _layer_norm(x, layer["ln2"]) @ layer["w1"]
        x = x + jax.nn.gelu(h) @ layer["w2"]
    logits = (_layer_norm(x, p["final"]) @ p["embed"].T).astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()


def gpt_workload(size: str, mode: str, tiny: bool):
    cfg = gpt_config(size, tiny)
    key = jax.random.PRNGKey(0)
    params = gpt_params(cfg, key)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (params, (zeros, jax.tree_util.tree_map(jnp.zeros_like, params), 0.0))
    tokens = jax.random.randint(jax.random.PRNGKey(1), (cfg["batch"], cfg["seq"] + 1), 0,
                                cfg["vocab"])

    def step(state, tokens):
        params, opt = state
        loss, grads = jax.value_and_grad(gpt_loss)(params, tokens, cfg["heads"], mode)
        return _adam(params, grads, opt), loss
    d, layers, seq = cfg["d"], cfg["layers"], cfg["seq"]
    n_params = layers * 12 * d * d + cfg["vocab"] * d
    tokens_per_step = cfg["batch"] * seq
    flops = tokens_per_step * (6 * n_params + 12 * layers * seq * d)
    return jax.jit(step, donate_argnums=0), state, tokens, flops, tokens_per_step


def conv_workload(tiny: bool):
    widths = [64, 64, 64, 128, 128, 256, 256, 512, 512]
    strides = [1, 1, 1, 2, 1, 2, 1, 2, 1]
    scale = 8 if tiny else 1
    widths = [w // scale for w in widths]
    batch, size = (4, 8) if tiny else (256, 32)
    keys = jax.random.split(jax.random.PRNGKey(0), len(widths) + 3)
    params, cin, flops, side = [], 3, 0, size
    for k, w, s in zip(keys, widths, strides, strict=False):
        params.append(jax.random.normal(k, (3, 3, cin, w), jnp.float32) * (2 / (9 * cin)) ** 0.5)
        side //= s
        flops += 2 * batch * side * side * 9 * cin * w
        cin = w
    params.append(jax.random.normal(keys[-3], (cin, 10), jnp.float32) * cin ** -0.5)
    images = jax.random.normal(keys[-2], (batch, size, size, 3), jnp.float32)
    labels = jax.random.randint(keys[-1], (batch,), 0, 10)

    def loss(params, images, labels):
        x = images.astype(jnp.bfloat16)
        for w, s in zip(params[:-1], strides, strict=True):
            x = lax.conv_general_dilated(x, w.astype(jnp.bfloat16), (s, s), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = jax.nn.relu(x)
        logits = (x.mean(axis=(1, 2)) @ params[-1].astype(jnp.bfloat16)).astype(jnp.float32)
        logp = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(logp, labels[:, None], axis=-1).mean()

    def step(params, data):
        value, grads = jax.value_and_grad(loss)(params, *data)
        return _sgd(params, grads), value
    return jax.jit(step, donate_argnums=0), params, (images, labels), 3 * flops, None


def lstm_workload(tiny: bool):
    hidden, steps, batch = (32, 8, 4) if tiny else (512, 128, 64)
    keys = jax.random.split(jax.random.PRNGKey(0), 5)
    params = {"w": jax.random.normal(keys[0], (2 * hidden, 4 * hidden)) * (2 * hidden) ** -0.5,
              "b": jnp.zeros(4 * hidden), "out": jax.random.normal(keys[1], (hidden, 1)) * 0.1}
    xs = jax.random.normal(keys[2], (steps, batch, hidden))
    ys = jax.random.normal(keys[3], (batch, 1))

    def loss(params, xs, ys):
        w = params["w"].astype(jnp.bfloat16)

        def cell(carry, x):
            h, c = carry
            z = (jnp.concatenate([x, h], -1).astype(jnp.bfloat16) @ w).astype(jnp.float32)
            i, f, g, o = jnp.split(z + params["b"], 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            return (jax.nn.sigmoid(o) * jnp.tanh(c), c), None
        zeros = jnp.zeros((xs.shape[1], hidden))
        (h, _), _ = lax.scan(cell, (zeros, zeros), xs)
        return jnp.mean((h @ params["out"] - ys) ** 2)

    def step(params, data):
        value, grads = jax.value_and_grad(loss)(params, *data)
        return _sgd(params, grads), value
    flops = 3 * 2 * batch * (2 * hidden) * (4 * hidden) * steps
    return jax.jit(step, donate_argnums=0), params, (xs, ys), flops, None


def matmul_workload(tiny: bool):
    n = 256 if tiny else 8192
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32).astype(jnp.bfloat16)
    b = jax.random.normal(jax.random.PRNGKey(1), (n, n), jnp.float32).astype(jnp.bfloat16)

    def step(a, b):     # the result is fed back as the left operand, scaled to stay finite
        out = a @ b
        return (out * (1.0 / n ** 0.5)).astype(jnp.bfloat16), out[0, 0].astype(jnp.float32)
    return jax.jit(step), a, b, 2 * n ** 3, None


def build(name: str, tiny: bool):
    if name.startswith("gpt_"):
        _, size, mode = name.split("_")
        return gpt_workload(size, mode, tiny)
    return {"conv": conv_workload, "lstm": lstm_workload, "matmul": matmul_workload}[name](tiny)


def run_workload(name: str, library: str, tiny: bool, steps: int) -> dict[str, Any]:
    """Compile, warm up and time ``steps`` steps of one workload in this process."""
    use(library)
    device = jax.devices()[0]
    if name.endswith("_cudnn") and jax.default_backend() == "cpu":
        return {"workload": name, "library": library, "skipped": "cuDNN runs on CUDA only"}
    step, state, data, flops, tokens = build(name, tiny)
    t0 = time.perf_counter()
    state, loss = step(state, data)
    first_loss = float(loss)
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        state, loss = step(state, data)
        jax.block_until_ready(loss)
        times.append(time.perf_counter() - t0)
    seconds = statistics.median(times)
    stats = device.memory_stats() if hasattr(device, "memory_stats") else None
    peak = peak_tflops(str(device.device_kind))
    result = {"workload": name, "library": library, "device": str(device.device_kind),
              "ms_per_step": 1e3 * seconds, "first_step_s": compile_s,
              "model_tflops": flops / seconds / 1e12, "first_loss": first_loss,
              "last_loss": float(loss), "steps": steps,
              "peak_mib": (stats or {}).get("peak_bytes_in_use", 0) / 2 ** 20 or None}
    result["mfu"] = result["model_tflops"] / peak if peak else None
    result["tokens_per_s"] = tokens / seconds if tokens else None
    return result


# --- the parent: one child process per workload and library --------------------------------

def _child(name: str, library: str, args) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", name, "--libs", library,
               "--steps", str(args.steps)] + (["--tiny"] if args.tiny else [])
    env = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.limit,
                              env=env)
    except subprocess.TimeoutExpired:
        return {"workload": name, "library": library, "skipped": f"over {args.limit} s"}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
    return {"workload": name, "library": library, "failed": tail[0][:300]}


def _fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def report(results: list[dict[str, Any]]) -> None:
    print(f"{'workload':18} {'lib':6} {'ms/step':>9} {'tokens/s':>10} {'TFLOP/s':>8} "
          f"{'MFU':>5} {'first loss':>10} {'last loss':>10} {'peak MiB':>9}")
    for r in results:
        if "ms_per_step" not in r:
            print(f"{r['workload']:18} {r['library']:6} {r.get('skipped') or r.get('failed')}")
            continue
        print(f"{r['workload']:18} {r['library']:6} {r['ms_per_step']:9.3f} "
              f"{_fmt(r['tokens_per_s'], '10.0f')} {r['model_tflops']:8.2f} "
              f"{_fmt(r['mfu'], '5.3f')} {r['first_loss']:10.4f} {r['last_loss']:10.4f} "
              f"{_fmt(r['peak_mib'], '9.0f')}")
    timed = {(r["workload"], r["library"]): r for r in results if "ms_per_step" in r}
    for name in dict.fromkeys(r["workload"] for r in results):
        mine, theirs = timed.get((name, "spmdc")), timed.get((name, "jax"))
        if mine and theirs:
            memory = (f", peak memory {mine['peak_mib'] / theirs['peak_mib']:.2f}"
                      if mine["peak_mib"] and theirs["peak_mib"] else "")
            print(f"{name}: spmdc/JAX time {mine['ms_per_step'] / theirs['ms_per_step']:.3f}"
                  f"{memory}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(WORKLOADS),
                        help="comma-separated workloads (default: all)")
    parser.add_argument("--libs", default="spmdc,jax", help="spmdc, jax or both")
    parser.add_argument("--tiny", action="store_true", help="toy sizes (runs on a CPU)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per workload")
    parser.add_argument("--limit", type=float, default=100, help="seconds per child")
    parser.add_argument("--budget", type=float, default=280, help="seconds for the whole run")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print("RESULT " + json.dumps(run_workload(args.child, args.libs, args.tiny,
                                                  args.steps)), flush=True)
        return 0
    names = [n for n in args.only.split(",") if n]
    unknown = sorted(set(names) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workloads {unknown}; they are {', '.join(WORKLOADS)}")
    start, results = time.perf_counter(), []
    for name in names:
        for library in args.libs.split(","):
            if time.perf_counter() - start > args.budget:
                results.append({"workload": name, "library": library,
                                "skipped": f"past the {args.budget:.0f} s budget"})
                continue
            results.append(_child(name, library, args))
            print(json.dumps(results[-1]), flush=True)
    report(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 0 if all("failed" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
