"""tools/bench_gpu.py at toy sizes on the CPU (``--tiny``): a workload's step runs under
spmdc and reports what the GPU run reports; the GPT step (nn.dot_product_attention
with implementation='xla') through the parent and child processes is a slow test."""
from __future__ import annotations

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import spmdc

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "bench_gpu.py"
_spec = importlib.util.spec_from_file_location("bench_gpu", TOOL)
bench_gpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_gpu)


def test_tiny_matmul_under_spmdc_reports_its_figures():
    result = bench_gpu.run_workload("matmul", "spmdc", tiny=True, steps=2)
    n = 256
    a = spmdc.random.normal(spmdc.random.PRNGKey(0), (n, n)).astype(spmdc.numpy.bfloat16)
    b = spmdc.random.normal(spmdc.random.PRNGKey(1), (n, n)).astype(spmdc.numpy.bfloat16)
    corner = np.asarray(a, np.float32)[0] @ np.asarray(b, np.float32)[:, 0]
    assert result["first_loss"] == pytest.approx(corner, rel=1e-2)
    assert result["ms_per_step"] > 0 and result["steps"] == 2
    assert result["model_tflops"] == pytest.approx(2 * n ** 3 / result["ms_per_step"] / 1e9)
    assert result["device"] == "cpu" and result["mfu"] is None    # no peak for a CPU


def test_peaks_are_found_by_device_kind():
    assert bench_gpu.peak_tflops("NVIDIA H200") == 989.4
    assert bench_gpu.peak_tflops("NVIDIA H100 PCIe") == 756.0
    assert bench_gpu.peak_tflops("NVIDIA A100-SXM4-80GB") == 312.0
    assert bench_gpu.peak_tflops("cpu") is None


@pytest.mark.slow
def test_tiny_gpt_step_through_a_child_process(tmp_path):
    out = tmp_path / "bench.json"
    assert bench_gpu.main(["--tiny", "--libs", "spmdc", "--only", "gpt_small_xla,gpt_small_cudnn",
                           "--steps", "2", "--json", str(out)]) == 0
    xla, cudnn = json.loads(out.read_text())
    assert xla["workload"] == "gpt_small_xla" and xla["tokens_per_s"] > 0
    assert xla["last_loss"] < xla["first_loss"] < np.log(128) + 0.5   # vocabulary 128
    assert cudnn["skipped"] == "cuDNN runs on CUDA only"
