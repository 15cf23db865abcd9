"""spmdc.ffi (jax.ffi): handlers written in C++ against the XLA FFI headers jaxlib ships
(tests/ffi_kernels.cc), built into a shared library, loaded with ctypes, registered for
the CPU and called with ffi_call eagerly, under jit and under vmap (each vmap_method as
JAX's), with attributes, layouts, aliases and side effects; results against NumPy.

The library is built once per machine (g++ -O0: about 3 s of compiler time, 7 to 11 s
of wall time on a 2-core host) into a directory under the system's temporary directory,
named by a digest of the source and the headers, so later runs load it at once; the test
that builds from scratch is marked slow."""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

import spmdc
from spmdc import ffi
from spmdc.extend.core import Primitive
from spmdc.interpreters import mlir

SOURCE = Path(__file__).with_name("ffi_kernels.cc")
COMPILER = shutil.which("g++") or shutil.which("c++")
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no C++ compiler (g++)")


def build(directory: Path) -> Path:
    """Compile tests/ffi_kernels.cc into ``directory``/libffi_kernels.so (atomically)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "libffi_kernels.so"
    partial = directory / f".build-{os.getpid()}.so"
    subprocess.run([COMPILER, "-O0", "-w", "-shared", "-fPIC", "-std=c++17",
                    f"-I{ffi.include_dir()}", str(SOURCE), "-o", str(partial)],
                   check=True, capture_output=True, timeout=600)
    os.replace(partial, target)
    return target


@pytest.fixture(scope="session")
def kernels():
    """The library built (or found built) and its handlers registered under
    ``spmdc_test_*`` names."""
    if COMPILER is None:
        pytest.skip("no C++ compiler (g++)")
    digest = hashlib.sha256(SOURCE.read_bytes() + ffi.include_dir().encode()
                            + (Path(ffi.include_dir()) / "xla/ffi/api/ffi.h").read_bytes())
    cached = Path(tempfile.gettempdir()) / f"spmdc-ffi-kernels-{digest.hexdigest()[:16]}"
    path = cached / "libffi_kernels.so"
    if not path.exists():
        build(cached)
    lib = ctypes.cdll.LoadLibrary(str(path))
    lib.affine_count_calls.restype = ctypes.c_int32
    spmdc.devices()                    # the CPU client, which registers at once
    ffi.register_ffi_target("spmdc_test_rms_norm", ffi.pycapsule(lib.RmsNorm))
    ffi.register_ffi_target("spmdc_test_affine_count", ffi.pycapsule(lib.AffineCount),
                            platform="cpu", api_version=1)
    return lib


def rms_norm_reference(x, eps=1e-5):
    return x / np.sqrt(np.mean(x.astype(np.float32) ** 2, axis=-1, keepdims=True) + eps)


def rms_norm(x, eps=1e-5, **options):
    call = ffi.ffi_call("spmdc_test_rms_norm", spmdc.ShapeDtypeStruct(x.shape, x.dtype),
                        **options)
    return call(x, eps=np.float32(eps))


X = np.linspace(-2, 3, 24, dtype=np.float32).reshape(2, 3, 4)


def test_eager_and_jit_equal_numpy(kernels):
    np.testing.assert_allclose(np.asarray(rms_norm(X)), rms_norm_reference(X), rtol=1e-6)
    jitted = spmdc.jit(lambda x: rms_norm(x, eps=0.5) * 2.0)
    np.testing.assert_allclose(np.asarray(jitted(X)), rms_norm_reference(X, 0.5) * 2,
                               rtol=1e-6)
    text = jitted.lower(X).as_text()
    assert "stablehlo.custom_call @spmdc_test_rms_norm" in text
    assert "backend_config = {eps = 5.000000e-01 : f32}" in text
    assert "api_version = 4" in text


@pytest.mark.parametrize("method", ["broadcast_all", "expand_dims", "legacy_vectorized",
                                    "sequential", "sequential_unrolled"])
def test_vmap_methods(kernels, method):
    f = spmdc.vmap(lambda x: rms_norm(x, vmap_method=method), in_axes=1, out_axes=1)
    np.testing.assert_allclose(np.asarray(f(X)), rms_norm_reference(X), rtol=1e-6)
    text = spmdc.jit(f).lower(X).as_text()
    calls = text.count("stablehlo.custom_call @spmdc_test_rms_norm")
    assert calls == (3 if method == "sequential_unrolled" else 1)
    assert ("stablehlo.while" in text) == (method == "sequential")


def test_vmap_without_a_method_is_an_error(kernels):
    with pytest.raises(NotImplementedError, match="vmap_method"):
        spmdc.vmap(rms_norm)(X)


def test_broadcast_all_calls_once_and_sequential_once_per_element(kernels):
    # broadcast_all gives the unbatched b the batch axis too, so the elementwise handler
    # reads a whole batch of each operand in one call
    a = np.arange(8, dtype=np.int32).reshape(2, 4)
    b = np.array([10, 20, 30, 40], np.int32)
    for method, calls in (("broadcast_all", 1), ("sequential", 2)):
        call = ffi.ffi_call("spmdc_test_affine_count",
                            (spmdc.ShapeDtypeStruct((4,), np.int32),
                             spmdc.ShapeDtypeStruct((), np.int32)), vmap_method=method)
        before = kernels.affine_count_calls()
        out, _ = spmdc.vmap(lambda x, call=call: call(x, b, k=3))(a)
        np.testing.assert_array_equal(np.asarray(out), a * 3 + b)
        assert kernels.affine_count_calls() == before + calls, method


def test_several_results_attributes_and_side_effects(kernels):
    a, b = np.arange(5, dtype=np.int32), np.full(5, 7, np.int32)
    types = [spmdc.ShapeDtypeStruct((5,), np.int32), spmdc.ShapeDtypeStruct((), np.int32)]
    as_list = ffi.ffi_call("spmdc_test_affine_count", types)(a, b, k=-2)
    assert isinstance(as_list, list)
    np.testing.assert_array_equal(np.asarray(as_list[0]), a * -2 + b)
    pure = ffi.ffi_call("spmdc_test_affine_count", tuple(types))
    effect = ffi.ffi_call("spmdc_test_affine_count", tuple(types), has_side_effect=True)
    assert isinstance(pure(a, b, k=1), tuple)

    def unused(call):
        def f(x, y):
            call(x, y, k=1)                 # results dropped
            return x + 1
        return spmdc.jit(f)

    before = kernels.affine_count_calls()
    unused(pure)(a, b)
    assert kernels.affine_count_calls() == before          # dropped: never called
    unused(effect)(a, b)
    unused(effect)(a, b)
    assert kernels.affine_count_calls() == before + 2      # kept: called at every launch
    _, count = spmdc.jit(lambda x, y: effect(x, y, k=1))(a, b)
    assert int(count) == before + 3


def test_gradients_through_custom_vjp_and_of_other_inputs(kernels):
    # the FFI tutorial's pattern: the call's derivative given by custom_vjp
    @spmdc.custom_vjp
    def scaled(x):
        return rms_norm(x)

    scaled.defvjp(lambda x: (rms_norm(x), x), lambda x, g: (g * 2.0,))
    grad = spmdc.jit(spmdc.grad(lambda x: scaled(x).sum()))(X)
    np.testing.assert_allclose(np.asarray(grad), np.full(X.shape, 2.0))
    # a call on values that are not differentiated is no derivative's business
    weights = rms_norm_reference(X)
    grad = spmdc.grad(lambda x: (x * rms_norm(X)).sum())(np.ones_like(X))
    np.testing.assert_allclose(np.asarray(grad), weights, rtol=1e-6)


def test_layouts_give_the_handler_other_memory_orders(kernels):
    x = X[0]
    # column-major input: the handler's rows are runs of x.T's memory
    transposed = x.T.ravel().reshape(3, 4)
    out = rms_norm(x, input_layouts=[(1, 0)])
    np.testing.assert_allclose(np.asarray(out), rms_norm_reference(transposed), rtol=1e-6)
    out = rms_norm(x, input_layouts=[(1, 0)], output_layouts=(1, 0))
    expected = rms_norm_reference(transposed).ravel().reshape(4, 3).T
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="not an order of its 2 dimensions"):
        rms_norm(x, input_layouts=[(0, 0)])
    with pytest.raises(ValueError, match="number of input layouts"):
        rms_norm(x, input_layouts=[(1, 0), (1, 0)])


def test_input_output_aliases(kernels):
    f = spmdc.jit(lambda x: rms_norm(x, input_output_aliases={0: 0}))
    np.testing.assert_allclose(np.asarray(f(X)), rms_norm_reference(X), rtol=1e-6)
    assert "output_operand_aliases = [#stablehlo.output_operand_alias<" in \
        f.lower(X).as_text()
    with pytest.raises(ValueError, match="output index 3 outside the range"):
        rms_norm(X, input_output_aliases={0: 3})
    call = ffi.ffi_call("spmdc_test_rms_norm", spmdc.ShapeDtypeStruct((4,), np.float32),
                        input_output_aliases={0: 0})
    with pytest.raises(ValueError, match="different type"):
        call(np.ones(3, np.float32), eps=np.float32(1e-5))


def test_no_derivative_and_bad_arguments(kernels):
    with pytest.raises(ValueError, match="cannot be differentiated.*custom_jvp"):
        spmdc.grad(lambda x: rms_norm(x).sum())(X)
    with pytest.raises(ValueError, match="vmap_method must be on of"):
        ffi.ffi_call("spmdc_test_rms_norm", spmdc.ShapeDtypeStruct((3,), np.float32),
                     vmap_method="parallel")
    with pytest.raises(ValueError, match="must have 'shape' and 'dtype'"):
        ffi.ffi_call("spmdc_test_rms_norm", [(3,)])
    with pytest.raises(ValueError, match="legacy_backend_config"):
        ffi.ffi_call("spmdc_test_rms_norm", spmdc.ShapeDtypeStruct((3,), np.float32),
                     legacy_backend_config="x")
    with pytest.raises(TypeError, match="Non-hashable keyword argument to ffi_call eps"):
        ffi.ffi_call("spmdc_test_rms_norm", spmdc.ShapeDtypeStruct((3,), np.float32))(
            np.ones(3, np.float32), eps=[1.0])
    with pytest.raises(RuntimeError, match="No FFI handler registered for spmdc_no_such"):
        ffi.ffi_call("spmdc_no_such", spmdc.ShapeDtypeStruct((3,), np.float32))(
            np.ones(3, np.float32))
    np.testing.assert_allclose(np.asarray(rms_norm(X)), rms_norm_reference(X), rtol=1e-6)


# What JAX 0.10.2 lowers these keyword arguments to (its mhlo.backend_config), recorded
JAX_ATTRIBUTES = ('{arr = dense<[0, 1, 2]> : tensor<3xi32>, b = true, d = {a = 1 : i64}, '
                  'f = 5.000000e-01 : f64, i = 3 : i64, n = -2 : i8, s = "hi"}')


def test_attributes_lower_as_jax_lowers_them():
    call = ffi.ffi_call("spmdc_test_unregistered", spmdc.ShapeDtypeStruct((2,), np.float32))
    text = spmdc.jit(lambda x: call(x, i=3, f=0.5, b=True, s="hi", n=np.int8(-2),
                                    arr=np.arange(3, dtype=np.int32), d={"a": 1})
                     ).lower(np.ones(2, np.float32)).as_text()
    assert f"backend_config = {JAX_ATTRIBUTES}" in text


def test_ffi_lowering_lowers_a_library_primitive(kernels):
    rms_p = Primitive("spmdc_test_rms")
    rms_p.def_impl(lambda x, eps: rms_norm_reference(np.asarray(x), eps))
    rms_p.def_abstract_eval(lambda x, eps: x)
    mlir.register_lowering(rms_p, ffi.ffi_lowering("spmdc_test_rms_norm"), platform="cpu")
    out = spmdc.jit(lambda x: rms_p.bind(x, eps=np.float32(0.25)))(X)
    np.testing.assert_allclose(np.asarray(out), rms_norm_reference(X, 0.25), rtol=1e-6)


def test_type_registration_and_the_headers(kernels):
    type_id = ctypes.c_int64.in_dll(kernels, "spmdc_test_state_type_id")
    assert type_id.value == 0
    ffi.register_ffi_type("spmdc_test_state",
                          {"type_id": ffi.pycapsule(ctypes.addressof(type_id))})
    assert type_id.value > 0                  # XLA gave the type its id
    assert (Path(ffi.include_dir()) / "xla" / "ffi" / "api" / "ffi.h").is_file()
    ffi.register_ffi_target_as_batch_partitionable("spmdc_test_rms_norm")
    with pytest.raises(TypeError, match="type_id"):
        ffi.register_ffi_type("spmdc_test_other", {"id": 1})
    with pytest.raises(TypeError, match="function pointer"):
        ffi.pycapsule(None)


@pytest.mark.slow
@needs_compiler
def test_a_library_built_from_scratch(tmp_path):
    lib = ctypes.cdll.LoadLibrary(str(build(tmp_path)))
    ffi.register_ffi_target("spmdc_test_rms_norm_fresh", ffi.pycapsule(lib.RmsNorm))
    call = ffi.ffi_call("spmdc_test_rms_norm_fresh", spmdc.ShapeDtypeStruct(X.shape, X.dtype))
    out = spmdc.jit(lambda x: call(x, eps=np.float32(1e-5)))(X)
    np.testing.assert_allclose(np.asarray(out), rms_norm_reference(X), rtol=1e-6)
