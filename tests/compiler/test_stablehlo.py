"""The CUDA lowering (Note [lowering per platform] in compiler/stablehlo.py), checked
without a GPU: spmdc lowers for CUDA through ``trace(...).lower(lowering_platforms=
('cuda',))`` and its kernel calls must be JAX's (target, operand and result types and
layouts, aliases, attributes), as recorded from JAX 0.11.2 in tests/data/
cuda_lowerings.json (`tools/record.py cuda_lowerings`); the host callbacks call the CUDA
plugin's handler; the runtime registers the plugin's targets (where the plugin is
installed). Running the programs on a GPU is tools/gpu_linalg_check.py's job."""
from __future__ import annotations

import re
import types

import numpy as np
import oracle
import pytest
from cuda_lowering_cases import CASES

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

RECORDED = oracle.recorded("cuda_lowerings.json")["modules"]
LIB = types.SimpleNamespace(lax=lax, jnp=jnp)

# JAX computes lu's permutation with a CUDA kernel; spmdc in StableHLO (Note [cuSOLVER
# custom calls] in compiler/primitives/linalg_cuda.py).
NOT_COMPARED = ("cu_lu_pivots_to_permutation",)

_CALL = re.compile(r"stablehlo\.custom_call @(\w+)\((.*?)\) \{(.*)\} : \((.*?)\) -> (.*)$")


def _attribute(attrs: str, name: str) -> str:
    """The value of attribute ``name`` in an MLIR attribute dictionary's text."""
    m = re.search(rf"(?:^|, ){re.escape(name)} = ", attrs)
    if m is None:
        return ""
    i, depth = m.end(), 0
    for j in range(i, len(attrs)):
        c = attrs[j]
        if c in "[{<(":
            depth += 1
        elif c in "]}>)":
            depth -= 1
        elif c == "," and depth == 0:
            return attrs[i:j]
        if depth < 0:
            return attrs[i:j]
    return attrs[i:]


def kernel_calls(text: str) -> list[tuple[str, ...]]:
    """Each custom call's target, types, layouts, aliases and attributes (JAX keeps the
    attributes in ``mhlo.backend_config``, spmdc in ``backend_config``), and each
    triangular_solve with its attributes, in program order."""
    calls = []
    for line in text.splitlines():
        m = _CALL.search(line)
        if m:
            target, _, attrs, ins, outs = m.groups()
            if target in NOT_COMPARED:
                continue
            config = _attribute(attrs, "mhlo.backend_config") or _attribute(attrs,
                                                                          "backend_config")
            calls.append((target, ins, outs.strip(), _attribute(attrs, "operand_layouts"),
                          _attribute(attrs, "result_layouts"),
                          _attribute(attrs, "output_operand_aliases"), config))
        elif "stablehlo.triangular_solve" in line:
            calls.append(("triangular_solve", line.split("<{", 1)[1]))
    return calls


def cuda_text(name: str) -> str:
    make, args = CASES[name]
    with spmdc.enable_x64():
        return spmdc.jit(make(LIB)).trace(*args).lower(lowering_platforms=("cuda",)).as_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_calls_are_jaxs(name):
    ours, theirs = kernel_calls(cuda_text(name)), kernel_calls(RECORDED[name])
    assert theirs, f"no kernel call recorded for {name}"
    assert ours == theirs


def test_parser_reads_both_spellings():
    jax_line = ('%0:2 = stablehlo.custom_call @cusolver_potrf_ffi(%arg0) {backend_config = "", '
                'mhlo.backend_config = {lower = true}, operand_layouts = [dense<[0, 1]> : '
                'tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> '
                ': tensor<0xindex>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<i32>)')
    ours = jax_line.replace('backend_config = "", mhlo.', "")
    assert kernel_calls(jax_line) == kernel_calls(ours)
    assert kernel_calls(jax_line)[0][-1] == "{lower = true}"
    assert kernel_calls(jax_line.replace("lower = true", "lower = false")) != kernel_calls(ours)


def test_cpu_lowering_is_unchanged_by_the_platform_switch():
    make, args = CASES["cholesky_f32"]
    traced = spmdc.jit(make(LIB)).trace(*args)
    cpu = traced.lower(lowering_platforms=("cpu",)).as_text()
    assert "lapack_spotrf_ffi" in cpu and "cusolver" not in cpu
    here = spmdc.default_backend()
    if here == "cpu":           # a lowering without a platform is for the client's
        assert cpu == spmdc.jit(make(LIB)).lower(*args).as_text()


def test_host_callbacks_call_the_gpu_handler():
    x = np.ones((2, 3), np.float32)

    def f(a):
        spmdc.debug.print("{}", a)
        return spmdc.pure_callback(lambda v: v * 2, spmdc.ShapeDtypeStruct(a.shape, a.dtype), a)
    traced = spmdc.jit(f).trace(x)
    cuda = traced.lower(lowering_platforms=("cuda",)).as_text()
    cpu = traced.lower(lowering_platforms=("cpu",)).as_text()
    assert cuda.count("@xla_ffi_python_gpu_callback") == 2 and "cpu_callback" not in cuda
    assert cpu.count("@xla_ffi_python_cpu_callback") == 2
    assert cuda.replace("gpu_callback", "cpu_callback") == cpu


def test_left_eigenvectors_on_cuda_are_a_clear_error():
    from spmdc.compiler.primitives.linalg_eig import eig_p
    from spmdc.core.tracing import bind

    def f(a):
        return bind(eig_p, a, compute_left=True, compute_right=False)
    traced = spmdc.jit(f).trace(np.eye(3, dtype=np.float32))
    with pytest.raises(Exception, match="left eigenvectors.*cuda"):
        traced.lower(lowering_platforms=("cuda",)).as_text()
    assert "lapack_sgeev_ffi" in traced.lower(lowering_platforms=("cpu",)).as_text()


def test_lowering_platforms_must_name_one_known_platform():
    traced = spmdc.jit(lambda a: a + 1).trace(1.0)
    with pytest.raises(ValueError, match="one platform"):
        traced.lower(lowering_platforms=("cpu", "cuda"))
    with pytest.raises(ValueError, match="one platform"):
        traced.lower(lowering_platforms=("tpu",))


def test_a_module_lowered_for_another_platform_does_not_compile_here():
    other = "cpu" if spmdc.default_backend() == "gpu" else "cuda"
    lowered = spmdc.jit(lambda a: a + 1).trace(1.0).lower(lowering_platforms=(other,))
    with pytest.raises(ValueError, match=f"lowered for {other}"):
        lowered.compile()


def test_missing_plugin_kernels_are_named_before_xla_fails(monkeypatch):
    from spmdc.runtime.pjrt import custom_calls
    monkeypatch.setattr(custom_calls, "_cuda_unregistered", ["jax_cuda13_plugin is not installed"])
    with pytest.raises(RuntimeError, match="host-callback handler.*jax_cuda13_plugin"):
        custom_calls.check_cuda_targets("stablehlo.custom_call @xla_ffi_python_gpu_callback(%0)")
    with pytest.raises(RuntimeError, match="cuSOLVER kernels"):
        custom_calls.check_cuda_targets("stablehlo.custom_call @cusolver_getrf_ffi(%0)")
    custom_calls.check_cuda_targets("stablehlo.custom_call @lapack_sgetrf_ffi(%0)")
    monkeypatch.setattr(custom_calls, "_cuda_unregistered", [])
    custom_calls.check_cuda_targets("stablehlo.custom_call @cusolver_getrf_ffi(%0)")


def _plugin_package():
    import importlib.util
    for name in ("jax_cuda13_plugin", "jax_cuda12_plugin"):
        if importlib.util.find_spec(name) is not None:
            return name
    return None


@pytest.mark.skipif(_plugin_package() is None,
                    reason="the CUDA plugin (jax-cuda13-plugin, jax-cuda13-pjrt) is not "
                           "installed; registering its targets needs it (no GPU needed)")
def test_plugin_targets_register_without_a_gpu(monkeypatch):
    from jaxlib import xla_client as xc

    from spmdc.runtime.pjrt import backend, custom_calls
    found = backend._cuda_plugin_path()
    if found is None:
        pytest.skip("the CUDA PJRT plugin (jax-cuda13-pjrt) is not installed")
    path, package = found
    monkeypatch.setattr(custom_calls, "_cuda_unregistered", [])
    c_api = (xc.load_pjrt_plugin_dynamically("cuda", path)
             if not xc.pjrt_plugin_loaded("cuda") else None)
    if c_api is None:
        pytest.skip("the CUDA plugin was already loaded in this process")
    custom_calls.register_cuda_targets(c_api, package)
    assert custom_calls._cuda_unregistered == []
    custom_calls.check_cuda_targets("stablehlo.custom_call @cusolver_potrf_ffi(%0)")
    custom_calls.register_cuda_targets(c_api, "no_such_cuda_plugin_package")
    with pytest.raises(RuntimeError, match="cuSOLVER kernels.*no_such_cuda_plugin_package"):
        custom_calls.check_cuda_targets("stablehlo.custom_call @cusolver_potrf_ffi(%0)")
    custom_calls.check_cuda_targets("stablehlo.add")     # no plugin kernel: nothing to say
