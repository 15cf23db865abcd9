"""spmdc: a from-scratch SPMD tracing compiler for JAX-style Python.

``import spmdc as jax`` and ``import spmdc.numpy as jnp`` run JAX-style programs: a
tracer turns functions into spmdc's IR, compiler passes implement vmap, grad and pmap,
and the result runs as StableHLO on PJRT through jaxlib.
"""
import os as _os
import sys as _sys

import numpy as _np

_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")   # keep the PJRT client's device log quiet

# first, eager execution of single primitives (Note [eager execution] in core/tracing.py)
# compiler registers every primitive; numpy, lax, tree_util are real modules, so
# ``import spmdc.numpy as jnp`` and ``from spmdc import lax`` need no sys.modules entries.
from . import compiler, errors, lax, numpy, random, tree_util  # noqa: E402,F401
from .ad_checkpoint import checkpoint, checkpoint_policies, remat  # noqa: E402
from .core.abstract import ShapedArray, ShapeDtypeStruct, typeof  # noqa: E402,F401
from .core.config import (  # noqa: E402
    config,
    default_matmul_precision,
    disable_jit,
    enable_x64,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    transfer_guard,
)
from .core.devices import (  # noqa: E402
    block_until_ready,
    device_count,
    device_get,
    device_put,
    devices,
    local_device_count,
    local_devices,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from .core.environment import (  # noqa: E402
    copy_to_host_async,
    host_count,
    host_id,
    host_ids,
    live_arrays,
)
from .core.leaks import check_tracer_leaks, checking_leaks  # noqa: E402
from .core.names import named_call, named_scope  # noqa: E402
from .core.tracing import compile_time_eval as ensure_compile_time_eval  # noqa: E402
from .errors import (  # noqa: E402
    ConcretizationTypeError,
    TracerArrayConversionError,
    UnexpectedTracerError,
)
from .runtime import pjrt as _pjrt  # noqa: E402
from .runtime.array import Array  # noqa: E402
from .runtime.config_states import (  # noqa: E402
    allow_f16_reductions,
    debug_infs,
    debug_key_reuse,
    debug_nans,
    default_device,
    enable_checks,
    enable_custom_prng,
    explain_cache_misses,
    log_compiles,
    make_user_context,
    no_execution,
    no_tracing,
    softmax_custom_jvp,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from .runtime.pjrt import Device  # noqa: E402
from .runtime.sharding import Shard  # noqa: E402
from .transforms import eager as _eager  # noqa: E402,F401
from .transforms.custom_derivatives import closure_convert, custom_jvp, custom_vjp  # noqa: E402
from .transforms.custom_gradient import custom_gradient  # noqa: E402
from .transforms.eval_shape import eval_shape  # noqa: E402
from .transforms.forward import float0, jvp, linear_transpose, linearize  # noqa: E402
from .transforms.fwd_and_bwd import fwd_and_bwd  # noqa: E402
from .transforms.grad import grad, value_and_grad, vjp  # noqa: E402
from .transforms.jacobians import hessian, jacfwd, jacobian, jacrev  # noqa: E402
from .transforms.jit import clear_caches, jit, make_ir  # noqa: E402
from .transforms.make_jaxpr import make_jaxpr  # noqa: E402
from .transforms.pmap import pmap  # noqa: E402
from .transforms.vmap import vmap  # noqa: E402

Array.__module__ = __name__     # users see spmdc.Array, where they construct and check it

from . import (  # noqa: E402,F401  (built on the API above)
    ad_checkpoint,
    custom_batching,
    custom_derivatives,
    debug,
    distributed,
    dlpack,
    dtypes,
    experimental,
    ffi,
    image,
    lib,
    monitoring,
    nn,
    ops,
    profiler,
    ref,
    scipy,
    sharding,
    stages,
    test_util,
    tree,
    typing,
    version,
)
from .callbacks import effects_barrier, pure_callback  # noqa: E402
from .ref import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: E402
from .sharding import NamedSharding, P, make_mesh, reshard, set_mesh  # noqa: E402,F401
from .transforms.shard_map import shard_map, smap  # noqa: E402,F401

# See Note [version] (spmdc/version.py).
from .version import __spmdc_version__, __version__, __version_info__  # noqa: E402,F401


def default_backend() -> str:
    """The platform of the default devices: 'cpu', or 'gpu' on the CUDA client."""
    return _pjrt.platform_name()


def process_index() -> int:
    """This process's index among the processes of the computation (0 until
    ``spmdc.distributed.initialize`` joins several)."""
    return _pjrt.process_index()


def process_count() -> int:
    """How many processes take part in the computation (1 until
    ``spmdc.distributed.initialize`` joins several)."""
    return _pjrt.process_count()


def process_indices() -> list[int]:
    """The indices of every process of the computation."""
    return list(range(_pjrt.process_count()))


def print_environment_info(return_string: bool = False) -> str | None:
    """The versions, devices and platform, for a bug report: printed, or returned with
    ``return_string=True`` (JAX's text, and spmdc's release on a line of its own)."""
    import platform

    devs = _pjrt.devices()
    info = "\n".join([
        f"jax:    {__version__}",
        f"spmdc:  {__spmdc_version__}",
        f"jaxlib: {_pjrt.jaxlib_version()}",
        f"numpy:  {_np.__version__}",
        f"python: {_sys.version.replace(chr(10), ' ')}",
        f"device info: {devs[0].device_kind}-{len(devs)}, {len(_pjrt.local_devices())} "
        "local devices\"",
        f"process_count: {_pjrt.process_count()}",
        f"platform: {platform.uname()}"])
    for key, value in _os.environ.items():
        if key.startswith(("JAX_", "XLA_", "SPMDC_")):
            info += f"\n{key}={value}"
    if return_string:
        return info
    print(info)
    return None


__all__ = ["Array", "Device", "jit", "make_ir", "make_jaxpr", "clear_caches", "devices",
           "local_devices", "device_count",
           "local_device_count", "device_put", "device_get", "block_until_ready", "numpy",
           "lax", "tree_util", "ConcretizationTypeError", "UnexpectedTracerError",
           "TracerArrayConversionError", "pmap", "vmap", "grad", "value_and_grad", "vjp",
           "jacrev", "jacobian", "hessian", "jvp", "linearize", "jacfwd", "linear_transpose",
           "fwd_and_bwd",
           "float0", "custom_jvp", "custom_vjp", "custom_gradient", "closure_convert",
           "checkpoint", "remat",
           "checkpoint_policies", "ad_checkpoint", "config", "disable_jit", "enable_x64",
           "default_matmul_precision", "typeof", "eval_shape", "ShapeDtypeStruct", "dtypes",
           "test_util", "tree",
           "default_backend", "process_index", "process_count", "process_indices",
           "distributed", "make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays", "sharding", "make_mesh",
           "set_mesh", "NamedSharding", "P", "shard_map", "smap", "reshard", "debug",
           "pure_callback", "effects_barrier", "experimental", "named_scope", "named_call",
           "stages", "typing", "numpy_dtype_promotion", "numpy_rank_promotion",
           "ensure_compile_time_eval",
           "custom_batching", "check_tracer_leaks", "checking_leaks", "ref", "Ref", "new_ref",
           "empty_ref", "freeze", "free_ref", "monitoring", "profiler", "ffi",
           "debug_nans", "debug_infs", "debug_key_reuse", "default_device",
           "enable_custom_prng",
           "allow_f16_reductions", "enable_checks", "explain_cache_misses", "log_compiles",
           "no_execution",
           "no_tracing", "transfer_guard", "transfer_guard_device_to_device",
           "transfer_guard_device_to_host", "transfer_guard_host_to_device", "Shard",
           "copy_to_host_async", "host_count", "host_id", "host_ids", "live_arrays",
           "print_environment_info", "make_user_context", "softmax_custom_jvp"]

# ``sys.modules['jax'] = spmdc`` makes ``import jax.random`` find spmdc.random itself.
from . import aliases as _aliases  # noqa: E402

# As JAX's ``import jax``: jax.extend, jax.interpreters and jax.export are usable at once, and the
# attribute ``core`` is JAX's public face, spmdc/_src/core.py (see spmdc/aliases.py).
from . import api_util, export, extend, interpreters  # noqa: E402,F401
from ._src import core  # noqa: E402,F401

_aliases.install(_sys.modules[__name__])
