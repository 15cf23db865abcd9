"""The ``nn.dot_product_attention`` programs whose values and gradients
tests/nn/test_attention.py compares with JAX's, and whose CUDA lowerings (cuDNN's custom
calls) tests/nn/test_attention_cudnn.py compares with JAX's; tests/nn/record_attention.py
records JAX 0.10.2's answers for both (tests/nn/data/). Library-agnostic: ``lib`` has the
library's ``nn`` and ``numpy``."""
from __future__ import annotations

import re
from typing import Any

import numpy as np

B, T, S, N, K, H = 2, 4, 6, 4, 2, 8


def _normal(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def arrays(case: dict[str, Any]) -> dict[str, np.ndarray]:
    """The case's inputs: q, k, v (and bias, mask, lengths) and the output's cotangent."""
    heads, kv_heads = case.get("heads", (N, K))
    dtype = np.dtype(case.get("dtype", "float32"))
    lead = () if case.get("unbatched") else (B,)
    out = {"q": _normal((*lead, T, heads, H), 1), "k": _normal((*lead, S, kv_heads, H), 2),
           "v": _normal((*lead, S, kv_heads, H), 3)}
    if dtype != np.float32:
        out = {name: x.astype(dtype) for name, x in out.items()}
    if "bias" in case:
        out["bias"] = _normal(case["bias"], 4).astype(dtype)
    if "mask" in case:
        out["mask"] = np.random.default_rng(5).random(case["mask"]) < 0.7
    if case.get("q_len"):
        out["q_len"] = np.array([3, 4], np.int32)
    if case.get("kv_len"):
        out["kv_len"] = np.array([6, 2], np.int32)
    out["ct"] = _normal((*lead, T, heads, H), 6).astype(dtype)
    return out


# name -> options; ``bias``/``mask`` give their shapes, ``options`` the keyword arguments.
CASES: dict[str, dict[str, Any]] = {
    "mha": {"heads": (2, 2)},
    "gqa": {},
    "mqa_bias": {"heads": (4, 1), "bias": (B, 4, T, S)},
    "broadcast_bias_and_mask": {"bias": (1, 1, T, S), "mask": (B, 1, T, S)},
    "head_bias_and_mask": {"bias": (1, N, T, S), "mask": (1, N, T, S)},
    "causal_scale": {"options": {"is_causal": True, "scale": 0.5}},
    "seq_lengths": {"q_len": True, "kv_len": True},
    "query_lengths_causal": {"q_len": True, "options": {"is_causal": True}},
    "window_int": {"options": {"local_window_size": 1}},
    "window_causal": {"options": {"local_window_size": (2, 0), "is_causal": True}},
    "unbatched": {"unbatched": True, "bias": (N, T, S)},
    "residual": {"mask": (B, N, T, S), "options": {"is_causal": True,
                                                  "return_residual": True}},
    "xla_kv_lengths": {"kv_len": True, "options": {"implementation": "xla"}},
    "bfloat16_causal": {"dtype": "bfloat16", "options": {"is_causal": True}},
    "everything": {"bias": (1, N, T, S), "mask": (B, 1, T, S), "q_len": True, "kv_len": True,
                   "options": {"is_causal": True, "local_window_size": (2, 0), "scale": 0.3,
                               "return_residual": True}},
}


def program(lib: Any, case: dict[str, Any]):
    """``f(q, k, v, ct, bias, mask, q_len, kv_len) -> (out, residual or None, loss)``."""
    jnp = lib.numpy
    options = case.get("options", {})

    def f(q, k, v, ct, bias=None, mask=None, q_len=None, kv_len=None):
        res = lib.nn.dot_product_attention(q, k, v, bias, mask, query_seq_lengths=q_len,
                                           key_value_seq_lengths=kv_len, **options)
        out, residual = res if options.get("return_residual") else (res, None)
        loss = jnp.sum(out.astype(jnp.float32) * ct.astype(jnp.float32))
        return loss, (out, residual)
    return f


def differentiated(case: dict[str, Any]) -> tuple[str, ...]:
    """The inputs the gradient is taken with respect to."""
    return ("q", "k", "v", "bias") if "bias" in case else ("q", "k", "v")


# --- cuDNN lowerings: (options, dtype, shapes, with the gradient) --------------------------

CUDNN_CASES: dict[str, dict[str, Any]] = {
    "causal": {"options": {"is_causal": True}},
    "causal_grad": {"options": {"is_causal": True}, "grad": True},
    "gqa_grad": {"heads": (4, 2), "grad": True},
    "bias_mask_grad": {"bias": (1, 4, T, S), "mask": (B, 1, T, S), "grad": True},
    "padding_causal_window_grad": {"q_len": True, "kv_len": True, "grad": True,
                                   "options": {"is_causal": True, "local_window_size": (2, 0)}},
    "kv_padding_f16": {"kv_len": True, "dtype": "float16",
                       "options": {"scale": 0.25, "local_window_size": (3, 0)}},
    "residual": {"options": {"is_causal": True, "return_residual": True}},
    "unbatched_bias": {"unbatched": True, "bias": (N, T, S)},
}


def cudnn_case(case: dict[str, Any]) -> dict[str, Any]:
    """A cuDNN case as a value case: bfloat16 unless named, implementation='cudnn', the
    forward alone or the gradients alone."""
    return {**case, "dtype": case.get("dtype", "bfloat16"), "grad": case.get("grad", False),
            "grad_only": case.get("grad", False),
            "options": {**case.get("options", {}), "implementation": "cudnn"}}


def custom_calls(text: str) -> list[str]:
    """The module's custom calls, each from its target to its type, operand names left out
    (they differ between the two libraries' printers)."""
    calls = []
    for line in text.splitlines():
        if "stablehlo.custom_call @" in line:
            body = line.split("stablehlo.custom_call ", 1)[1]
            calls.append(re.sub(r"\(%[^)]*\)", "(...)", body, count=1))
    return calls


def case_program(lib: Any, case: dict[str, Any], inputs: dict[str, Any]):
    """``(call, args)``: the case's program, with its gradient when the case asks for one
    (a value case always does)."""
    f = program(lib, case)
    names = [n for n in ("q", "k", "v", "ct", "bias", "mask", "q_len", "kv_len")
             if n in inputs]
    wrt = tuple(names.index(n) for n in differentiated(case))

    def call(*args):
        return f(**dict(zip(names, args, strict=True)))
    if case.get("grad_only"):       # the gradients alone: the program needs no primal output
        return lib.grad(lambda *args: call(*args)[0], argnums=wrt), [inputs[n] for n in names]
    elif case.get("grad", True):
        call = lib.value_and_grad(call, argnums=wrt, has_aux=True)
    return call, [inputs[n] for n in names]


def jit_program(lib: Any, case: dict[str, Any], inputs: dict[str, Any]):
    """``(jitted, args)``: ``case_program`` under ``jit``."""
    call, args = case_program(lib, case, inputs)
    return lib.jit(call), args


def group_program(lib: Any, names: list[str]):
    """``(jitted, args)``: the value cases ``names`` as one program under ``jit`` (one
    compile for many cases), taking and returning dicts keyed by case name."""
    programs = {n: case_program(lib, CASES[n], arrays(CASES[n])) for n in names}

    def call(args):
        return {n: programs[n][0](*args[n]) for n in names}
    return lib.jit(call), {n: programs[n][1] for n in names}


# The value cases in groups of one compiled program each: a program with every option
# between them, and the rest (XLA compiles them for seconds: the slow tests').
GROUPS = {"every_option": ["bfloat16_causal", "everything", "unbatched"]}
GROUPS["more"] = sorted(set(CASES) - set(GROUPS["every_option"]))
