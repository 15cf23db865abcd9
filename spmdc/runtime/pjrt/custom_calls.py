"""The kernels that modules call by name: jaxlib's LAPACK handlers on the CPU, the CUDA
plugin's host-callback handler and cuSOLVER kernels on GPUs, registered with XLA before a
compile needs them; and the foreign functions a program registers (spmdc.ffi, Note
[foreign function targets])."""
from __future__ import annotations

import functools
import importlib
import os
from typing import Any

from jaxlib import _jax
from jaxlib import xla_client as xc

from .once import once

# Note [CUDA custom calls]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# The kernels a module calls by name on CUDA (the host-callback handler
# ``xla_ffi_python_gpu_callback``, cuSOLVER's ``cusolver_<routine>_ffi``) live in the
# Python extensions of the plugin's companion package (``jax_cuda13_plugin``:
# ``cuda_plugin_extension``, ``_solver``), and the plugin's XLA finds a target only once
# it is registered through the plugin's C API, whose handle ``load_pjrt_plugin_dynamically``
# returns. JAX does it when it initializes the plugin (jax_plugins/cuda/__init__.py, with
# jaxlib/gpu_solver.py for the solver kernels); spmdc does the same right after loading
# the plugin, before any compile: first the FFI types (``ffi_types()``: the transpose-plan
# cache that the callback handler keeps as its state; a handler's state type must be
# known before the handler), then the handlers (``ffi_handlers()``) and the cuSOLVER
# kernels (``_solver.registrations()``), all for the platform "CUDA" as typed-FFI
# targets (api_version 1). None of it needs a GPU. If the plugin was loaded before (JAX
# in the same process), its loader registered them (JAX does). Where the extensions are
# missing, a module calling one of these targets would fail to compile with XLA's "No FFI
# handler registered"; ``check_cuda_targets`` says instead which package is missing.
# cuDNN's fused attention (``__cudnn$fmha...``, Note [cuDNN fused attention] in
# compiler/primitives/attention_cudnn.py) is different: XLA's GPU compiler itself rewrites
# those targets into cuDNN fusions, so nothing registers them and nothing is checked here.

_cuda_unregistered: list[str] = []   # why the plugin's targets are not registered, if not
_cuda_c_apis: list[Any] = []         # the CUDA plugin's C API, once it is loaded


def register_cuda_targets(c_api: Any, package: str) -> None:
    """Register the plugin's FFI types, handlers and cuSOLVER kernels (Note [CUDA custom
    calls]), and the custom-call partitioners registered before it was loaded."""
    _cuda_c_apis.append(c_api)
    for partitioner in _partitioners:
        _jax.register_custom_call_partitioner(*partitioner, c_api)
    try:
        extension = importlib.import_module(f"{package}.cuda_plugin_extension")
        solver = importlib.import_module(f"{package}._solver")
    except ImportError as e:
        _cuda_unregistered[:] = [f"{package} is not installed or does not load ({e})"]
        return
    # a program's own targets and types (Note [foreign function targets]), before and after
    xc.register_custom_type_handler(
        "CUDA", functools.partial(extension.register_custom_type, c_api))
    xc.register_custom_call_handler(
        "CUDA", functools.partial(extension.register_custom_call_target, c_api))
    for name, type_id in extension.ffi_types().items():
        extension.register_custom_type(c_api, name, type_id)
    targets = {**extension.ffi_handlers(), **solver.registrations()}
    for name, handler in targets.items():
        extension.register_custom_call_target(c_api, name, handler, "CUDA", 1)
    _cuda_unregistered.clear()


def check_cuda_targets(module: Any) -> None:
    """A clear error for a module that calls the plugin's kernels when they could not be
    registered (Note [CUDA custom calls])."""
    if not _cuda_unregistered:
        return
    text = module if isinstance(module, str) else str(module)
    for target, what in (("xla_ffi_python_gpu_callback", "host-callback handler"),
                         ("cusolver_", "cuSOLVER kernels (linear algebra)")):
        if target in text:
            raise RuntimeError(
                f"this program calls the CUDA plugin's {what}, which spmdc registers from "
                f"the plugin's companion package, but {_cuda_unregistered[0]}: pip install "
                "'spmdc[cuda13]' (jax-cuda13-plugin) or 'spmdc[cuda12]'")


# Note [LAPACK custom calls]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Linear algebra lowers to jaxlib's own LAPACK kernels: custom calls to targets named
# ``lapack_<s|d><routine>_ffi`` (XLA's typed FFI, api_version 4). jaxlib ships the
# handlers in ``jaxlib.cpu._lapack`` but XLA only finds a target that was registered with
# it: ``_lapack.initialize()`` fills the kernels' function pointers from SciPy's
# cython_lapack, and each handler is then registered for the CPU platform. It is done
# once, on the first compile of a module that calls one, so programs without linear
# algebra never import SciPy's LAPACK.

@once
def register_lapack_targets() -> None:
    from jaxlib.cpu import _lapack
    _lapack.initialize()
    for name, handler in _lapack.registrations().items():
        _jax.register_custom_call_target(name, handler, "cpu", 1)


# Note [foreign function targets]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A program's own handler (a PyCapsule holding an XLA FFI handler's address, from a
# shared library loaded with ctypes or a Python extension) is registered under a name
# for a platform with jaxlib's ``register_custom_call_target``, as JAX does: jaxlib
# keeps registrations for a platform whose client is not made yet and hands them over
# when it is (the CPU client registers its handler as ``make_cpu_client`` makes it; on
# CUDA, ``register_cuda_targets`` installs the plugin's, through its C API). Platform
# names are JAX's: "cpu" (XLA's "Host"), "gpu" or "CUDA". A module that calls a name no
# handler was registered under fails to compile with XLA's "No FFI handler registered".


def register_ffi_target(name: str, fn: Any, platform: str, api_version: int,
                        traits: int = 0) -> None:
    """Register the handler ``fn`` (a PyCapsule, or a dict of them by FFI stage) under
    ``name`` for ``platform`` (Note [foreign function targets])."""
    xc.register_custom_call_target(name, fn, platform, api_version,
                                   xc.CustomCallTargetTraits(traits))


def register_ffi_type(name: str, registration: Any, platform: str) -> None:
    """Register an FFI type (``{"type_id": capsule, "type_info": capsule}``) under
    ``name`` for ``platform``."""
    xc.register_custom_type(name, registration, platform)


def register_batch_partitionable(name: str) -> None:
    """Tell XLA's partitioner that target ``name`` may run on each shard of its leading
    (batch) dimensions independently."""
    _jax.register_custom_call_as_batch_partitionable(name)


_partitioners: list[tuple[Any, ...]] = []


def register_custom_call_partitioner(name: str, propagate_user_sharding: Any, partition: Any,
                                     infer_sharding_from_operands: Any) -> None:
    """Have XLA's SPMD partitioner call back into Python for the custom calls named
    ``name`` (jaxlib's ``register_custom_call_partitioner``; spmdc's custom_partitioning,
    Note [partitioning in Python] in experimental/custom_partitioning.py): in this
    process's XLA (the CPU client) and in the CUDA plugin's, now or when it is loaded."""
    partitioner = (name, propagate_user_sharding, partition, infer_sharding_from_operands,
                   True)
    _partitioners.append(partitioner)
    _jax.register_custom_call_partitioner(*partitioner)
    for c_api in _cuda_c_apis:
        _jax.register_custom_call_partitioner(*partitioner, c_api)


def ffi_targets(platform: str) -> dict[str, Any]:
    """The targets registered with XLA for ``platform`` ("cpu", "gpu" ...), by name."""
    return dict(_jax.custom_call_targets(xc.xla_platform_names.get(platform, platform)))


def ffi_include_dir() -> str:
    """The directory of the C++ headers jaxlib ships (XLA's FFI API among them)."""
    import jaxlib
    return os.path.join(os.path.dirname(os.path.abspath(jaxlib.__file__)), "include")
