"""spmdc: a from-scratch SPMD tracing compiler for JAX-style Python.

``import spmdc as jax`` and ``import spmdc.numpy as jnp`` run JAX-style programs: a
tracer turns functions into spmdc's IR, compiler passes implement vmap, grad and pmap,
and the result runs as StableHLO on PJRT through jaxlib.
"""
import os as _os

_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")   # keep the PJRT client's device log quiet

from . import compiler  # noqa: E402,F401  (registers every primitive)
from .frontend import lax, tree  # noqa: E402
from .frontend import numpy as numpy  # noqa: E402
from .frontend.api import (  # noqa: E402
                           block_until_ready,
                           device_count,
                           device_get,
                           device_put,
                           devices,
                           jit,
                           local_device_count,
                           local_devices,
                           make_ir,
)
from .frontend.batching import vmap  # noqa: E402
from .frontend.differentiation import grad, hessian, jacobian, jacrev, value_and_grad, vjp  # noqa: E402
from .frontend.parallel import pmap  # noqa: E402
from .frontend.tracing import (  # noqa: E402
                           ConcretizationTypeError,
                           TracerArrayConversionError,
                           UnexpectedTracerError,
)
from .runtime.array import Array  # noqa: E402

tree_util = tree
Array.__module__ = __name__     # users see spmdc.Array, where they construct and check it
errors = type("errors", (), {"ConcretizationTypeError": ConcretizationTypeError,
                             "UnexpectedTracerError": UnexpectedTracerError,
                             "TracerArrayConversionError": TracerArrayConversionError})

__all__ = ["Array", "jit", "make_ir", "devices", "local_devices", "device_count",
           "local_device_count", "device_put", "device_get", "block_until_ready", "numpy",
           "lax", "tree_util", "ConcretizationTypeError", "UnexpectedTracerError",
           "TracerArrayConversionError", "pmap", "vmap", "grad", "value_and_grad", "vjp",
           "jacrev", "jacobian", "hessian"]

# ``import spmdc.numpy as jnp``, ``from spmdc import lax``, ``spmdc.tree_util`` all work.
import sys as _sys  # noqa: E402

_sys.modules[__name__ + ".numpy"] = numpy
_sys.modules[__name__ + ".lax"] = lax
_sys.modules[__name__ + ".tree_util"] = tree
