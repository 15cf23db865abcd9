"""The fast Fourier transform: ``fft(x, fft_type, fft_lengths)``, StableHLO's ``fft``.

``fft_type`` is "FFT" or "IFFT" (complex to complex), "RFFT" (real to complex, the last
transformed dimension shrinks to ``n // 2 + 1``) or "IRFFT" (complex to real, back to
``n``); the transform runs over the trailing ``len(fft_lengths)`` (1 to 3) dimensions,
the leading ones are batch dimensions. IFFT and IRFFT include the ``1 / n`` scale, as
NumPy's inverses do.

Note [fft transposes]
~~~~~~~~~~~~~~~~~~~~~
FFT and IFFT are complex-linear maps with symmetric matrices, so each is its own
transpose (no conjugation: Note [complex derivatives] in complex_parts.py). RFFT keeps
only the first ``n // 2 + 1`` outputs of a real input's spectrum, the others being their
conjugates; IRFFT reads only those, counting each but the first (and, for even ``n``,
the last) twice. Their transposes, as JAX writes them: RFFT^T(c) = n * IRFFT(conj(c) /
m) and IRFFT^T(c) = conj(m * RFFT(c) / n), with ``m`` = 1 for the counted-once outputs
and 2 for the others, and ``n`` the product of the lengths.
"""
from __future__ import annotations

import math

import numpy as np

from ..builder import lit
from ..ir import TensorType
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules, move_axis
from ..stablehlo import hlo, ir, lower_rules
from .complex_parts import complex_dtype, real_dtype
from .core import ShapeError, declare, registry

__all__ = ["fft_p", "FFT_TYPES"]

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


def _fft_rule(x: TensorType, *, fft_type: str, fft_lengths: tuple[int, ...]) -> TensorType:
    if fft_type not in FFT_TYPES:
        raise ShapeError(f"fft: fft_type must be one of {', '.join(FFT_TYPES)}, got "
                         f"{fft_type!r}")
    k = len(fft_lengths)
    if not 1 <= k <= 3 or k > x.ndim or any(
            not isinstance(n, int) or n < 0 for n in fft_lengths):
        raise ShapeError(f"fft: fft_lengths {fft_lengths} must be 1 to 3 sizes, no more "
                         f"than the operand {x} has dimensions")
    lead, minor = x.shape[:x.ndim - k], x.shape[x.ndim - k:]
    if fft_type == "RFFT":
        if x.dtype not in (np.float32, np.float64):
            raise ShapeError(f"fft: RFFT takes a float32 or float64 operand, got {x}")
        if minor != fft_lengths:
            raise ShapeError(f"fft: RFFT of {x} needs its last dimensions to be "
                             f"fft_lengths {fft_lengths}")
        return TensorType((*lead, *fft_lengths[:-1], fft_lengths[-1] // 2 + 1),
                          complex_dtype(x.dtype))
    if x.dtype.kind != "c":
        raise ShapeError(f"fft: {fft_type} takes a complex operand, got {x}")
    if fft_type == "IRFFT":
        if minor[:-1] != fft_lengths[:-1] or minor[-1] != fft_lengths[-1] // 2 + 1:
            raise ShapeError(f"fft: IRFFT of {x} to lengths {fft_lengths} needs its last "
                             f"dimensions to be {(*fft_lengths[:-1], fft_lengths[-1] // 2 + 1)}")
        return TensorType((*lead, *fft_lengths), real_dtype(x.dtype))
    if minor != fft_lengths:
        raise ShapeError(f"fft: {fft_type} of {x} needs its last dimensions to be "
                         f"fft_lengths {fft_lengths}")
    return x


def _fft_impl(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == "FFT":
        out, dtype = np.fft.fftn(x, axes=axes), x.dtype
    elif fft_type == "IFFT":
        out, dtype = np.fft.ifftn(x, axes=axes), x.dtype
    elif fft_type == "RFFT":
        out, dtype = np.fft.rfftn(x, axes=axes), complex_dtype(x.dtype)
    else:
        out, dtype = np.fft.irfftn(x, s=fft_lengths, axes=axes), real_dtype(x.dtype)
    return np.asarray(out, dtype)


def _fft_lowering(ctx, eqn, x):
    params = eqn.params
    return hlo.FftOp(x, hlo.FftTypeAttr.get(params["fft_type"]),
                     ir.DenseI64ArrayAttr.get(list(params["fft_lengths"]))).result


def _fft_batch(b, axis, args, dims, *, fft_type, fft_lengths):
    # The batch dimension joins the leading (untransformed) ones.
    return [b.fft(move_axis(b, args[0], dims[0], 0), fft_type=fft_type,
                  fft_lengths=fft_lengths)], [0]


def _counted_twice(b, t, fft_lengths):
    """``1 / m`` of Note [fft transposes] as a complex array of ``t``'s type: 1 for the
    first and (even n) last of the kept RFFT outputs along the last axis, 1/2 for the
    others."""
    m = t.type.shape[-1]
    real = real_dtype(t.type.dtype)
    i = b.iota(dtype=np.dtype(np.int32), shape=t.type.shape, dimension=t.type.ndim - 1)
    once = b.eq(i, lit(0, np.int32))
    if fft_lengths[-1] % 2 == 0:
        once = b.bind(registry["or"], once, b.eq(i, lit(m - 1, np.int32)))
    w = b.add(lit(0.5, real), b.mul(b.convert(once, new_dtype=real), lit(0.5, real)))
    return b.convert(w, new_dtype=t.type.dtype)


def _fft_vjp(b, ct, x, *, fft_type, fft_lengths):
    # See Note [fft transposes].
    if fft_type in ("FFT", "IFFT"):
        return [b.fft(ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    n = math.prod(fft_lengths)
    if fft_type == "RFFT":
        scaled = b.mul(b.conj(ct), _counted_twice(b, ct, fft_lengths))
        out = b.fft(scaled, fft_type="IRFFT", fft_lengths=fft_lengths)
        return [b.mul(out, lit(n, out.type.dtype))]
    spectrum = b.fft(ct, fft_type="RFFT", fft_lengths=fft_lengths)
    weights = b.div(lit(1, spectrum.type.dtype), _counted_twice(b, spectrum, fft_lengths))
    return [b.conj(b.div(b.mul(spectrum, weights), lit(n, spectrum.type.dtype)))]


fft_p = declare("fft", _fft_rule, _fft_impl)
lower_rules[fft_p] = _fft_lowering
batch_rules[fft_p] = _fft_batch
jvp_rules[fft_p] = linear_jvp(fft_p)
vjp_rules[fft_p] = _fft_vjp
