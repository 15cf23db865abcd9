"""jnp.convolve and jnp.correlate: 1-d discrete convolution and correlation as one
``conv_general_dilated`` (JAX's formulation: the longer operand is the input, the shorter
the kernel, flipped for convolve; modes 'full', 'same' and 'valid' are paddings)."""
from __future__ import annotations

from typing import Any

from .. import lax
from ..core import dtypes
from .core import asarray
from .shape_ops import flip
from .tensor_contractions import check_precision, lax_precision

__all__ = ["convolve", "correlate"]


def _conv1d(op: str, a: Any, v: Any, mode: str, precision: Any,
            preferred_element_type: Any) -> Any:
    precision = check_precision(op, precision)
    if precision is not None and not isinstance(precision[0], str):
        raise ValueError(f"{op}: the dot algorithm {precision.preset} does not apply to "
                         "convolutions; use a lax.Precision")
    a, v = asarray(a), asarray(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{op}() only supports 1-dimensional inputs, got shapes {a.shape} "
                         f"and {v.shape}")
    dtype, weak = dtypes.result_type(a, v)
    if preferred_element_type is None and not dtypes.is_inexact(dtype):
        dtype, weak = dtypes.default_float(), False
    a, v = a.astype(dtype), v.astype(dtype)
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {a.shape} and {v.shape}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{op}: mode must be one of ['full', 'same', 'valid'], got {mode!r}")
    reverse = False
    if op == "correlate":
        if dtype.kind == "c":                 # NumPy's correlate conjugates v
            from .complex_ops import conj
            v = conj(v)
        if a.shape[0] < v.shape[0]:
            a, v, reverse = v, a, True
    else:
        if a.shape[0] < v.shape[0]:
            a, v = v, a
        v = flip(v)
    k = v.shape[0]
    padding = {"valid": (0, 0), "same": (k // 2, k - k // 2 - 1), "full": (k - 1, k - 1)}[mode]
    if preferred_element_type is not None:
        want = dtypes.canonicalize(preferred_element_type)
        a, v = a.astype(want), v.astype(want)
    out = lax.conv_general_dilated(a.reshape(1, 1, -1), v.reshape(1, 1, -1), (1,), (padding,),
                                   precision=lax_precision(precision))
    # weak iff both operands are (and no preferred_element_type), as in JAX
    out.weak = weak and preferred_element_type is None
    out = out.reshape(-1)
    return flip(out) if reverse else out


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """The discrete convolution of two 1-d arrays (NumPy's ``convolve``)."""
    return _conv1d("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """The cross-correlation of two 1-d arrays (NumPy's ``correlate``), real arrays."""
    return _conv1d("correlate", a, v, mode, precision, preferred_element_type)
