"""Records JAX 0.10.2's answers for tests/nn/attention_cases.py into tests/nn/data/:
``attention_reference.npz`` (each value case's output, residual and gradients, float32)
and ``attention_cudnn.json`` (each cuDNN case's custom calls as JAX lowers them for CUDA).
Run it with an interpreter that has JAX (never by the tests):

    /work/benchvenv/bin/python tests/nn/record_attention.py

JAX checks that cuDNN is installed before it lowers a cuDNN call (``RuntimeError: cuDNN
is not detected.`` on a machine without the CUDA plugin). The lowering itself needs no
GPU, so the recorder stands in for that one check (reporting cuDNN 9.10); with no CUDA
device, JAX's head-dimension limit is 128, as spmdc's is then.
"""
from __future__ import annotations

import json
import pathlib
import sys
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.cudnn import fused_attention_stablehlo

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import attention_cases as cases  # noqa: E402

LIB = SimpleNamespace(nn=jax.nn, numpy=jnp, jit=jax.jit, grad=jax.grad,
                      value_and_grad=jax.value_and_grad)


def record_values() -> dict[str, np.ndarray]:
    out = {}
    for name, case in cases.CASES.items():
        inputs = cases.arrays(case)
        jitted, args = cases.jit_program(LIB, case, inputs)
        (loss, (value, residual)), grads = jitted(*args)
        out[f"{name}/out"] = np.asarray(value, np.float32)
        if residual is not None:
            out[f"{name}/residual"] = np.asarray(residual, np.float32)
        for wrt, g in zip(cases.differentiated(case), grads, strict=True):
            out[f"{name}/d_{wrt}"] = np.asarray(g, np.float32)
    return out


def record_cudnn() -> dict[str, list[str]]:
    fused_attention_stablehlo.check_cudnn_version = lambda: 91000
    out = {}
    for name, case in cases.CUDNN_CASES.items():
        case = cases.cudnn_case(case)
        jitted, args = cases.jit_program(LIB, case, cases.arrays(case))
        text = jitted.trace(*args).lower(lowering_platforms=("cuda",)).as_text()
        out[name] = cases.custom_calls(text)
    return out


if __name__ == "__main__":
    assert jax.__version__ == "0.10.2", jax.__version__
    (HERE / "data").mkdir(exist_ok=True)
    np.savez_compressed(HERE / "data" / "attention_reference.npz", **record_values())
    (HERE / "data" / "attention_cudnn.json").write_text(
        json.dumps({"jax": jax.__version__, "cases": record_cudnn()}, indent=1) + "\n")
